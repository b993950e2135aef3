package format

import (
	"strconv"
	"strings"

	"github.com/earshot-app/earshot/api"
)

// Paragraph defaults, used when ParagraphOptions leaves a field at zero.
const (
	// DefaultParagraphPause is the silence, in seconds, before a sentence
	// that starts a new paragraph.
	DefaultParagraphPause = 1.5
	// DefaultParagraphWords is the length, in words, after which the next
	// sentence starts a new paragraph.
	DefaultParagraphWords = 60
)

// ParagraphOptions tunes Paragraphs.
type ParagraphOptions struct {
	// Pause is the silence before a sentence, in seconds, that starts a new
	// paragraph; zero or less means DefaultParagraphPause.
	Pause float64
	// MaxWords is the paragraph length after which the next sentence starts
	// a new paragraph; zero or less means DefaultParagraphWords.
	MaxWords int
}

// Paragraphs groups the sentences of words into paragraphs, the
// paragraphs block of an alternative (paragraphs=true). sentenceEnds are the
// indexes of the words that end a sentence, as Result.SentenceEnds gives
// them; invalid entries are ignored and the last word always ends one. A new
// paragraph starts after a long pause, when the speaker changes, or when the
// current paragraph has reached MaxWords words.
//
// The transcript has the service's shape: it starts with "\n", paragraphs
// are separated by "\n\n", and with diarisation a paragraph whose speaker
// differs from the previous one's starts with "Speaker N: ".
func Paragraphs(words []api.Word, sentenceEnds []int, opts ParagraphOptions) api.Paragraphs {
	out := api.Paragraphs{Paragraphs: []api.Paragraph{}}
	if len(words) == 0 {
		return out
	}
	pause := opts.Pause
	if !(pause > 0) {
		pause = DefaultParagraphPause
	}
	maxWords := opts.MaxWords
	if maxWords <= 0 {
		maxWords = DefaultParagraphWords
	}

	var b strings.Builder
	var cur *api.Paragraph
	var prevSpeaker *int
	text := func() {
		if cur == nil {
			return
		}
		first := b.Len() == 0
		if first {
			b.WriteString("\n")
		} else {
			b.WriteString("\n\n")
		}
		if cur.Speaker != nil && (first || prevSpeaker == nil || *prevSpeaker != *cur.Speaker) {
			b.WriteString("Speaker " + strconv.Itoa(*cur.Speaker) + ": ")
		}
		for k, s := range cur.Sentences {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s.Text)
		}
		prevSpeaker = cur.Speaker
	}

	start := 0
	for _, end := range cleanEnds(sentenceEnds, len(words)) {
		sent := words[start : end+1]
		first := sent[0]
		newPara := cur == nil ||
			first.Start-words[start-1].End >= pause ||
			speakerChange(words[start-1], first) ||
			cur.NumWords >= maxWords
		if newPara {
			text()
			out.Paragraphs = append(out.Paragraphs, api.Paragraph{Speaker: copyInt(first.Speaker), Start: first.Start})
			cur = &out.Paragraphs[len(out.Paragraphs)-1]
		}
		cur.Sentences = append(cur.Sentences, api.Sentence{Text: Transcript(sent), Start: first.Start, End: sent[len(sent)-1].End})
		cur.NumWords += len(sent)
		cur.End = sent[len(sent)-1].End
		start = end + 1
	}
	text()
	out.Transcript = b.String()
	return out
}

// cleanEnds keeps the strictly ascending sentence ends inside [0, n) and
// makes sure the last word ends a sentence.
func cleanEnds(ends []int, n int) []int {
	out := make([]int, 0, len(ends)+1)
	for _, e := range ends {
		if e >= 0 && e < n && (len(out) == 0 || e > out[len(out)-1]) {
			out = append(out, e)
		}
	}
	if len(out) == 0 || out[len(out)-1] != n-1 {
		out = append(out, n-1)
	}
	return out
}

// copyInt returns a pointer to a copy of *p, or nil.
func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
