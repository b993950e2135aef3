package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// partsReader answers each request as a service would, in a shape the
// test can check: one sentiment segment over each part's words (its
// score the part's number, in order), one topic on its first two words,
// an intent on its last word, and a summary "part N". A request for a
// summary only (the parts' summaries) is answered with its first words.
// A text over limit tokens is refused as too long; with block set, the
// request for part block waits for its context.
type partsReader struct {
	limit int
	block int
	held  chan struct{} // closed when the blocked request is made

	mu       sync.Mutex
	requests []readCall
}

type readCall struct {
	text string
	opts api.ReadOptions
}

func (p *partsReader) calls() []readCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

func (p *partsReader) Read(ctx context.Context, in api.ReadRequest, opts api.ReadOptions) (*api.ReadResponse, error) {
	p.mu.Lock()
	p.requests = append(p.requests, readCall{in.Text, opts})
	n := 0
	for _, c := range p.requests {
		if c.opts.Sentiment && (p.limit == 0 || textseg.Tokens(c.text) <= p.limit) {
			n++
		}
	}
	p.mu.Unlock()
	if p.limit > 0 && textseg.Tokens(in.Text) > p.limit {
		return nil, &api.Error{Status: 400, Code: api.CodeTokenLimitExceeded, Message: "too many tokens"}
	}
	words := strings.Fields(in.Text)
	if !opts.Sentiment {
		return &api.ReadResponse{Metadata: api.ReadMetadata{SummaryInfo: &api.FeatureInfo{InputTokens: 1}},
			Results: api.ReadResults{Summary: &api.ReadSummary{Text: "all: " + strings.Join(words[:min(len(words), 6)], " ")}}}, nil
	}
	if p.block > 0 && n == p.block {
		close(p.held)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	last := len(words) - 1
	return &api.ReadResponse{
		Metadata: api.ReadMetadata{SummaryInfo: &api.FeatureInfo{InputTokens: 1}},
		Results: api.ReadResults{
			Summary: &api.ReadSummary{Text: fmt.Sprintf("part %d", n)},
			Sentiments: &api.Sentiments{
				Segments: []api.SentimentSegment{{Text: in.Text, StartWord: 0, EndWord: last, Sentiment: "positive", SentimentScore: float64(n)}},
				Average:  api.SentimentAverage{Sentiment: "positive", SentimentScore: float64(n)},
			},
			Topics:  &api.Topics{Segments: []api.TopicSegment{{Text: strings.Join(words[:min(2, len(words))], " "), StartWord: 0, EndWord: min(1, last), Topics: []api.Topic{{Topic: "Town news", ConfidenceScore: 0.8}}}}},
			Intents: &api.Intents{Segments: []api.IntentSegment{{Text: words[last], StartWord: last, EndWord: last, Intents: []api.Intent{{Intent: "Ask", ConfidenceScore: 0.7}}}}},
		},
	}, nil
}

// progressOf names the progress events of a session, in order.
func progressOf(evs []sessions.Event) []string {
	var out []string
	for _, ev := range evs {
		if p, ok := ev.(*sessions.AnalysisProgressEvent); ok {
			out = append(out, p.String())
		}
	}
	return out
}

// TestAnalysisInParts analyses a document of about five parts' worth
// against a reader that checks nothing but answers per part: the events
// say which part is analysed, the answers are merged with every position
// in the whole document, the summary is made from the parts' summaries,
// and history keeps one entry for the whole document that says, reopened,
// how many parts it was analysed in.
func TestAnalysisInParts(t *testing.T) {
	t.Parallel()
	doc := longDocument(5000, 7)
	const budget = 1300
	r := &partsReader{}
	db := openDB(t)
	a := sessions.Analysis{Client: r, History: db, Backend: "Fake", PartTokens: budget}
	s := a.Session(sessions.AnalysisInput{Text: doc}, sessions.AllFeatures())
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := allEvents(t, s.Events())
	<-s.Done()
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	res := evs[len(evs)-1].(*sessions.AnalysisDoneEvent).Result
	calls := r.calls()
	n := res.PartCount()
	if n < 4 || len(calls) != n+1 || len(res.Parts) != n {
		t.Fatalf("%d parts, %d requests", n, len(calls))
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("Analysing part %d of %d…", i+1, n))
	}
	want = append(want, "Summarising the parts' summaries…", "Done")
	if got := progressOf(evs); !slices.Equal(got, want) {
		t.Errorf("progress %q, want %q", got, want)
	}

	// Every part under the budget, the same features, and the last
	// request the parts' summaries for a summary only.
	words := strings.Fields(doc)
	for i, c := range calls[:n] {
		if textseg.Tokens(c.text) > budget || !reflect.DeepEqual(c.opts, sessions.ReadOptionsFor("", sessions.AllFeatures())) {
			t.Errorf("part %d: %d tokens, options %+v", i+1, textseg.Tokens(c.text), c.opts)
		}
	}
	last := calls[n]
	if !reflect.DeepEqual(last.opts, api.ReadOptions{Language: "en", Summarize: "v2"}) || !strings.HasPrefix(last.text, "part 1\n\npart 2\n\n") {
		t.Errorf("the summary request: %+v", last)
	}
	r2 := res.Response.Results
	if r2.Summary == nil || r2.Summary.Text != "all: part 1 part 2 part 3" {
		t.Errorf("summary %+v", r2.Summary)
	}
	// Each part's segment is that part, word for word, in the whole
	// document; the parts tile the document.
	next := 0
	for i, seg := range r2.Sentiments.Segments {
		if seg.StartWord != next || res.Parts[i] != (sessions.AnalysisPart{StartWord: seg.StartWord, EndWord: seg.EndWord}) {
			t.Fatalf("segment %d: words %d to %d, part %+v, want from %d", i, seg.StartWord, seg.EndWord, res.Parts[i], next)
		}
		if res.Passage(seg.StartWord, seg.EndWord, "") != seg.Text {
			t.Errorf("segment %d does not map to its text", i)
		}
		next = seg.EndWord + 1
	}
	if next != len(words) {
		t.Errorf("the parts end at word %d of %d", next, len(words))
	}
	for i, seg := range r2.Intents.Segments {
		if seg.StartWord != res.Parts[i].EndWord || words[seg.StartWord] != seg.Text {
			t.Errorf("intent %d at word %d (%q), part ends at %d", i, seg.StartWord, seg.Text, res.Parts[i].EndWord)
		}
	}
	for i, seg := range r2.Topics.Segments {
		if res.Passage(seg.StartWord, seg.EndWord, "") != seg.Text || seg.StartWord != res.Parts[i].StartWord {
			t.Errorf("topic %d at %d maps to %q, not %q", i, seg.StartWord, res.Passage(seg.StartWord, seg.EndWord, ""), seg.Text)
		}
	}
	// Part i scores i: the average is weighted by the parts' words.
	var sum float64
	for i, p := range res.Parts {
		sum += float64(i+1) * float64(p.EndWord-p.StartWord+1)
	}
	if got, want := r2.Sentiments.Average.SentimentScore, sum/float64(len(words)); got != want {
		t.Errorf("average %v, want %v", got, want)
	}
	if si := res.Response.Metadata.SummaryInfo; si == nil || si.InputTokens != n+1 {
		t.Errorf("summary info %+v: the tokens of %d requests", si, n+1)
	}

	// One entry in history, with the whole document, and reopened it
	// still says how many parts.
	list, err := db.Sessions(t.Context(), store.Filter{})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
		t.Fatalf("history %+v, %v", list, err)
	}
	back, err := sessions.LoadAnalysis(t.Context(), db, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Text != doc || back.PartCount() != n || !slices.Equal(back.Parts, res.Parts) || back.Format != "text" {
		t.Errorf("reopened: %d parts, format %q, text kept %v", back.PartCount(), back.Format, back.Text == doc)
	}
	var md bytes.Buffer
	if err := sessions.ExportAnalysis(&md, sessions.AnalysisMarkdown, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), fmt.Sprintf("Analysed in %d parts", n)) {
		t.Errorf("the report does not say it was analysed in parts:\n%.400s", md.String())
	}
	var js bytes.Buffer
	if err := sessions.ExportAnalysis(&js, sessions.AnalysisJSON, back); err != nil || !strings.Contains(js.String(), `"analysed_in_parts"`) {
		t.Errorf("the JSON export does not say it was analysed in parts (%v)", err)
	}
}

