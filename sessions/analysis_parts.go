package sessions

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/textseg"
)

// partBudget is the most tokens (textseg.Tokens) Earshot puts in one part
// of a long document: four fifths of the service's limit. The hosted
// service counts its models' sub-word tokens, more than Earshot's count;
// a part it still refuses is split again.
const partBudget = api.ReadTokenLimit * 4 / 5

// maxSummaryRounds bounds how many times summaries are summarised again:
// each round shrinks the text by the parts' summary ratio, so a few
// rounds bring any document Earshot reads under the limit.
const maxSummaryRounds = 8

// AnalysisPart is one part of a document analysed in parts: words
// StartWord to EndWord (inclusive) of the whole document, as WordIndex
// counts them.
type AnalysisPart struct {
	StartWord int `json:"start_word"`
	EndWord   int `json:"end_word"`
}

// docPart is a stretch of a document sent in one request.
type docPart struct {
	Start, End int // bytes of the whole text, from a word's start to a word's end
	FirstWord  int // the index of its first word in the whole text
	Words      int
	Tokens     int
}

func (p docPart) text(doc string) string { return doc[p.Start:p.End] }

// splitUnit is a stretch of a document that is never cut further when it
// fits a part: a paragraph, else a sentence, else a run of words.
type splitUnit struct {
	start, end int
	tokens     int
	heading    bool
}

// splitParts cuts text into parts of at most budget tokens each, at
// blank lines between paragraphs, preferring to start a part at a
// heading; a paragraph over budget is cut between sentences, and a
// sentence over budget between words. Every cut falls in white space, so
// the parts' words (strings.Fields) are exactly the document's, in order:
// a part's FirstWord plus its Words is the next part's FirstWord. A
// single word of more than budget tokens makes a part over budget (the
// service refuses it). A text without words has no parts.
func splitParts(text string, budget int) []docPart {
	budget = max(budget, 1)
	words := IndexWords(text)
	if words.Len() == 0 {
		return nil
	}
	var units []splitUnit
	for _, p := range textseg.Paragraphs(text) {
		units = appendUnits(units, text, p.Start, p.End, budget, isHeading(text[p.Start:p.End]))
	}
	// Pack units into parts: a part ends before the unit that would take
	// it over budget, or, when that unit is far enough in, at the last
	// heading in it.
	var cuts []int // unit indexes where a part starts
	cuts = append(cuts, 0)
	n := 0            // tokens of the current part
	first := 0        // unit index where the current part starts
	lastHeading := -1 // unit index of the last heading in the current part, after its first unit
	tokensBefore := 0 // tokens of the current part before lastHeading
	for i, u := range units {
		if i > first && n+u.tokens > budget {
			if lastHeading > 0 && tokensBefore >= budget/2 {
				cuts = append(cuts, lastHeading)
				first, n = lastHeading, n-tokensBefore
			}
			if n+u.tokens > budget {
				cuts = append(cuts, i)
				first, n = i, 0
			}
			lastHeading = -1
		}
		if u.heading && i > first {
			lastHeading, tokensBefore = i, n
		}
		n += u.tokens
	}
	// Byte cuts, moved to the start of the whitespace-separated word a
	// unit boundary falls inside (textseg ends a word after a CJK full
	// stop; WordIndex does not), or past it when that would leave the
	// part before empty.
	starts := make([]int, 0, len(cuts))
	for _, c := range cuts[1:] {
		off := units[c].start
		prev := 0
		if len(starts) > 0 {
			prev = starts[len(starts)-1]
		}
		if r, _ := utf8.DecodeLastRuneInString(text[:off]); off > 0 && !unicode.IsSpace(r) {
			k := sort.SearchInts(words.starts, off) // the word after the one off is in
			switch {
			case k > 0 && words.starts[k-1] > prev:
				off = words.starts[k-1]
			case k < words.Len():
				off = words.starts[k]
			default:
				continue
			}
		}
		if off > prev {
			starts = append(starts, off)
		}
	}
	parts := make([]docPart, 0, len(starts)+1)
	firstWord := 0
	for i := 0; i <= len(starts); i++ {
		to := len(text)
		if i < len(starts) {
			to = starts[i]
		}
		next := sort.SearchInts(words.starts, to)
		if i == len(starts) {
			next = words.Len()
		}
		if next > firstWord {
			p := docPart{Start: words.starts[firstWord], End: words.ends[next-1], FirstWord: firstWord, Words: next - firstWord}
			p.Tokens = textseg.Tokens(p.text(text))
			parts = append(parts, p)
		}
		firstWord = next
	}
	return parts
}

