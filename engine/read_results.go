package engine

import (
	"unicode"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/intel"
)

// The model UUIDs of the text-intelligence features, derived from the
// names package intel reports, so metadata.*_info names what really ran.
var (
	summaryModelUUID   = uuid.NewSHA1(modelNamespace, []byte(intel.SummaryModel)).String()
	sentimentModelUUID = uuid.NewSHA1(modelNamespace, []byte(intel.SentimentModel)).String()
	topicModelUUID     = uuid.NewSHA1(modelNamespace, []byte(intel.TopicModel)).String()
	intentModelUUID    = uuid.NewSHA1(modelNamespace, []byte(intel.IntentModel)).String()
)

func intelOptions(summarize, sentiment, topics, intents bool) intel.Options {
	return intel.Options{Summarize: summarize, Sentiment: sentiment, Topics: topics, Intents: intents}
}

// countTokens counts the tokens of a text as the engine's analysis reads
// it: each run of letters, digits and inner apostrophes is one token, and
// each other visible character (punctuation, symbols) is one more. The
// hosted service counts its own models' sub-word tokens, which run
// somewhat higher on the same text; the limit of 150,000 is applied to
// this count.
func countTokens(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && (r == '\'' || r == '’')):
			if !inWord {
				n++
				inWord = true
			}
		case unicode.IsSpace(r) || unicode.IsControl(r):
			inWord = false
		default:
			n++
			inWord = false
		}
	}
	return n
}

// identityWords maps analysis word indexes onto themselves: on /v1/read
// the indexes are those of the document's words.
func identityWords(i int) int { return i }

// intelOut is an analysis in the service's shapes.
type intelOut struct {
	sentiments *api.Sentiments
	topics     *api.Topics
	intents    *api.Intents

	summaryInfo, sentimentInfo, topicsInfo, intentsInfo *api.FeatureInfo
}

// convertIntel turns an analysis of a text of inputTokens tokens into the
// service's result shapes. word maps an index into strings.Fields of the
// analysed text onto the index the response reports. A feature's
// output_tokens counts the tokens of what it wrote: the summary's text, or
// the labels of its segments.
func convertIntel(res *intel.Result, inputTokens int, word func(int) int, opts intel.Options) intelOut {
	var out intelOut
	info := func(model string, outputTokens int) *api.FeatureInfo {
		return &api.FeatureInfo{ModelUUID: model, InputTokens: inputTokens, OutputTokens: outputTokens}
	}
	if opts.Summarize {
		out.summaryInfo = info(summaryModelUUID, countTokens(res.Summary))
	}
	if opts.Sentiment {
		s := &api.Sentiments{Segments: make([]api.SentimentSegment, 0, len(res.Sentiments)),
			Average: api.SentimentAverage{Sentiment: res.Average.Sentiment, SentimentScore: res.Average.Score}}
		if s.Average.Sentiment == "" {
			s.Average.Sentiment = intel.Neutral
		}
		written := countTokens(s.Average.Sentiment)
		for _, seg := range res.Sentiments {
			s.Segments = append(s.Segments, api.SentimentSegment{Text: seg.Text, StartWord: word(seg.StartWord), EndWord: word(seg.EndWord),
				Sentiment: seg.Sentiment, SentimentScore: seg.Score})
			written += countTokens(seg.Sentiment)
		}
		out.sentiments = s
		out.sentimentInfo = info(sentimentModelUUID, written)
	}
	if opts.Topics {
		t := &api.Topics{Segments: make([]api.TopicSegment, 0, len(res.Topics))}
		written := 0
		for _, seg := range res.Topics {
			ts := api.TopicSegment{Text: seg.Text, StartWord: word(seg.StartWord), EndWord: word(seg.EndWord), Topics: make([]api.Topic, 0, len(seg.Labels))}
			for _, l := range seg.Labels {
				ts.Topics = append(ts.Topics, api.Topic{Topic: l.Name, ConfidenceScore: l.Confidence})
				written += countTokens(l.Name)
			}
			t.Segments = append(t.Segments, ts)
		}
		out.topics = t
		out.topicsInfo = info(topicModelUUID, written)
	}
	if opts.Intents {
		in := &api.Intents{Segments: make([]api.IntentSegment, 0, len(res.Intents))}
		written := 0
		for _, seg := range res.Intents {
			is := api.IntentSegment{Text: seg.Text, StartWord: word(seg.StartWord), EndWord: word(seg.EndWord), Intents: make([]api.Intent, 0, len(seg.Labels))}
			for _, l := range seg.Labels {
				is.Intents = append(is.Intents, api.Intent{Intent: l.Name, ConfidenceScore: l.Confidence})
				written += countTokens(l.Name)
			}
			in.Segments = append(in.Segments, is)
		}
		out.intents = in
		out.intentsInfo = info(intentModelUUID, written)
	}
	return out
}
