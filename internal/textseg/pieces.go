package textseg

import (
	"unicode/utf8"
)

// Boundary says how a piece of text ends.
type Boundary int

// Piece boundaries.
const (
	// SentenceEnd: the piece ends a sentence (or a paragraph, or the text).
	SentenceEnd Boundary = iota + 1
	// ClauseEnd: the piece ends at a comma, semicolon, colon or dash
	// inside a sentence (see EndsClause).
	ClauseEnd
	// WordEnd: a long run of words with no clause end was cut between
	// two words.
	WordEnd
	// InWord: a word longer than a limit in characters was cut inside
	// itself, between two runes.
	InWord
)

// Piece is a span of text and how it ends.
type Piece struct {
	// Start and End are byte offsets: the piece is text[Start:End], with
	// no white space at either end.
	Start, End int
	// Boundary is how the piece ends.
	Boundary Boundary
}

// Limit bounds the length of the pieces Split makes. Lengths are in
// characters (runes, a run of white space between words counting as one)
// or, with Words, in words.
type Limit struct {
	// Max is the length a sentence is cut to: at its last clause end
	// within Max, else between the words that fit in Max, else (a word
	// longer than Max characters) inside the word.
	Max int
	// Whole keeps a sentence up to this length whole; a little over Max
	// reads better than a dangling fragment. Below Max counts as Max.
	Whole int
	// Reach: when no clause ends within Max, a clause end up to this
	// length is taken rather than a cut between words. Below Max counts
	// as Max.
	Reach int
	// Words measures in words instead of characters.
	Words bool
}

// Split cuts text into pieces, in order: each sentence, and a sentence
// longer than the limit into parts as Limit says. The first piece of the
// text is bounded by first, every other one by rest, so that a caller can
// make the first piece short. Every word of the text is in exactly one
// piece, whole unless it alone is over a limit in characters.
func Split(text string, first, rest Limit) []Piece {
	var pieces []Piece
	var buf [64]Span
	eachSentence(text, buf[:], func(ws []Span) {
		pieces = cutSentence(pieces, text, ws, first, rest)
	})
	return pieces
}

// cutSentence appends the pieces of the sentence made of words ws (which
// it may modify).
func cutSentence(pieces []Piece, text string, ws []Span, first, rest Limit) []Piece {
	for len(ws) > 0 {
		lim := rest
		if len(pieces) == 0 {
			lim = first
		}
		lim.Max = max(lim.Max, 1)
		lim.Whole = max(lim.Whole, lim.Max)
		lim.Reach = max(lim.Reach, lim.Max)
		bound := max(lim.Whole, lim.Reach)

		// The first fit words fit in Max; the last clause end among them
		// is after word clause, the first one past them within Reach
		// after word far (counting from 1; 0 is none).
		n, fit, clause, far := 0, 0, 0, 0
		whole := true
		for i, w := range ws {
			if lim.Words {
				n++
			} else {
				if i > 0 && w.Start > ws[i-1].End {
					n++ // the white space between words
				}
				n += utf8.RuneCountInString(text[w.Start:w.End])
			}
			if n > lim.Whole {
				whole = false
			}
			if n > bound {
				break
			}
			ends := EndsClause(text[w.Start:w.End])
			switch {
			case n <= lim.Max:
				fit = i + 1
				if ends {
					clause = i + 1
				}
			case ends && far == 0 && n <= lim.Reach && i < len(ws)-1:
				far = i + 1
			}
		}
		if whole {
			return append(pieces, Piece{ws[0].Start, ws[len(ws)-1].End, SentenceEnd})
		}
		cut, b := fit, WordEnd
		switch {
		case clause > 0:
			cut, b = clause, ClauseEnd
		case far > 0:
			cut, b = far, ClauseEnd
		case fit == 0:
			// The first word alone is over Max characters.
			w := &ws[0]
			end := w.Start
			for range lim.Max {
				_, size := utf8.DecodeRuneInString(text[end:w.End])
				end += size
			}
			pieces = append(pieces, Piece{w.Start, end, InWord})
			w.Start = end
			continue
		}
		pieces = append(pieces, Piece{ws[0].Start, ws[cut-1].End, b})
		ws = ws[cut:]
	}
	return pieces
}

// Chunks packs the sentences of text into chunks of at most size
// characters (runes, a run of white space counting as one), as many
// whole sentences to a chunk as fit. A sentence longer than size is cut
// as Split cuts it, at clause ends, else between words, else inside a
// word longer than size. Each chunk with its white space folded to single
// spaces is at most size characters long; a size below one counts as one.
func Chunks(text string, size int) []Span {
	lim := Limit{Max: max(size, 1)}
	var out []Span
	cur, n := Span{-1, -1}, 0
	for _, p := range Split(text, lim, lim) {
		m := folded(text[p.Start:p.End])
		gap := 0
		if p.Start > cur.End {
			gap = 1
		}
		if cur.Start >= 0 && n+gap+m <= lim.Max {
			cur.End, n = p.End, n+gap+m
			continue
		}
		if cur.Start >= 0 {
			out = append(out, cur)
		}
		cur, n = Span{p.Start, p.End}, m
	}
	if cur.Start >= 0 {
		out = append(out, cur)
	}
	return out
}

// folded returns the length of s in runes, each run of white space
// between words counting as one and white space around them as none.
func folded(s string) int {
	n, prev := 0, -1
	for ws, we := nextWord(s, 0); ws >= 0; ws, we = nextWord(s, we) {
		if prev >= 0 && ws > prev {
			n++
		}
		n += utf8.RuneCountInString(s[ws:we])
		prev = we
	}
	return n
}
