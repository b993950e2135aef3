// Package worddiff compares two transcripts word by word: it normalises
// their words, aligns them with the fewest edits (Levenshtein distance
// over words) and gives the edits and the word error rate of one against
// the other.
//
// Words are compared in lower case without punctuation: "Hello," and
// "hello" are the same word. Numbers are compared as written: "5" and
// "five" differ, "1,000" and "1000" do not. Hyphens, dashes and slashes
// separate words ("cold-hearted" is two words), and an apostrophe inside
// a word stays ("don't").
//
// The package has no state, is safe for concurrent use and never panics,
// whatever text it is given.
package worddiff

import (
	"strings"
	"unicode"
)

// Kind is what an operation does to the reference to make the hypothesis.
type Kind int

// The operations of an alignment.
const (
	Equal      Kind = iota // the same word on both sides
	Substitute             // a reference word heard as another
	Insert                 // a word only the hypothesis has
	Delete                 // a word only the reference has
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Equal:
		return "equal"
	case Substitute:
		return "substitute"
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Op is one step of an alignment. Ref is empty for Insert, Hyp for Delete.
type Op struct {
	Kind Kind
	Ref  string
	Hyp  string
}

// Result is the alignment of a hypothesis against a reference.
type Result struct {
	Ops []Op
	// RefWords and HypWords count the words of each side (N is RefWords).
	RefWords, HypWords int
	// Substitutions, Deletions and Insertions count the edits.
	Substitutions, Deletions, Insertions int
}

// Errors is the number of edits, S+D+I: the word-level edit distance.
func (r Result) Errors() int { return r.Substitutions + r.Deletions + r.Insertions }

// WER is the word error rate of the hypothesis against the reference,
// (S+D+I)/N. It can exceed 1 when the hypothesis has many more words.
// With an empty reference it is 0 if the hypothesis is empty too, and 1
// otherwise (every word is wrong; the ratio itself has no value).
func (r Result) WER() float64 {
	if r.RefWords == 0 {
		if r.HypWords == 0 {
			return 0
		}
		return 1
	}
	return float64(r.Errors()) / float64(r.RefWords)
}

// Compare normalises the words of two transcripts and aligns the
// hypothesis against the reference.
func Compare(ref, hyp string) Result { return Align(Words(ref), Words(hyp)) }

// Inline writes the alignment as one line of the hypothesis's words, with
// what the reference had instead marked: [-deleted-] {+inserted+} and
// [-old-]{+new+} for a substitution.
func (r Result) Inline() string {
	var b strings.Builder
	for i, op := range r.Ops {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch op.Kind {
		case Equal:
			b.WriteString(op.Hyp)
		case Substitute:
			b.WriteString("[-" + op.Ref + "-]{+" + op.Hyp + "+}")
		case Insert:
			b.WriteString("{+" + op.Hyp + "+}")
		case Delete:
			b.WriteString("[-" + op.Ref + "-]")
		}
	}
	return b.String()
}

// Words splits a transcript into normalised words (see the package
// comment).
func Words(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	isDigit := func(i int) bool { return i >= 0 && i < len(rs) && unicode.IsDigit(rs[i]) }
	isLetter := func(i int) bool { return i >= 0 && i < len(rs) && unicode.IsLetter(rs[i]) }
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur = append(cur, unicode.ToLower(r))
		case (r == '\'' || r == '\u2019') && isLetter(i-1) && isLetter(i+1):
			cur = append(cur, '\'')
		case r == '.' && isDigit(i-1) && isDigit(i+1):
			cur = append(cur, '.') // a decimal point
		case r == ',' && isDigit(i-1) && isDigit(i+1):
			// a thousands separator: 1,000 is 1000
		default:
			flush()
		}
	}
	flush()
	return words
}
