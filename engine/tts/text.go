package tts

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// Boundary says how a piece of text ends, which decides the pause after it.
type Boundary int

// Piece boundaries.
const (
	// SentenceEnd: the piece ends a sentence (., !, ?, a blank line).
	SentenceEnd Boundary = iota + 1
	// ClauseEnd: the piece ends at a comma, semicolon, colon or dash
	// inside a sentence.
	ClauseEnd
	// WordEnd: a long run of words without punctuation was cut between
	// two words.
	WordEnd
)

// Piece is a span of a text synthesised as one library utterance.
type Piece struct {
	// Start and End are byte offsets: the piece is text[Start:End], with
	// no surrounding white space.
	Start, End int
	// Boundary is how the piece ends.
	Boundary Boundary
}

// span is a word: text[start:end], white space excluded.
type span struct{ start, end int }

// words returns the white-space separated words of text. A full stop,
// exclamation or question mark of the CJK scripts, which are written
// without spaces, also ends a word, so that such texts split into
// sentences.
func words(text string) []span {
	var ws []span
	start := -1
	for i, r := range text {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				ws = append(ws, span{start, i})
				start = -1
			}
		case r == '。' || r == '！' || r == '？':
			if start < 0 {
				start = i
			}
			ws = append(ws, span{start, i + utf8.RuneLen(r)})
			start = -1
		case start < 0:
			start = i
		}
	}
	if start >= 0 {
		ws = append(ws, span{start, len(text)})
	}
	return ws
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"mr.": true, "mrs.": true, "ms.": true, "dr.": true, "prof.": true, "st.": true,
	"sr.": true, "jr.": true, "vs.": true, "etc.": true, "e.g.": true, "i.e.": true,
	"no.": true, "mt.": true, "inc.": true, "ltd.": true, "co.": true, "approx.": true,
	"sra.": true, "sr": true, "hr.": true, "nr.": true, "z.b.": true, "bzw.": true, "usw.": true,
}

// endsSentence reports whether word w (followed by next, or the end when
// next is empty) ends a sentence.
func endsSentence(w, next string) bool {
	w = strings.TrimRight(w, "\"'”’)]»")
	if w == "" {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(w)
	switch r {
	case '!', '?', '…', '。', '！', '？':
		return true
	case '.':
	default:
		return false
	}
	if abbreviations[strings.ToLower(w)] {
		return false
	}
	// A single capital initial ("J. Smith") does not end a sentence.
	if body := strings.TrimSuffix(w, "."); utf8.RuneCountInString(body) == 1 && unicode.IsUpper([]rune(body)[0]) {
		return false
	}
	if next != "" {
		// A lower-case continuation means the period was not final.
		r, _ := utf8.DecodeRuneInString(strings.TrimLeft(next, "\"'“‘(["))
		if unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// endsClause reports whether word w ends a clause inside a sentence.
func endsClause(w string) bool {
	w = strings.TrimRight(w, "\"'”’)]»")
	r, _ := utf8.DecodeLastRuneInString(w)
	switch r {
	case ',', ';', ':', '—', '–', '、', '，', '；', '：':
		return true
	}
	return w == "-" || w == "--"
}

// Splitting limits, in words. The first piece is short so that its audio
// starts quickly; later pieces are synthesised while earlier ones play.
const (
	firstPieceWords = 6
	pieceWords      = 24
)

// Split cuts text into the pieces Synthesize speaks one after the other:
// sentences, and sentences longer than the limit at the last clause
// boundary within it, or between words when there is none. The first piece
// is kept short (about six words) so that audio starts fast. Every word of
// the text is in exactly one piece, in order.
func Split(text string) []Piece {
	ws := words(text)
	if len(ws) == 0 {
		return nil
	}
	// Sentences first.
	var pieces []Piece
	first := 0
	for i, w := range ws {
		next := ""
		if i+1 < len(ws) {
			next = text[ws[i+1].start:ws[i+1].end]
		}
		blank := i+1 < len(ws) && strings.Count(text[w.end:ws[i+1].start], "\n") >= 2
		if i+1 == len(ws) || blank || endsSentence(text[w.start:w.end], next) {
			pieces = appendSentence(pieces, text, ws[first:i+1], len(pieces) == 0)
			first = i + 1
		}
	}
	return pieces
}

// appendSentence appends one sentence, cut at clause boundaries when it is
// longer than the piece limit.
func appendSentence(pieces []Piece, text string, ws []span, isFirst bool) []Piece {
	for len(ws) > 0 {
		limit := pieceWords
		if isFirst && len(pieces) == 0 {
			limit = firstPieceWords
		}
		if len(ws) <= limit+limit/3 {
			// Short enough; a little over the limit is better than a
			// dangling fragment.
			return append(pieces, Piece{ws[0].start, ws[len(ws)-1].end, SentenceEnd})
		}
		cut, b := 0, WordEnd
		for i := min(limit, len(ws)) - 1; i >= 0; i-- {
			if endsClause(text[ws[i].start:ws[i].end]) {
				cut, b = i+1, ClauseEnd
				break
			}
		}
		if cut == 0 {
			// Look a little further for a clause end before cutting
			// between words.
			for i := limit; i < min(len(ws)-1, limit+limit/2); i++ {
				if endsClause(text[ws[i].start:ws[i].end]) {
					cut, b = i+1, ClauseEnd
					break
				}
			}
		}
		if cut == 0 {
			cut = limit
		}
		pieces = append(pieces, Piece{ws[0].start, ws[cut-1].end, b})
		ws = ws[cut:]
	}
	return pieces
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
