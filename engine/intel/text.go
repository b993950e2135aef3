package intel

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSentenceWords bounds a sentence: unpunctuated text (a transcript without
// punctuate=true) would otherwise be one sentence, which no feature can use.
const maxSentenceWords = 40

// span is an inclusive range of word indices.
type span struct{ start, end int }

func (s span) len() int { return s.end - s.start + 1 }

// doc is text split once into the words every feature shares.
type doc struct {
	words []string // strings.Fields(text): the index space of Segment
	lower []string // lower-case words without surrounding punctuation
	sents []span
}

func newDoc(text string) *doc {
	d := &doc{words: strings.Fields(text)}
	d.lower = make([]string, len(d.words))
	for i, w := range d.words {
		d.lower[i] = normWord(w)
	}
	d.sents = splitSentences(d.words)
	return d
}

// segment turns a span into the exported Segment.
func (d *doc) segment(s span) Segment {
	return Segment{Text: strings.Join(d.words[s.start:s.end+1], " "), StartWord: s.start, EndWord: s.end}
}

// text is the words of s joined by spaces.
func (d *doc) text(s span) string { return strings.Join(d.words[s.start:s.end+1], " ") }

// normWord lower-cases w and strips punctuation around it, keeping inner
// apostrophes and hyphens ("don't", "e-mail").
func normWord(w string) string {
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	w = strings.ReplaceAll(w, "’", "'")
	return strings.ToLower(w)
}

// abbreviations end in a full stop without ending a sentence.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "jr": true, "sr": true,
	"vs": true, "etc": true, "e.g": true, "i.e": true, "inc": true, "ltd": true, "co": true, "corp": true,
	"u.s": true, "u.k": true, "gen": true, "gov": true, "sen": true, "rep": true, "rev": true, "mt": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "aug": true, "sept": true, "sep": true,
	"oct": true, "nov": true, "dec": true, "no": true, "approx": true, "dept": true, "est": true,
	"fig": true, "a.m": true, "p.m": true,
}

// endsSentence reports whether word w, followed by next ("" at the end),
// closes a sentence.
func endsSentence(w, next string) bool {
	core := strings.TrimRight(w, `"'”’)]}»`)
	if core == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(core)
	switch last {
	case '!', '?', '…':
		return true
	case '.':
	default:
		return false
	}
	if next == "" {
		return true
	}
	stem := strings.ToLower(strings.TrimLeft(strings.TrimRight(core, "."), `"'“‘([{«`))
	if abbreviations[stem] {
		return false
	}
	// A single letter with a stop is an initial ("J. Smith"), unless the
	// text is a list of them.
	if utf8.RuneCountInString(stem) == 1 && unicode.IsUpper([]rune(core)[0]) {
		return false
	}
	// "3.5" never reaches here (no trailing stop); "etc. and" does.
	first, _ := utf8.DecodeRuneInString(strings.TrimLeft(next, `"'“‘([{«`))
	return !unicode.IsLower(first)
}

// splitSentences splits words into sentences on end punctuation, and cuts
// run-on stretches at maxSentenceWords.
func splitSentences(words []string) []span {
	var out []span
	start := 0
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if endsSentence(w, next) || i-start+1 >= maxSentenceWords || i == len(words)-1 {
			out = append(out, span{start, i})
			start = i + 1
		}
	}
	return out
}

// isContent reports whether a normalised word carries meaning: not a stop
// word, not a number, and made of letters.
func isContent(w string) bool {
	if len(w) < 2 || stopWords[w] {
		return false
	}
	letters := 0
	for _, r := range w {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters*2 > utf8.RuneCountInString(w)
}

// stem is a light English suffix stripper: enough to make "refunds" and
// "refund", "charged" and "charging" meet, without a full Porter stemmer's
// surprises on names.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		return undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	case n > 4 && strings.HasSuffix(w, "e"):
		return w[:n-1]
	}
	return w
}

// undouble maps "stopp" to "stop" so "stopped" and "stop" share a stem.
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
		return w[:n-1]
	}
	if n > 2 && strings.HasSuffix(w, "e") {
		return w[:n-1]
	}
	return w
}

// checker returns ctx.Err() every few thousand calls, cheaply enough for
// inner loops.
type checker struct {
	ctx context.Context
	n   int
}

func (c *checker) check() error { return c.checkN(1) }

// checkN counts n units of work at once (a sentence's words).
func (c *checker) checkN(n int) error {
	c.n += n
	if c.n >= 2048 {
		c.n = 0
		return c.ctx.Err()
	}
	return nil
}