// TestAnalysisPartsRefused: a service that counts more tokens than
// Earshot and refuses parts has them split again, and the progress says
// so; a document of one part it refuses is split too.
func TestAnalysisPartsRefused(t *testing.T) {
	t.Parallel()
	doc := longDocument(3000, 8)
	r := &partsReader{limit: 700}
	a := sessions.Analysis{Client: r, PartTokens: 1000}
	res, err := analyseWait(t, a, sessions.AnalysisInput{Text: doc})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, c := range r.calls() {
		if textseg.Tokens(c.text) > 700 {
			refused++
		}
	}
	if refused == 0 || res.PartCount() < 5 {
		t.Fatalf("%d refused, %d parts", refused, res.PartCount())
	}
	if p := res.Parts[len(res.Parts)-1]; p.EndWord != len(strings.Fields(doc))-1 {
		t.Errorf("the last part ends at word %d", p.EndWord)
	}

	// Earshot's own budget is the limit's four fifths: a document just
	// under the limit goes whole, and when the service refuses it, in
	// parts of at most half of it.
	whole := longDocument(2000, 9)
	r = &partsReader{limit: textseg.Tokens(whole) - 1}
	res, err = analyseWait(t, sessions.Analysis{Client: r}, sessions.AnalysisInput{Text: whole})
	if err != nil || res.PartCount() < 2 || len(r.calls()) != res.PartCount()+2 {
		t.Fatalf("%v: %d parts in %d requests", err, res.PartCount(), len(r.calls()))
	}

	// A single word over the limit cannot be split: refused, with an
	// offer of less.
	r = &partsReader{limit: 10}
	_, err = analyseWait(t, sessions.Analysis{Client: r}, sessions.AnalysisInput{Text: strings.Repeat(",", 50)})
	var tl *sessions.TooLongError
	if !errors.As(err, &tl) || tl.Part != 40 {
		t.Errorf("one long word: %v", err)
	}
}

