package sessions

import (
	"context"
	"strings"
	"unicode"

	"github.com/earshot-app/earshot/store"
)

// LocateMax is how many file transcriptions a search reads back to find
// where their match was said: each is its saved response, parsed whole.
const LocateMax = 8

// LocateHit finds where in the recording a hit in a file transcription
// was said: the start of the caption (utterance) that holds the snippet's
// first marked word. A hit in a caption already has its time. It reports
// false when the transcription's captions do not hold the snippet (its
// words were formatted otherwise) or cannot be read.
func (w *Workspace) LocateHit(ctx context.Context, h store.Hit) (float64, bool) {
	if h.SegmentID > 0 {
		return h.Start, true
	}
	t, err := w.Transcript(ctx, h.SessionID)
	if err != nil {
		return 0, false
	}
	return locateSnippet(t.Captions, h.Snippet)
}

// locateSnippet returns the start of the caption that holds the first
// marked word of snippet (store's marks), found by the run of words
// around it; failing that, by the marked words alone.
func locateSnippet(caps []Caption, snippet string) (float64, bool) {
	frag := snippet
	for part := range strings.SplitSeq(snippet, "…") {
		if strings.Contains(part, store.HighlightStart) {
			frag = part
			break
		}
	}
	before, rest, ok := strings.Cut(frag, store.HighlightStart)
	if !ok {
		return 0, false
	}
	marked, _, _ := strings.Cut(rest, store.HighlightEnd)
	pre := searchTokens(before)
	hit := searchTokens(marked)
	all := searchTokens(strings.NewReplacer(store.HighlightStart, " ", store.HighlightEnd, " ").Replace(frag))
	if len(hit) == 0 {
		return 0, false
	}
	// Every caption's words in a row, each with its caption.
	var words []string
	var owner []int
	for i, c := range caps {
		for _, tok := range searchTokens(c.Text) {
			words = append(words, tok)
			owner = append(owner, i)
		}
	}
	for _, try := range []struct {
		seq []string
		at  int // the marked word's place in seq
	}{{all, len(pre)}, {hit, 0}} {
		if p := indexTokens(words, try.seq); p >= 0 {
			return caps[owner[p+try.at]].Start, true
		}
	}
	return 0, false
}

// searchTokens splits s into lower-case words as the search's tokenizer
// sees them: runs of letters and digits.
func searchTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// indexTokens returns where seq first occurs in words, or -1.
func indexTokens(words, seq []string) int {
	if len(seq) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(seq) <= len(words); i++ {
		for j, s := range seq {
			if words[i+j] != s {
				continue outer
			}
		}
		return i
	}
	return -1
}
