package intel

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/internal/textseg"
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
	d := &doc{}
	d.words, d.sents = splitText(text)
	d.lower = make([]string, len(d.words))
	for i, w := range d.words {
		d.lower[i] = normWord(w)
	}
	return d
}

// splitText returns the words of text, as strings.Fields, and its
// sentences as textseg finds them, in word indices: a word is in the
// sentence it starts in, and a run-on sentence is cut every
// maxSentenceWords words.
func splitText(text string) ([]string, []span) {
	words := strings.Fields(text)
	// Each word starts at the first byte after the word before that is
	// not white space.
	starts := make([]int, len(words))
	pos := 0
	for i, w := range words {
		pos += strings.IndexFunc(text[pos:], func(r rune) bool { return !unicode.IsSpace(r) })
		starts[i] = pos
		pos += len(w)
	}
	var sents []span
	w := 0
	for _, s := range textseg.Sentences(text) {
		// A sentence that starts inside a word (after a CJK full stop)
		// has no word of its own: it goes with the one that word is in.
		first := w
		for w < len(words) && starts[w] < s.End {
			w++
		}
		for a := first; a < w; a += maxSentenceWords {
			sents = append(sents, span{a, min(a+maxSentenceWords, w) - 1})
		}
	}
	return words, sents
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