// appendUnits adds text[start:end] as one unit when it fits budget, else
// its sentences (a paragraph) or its words (a sentence), packed into as
// few units under budget as they go.
func appendUnits(units []splitUnit, text string, start, end, budget int, heading bool) []splitUnit {
	tokens := textseg.Tokens(text[start:end])
	if tokens <= budget {
		return append(units, splitUnit{start: start, end: end, tokens: tokens, heading: heading})
	}
	var pieces []textseg.Span
	for _, s := range textseg.Sentences(text[start:end]) {
		pieces = append(pieces, textseg.Span{Start: start + s.Start, End: start + s.End})
	}
	if len(pieces) <= 1 {
		pieces = pieces[:0]
		for _, w := range textseg.Words(text[start:end]) {
			pieces = append(pieces, textseg.Span{Start: start + w.Start, End: start + w.End})
		}
		if len(pieces) <= 1 {
			return append(units, splitUnit{start: start, end: end, tokens: tokens, heading: heading})
		}
		return packUnits(units, text, pieces, budget, heading, false)
	}
	return packUnits(units, text, pieces, budget, heading, true)
}

// packUnits packs pieces (sentences, or words) into units of at most
// budget tokens; a sentence over budget is cut between its words.
func packUnits(units []splitUnit, text string, pieces []textseg.Span, budget int, heading, sentences bool) []splitUnit {
	cur := splitUnit{start: -1, heading: heading}
	flush := func() {
		if cur.start >= 0 {
			units = append(units, cur)
		}
		cur = splitUnit{start: -1}
	}
	for _, p := range pieces {
		t := textseg.Tokens(text[p.Start:p.End])
		if t > budget && sentences {
			flush()
			units = appendUnits(units, text, p.Start, p.End, budget, false)
			continue
		}
		if cur.start >= 0 && cur.tokens+t > budget {
			flush()
		}
		if cur.start < 0 {
			cur.start = p.Start
		}
		cur.end, cur.tokens = p.End, cur.tokens+t
	}
	flush()
	return units
}

// isHeading reports whether a paragraph reads as a heading: a Markdown
// heading, or one short line that does not end as a sentence does.
func isHeading(p string) bool {
	if strings.HasPrefix(p, "#") {
		return true
	}
	if strings.ContainsRune(p, '\n') || len(strings.Fields(p)) > 12 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(p)
	return !strings.ContainsRune(".!?,;:…\"”'’)", r)
}

// partAnswer is the service's answer for one part.
type partAnswer struct {
	part docPart
	resp *api.ReadResponse
}

// isTokenLimit reports whether err is the service refusing a text as
// over its token limit.
func isTokenLimit(err error) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Code == api.CodeTokenLimitExceeded
}

// resplit cuts a part the service refused as too long into smaller
// parts (of at most half its tokens), numbered in the whole document; it
// reports false when the part cannot be cut (a single word).
func resplit(doc string, p docPart) ([]docPart, bool) {
	sub := splitParts(p.text(doc), max(p.Tokens/2, 1))
	if len(sub) < 2 {
		return nil, false
	}
	for i := range sub {
		sub[i].Start += p.Start
		sub[i].End += p.Start
		sub[i].FirstWord += p.FirstWord
	}
	return sub, true
}

// sentimentThreshold separates a neutral average from a positive or
// negative one when parts' averages are merged: the band the local
// engine labels with (the hosted service labels 0.058 neutral).
const sentimentThreshold = 0.1

// sentimentLabel names a sentiment score.
func sentimentLabel(score float64) string {
	switch {
	case score >= sentimentThreshold:
		return "positive"
	case score <= -sentimentThreshold:
		return "negative"
	}
	return "neutral"
}

