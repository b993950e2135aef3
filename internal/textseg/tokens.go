package textseg

import (
	"strings"
	"unicode"
)

// Tokens counts the tokens of text as Earshot counts them for the limit
// on the input of text intelligence: each run of letters, digits and
// inner apostrophes is one token, and each other visible character
// (punctuation, a symbol) is one more. The hosted service counts its
// models' sub-word tokens, which run somewhat higher on the same text, so
// a text over a limit by this count is over it by the service's too.
func Tokens(text string) int {
	n, _ := tokensUpTo(text, -1)
	return n
}

// FirstTokens returns the longest start of text that holds at most n
// tokens and ends at the end of a sentence, or between words when the
// first sentence alone holds more; text itself when it has no more than
// n tokens.
func FirstTokens(text string, n int) string {
	if n <= 0 {
		return ""
	}
	count, cut := tokensUpTo(text, n)
	if count <= n {
		return text
	}
	head := text[:cut]
	if end := Complete(head); end > 0 {
		head = head[:end]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace)
}

// tokensUpTo counts the tokens of text. With limit >= 0 it stops at the
// token after the limit-th, and returns limit+1 and the byte offset where
// that token starts.
func tokensUpTo(text string, limit int) (count, cut int) {
	inWord := false
	for i, r := range text {
		newToken := false
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && (r == '\'' || r == '’')):
			newToken = !inWord
			inWord = true
		case unicode.IsSpace(r) || unicode.IsControl(r):
			inWord = false
		default:
			newToken = true
			inWord = false
		}
		if newToken {
			count++
			if limit >= 0 && count > limit {
				return count, i
			}
		}
	}
	return count, len(text)
}
