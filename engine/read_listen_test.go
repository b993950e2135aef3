package engine

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/textseg"
)

// bare lower-cases a word and strips the punctuation the analysis adds.
func bare(s string) string {
	return strings.ToLower(strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) && r != '\'' }))
}

// checkTranscriptSegment checks that a segment's text is its words of the
// transcript: their punctuated forms when the request asked for them, else
// the bare words, punctuated for the analysis only.
func checkTranscriptSegment(t *testing.T, what string, words []api.Word, punctuated bool, text string, start, end int) {
	t.Helper()
	if start < 0 || end < start || end >= len(words) {
		t.Errorf("%s: words %d..%d out of %d", what, start, end, len(words))
		return
	}
	fields := strings.Fields(text)
	if len(fields) != end-start+1 {
		t.Errorf("%s: %q has %d words, its span %d..%d has %d", what, text, len(fields), start, end, end-start+1)
		return
	}
	for i, f := range fields {
		w := words[start+i]
		want, got := w.Word, bare(f)
		if punctuated {
			want, got = w.PunctuatedWord, f
		}
		if got != want {
			t.Errorf("%s: word %d is %q in the segment, %q in the transcript", what, start+i, f, want)
		}
	}
}

// TestBatchAudioIntelligence checks summarize, sentiment, topics and
// intents on a batch transcription: the analysis runs on the transcript,
// and every segment's word indexes point at the words array.
func TestBatchAudioIntelligence(t *testing.T) {
	t.Parallel()
	pcm := append(clipSamples(t, "0880"), silence(t, 16000)...)
	pcm = append(pcm, clipSamples(t, "0890")...)
	wav := wavBytes(t, pcm, 16000, 1)
	const all = "summarize=v2&sentiment=true&topics=true&intents=true"
	plain := postListen(t, "", wav, "").listenOK(t)
	for _, tc := range []struct {
		name       string
		query      string
		punctuated bool
	}{
		{"bare words", all, false},
		{"summarize=true, smart_format", "summarize=true&sentiment=true&smart_format=true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postListen(t, tc.query, wav, "").listenOK(t)
			alt := r.Results.Channels[0].Alternatives[0]
			words := alt.Words
			if len(words) < 20 {
				t.Fatalf("%d words: the recording has two sentences of speech", len(words))
			}
			if !tc.punctuated && !reflect.DeepEqual(words, plain.Results.Channels[0].Alternatives[0].Words) {
				t.Error("the analysis changed the transcript's words")
			}
			transcript := map[string]bool{}
			for _, w := range words {
				transcript[w.Word] = true
			}

			s := r.Results.Summary
			if s == nil || s.Result != "success" || s.Short == "" {
				t.Fatalf("summary %+v", s)
			}
			for _, f := range strings.Fields(s.Short) {
				if b := bare(f); !transcript[b] && !transcript[strings.ToLower(f)] {
					t.Errorf("summary word %q is not in the transcript: the summary is extractive", f)
				}
			}
			if si := r.Metadata.SummaryInfo; si == nil || si.ModelUUID != summaryModelUUID || si.InputTokens < len(words) || si.OutputTokens != textseg.Tokens(s.Short) {
				t.Errorf("summary_info %+v", si)
			}

			sent := r.Results.Sentiments
			if sent == nil || len(sent.Segments) == 0 {
				t.Fatalf("sentiments %+v", sent)
			}
			next := 0
			for i, seg := range sent.Segments {
				checkTranscriptSegment(t, "sentiment segment "+strconv.Itoa(i), words, tc.punctuated, seg.Text, seg.StartWord, seg.EndWord)
				if seg.StartWord != next {
					t.Errorf("sentiment segment %d starts at word %d, want %d: segments cover the transcript in order", i, seg.StartWord, next)
				}
				next = seg.EndWord + 1
				switch seg.Sentiment {
				case "positive", "neutral", "negative":
				default:
					t.Errorf("segment %d sentiment %q", i, seg.Sentiment)
				}
			}
			if next != len(words) {
				t.Errorf("sentiment segments end at word %d of %d", next, len(words))
			}
			if si := r.Metadata.SentimentInfo; si == nil || si.ModelUUID != sentimentModelUUID || si.InputTokens < len(words) {
				t.Errorf("sentiment_info %+v", si)
			}

			if !strings.Contains(tc.query, "topics") {
				if r.Results.Topics != nil || r.Results.Intents != nil || r.Metadata.TopicsInfo != nil || r.Metadata.IntentsInfo != nil {
					t.Errorf("topics and intents not asked for: %+v %+v", r.Results.Topics, r.Results.Intents)
				}
				return
			}
			if r.Results.Topics == nil || r.Metadata.TopicsInfo == nil || r.Metadata.TopicsInfo.ModelUUID != topicModelUUID {
				t.Fatalf("topics %+v, topics_info %+v", r.Results.Topics, r.Metadata.TopicsInfo)
			}
			for i, seg := range r.Results.Topics.Segments {
				checkTranscriptSegment(t, "topic segment "+strconv.Itoa(i), words, tc.punctuated, seg.Text, seg.StartWord, seg.EndWord)
				if len(seg.Topics) == 0 {
					t.Errorf("topic segment %d has no topics", i)
				}
			}
			if r.Results.Intents == nil || r.Metadata.IntentsInfo == nil || r.Metadata.IntentsInfo.ModelUUID != intentModelUUID {
				t.Fatalf("intents %+v, intents_info %+v", r.Results.Intents, r.Metadata.IntentsInfo)
			}
			for i, seg := range r.Results.Intents.Segments {
				checkTranscriptSegment(t, "intent segment "+strconv.Itoa(i), words, tc.punctuated, seg.Text, seg.StartWord, seg.EndWord)
			}
		})
	}
}

// TestAnalysisWords checks the text the analysis reads of a transcript:
// punctuated forms when the request asked for them, else the words
// punctuated for the analysis alone, never a different number of words.
func TestAnalysisWords(t *testing.T) {
	t.Parallel()
	w := func(word, punct string, start float64) api.Word {
		return api.Word{Word: word, PunctuatedWord: punct, Start: start, End: start + 0.3, Confidence: 0.9}
	}
	for _, tc := range []struct {
		name       string
		words      []api.Word
		boundaries []int
		want       []string
	}{
		{"empty", nil, nil, []string{}},
		{"punctuated", []api.Word{w("hello", "Hello.", 0), w("i'm", "I'm", 1), w("here", "here.", 1.4)}, nil, []string{"Hello.", "I'm", "here."}},
		{"bare, two utterances", []api.Word{w("hello", "", 0), w("there", "", 0.4), w("how", "", 2), w("are", "", 2.4), w("you", "", 2.8)}, []int{1, 4},
			[]string{"Hello", "there.", "How", "are", "you?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.words)
			got := analysisWords(tc.words, tc.boundaries)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("analysisWords = %q, want %q", got, tc.want)
			}
			if !reflect.DeepEqual(in, tc.words) {
				t.Error("the caller's words were changed")
			}
		})
	}
}
