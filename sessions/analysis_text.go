package sessions

import (
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

// Span is a range of bytes of a document, [Start, End).
type Span struct{ Start, End int }

// WordIndex finds the words of a document as the service counts them:
// the whitespace-separated fields of the text (strings.Fields), numbered
// from 0. Segments of an analysis (start_word, end_word, both inclusive)
// index these words; the index turns them into byte ranges to highlight.
type WordIndex struct {
	starts, ends []int
}

// IndexWords returns the word index of text.
func IndexWords(text string) *WordIndex {
	x := &WordIndex{}
	in := false
	for i, r := range text {
		space := unicode.IsSpace(r)
		switch {
		case !space && !in:
			x.starts = append(x.starts, i)
			in = true
		case space && in:
			x.ends = append(x.ends, i)
			in = false
		}
	}
	if in {
		x.ends = append(x.ends, len(text))
	}
	return x
}

// Len is the number of words.
func (x *WordIndex) Len() int { return len(x.starts) }

// Span returns the bytes from the start of word startWord to the end of
// word endWord (inclusive, as the service counts). Indexes beyond the
// document, which a service may send, are clamped to it; it reports false
// when nothing of the range lies in the document or the range is
// reversed. It never panics.
func (x *WordIndex) Span(startWord, endWord int) (Span, bool) {
	n := len(x.starts)
	if n == 0 || startWord > endWord || endWord < 0 || startWord >= n {
		return Span{}, false
	}
	startWord = max(startWord, 0)
	endWord = min(endWord, n-1)
	return Span{Start: x.starts[startWord], End: x.ends[endWord]}, true
}

// Passage returns the text of words startWord to endWord of text (which
// must be the text x indexes), or fallback when the range is not in the
// document.
func (x *WordIndex) Passage(text string, startWord, endWord int, fallback string) string {
	sp, ok := x.Span(startWord, endWord)
	if !ok || sp.End > len(text) || !utf8.ValidString(text[sp.Start:sp.End]) {
		return fallback
	}
	return text[sp.Start:sp.End]
}

// TimeRange is where words startWord to endWord (inclusive) of a batch
// transcription's words lie in the audio, in seconds. Out-of-range
// indexes are clamped; it reports false when the range holds no word.
func TimeRange(words []api.Word, startWord, endWord int) (start, end float64, ok bool) {
	n := len(words)
	if n == 0 || startWord > endWord || endWord < 0 || startWord >= n {
		return 0, 0, false
	}
	startWord = max(startWord, 0)
	endWord = min(endWord, n-1)
	return words[startWord].Start, max(words[endWord].End, words[startWord].Start), true
}
