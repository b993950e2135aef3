package intel

import (
	"context"
	"fmt"
)

// Model names the engine reports in metadata.*_info, so that a client can see
// which local method produced a result instead of a made-up hosted model id.
const (
	SummaryModel   = "earshot-textrank-1"
	SentimentModel = "earshot-vader-1"
	TopicModel     = "earshot-keyphrase-1"
	IntentModel    = "earshot-verbobject-1"
)

// Sentiment labels, as the service spells them.
const (
	Positive = "positive"
	Neutral  = "neutral"
	Negative = "negative"
)

// Options selects the features Analyze computes; features that are off cost
// nothing, so callers pass exactly the query switches they were given.
type Options struct{ Summarize, Sentiment, Topics, Intents bool }

// Segment spans words StartWord..EndWord (inclusive) of strings.Fields(text),
// so a caller whose text is transcript words joined by spaces can map a
// segment straight back to word timings. Text is those words joined by single
// spaces.
type Segment struct {
	Text               string
	StartWord, EndWord int
}

// SentimentSegment is a run of sentences with one sentiment label. Score is
// in -1..1 (VADER compound, length-weighted over the run's sentences).
type SentimentSegment struct {
	Segment
	Sentiment string // Positive, Neutral or Negative
	Score     float64
}

// Label is one topic or intent with a confidence in 0..1.
type Label struct {
	Name       string
	Confidence float64
}

// LabeledSegment is a segment with the topics or intents found in it. Only
// segments with at least one label are reported.
type LabeledSegment struct {
	Segment
	Labels []Label
}

// Sentiment is a label with its score in -1..1, used for the document
// average.
type Sentiment struct {
	Sentiment string
	Score     float64
}

// Result holds what Analyze found; fields of features that were not
// requested are left zero.
type Result struct {
	Summary    string             // set when Options.Summarize
	Sentiments []SentimentSegment // with Options.Sentiment
	Average    Sentiment          // with Options.Sentiment
	Topics     []LabeledSegment   // with Options.Topics
	Intents    []LabeledSegment   // with Options.Intents
}

// Analyze runs the requested features over English text. It is
// deterministic, needs no model files or network, and returns ctx.Err()
// (wrapped) when ctx ends during a long document. Any text is accepted:
// empty, non-English or binary input gives empty or neutral results, never
// an error or a panic.
func Analyze(ctx context.Context, text string, opts Options) (res *Result, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("intel: %w", err)
	}
	defer func() {
		// analyze is ours, tested and fuzzed (the fuzz test calls it without
		// this guard); the guard only keeps an unknown bug on hostile text
		// from taking a server down.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("intel: internal error: %v", r)
		}
	}()
	return analyze(ctx, text, opts)
}

func analyze(ctx context.Context, text string, opts Options) (*Result, error) {
	var err error
	d := newDoc(text)
	res := &Result{}
	if opts.Summarize {
		if res.Summary, err = d.summarize(ctx); err != nil {
			return nil, fmt.Errorf("intel: summary: %w", err)
		}
	}
	if opts.Sentiment {
		if res.Sentiments, res.Average, err = d.sentiments(ctx); err != nil {
			return nil, fmt.Errorf("intel: sentiment: %w", err)
		}
	}
	if opts.Topics {
		if res.Topics, err = d.topics(ctx); err != nil {
			return nil, fmt.Errorf("intel: topics: %w", err)
		}
	}
	if opts.Intents {
		if res.Intents, err = d.intents(ctx); err != nil {
			return nil, fmt.Errorf("intel: intents: %w", err)
		}
	}
	return res, nil
}
