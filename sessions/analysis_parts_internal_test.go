package sessions

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/textseg"
)

// checkParts holds what every split must: parts in order, each a run of
// the document's words (strings.Fields) that follows the one before with
// no word lost or repeated, each at most budget tokens unless it is one
// word.
func checkParts(t *testing.T, text string, budget int, parts []docPart) {
	t.Helper()
	all := strings.Fields(text)
	next := 0
	for i, p := range parts {
		if p.Start < 0 || p.End > len(text) || p.Start >= p.End {
			t.Fatalf("part %d: bytes %d to %d of %d", i, p.Start, p.End, len(text))
		}
		got := strings.Fields(p.text(text))
		if p.FirstWord != next || p.Words != len(got) || !slices.Equal(got, all[next:next+len(got)]) {
			t.Fatalf("part %d: first word %d (want %d), %d words (holds %d), not the document's words %d on", i, p.FirstWord, next, p.Words, len(got), next)
		}
		if p.Tokens != textseg.Tokens(p.text(text)) || (p.Tokens > budget && len(got) > 1) {
			t.Fatalf("part %d: %d tokens (counted %d), budget %d", i, p.Tokens, textseg.Tokens(p.text(text)), budget)
		}
		next += len(got)
	}
	if next != len(all) {
		t.Fatalf("the parts hold %d words of %d", next, len(all))
	}
}

func TestSplitParts(t *testing.T) {
	t.Parallel()
	para := func(words int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", words-1)) + " end." }
	t.Run("whole", func(t *testing.T) {
		text := "One short paragraph.\n\nAnd another."
		parts := splitParts(text, 100)
		checkParts(t, text, 100, parts)
		if len(parts) != 1 || parts[0].text(text) != text {
			t.Errorf("parts %+v", parts)
		}
		if splitParts(" \n\n\t", 100) != nil {
			t.Error("a blank text has parts")
		}
	})
	t.Run("paragraphs", func(t *testing.T) {
		// Five paragraphs of 11 tokens: two fit a part of 25.
		text := strings.Join([]string{para(10, "a"), para(10, "b"), para(10, "c"), para(10, "d"), para(10, "e")}, "\n\n")
		parts := splitParts(text, 25)
		checkParts(t, text, 25, parts)
		if len(parts) != 3 || !strings.HasPrefix(parts[1].text(text), "c c") || !strings.HasSuffix(parts[1].text(text), "end.") {
			t.Errorf("parts %q", texts(text, parts))
		}
	})
	t.Run("headings", func(t *testing.T) {
		// A part starts at the heading rather than filling up to the
		// budget, when the heading is at least half way in.
		text := strings.Join([]string{"# Costs", para(30, "a"), para(30, "b"), "Second chapter", para(30, "c"), para(30, "d")}, "\n\n")
		parts := splitParts(text, 100)
		checkParts(t, text, 100, parts)
		if len(parts) != 2 || !strings.HasPrefix(parts[1].text(text), "Second chapter") {
			t.Errorf("parts %q", texts(text, parts))
		}
	})
	t.Run("sentences and words", func(t *testing.T) {
		// One paragraph of 6 sentences of 6 tokens, then one sentence
		// of 40 words, in parts of 15.
		long := strings.Repeat("We went to the shop. ", 6) + strings.Repeat("word ", 40) + "last."
		parts := splitParts(long, 15)
		checkParts(t, long, 15, parts)
		if !strings.HasSuffix(parts[0].text(long), "shop.") {
			t.Errorf("the first part does not end at a sentence: %q", parts[0].text(long))
		}
	})
	t.Run("odd white space", func(t *testing.T) {
		// Words joined by CJK full stops without spaces are one word
		// to strings.Fields; no part may cut inside it.
		text := "\uFEFF  你好。再见。很好。\n\n\n" + strings.Repeat("x\u00a0y\u2003z.\r\n\r\n", 8) + "单词。单词。单词。单词。"
		for _, budget := range []int{1, 2, 3, 5, 8} {
			checkParts(t, text, budget, splitParts(text, budget))
		}
	})
}

func texts(doc string, parts []docPart) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.text(doc))
	}
	return out
}

func FuzzSplitParts(f *testing.F) {
	for _, s := range []string{"", "a", "One. Two.\n\nThree four five.", "# H\n\nx y z\n\nHeading\n\nMore text here.", "你好。再见。\n\n好", "a\u00a0b\u2028c\r\n\r\nd"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, budget uint8) {
		b := int(budget%40) + 1
		checkParts(t, text, b, splitParts(text, b))
	})
}

