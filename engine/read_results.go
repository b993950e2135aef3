package engine

import (
	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/intel"
	"github.com/earshot-app/earshot/internal/textseg"
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
		out.summaryInfo = info(summaryModelUUID, textseg.Tokens(res.Summary))
	}
	if opts.Sentiment {
		s := &api.Sentiments{Segments: make([]api.SentimentSegment, 0, len(res.Sentiments)),
			Average: api.SentimentAverage{Sentiment: res.Average.Sentiment, SentimentScore: res.Average.Score}}
		if s.Average.Sentiment == "" {
			s.Average.Sentiment = intel.Neutral
		}
		written := textseg.Tokens(s.Average.Sentiment)
		for _, seg := range res.Sentiments {
			s.Segments = append(s.Segments, api.SentimentSegment{Text: seg.Text, StartWord: word(seg.StartWord), EndWord: word(seg.EndWord),
				Sentiment: seg.Sentiment, SentimentScore: seg.Score})
			written += textseg.Tokens(seg.Sentiment)
		}
		out.sentiments = s
		out.sentimentInfo = info(sentimentModelUUID, written)
	}
	if opts.Topics {
		segs, written := convertLabeled(res.Topics, word,
			func(name string, c float64) api.Topic { return api.Topic{Topic: name, ConfidenceScore: c} },
			func(seg intel.Segment, start, end int, ts []api.Topic) api.TopicSegment {
				return api.TopicSegment{Text: seg.Text, StartWord: start, EndWord: end, Topics: ts}
			})
		out.topics = &api.Topics{Segments: segs}
		out.topicsInfo = info(topicModelUUID, written)
	}
	if opts.Intents {
		segs, written := convertLabeled(res.Intents, word,
			func(name string, c float64) api.Intent { return api.Intent{Intent: name, ConfidenceScore: c} },
			func(seg intel.Segment, start, end int, is []api.Intent) api.IntentSegment {
				return api.IntentSegment{Text: seg.Text, StartWord: start, EndWord: end, Intents: is}
			})
		out.intents = &api.Intents{Segments: segs}
		out.intentsInfo = info(intentModelUUID, written)
	}
	return out
}

// convertLabeled converts the segments of topics or intents, which differ
// only in their types: label makes one of the service's labels, seg one
// of its segments, from the segment and its word span mapped by word. It
// also returns the tokens the labels write.
func convertLabeled[S, L any](segs []intel.LabeledSegment, word func(int) int,
	label func(name string, confidence float64) L,
	seg func(seg intel.Segment, start, end int, labels []L) S) ([]S, int) {
	out := make([]S, 0, len(segs))
	written := 0
	for _, sg := range segs {
		labels := make([]L, 0, len(sg.Labels))
		for _, l := range sg.Labels {
			labels = append(labels, label(l.Name, l.Confidence))
			written += textseg.Tokens(l.Name)
		}
		out = append(out, seg(sg.Segment, word(sg.StartWord), word(sg.EndWord), labels))
	}
	return out, written
}
