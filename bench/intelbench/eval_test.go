package intelbench

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestEvalSummaries(t *testing.T) {
	docs := []Article{
		// lead-1 "Acme buys Bolt." against "ACME BUYS BOLT": 3 of 3 each side.
		{ID: "1", Headline: "ACME BUYS BOLT", Body: "Acme buys Bolt. The price was high."},
		// lead-1 "Rain fell." (2 tokens) against "DROUGHT ENDS" (2): nothing shared.
		{ID: "2", Headline: "DROUGHT ENDS", Body: "Rain fell. The drought ends."},
	}
	got, err := EvalSummaries(context.Background(), docs, LeadSummarizer(1), false)
	if err != nil {
		t.Fatal(err)
	}
	want := SummaryScores{Docs: 2, Rouge1: Score{0.5, 0.5, 0.5}, RougeL: Score{0.5, 0.5, 0.5}, MeanWords: 2.5}
	if got != want {
		t.Errorf("EvalSummaries = %+v, want %+v", got, want)
	}
	boom := errors.New("boom")
	_, err = EvalSummaries(context.Background(), docs, func(context.Context, string) (string, error) { return "", boom }, false)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom wrapped", err)
	}
}

func TestEvalSentiment(t *testing.T) {
	items := []Labelled{
		{"good", true},     // positive, +0.5: right, sign right
		{"bad", false},     // negative, -0.5: right, sign right
		{"meh good", true}, // neutral, +0.02: wrong, sign right
		{"meh", false},     // neutral, 0: wrong, sign wrong
		{"good bad", false},
	}
	classify := func(_ context.Context, text string) (string, float64, error) {
		switch {
		case strings.HasPrefix(text, "meh"):
			if strings.Contains(text, "good") {
				return "neutral", 0.02, nil
			}
			return "neutral", 0, nil
		case strings.HasPrefix(text, "good"):
			return "positive", 0.5, nil // wrong on "good bad"
		}
		return "Negative", -0.5, nil
	}
	got, err := EvalSentiment(context.Background(), items, classify)
	if err != nil {
		t.Fatal(err)
	}
	want := SentimentScores{Sentences: 5, Positive: 2, Correct: 2, Neutral: 2, SignRight: 3}
	if got != want {
		t.Fatalf("EvalSentiment = %+v, want %+v", got, want)
	}
	for name, c := range map[string]struct{ got, want float64 }{
		"accuracy": {got.Accuracy(), 0.4}, "polar": {got.PolarAccuracy(), 2.0 / 3},
		"sign": {got.SignAccuracy(), 0.6}, "majority": {got.Majority(), 0.6},
		"added majority": {got.Add(got).Majority(), 0.6},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	if (SentimentScores{}).Accuracy() != 0 {
		t.Error("accuracy of nothing is not 0")
	}
	_, err = EvalSentiment(context.Background(), items, func(context.Context, string) (string, float64, error) {
		return "mixed", 0, nil
	})
	if err == nil {
		t.Error("unknown label accepted")
	}
}