func analyseWait(t *testing.T, a sessions.Analysis, in sessions.AnalysisInput) (*sessions.AnalysisResult, error) {
	t.Helper()
	s := a.Session(in, sessions.AllFeatures())
	if err := s.Start(t.Context()); err != nil {
		return nil, err
	}
	return s.Wait(nil)
}

// TestAnalysisPartsCancel stops a long analysis while its second part
// is with the service: no later part is sent, no result is delivered,
// and history keeps it as cancelled.
func TestAnalysisPartsCancel(t *testing.T) {
	t.Parallel()
	r := &partsReader{block: 2, held: make(chan struct{})}
	h := &responseHistory{}
	a := sessions.Analysis{Client: r, History: h, PartTokens: 1000}
	s := a.Session(sessions.AnalysisInput{Text: longDocument(4000, 3)}, sessions.AllFeatures())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan []sessions.Event, 1)
	go func() { got <- allEvents(t, s.Events()) }()
	<-r.held
	cancel()
	evs := <-got
	<-s.Done()
	if err := s.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("ended with %v, want context.Canceled", err)
	}
	if p := progressOf(evs); len(p) != 2 || !strings.HasPrefix(p[1], "Analysing part 2 of ") {
		t.Errorf("progress %q", p)
	}
	for _, ev := range evs {
		if _, ok := ev.(*sessions.AnalysisDoneEvent); ok {
			t.Error("a cancelled analysis delivered a result")
		}
	}
	if n := len(r.calls()); n != 2 {
		t.Errorf("%d requests sent", n)
	}
	if fin, ok := h.finish(s.SessionID()); !ok || fin.status != store.StatusCancelled {
		t.Errorf("finished %+v (%v), want cancelled", fin, ok)
	}
}

// TestAnalyzeLongDocument analyses a document of about two and a half
// times the service's limit against the local engine, end to end: in
// parts, every passage the engine names found in the whole document,
// one summary, and history's entry says how many parts.
func TestAnalyzeLongDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("a long document")
	}
	ws, db := analysisWorkspace(t, nil)
	ctx := testContext(t, 3*time.Minute)
	doc := longDocument(api.ReadTokenLimit*5/2*5/6, 11) // about 1.2 tokens a word
	if n := textseg.Tokens(doc); n < 2*api.ReadTokenLimit {
		t.Fatalf("the document has %d tokens", n)
	}
	var progress []string
	res, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: doc}, sessions.AllFeatures(), func(p *sessions.AnalysisProgressEvent) {
		progress = append(progress, p.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	n := res.PartCount()
	if n < 3 || progress[0] != fmt.Sprintf("Analysing part 1 of %d…", n) || progress[n-1] != fmt.Sprintf("Analysing part %d of %d…", n, n) {
		t.Fatalf("%d parts; progress %q", n, progress)
	}
	r := res.Response.Results
	if r.Summary == nil || len(strings.Fields(r.Summary.Text)) < 10 || textseg.Tokens(r.Summary.Text) > api.ReadTokenLimit/10 {
		t.Errorf("summary of %d words", len(strings.Fields(r.Summary.Text)))
	}
	words := len(strings.Fields(doc))
	checkSegs := func(what string, segs []sessions.LabelledSegment) {
		if len(segs) == 0 {
			t.Errorf("no %s", what)
		}
		prev := -1
		for _, s := range segs {
			if s.StartWord < prev || s.EndWord >= words {
				t.Fatalf("%s at words %d to %d, after %d, of %d", what, s.StartWord, s.EndWord, prev, words)
			}
			prev = s.StartWord
			if p := res.Passage(s.StartWord, s.EndWord, ""); strings.Join(strings.Fields(p), " ") != strings.Join(strings.Fields(s.Text), " ") {
				t.Fatalf("%s at words %d to %d is %q in the document, %q in the answer", what, s.StartWord, s.EndWord, p, s.Text)
			}
		}
	}
	var sents []sessions.LabelledSegment
	for _, s := range r.Sentiments.Segments {
		sents = append(sents, sessions.LabelledSegment{Text: s.Text, StartWord: s.StartWord, EndWord: s.EndWord})
	}
	checkSegs("sentiment", sents)
	checkSegs("topics", sessions.TopicSegments(r.Topics))
	checkSegs("intents", sessions.IntentSegments(r.Intents))
	if last := r.Sentiments.Segments[len(r.Sentiments.Segments)-1]; last.EndWord < words-200 {
		t.Errorf("the last sentiment ends at word %d of %d", last.EndWord, words)
	}

	back, err := ws.Analysis(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if back.PartCount() != n || back.Text != doc {
		t.Errorf("reopened: %d parts", back.PartCount())
	}
	if list, err := db.Sessions(ctx, store.Filter{}); err != nil || len(list) != 1 {
		t.Errorf("history: %d entries, %v", len(list), err)
	}
}
