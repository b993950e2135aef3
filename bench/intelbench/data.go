package intelbench

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Article is a news story with the headline its journalist wrote for it.
type Article struct {
	ID       string // the story's NEWID in Reuters-21578
	Headline string
	Body     string // paragraphs joined, runs of white space made one space
}

// reutersDoc is the part of a Reuters-21578 <REUTERS> element we read.
type reutersDoc struct {
	NewID string `xml:"NEWID,attr"`
	Title string `xml:"TEXT>TITLE"`
	Body  string `xml:"TEXT>BODY"`
}

// ParseReuters reads every <REUTERS> story in an XML rendering of
// Reuters-21578 (one story per file, or many inside a <LEWIS> root, as the
// tm package ships them). Stories without a headline or a body (the
// collection's briefs) are skipped. The closing "Reuter" signature is
// removed from the body.
func ParseReuters(r io.Reader) ([]Article, error) {
	dec := xml.NewDecoder(r)
	var out []Article
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reuters: %w", err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok || start.Name.Local != "REUTERS" {
			continue
		}
		var d reutersDoc
		if err := dec.DecodeElement(&d, &start); err != nil {
			return nil, fmt.Errorf("reuters: story %d: %w", len(out)+1, err)
		}
		body := strings.Join(strings.Fields(d.Body), " ")
		body = strings.TrimSpace(strings.TrimSuffix(body, "Reuter"))
		title := strings.Join(strings.Fields(d.Title), " ")
		if title == "" || body == "" {
			continue
		}
		out = append(out, Article{ID: d.NewID, Headline: title, Body: body})
	}
}

// Labelled is a sentence with a person's polarity judgement of it.
type Labelled struct {
	Text     string
	Positive bool
}

// ParseLabelled reads a JSON array of {"text": ..., "class": 0 or 1}, the
// form in which the npm package "sentiment" ships the UCI Sentiment
// Labelled Sentences (1 is positive). Entries with no text or no class (the
// files end with an empty one) are skipped; any other class is an error.
func ParseLabelled(r io.Reader) ([]Labelled, error) {
	var raw []struct {
		Text  string `json:"text"`
		Class *int   `json:"class"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("labelled sentences: %w", err)
	}
	out := make([]Labelled, 0, len(raw))
	for i, e := range raw {
		text := strings.TrimSpace(e.Text)
		if text == "" || e.Class == nil {
			continue
		}
		if *e.Class != 0 && *e.Class != 1 {
			return nil, fmt.Errorf("labelled sentences: entry %d: class %d, want 0 or 1", i, *e.Class)
		}
		out = append(out, Labelled{Text: text, Positive: *e.Class == 1})
	}
	return out, nil
}

// abbreviations end with a full stop that does not end a sentence.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"jr": true, "sr": true, "inc": true, "corp": true, "co": true, "ltd": true,
	"bros": true, "gov": true, "sen": true, "rep": true, "gen": true, "col": true,
	"lt": true, "no": true, "vs": true, "jan": true, "feb": true, "mar": true,
	"apr": true, "aug": true, "sept": true, "sep": true, "oct": true, "nov": true,
	"dec": true, "etc": true, "e.g": true, "i.e": true, "approx": true,
}

// Sentences splits text into sentences for the lead baselines: a sentence
// ends at '.', '!' or '?' (with any closing quotes or brackets) followed by
// white space and a capital letter, digit, quote or bracket, unless the word
// before the full stop is a known abbreviation, a single letter or holds
// another full stop (U.S.).
func Sentences(text string) []string {
	words := strings.Fields(text)
	var out []string
	start := 0
	for i, w := range words {
		if i+1 < len(words) && !endsSentence(w, words[i+1]) {
			continue
		}
		out = append(out, strings.Join(words[start:i+1], " "))
		start = i + 1
	}
	return out
}

func endsSentence(w, next string) bool {
	core := strings.TrimRight(w, `"')]’”`)
	if core == "" {
		return false
	}
	switch core[len(core)-1] {
	case '!', '?':
	case '.':
		stem := strings.TrimLeft(strings.TrimSuffix(core, "."), `"'([“‘`)
		if len([]rune(stem)) <= 1 || strings.Contains(stem, ".") || abbreviations[strings.ToLower(stem)] {
			return false
		}
	default:
		return false
	}
	r := []rune(next)[0]
	return unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune(`"'(<[“‘`, r)
}

// Lead is the first n sentences of text, the baseline every extractive
// summary of news is compared with.
func Lead(text string, n int) string {
	s := Sentences(text)
	return strings.Join(s[:min(n, len(s))], " ")
}
