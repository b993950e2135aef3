package textseg

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// titles end with a period that ends no sentence: they stand before a
// name or go on mid-sentence ("Dr. Jones", "Roe v. Wade", "e.g. this").
// Keys are lower case, without the final period.
var titles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "mx": true, "dr": true, "prof": true, "st": true,
	"sr": true, "sra": true, "srta": true, "jr": true, "mme": true, "hr": true, "fr": true,
	"gen": true, "gov": true, "sen": true, "rep": true, "rev": true, "mt": true,
	"vs": true, "v": true, "cf": true, "approx": true, "ca": true,
	"e.g": true, "i.e": true, "z.b": true, "bzw": true,
}

// numbered end with a period that ends no sentence when a number follows
// ("No. 5", "Jan. 3", "fig. 2"), and are plain words otherwise ("I said
// no. Then...").
var numbered = map[string]bool{
	"no": true, "nr": true, "fig": true, "vol": true, "p": true, "pp": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true,
	"aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

// maxAbbreviation is the length of the longest key of titles and numbered.
const maxAbbreviation = 6

// endsSentence reports whether word w ends a sentence when next is the
// word after it ("" when none is known): w ends in a CJK stop, or in "!",
// "?", "…" or a period that is not an abbreviation's, and next does not
// start in lower case.
func endsSentence(w, next string) bool {
	core := trimClosers(w)
	r, size := utf8.DecodeLastRuneInString(core)
	switch {
	case isCJKStop(r):
		return true
	case isStop(r) && r != '.':
		// A lower-case word after the mark goes on with the sentence
		// ("Stop!" he said; Wait… what?).
		return !startsLower(next)
	case r != '.':
		return false
	}
	body := core[:len(core)-size]
	if strings.HasSuffix(body, ".") {
		return !startsLower(next) // an ellipsis written "..."
	}
	if isAbbreviation(trimOpeners(body), next) {
		return false
	}
	return !startsLower(next)
}

// isAbbreviation reports whether stem, a word without its final period,
// is an abbreviation that does not end a sentence before next ("" when
// not yet known): a title, a numbered one before a number, an initial
// ("J") or capital initials ("U.S", "J.R.R").
func isAbbreviation(stem, next string) bool {
	if stem == "" {
		return false
	}
	if len(stem) <= maxAbbreviation {
		var buf [maxAbbreviation]byte
		ascii := true
		for i := 0; i < len(stem); i++ {
			c := stem[i]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if ascii {
			key := buf[:len(stem)]
			if titles[string(key)] {
				return true
			}
			if numbered[string(key)] {
				// Until the next word is known, "No." may be "No. 5".
				r, _ := utf8.DecodeRuneInString(next)
				return next == "" || unicode.IsDigit(r)
			}
		}
	}
	return isInitials(stem)
}

// isInitials reports whether stem is one capital letter, or capital
// letters each followed by a period but the last ("U.S").
func isInitials(stem string) bool {
	for i := 0; ; {
		r, n := utf8.DecodeRuneInString(stem[i:])
		if !unicode.IsUpper(r) {
			return false
		}
		i += n
		if i == len(stem) {
			return true
		}
		if stem[i] != '.' || i+1 == len(stem) {
			return false
		}
		i++
	}
}

// EndsInStop reports whether word w ends in a mark that ends sentences
// (a period, "!", "?", "…" or a CJK stop), before any closing quotes or
// brackets. Unlike the sentences Sentences finds, it does not ask
// whether the period is an abbreviation's: it is for text already cut
// into lines, such as captions, where it tells a line that needs no full
// stop added.
func EndsInStop(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(trimClosers(w))
	return isStop(r)
}

// isStop reports whether r is a mark that ends sentences.
func isStop(r rune) bool {
	switch r {
	case '.', '!', '?', '‼', '⁇', '⁈', '⁉', '…':
		return true
	}
	return isCJKStop(r)
}

// EndsClause reports whether word w ends a clause inside a sentence: it
// ends in a comma, semicolon, colon or dash (with any closing quotes or
// brackets), or is a dash.
func EndsClause(w string) bool {
	if w == "-" || w == "--" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(trimClosers(w))
	switch r {
	case ',', ';', ':', '—', '–', '、', '，', '；', '：':
		return true
	}
	return false
}

// startsLower reports whether word w starts in lower case, past any
// opening quotes or brackets.
func startsLower(w string) bool {
	r, _ := utf8.DecodeRuneInString(trimOpeners(w))
	return unicode.IsLower(r)
}

// trimClosers returns w without the closing quotes and brackets it ends
// with.
func trimClosers(w string) string {
	for w != "" {
		r, n := utf8.DecodeLastRuneInString(w)
		if !isCloser(r) {
			break
		}
		w = w[:len(w)-n]
	}
	return w
}

// trimOpeners returns w without the opening quotes, brackets and
// inverted marks it starts with.
func trimOpeners(w string) string {
	for w != "" {
		r, n := utf8.DecodeRuneInString(w)
		if !isOpener(r) {
			break
		}
		w = w[n:]
	}
	return w
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', ')', ']', '}', '»', '›', '」', '』', '）', '】', '》', '〉':
		return true
	}
	return false
}

func isOpener(r rune) bool {
	switch r {
	case '"', '\'', '“', '‘', '(', '[', '{', '«', '‹', '¿', '¡', '「', '『', '（', '【', '《', '〈':
		return true
	}
	return false
}

// isCJKStop reports whether r is a full stop, exclamation or question
// mark of the CJK scripts, which end a sentence with no space after.
func isCJKStop(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '｡'
}
