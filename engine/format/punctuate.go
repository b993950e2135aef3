package format

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentenceEnds returns the indexes of the tokens that end a sentence: the
// last word of a recogniser utterance, the word before a pause of at least
// pause seconds, the word before a speaker change, and the last word.
func sentenceEnds(toks []token, s *scanner, pause float64) []int {
	ends := make([]int, 0, len(toks)/8+1)
	for j := range toks {
		if j == len(toks)-1 {
			ends = append(ends, j)
			break
		}
		a, b := toks[j].word, toks[j+1].word
		end := b.Start-a.End >= pause || speakerChange(a, b)
		for k := toks[j].span.Start; k < toks[j].span.End && !end; k++ {
			end = s.boundary[k]
		}
		if end {
			ends = append(ends, j)
		}
	}
	return ends
}

// punctuate capitalises the first word of each sentence and "I", and ends
// each sentence with a period, or a question mark when it opens like a
// question.
func punctuate(toks []token, ends []int) {
	start := 0
	for _, e := range ends {
		sent := toks[start : e+1]
		for k := range sent {
			sent[k].display = capitalizeI(sent[k].display)
		}
		if sent[0].plain {
			// Formatted tokens keep their case: "jane@example.com", "iPhone".
			sent[0].display = capitalizeFirst(sent[0].display)
		}
		mark := "."
		if isQuestion(sent) {
			mark = "?"
		}
		last := &sent[len(sent)-1]
		last.display = withMark(last.display, mark)
		start = e + 1
	}
}

// withMark ends text with a sentence mark, unless it already ends with one
// (an abbreviation such as "Mr." already carries its period).
func withMark(text, mark string) string {
	if text == "" || strings.HasSuffix(text, mark) || strings.HasSuffix(text, "?") || strings.HasSuffix(text, "!") ||
		mark == "." && strings.HasSuffix(text, ".") {
		return text
	}
	return text + mark
}

// capitalizeFirst upper-cases the first letter of text if it starts with one.
func capitalizeFirst(text string) string {
	r, size := utf8.DecodeRuneInString(text)
	if size == 0 || !unicode.IsLower(r) {
		return text
	}
	return string(unicode.ToUpper(r)) + text[size:]
}

// capitalizeI writes the pronoun "i" and its contractions (i'm, i'll, i've,
// i'd) with a capital.
func capitalizeI(text string) string {
	if text == "i" || strings.HasPrefix(text, "i'") {
		return "I" + text[1:]
	}
	return text
}

// Question openers. A sentence is a question only when its first words
// invert subject and verb or ask with a wh-word followed by a verb; a
// wh-word alone ("Why?") also counts. "When I was young" and "Do the
// dishes" stay statements.
var (
	whWords = map[string]bool{
		"what": true, "why": true, "how": true, "who": true, "whom": true, "whose": true,
		"where": true, "when": true, "which": true,
	}
	// whContracted already carry their verb: "what's", "where'd".
	whContracted = map[string]bool{
		"what's": true, "where's": true, "who's": true, "how's": true, "when's": true, "why's": true,
		"what're": true, "where're": true, "who're": true, "how're": true, "what'll": true, "who'll": true,
		"what'd": true, "where'd": true, "who'd": true, "how'd": true, "why'd": true,
	}
	// howQuantities make "how" a question without a verb: "how many".
	howQuantities = map[string]bool{
		"many": true, "much": true, "long": true, "often": true, "far": true, "old": true, "come": true,
	}
	// strongAux invert with a pronoun or a noun phrase: "is the shop open".
	strongAux = map[string]bool{
		"is": true, "are": true, "am": true, "was": true, "were": true, "can": true, "could": true,
		"would": true, "will": true, "should": true, "shall": true, "isn't": true, "aren't": true,
		"wasn't": true, "weren't": true, "can't": true, "couldn't": true, "wouldn't": true, "won't": true,
		"shouldn't": true,
	}
	// weakAux start imperatives and wishes too ("do the dishes", "have a
	// nice day", "may the best win"), so they need a pronoun after them.
	weakAux = map[string]bool{
		"do": true, "does": true, "did": true, "have": true, "has": true, "had": true, "may": true,
		"might": true, "must": true, "don't": true, "doesn't": true, "didn't": true, "haven't": true,
		"hasn't": true, "hadn't": true,
	}
	pronounSubjects = map[string]bool{
		"i": true, "you": true, "he": true, "she": true, "it": true, "we": true, "they": true,
		"there": true, "anyone": true, "anybody": true, "someone": true, "somebody": true,
		"everyone": true, "everybody": true, "anything": true, "something": true, "everything": true,
		"nobody": true, "that": true, "this": true,
	}
	nounStarts = map[string]bool{
		"the": true, "a": true, "an": true, "my": true, "your": true, "his": true, "her": true,
		"its": true, "our": true, "their": true, "these": true, "those": true, "this": true, "that": true,
	}
	auxVerbs = func() map[string]bool {
		m := map[string]bool{}
		for w := range strongAux {
			m[w] = true
		}
		for w := range weakAux {
			m[w] = true
		}
		return m
	}()
)

// isQuestion reports whether a sentence opens like a question.
func isQuestion(sent []token) bool {
	first := strings.ToLower(sent[0].word.Word)
	second := ""
	if len(sent) > 1 {
		second = strings.ToLower(sent[1].word.Word)
	}
	switch {
	case whContracted[first]:
		return true
	case whWords[first]:
		return second == "" || auxVerbs[second] || first == "how" && howQuantities[second]
	case strongAux[first]:
		return pronounSubjects[second] || nounStarts[second]
	case weakAux[first]:
		return pronounSubjects[second]
	}
	return false
}

// Smart-format word rules for ordinary spoken words.
var (
	// titles are the abbreviations the CMU dictionary spells as words.
	titles = map[string]string{
		"mr": "Mr.", "mrs": "Mrs.", "ms": "Ms.", "dr": "Dr.", "jr": "Jr.", "st": "St.",
	}
	// nameTitles are followed by a name, which is capitalised.
	nameTitles = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true}
	// properWords are always capitalised: days, and the months that are not
	// also common words ("may" and "march" are capitalised only in dates).
	properWords = map[string]bool{
		"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
		"saturday": true, "sunday": true, "january": true, "february": true, "april": true,
		"june": true, "july": true, "august": true, "september": true, "october": true,
		"november": true, "december": true,
	}
)

// smartWords applies the smart-format word rules: titles become
// abbreviations and capitalise the name after them; days and unambiguous
// months are capitalised.
func smartWords(toks []token) {
	for k := range toks {
		if !toks[k].plain {
			continue
		}
		w := strings.ToLower(toks[k].word.Word)
		if t, ok := titles[w]; ok {
			toks[k].display = t
			if nameTitles[w] && k+1 < len(toks) && toks[k+1].plain && isAlpha(toks[k+1].display) {
				toks[k+1].display = capitalizeFirst(toks[k+1].display)
			}
			continue
		}
		if properWords[w] {
			toks[k].display = capitalizeFirst(toks[k].display)
		}
	}
}

// isAlpha reports whether s is a non-empty run of letters and apostrophes.
func isAlpha(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '\'' {
			return false
		}
	}
	return true
}
