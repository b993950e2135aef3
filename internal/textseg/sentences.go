package textseg

import (
	"unicode"
	"unicode/utf8"
)

// Span is the part text[Start:End] of a text, with no white space at
// either end.
type Span struct {
	Start, End int
}

// Words returns the words of text, in order.
func Words(text string) []Span {
	var ws []Span
	for s, e := nextWord(text, 0); s >= 0; s, e = nextWord(text, e) {
		ws = append(ws, Span{s, e})
	}
	return ws
}

// Paragraphs returns the paragraphs of text, in order: runs of words
// separated by blank lines (two line breaks with only white space
// between).
func Paragraphs(text string) []Span {
	var out []Span
	start := -1
	s, e := nextWord(text, 0)
	for s >= 0 {
		if start < 0 {
			start = s
		}
		ns, ne := nextWord(text, e)
		if ns < 0 || blankLine(text[e:ns]) {
			out = append(out, Span{start, e})
			start = -1
		}
		s, e = ns, ne
	}
	return out
}

// Sentences returns the sentences of text, in order. The last one ends
// at the end of the text, punctuated or not.
func Sentences(text string) []Span {
	var out []Span
	eachSentence(text, nil, func(ws []Span) {
		out = append(out, Span{ws[0].Start, ws[len(ws)-1].End})
	})
	return out
}

// Complete returns how much of text, which is still arriving, holds
// complete sentences: the offset just past the white space that follows
// the last sentence end, or 0 when no sentence is complete yet. A
// sentence end counts only when white space follows it, so text is never
// cut inside a word that may go on; when the word after a period has not
// arrived, the period ends the sentence unless it belongs to an
// abbreviation.
func Complete(text string) int {
	cut := 0
	s, e := nextWord(text, 0)
	for s >= 0 {
		ns, ne := nextWord(text, e)
		gapEnd := ns
		if ns < 0 {
			gapEnd = len(text)
		}
		if gap := text[e:gapEnd]; gap != "" {
			next := ""
			if ns >= 0 {
				next = text[ns:ne]
			}
			if blankLine(gap) || endsSentence(text[s:e], next) {
				cut = gapEnd
			}
		}
		s, e = ns, ne
	}
	return cut
}

// CompleteClause returns how much of text, which is still arriving and
// has run long with no sentence complete, can be taken as a piece: the
// offset just past the white space after the last clause end (see
// EndsClause) within its first max characters (runes, white space
// counted as it stands), or 0 when no clause ends there. As with
// Complete, a word counts only once white space follows it.
func CompleteClause(text string, max int) int {
	cut, n, prev := 0, 0, 0
	for s, e := nextWord(text, 0); s >= 0; s, e = nextWord(text, e) {
		n += utf8.RuneCountInString(text[prev:e])
		prev = e
		if n > max {
			break
		}
		ns, _ := nextWord(text, e)
		gapEnd := ns
		if ns < 0 {
			gapEnd = len(text)
		}
		if gapEnd > e && EndsClause(text[s:e]) {
			cut = gapEnd
		}
	}
	return cut
}

// eachSentence calls f with the words of each sentence of text, in order;
// ws is never empty and is reused (buf is its first backing array).
func eachSentence(text string, buf []Span, f func(ws []Span)) {
	ws := buf[:0]
	s, e := nextWord(text, 0)
	for s >= 0 {
		ws = append(ws, Span{s, e})
		ns, ne := nextWord(text, e)
		if ns < 0 || blankLine(text[e:ns]) || endsSentence(text[s:e], text[ns:ne]) {
			f(ws)
			ws = ws[:0]
		}
		s, e = ns, ne
	}
}

// nextWord returns the first word of text at or after from, or -1, -1.
func nextWord(text string, from int) (start, end int) {
	i := from
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	if i >= len(text) {
		return -1, -1
	}
	start = i
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				return start, i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			return start, i
		}
		i += n
		if isCJKStop(r) {
			// The sentence may go on without a space: the word ends
			// here, with any closing quotes or brackets.
			for i < len(text) {
				r, n := utf8.DecodeRuneInString(text[i:])
				if !isCloser(r) {
					break
				}
				i += n
			}
			return start, i
		}
	}
	return start, i
}

// asciiSpace holds the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// blankLine reports whether gap, the white space between two words, holds
// a blank line.
func blankLine(gap string) bool {
	n := 0
	for i := 0; i < len(gap); i++ {
		if gap[i] == '\n' {
			n++
		}
	}
	return n >= 2
}
