package tts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/internal/textseg"
)

// StripMarkup removes markup such as SSML from text: tags (<speak>,
// <break time="1s"/>, </p>), comments, processing instructions and CDATA
// delimiters, and decodes the five XML entities and numeric character
// references. It reports whether anything was removed or decoded, which is
// when the service sends the INPUT_MARKUP_STRIPPED warning. A '<' that
// does not open a tag ("a < b") is kept as text.
func StripMarkup(text string) (string, bool) {
	if !strings.ContainsAny(text, "<&") {
		return text, false
	}
	var b strings.Builder
	b.Grow(len(text))
	stripped := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '<' && isTagStart(text[i+1:]):
			end := tagEnd(text, i)
			if end < 0 {
				b.WriteString(text[i:])
				return b.String(), stripped
			}
			// A tag between two words separates them.
			if b.Len() > 0 && end < len(text) {
				switch {
				case !isSpaceByte(lastByte(&b)) && !isSpaceByte(text[end]):
					b.WriteByte(' ')
				case isSpaceByte(lastByte(&b)) && isSpaceByte(text[end]):
					end++ // one space for the two around the tag
				}
			}
			i = end
			stripped = true
		case c == '&':
			if r, n := entity(text[i:]); n > 0 {
				b.WriteRune(r)
				i += n
				stripped = true
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), stripped
}

func lastByte(b *strings.Builder) byte {
	s := b.String()
	return s[len(s)-1]
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isTagStart reports whether s (what follows a '<') starts a tag.
func isTagStart(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '/' || c == '!' || c == '?' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tagEnd returns the offset just past the tag, comment or CDATA opener
// starting at text[i], or -1 if it never closes.
func tagEnd(text string, i int) int {
	rest := text[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		if j := strings.Index(rest[4:], "-->"); j >= 0 {
			return i + 4 + j + 3
		}
		return -1
	case strings.HasPrefix(rest, "<![CDATA["):
		// Keep the content, drop the delimiters.
		return i + len("<![CDATA[")
	}
	quote := byte(0)
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j + 1
		}
	}
	return -1
}

var namedEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// entity decodes an XML entity at the start of s and returns the rune and
// the number of bytes it used, or 0 if s does not start with one.
func entity(s string) (rune, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 10 {
		return 0, 0
	}
	name := s[1:semi]
	if r, ok := namedEntities[name]; ok {
		return r, semi + 1
	}
	if name[0] != '#' || len(name) < 2 {
		return 0, 0
	}
	base, digits := 10, name[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	if digits == "" {
		return 0, 0
	}
	var r rune
	for _, d := range digits {
		v := digitValue(d)
		if v < 0 || v >= base {
			return 0, 0
		}
		r = r*rune(base) + rune(v)
		if r > unicode.MaxRune {
			return 0, 0
		}
	}
	if r == 0 || !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, semi + 1
}

func digitValue(d rune) int {
	switch {
	case d >= '0' && d <= '9':
		return int(d - '0')
	case d >= 'a' && d <= 'f':
		return int(d-'a') + 10
	case d >= 'A' && d <= 'F':
		return int(d-'A') + 10
	}
	return -1
}

// Boundary says how a piece of text ends, which decides the pause after it:
// SentenceEnd (., !, ?, a blank line), ClauseEnd (a comma, semicolon,
// colon or dash inside a sentence) or WordEnd (a long run of words
// without punctuation cut between two words).
type Boundary = textseg.Boundary

// Piece boundaries.
const (
	SentenceEnd = textseg.SentenceEnd
	ClauseEnd   = textseg.ClauseEnd
	WordEnd     = textseg.WordEnd
)

// Piece is a span of a text synthesised as one library utterance:
// text[Start:End], with no surrounding white space, and how it ends.
type Piece = textseg.Piece

// span is a word: text[start:end], white space excluded.
type span struct{ start, end int }

// words returns the words of text as textseg cuts them: separated by white
// space, and after a full stop, exclamation or question mark of the CJK
// scripts, which are written without spaces.
func words(text string) []span {
	ws := textseg.Words(text)
	out := make([]span, len(ws))
	for i, w := range ws {
		out[i] = span{w.Start, w.End}
	}
	return out
}

// Splitting limits, in words. The first piece is short so that its audio
// starts quickly; later pieces are synthesised while earlier ones play. A
// sentence a third over the limit stays whole, as a little long is better
// than a dangling fragment, and a clause end up to half the limit past it
// is taken rather than a cut between words.
var (
	firstPiece = textseg.Limit{Max: 6, Whole: 8, Reach: 9, Words: true}
	piece      = textseg.Limit{Max: 24, Whole: 32, Reach: 36, Words: true}
)

// Split cuts text into the pieces Synthesize speaks one after the other:
// sentences, and sentences longer than the limit at the last clause
// boundary within it, or between words when there is none. The first piece
// is kept short (about six words) so that audio starts fast. Every word of
// the text is in exactly one piece, in order.
func Split(text string) []Piece {
	return textseg.Split(text, firstPiece, piece)
}

// sanitize returns text with every byte that a C library must not see (NUL,
// bytes of invalid UTF-8) replaced by a space, so that byte offsets stay
// the same.
func sanitize(text string) string {
	if utf8.ValidString(text) && !strings.ContainsRune(text, 0) {
		return text
	}
	b := []byte(text)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0 || r == utf8.RuneError && n == 1 {
			b[i] = ' '
		}
		i += n
	}
	return string(b)
}