// TestMergeParts merges known answers for three parts: every position
// moves by the words of the parts before, the average is weighted by
// each part's words, and the token counts add up.
func TestMergeParts(t *testing.T) {
	t.Parallel()
	info := func(in, out int) *api.FeatureInfo {
		return &api.FeatureInfo{ModelUUID: "m", InputTokens: in, OutputTokens: out}
	}
	answer := func(words int, score float64, label string) *api.ReadResponse {
		return &api.ReadResponse{
			Metadata: api.ReadMetadata{RequestID: "r", Language: "en", SentimentInfo: info(words, 2), TopicsInfo: info(words, 1)},
			Results: api.ReadResults{
				Sentiments: &api.Sentiments{
					Segments: []api.SentimentSegment{{Text: "a", StartWord: 0, EndWord: 1, Sentiment: label, SentimentScore: score}, {Text: "b", StartWord: 2, EndWord: words - 1, Sentiment: label, SentimentScore: score}},
					Average:  api.SentimentAverage{Sentiment: label, SentimentScore: score},
				},
				Topics:  &api.Topics{Segments: []api.TopicSegment{{Text: "t", StartWord: 1, EndWord: 3, Topics: []api.Topic{{Topic: "Rent", ConfidenceScore: 0.5}}}}},
				Intents: &api.Intents{Segments: []api.IntentSegment{}},
			},
		}
	}
	answers := []partAnswer{
		{part: docPart{FirstWord: 0, Words: 10}, resp: answer(10, 0.9, "positive")},
		{part: docPart{FirstWord: 10, Words: 30}, resp: answer(30, -0.5, "negative")},
		{part: docPart{FirstWord: 40, Words: 60}, resp: answer(60, 0, "neutral")},
	}
	m := mergeParts(answers)
	var got [][2]int
	for _, s := range m.Results.Sentiments.Segments {
		got = append(got, [2]int{s.StartWord, s.EndWord})
	}
	if want := [][2]int{{0, 1}, {2, 9}, {10, 11}, {12, 39}, {40, 41}, {42, 99}}; !slices.Equal(got, want) {
		t.Errorf("sentiment segments %v, want %v", got, want)
	}
	got = got[:0]
	for _, s := range m.Results.Topics.Segments {
		got = append(got, [2]int{s.StartWord, s.EndWord})
	}
	if want := [][2]int{{1, 3}, {11, 13}, {41, 43}}; !slices.Equal(got, want) {
		t.Errorf("topic segments %v, want %v", got, want)
	}
	// (0.9*10 - 0.5*30 + 0*60) / 100 = -0.06: neutral.
	if avg := m.Results.Sentiments.Average; math.Abs(avg.SentimentScore+0.06) > 1e-12 || avg.Sentiment != "neutral" {
		t.Errorf("average %+v, want -0.06 neutral", avg)
	}
	if m.Results.Intents == nil || len(m.Results.Intents.Segments) != 0 || m.Results.Summary != nil {
		t.Errorf("intents %+v, summary %+v", m.Results.Intents, m.Results.Summary)
	}
	if si := m.Metadata.SentimentInfo; si.InputTokens != 100 || si.OutputTokens != 6 || m.Metadata.SummaryInfo != nil {
		t.Errorf("sentiment info %+v, summary info %+v", si, m.Metadata.SummaryInfo)
	}
	if w := m.Metadata.Warnings; len(w) != 1 || w[0].Type != "analysed_in_parts" || !strings.Contains(w[0].Message, "3 parts") {
		t.Errorf("warnings %+v", w)
	}
	// The parts' own answers are untouched.
	if answers[1].resp.Results.Sentiments.Segments[0].StartWord != 0 {
		t.Error("merging changed a part's answer")
	}
	if p := partsOf(answers); !slices.Equal(p, []AnalysisPart{{0, 9}, {10, 39}, {40, 99}}) {
		t.Errorf("parts %v", p)
	}
}

// TestSummarise summarises summaries, again where they are over budget,
// and splits a request the service refuses.
func TestSummarise(t *testing.T) {
	t.Parallel()
	var sent []string
	read := func(_ context.Context, text string) (*api.ReadResponse, error) {
		sent = append(sent, text)
		if textseg.Tokens(text) > 12 {
			return nil, &api.Error{Code: api.CodeTokenLimitExceeded}
		}
		// Each summary is the first two words of what it summarises.
		return &api.ReadResponse{Results: api.ReadResults{Summary: &api.ReadSummary{Text: strings.Join(strings.Fields(text)[:2], " ")}}}, nil
	}
	var progress [][2]int
	got, err := summarise(t.Context(), read, []string{"a b c d.", "f g h i.", "k l m n.", " ", "p q r s."}, 10, func(part, parts int) {
		progress = append(progress, [2]int{part, parts})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Round 1: 20 tokens in two parts of 10 -> "a b", "k l"; round 2:
	// "a b\n\nk l" -> "a b".
	if got != "a b" || len(sent) != 3 || sent[0] != "a b c d.\n\nf g h i." {
		t.Errorf("summary %q from requests %q", got, sent)
	}
	if want := [][2]int{{1, 2}, {2, 2}, {1, 1}}; !slices.Equal(progress, want) {
		t.Errorf("progress %v, want %v", progress, want)
	}
	// One summary is the summary; none is none.
	sent = nil
	if got, err := summarise(t.Context(), read, []string{"only one"}, 15, nil); got != "only one" || err != nil || len(sent) != 0 {
		t.Errorf("one summary: %q, %v, %d requests", got, err, len(sent))
	}
	// A refusal is split; a failure is returned.
	sent = nil
	if got, err := summarise(t.Context(), read, []string{"a b c d e f.", "h i j k l m."}, 100, nil); err != nil || got != "a b" {
		t.Errorf("after a refusal: %q, %v (sent %q)", got, err, sent)
	}
	boom := errors.New("boom")
	if _, err := summarise(t.Context(), func(context.Context, string) (*api.ReadResponse, error) { return nil, boom }, []string{"a", "b"}, 100, nil); !errors.Is(err, boom) {
		t.Errorf("a failed request: %v", err)
	}
}

func TestPageOf(t *testing.T) {
	t.Parallel()
	r := &AnalysisResult{}
	if r.PageOf(5) != 0 {
		t.Error("a source without pages has a page")
	}
	r.Pages = []PageStart{{1, 0}, {2, 100}, {4, 250}}
	for w, want := range map[int]int{-1: 1, 0: 1, 99: 1, 100: 2, 249: 2, 250: 4, 1 << 30: 4} {
		if got := r.PageOf(w); got != want {
			t.Errorf("PageOf(%d) = %d, want %d", w, got, want)
		}
	}
}
