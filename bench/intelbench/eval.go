package intelbench

import (
	"context"
	"fmt"
	"strings"
)

// Summarizer makes a summary of text.
type Summarizer func(ctx context.Context, text string) (string, error)

// LeadSummarizer is the lead-n baseline as a Summarizer.
func LeadSummarizer(n int) Summarizer {
	return func(_ context.Context, text string) (string, error) { return Lead(text, n), nil }
}

// SummaryScores are a system's ROUGE scores averaged over documents (macro
// average, as ROUGE reports), with the mean summary length in tokens.
type SummaryScores struct {
	Docs      int
	Rouge1    Score
	RougeL    Score
	MeanWords float64
}

// EvalSummaries scores sum's summary of each article's body against the
// article's headline. stem applies the Porter stemmer to both sides.
func EvalSummaries(ctx context.Context, docs []Article, sum Summarizer, stem bool) (SummaryScores, error) {
	var s SummaryScores
	for _, d := range docs {
		out, err := sum(ctx, d.Body)
		if err != nil {
			return SummaryScores{}, fmt.Errorf("summary of story %s: %w", d.ID, err)
		}
		cand, ref := Tokenize(out, stem), Tokenize(d.Headline, stem)
		addScore(&s.Rouge1, Rouge1(cand, ref))
		addScore(&s.RougeL, RougeL(cand, ref))
		s.MeanWords += float64(len(cand))
		s.Docs++
	}
	if s.Docs > 0 {
		n := float64(s.Docs)
		s.Rouge1 = Score{s.Rouge1.Precision / n, s.Rouge1.Recall / n, s.Rouge1.F1 / n}
		s.RougeL = Score{s.RougeL.Precision / n, s.RougeL.Recall / n, s.RougeL.F1 / n}
		s.MeanWords /= n
	}
	return s, nil
}

func addScore(sum *Score, s Score) {
	sum.Precision += s.Precision
	sum.Recall += s.Recall
	sum.F1 += s.F1
}

// Classifier labels the sentiment of text "positive", "neutral" or
// "negative", with a score in -1..1 whose sign is the polarity.
type Classifier func(ctx context.Context, text string) (label string, score float64, err error)

// SentimentScores counts a classifier's answers on sentences people labelled
// positive or negative.
type SentimentScores struct {
	Sentences int
	Positive  int // sentences people labelled positive
	Correct   int // label equal to the people's label
	Neutral   int // labelled neutral, so counted wrong in Correct
	SignRight int // score's sign agrees with the people (0 is wrong)
}

// Accuracy is the share of sentences given the people's label; a neutral
// answer is wrong, since every sentence was judged positive or negative.
func (s SentimentScores) Accuracy() float64 { return ratio(s.Correct, s.Sentences) }

// PolarAccuracy is the accuracy on the sentences not labelled neutral.
func (s SentimentScores) PolarAccuracy() float64 { return ratio(s.Correct, s.Sentences-s.Neutral) }

// SignAccuracy is the share whose score's sign agrees with the people.
func (s SentimentScores) SignAccuracy() float64 { return ratio(s.SignRight, s.Sentences) }

// Majority is the accuracy of always answering the commoner label.
func (s SentimentScores) Majority() float64 {
	return ratio(max(s.Positive, s.Sentences-s.Positive), s.Sentences)
}

// Add returns the counts of both.
func (s SentimentScores) Add(o SentimentScores) SentimentScores {
	return SentimentScores{
		Sentences: s.Sentences + o.Sentences, Positive: s.Positive + o.Positive,
		Correct: s.Correct + o.Correct, Neutral: s.Neutral + o.Neutral,
		SignRight: s.SignRight + o.SignRight,
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// EvalSentiment runs c over every sentence and counts its agreement with
// the people's labels.
func EvalSentiment(ctx context.Context, items []Labelled, c Classifier) (SentimentScores, error) {
	var s SentimentScores
	for i, it := range items {
		label, score, err := c(ctx, it.Text)
		if err != nil {
			return SentimentScores{}, fmt.Errorf("sentence %d: %w", i+1, err)
		}
		want := "negative"
		if it.Positive {
			want = "positive"
			s.Positive++
		}
		s.Sentences++
		switch strings.ToLower(label) {
		case want:
			s.Correct++
		case "neutral":
			s.Neutral++
		case "positive", "negative":
		default:
			return SentimentScores{}, fmt.Errorf("sentence %d: unknown label %q", i+1, label)
		}
		if (it.Positive && score > 0) || (!it.Positive && score < 0) {
			s.SignRight++
		}
	}
	return s, nil
}