// mergeParts makes one answer for the whole document out of its parts'
// answers, in order: segments with their words numbered in the whole
// document, the average sentiment weighted by each part's words, each
// feature's token counts added up. The summary is left for the caller
// (summariseParts). The metadata is the first part's, with every part's
// warnings.
func mergeParts(answers []partAnswer) *api.ReadResponse {
	out := &api.ReadResponse{}
	if len(answers) == 0 {
		return out
	}
	out.Metadata = answers[0].resp.Metadata
	out.Metadata.Warnings = nil
	out.Metadata.SummaryInfo, out.Metadata.SentimentInfo, out.Metadata.TopicsInfo, out.Metadata.IntentsInfo = nil, nil, nil, nil
	var (
		scoreSum float64
		scored   int
	)
	for _, a := range answers {
		m, r, shift := a.resp.Metadata, a.resp.Results, a.part.FirstWord
		out.Metadata.Warnings = append(out.Metadata.Warnings, m.Warnings...)
		out.Metadata.SummaryInfo = addInfo(out.Metadata.SummaryInfo, m.SummaryInfo)
		out.Metadata.SentimentInfo = addInfo(out.Metadata.SentimentInfo, m.SentimentInfo)
		out.Metadata.TopicsInfo = addInfo(out.Metadata.TopicsInfo, m.TopicsInfo)
		out.Metadata.IntentsInfo = addInfo(out.Metadata.IntentsInfo, m.IntentsInfo)
		if s := r.Sentiments; s != nil {
			if out.Results.Sentiments == nil {
				out.Results.Sentiments = &api.Sentiments{Segments: []api.SentimentSegment{}}
			}
			for _, seg := range s.Segments {
				seg.StartWord += shift
				seg.EndWord += shift
				out.Results.Sentiments.Segments = append(out.Results.Sentiments.Segments, seg)
			}
			scoreSum += s.Average.SentimentScore * float64(a.part.Words)
			scored += a.part.Words
		}
		if t := r.Topics; t != nil {
			if out.Results.Topics == nil {
				out.Results.Topics = &api.Topics{Segments: []api.TopicSegment{}}
			}
			for _, seg := range t.Segments {
				seg.StartWord += shift
				seg.EndWord += shift
				out.Results.Topics.Segments = append(out.Results.Topics.Segments, seg)
			}
		}
		if in := r.Intents; in != nil {
			if out.Results.Intents == nil {
				out.Results.Intents = &api.Intents{Segments: []api.IntentSegment{}}
			}
			for _, seg := range in.Segments {
				seg.StartWord += shift
				seg.EndWord += shift
				out.Results.Intents.Segments = append(out.Results.Intents.Segments, seg)
			}
		}
	}
	if s := out.Results.Sentiments; s != nil && scored > 0 {
		s.Average.SentimentScore = scoreSum / float64(scored)
		s.Average.Sentiment = sentimentLabel(s.Average.SentimentScore)
	}
	if len(answers) > 1 {
		out.Metadata.Warnings = append(out.Metadata.Warnings, api.ResponseWarning{
			Parameter: "text",
			Type:      "analysed_in_parts",
			Message: fmt.Sprintf("the document is longer than one request takes (%d tokens): it was analysed in %d parts, "+
				"merged here with word positions in the whole document; the summary is made from the parts' summaries",
				api.ReadTokenLimit, len(answers)),
		})
	}
	return out
}

// addInfo adds b's token counts to a, a copy of the first info seen.
func addInfo(a, b *api.FeatureInfo) *api.FeatureInfo {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	a.InputTokens += b.InputTokens
	a.OutputTokens += b.OutputTokens
	return a
}

// partsOf lists the word ranges of parts.
func partsOf(answers []partAnswer) []AnalysisPart {
	if len(answers) < 2 {
		return nil
	}
	out := make([]AnalysisPart, len(answers))
	for i, a := range answers {
		out[i] = AnalysisPart{StartWord: a.part.FirstWord, EndWord: a.part.FirstWord + a.part.Words - 1}
	}
	return out
}

// summarise makes one summary of summaries: their text joined, sent for
// a summary only, and where that is over budget, cut into parts whose
// summaries are summarised again. progress reports each request (round,
// i of n).
func summarise(ctx context.Context, read func(context.Context, string) (*api.ReadResponse, error), summaries []string, budget int, progress func(part, parts int)) (string, error) {
	var texts []string
	for _, s := range summaries {
		if s = strings.TrimSpace(s); s != "" {
			texts = append(texts, s)
		}
	}
	for round := 0; ; round++ {
		switch len(texts) {
		case 0:
			return "", nil
		case 1:
			return texts[0], nil
		}
		joined := strings.Join(texts, "\n\n")
		parts := splitParts(joined, budget)
		if round >= maxSummaryRounds {
			// Summaries that no longer shrink: the first part's worth.
			return strings.TrimSpace(textseg.FirstTokens(joined, budget)), nil
		}
		var next []string
		for i := 0; i < len(parts); i++ {
			if progress != nil {
				progress(i+1, len(parts))
			}
			resp, err := read(ctx, parts[i].text(joined))
			if isTokenLimit(err) {
				if sub, ok := resplit(joined, parts[i]); ok {
					parts = append(parts[:i], append(sub, parts[i+1:]...)...)
					i--
					continue
				}
			}
			if err != nil {
				return "", err
			}
			if s := resp.Results.Summary; s != nil && strings.TrimSpace(s.Text) != "" {
				next = append(next, strings.TrimSpace(s.Text))
			}
		}
		if len(parts) == 1 {
			return strings.Join(next, "\n\n"), nil
		}
		texts = next
	}
}
