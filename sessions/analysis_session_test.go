package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// fakeReader answers every document with a summary or, when hold is set,
// waits for its context to end.
type fakeReader struct {
	hold bool
	sent chan struct{} // closed once the request is made, when not nil
}

func (f *fakeReader) Read(ctx context.Context, _ api.ReadRequest, _ api.ReadOptions) (*api.ReadResponse, error) {
	if f.hold {
		if f.sent != nil {
			close(f.sent)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &api.ReadResponse{Results: api.ReadResults{Summary: &api.ReadSummary{Text: "A call."}}}, nil
}

// TestAnalysisSessionEvents reads an analysis of a file: its phases in
// order, then the result, saved with its document at the clock's time.
// A failed save is reported before the result and keeps the session
// from being listed as done.
func TestAnalysisSessionEvents(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "call.txt")
	if err := os.WriteFile(path, []byte("Hello, I would like a refund."), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	for _, failSave := range []bool{false, true} {
		h := &responseHistory{}
		if failSave {
			h.failSave = errors.New("disk full")
		}
		a := sessions.Analysis{Client: &fakeReader{}, History: h, Backend: "Fake", Clock: clock.NewFake(start)}
		s := a.Session(sessions.AnalysisInput{Path: path}, sessions.Features{Summary: true})
		if err := s.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		var (
			got []string
			res *sessions.AnalysisResult
		)
		for _, ev := range allEvents(t, s.Events()) {
			switch ev := ev.(type) {
			case *sessions.AnalysisProgressEvent:
				got = append(got, map[sessions.AnalysisPhase]string{
					sessions.AnalysisReading: "reading", sessions.AnalysisAnalysing: "analysing", sessions.AnalysisDone: "done",
				}[ev.Phase])
			case *sessions.SaveFailedEvent:
				got = append(got, "save failed: "+ev.What)
			case *sessions.AnalysisDoneEvent:
				got = append(got, "result")
				res = ev.Result
			}
		}
		<-s.Done()
		want := []string{"reading", "analysing", "done", "result"}
		if failSave {
			want = []string{"reading", "analysing", "save failed: the analysis", "done", "result"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("failSave %v: events %q, want %q", failSave, got, want)
		}
		if err := s.Err(); err != nil || res == nil || res.SessionID != s.SessionID() || !res.Created.Equal(start) {
			t.Fatalf("failSave %v: ended with %v, result %+v", failSave, err, res)
		}
		list := h.sessions()
		if len(list) != 1 || list[0].Kind != store.KindAnalysis || !list[0].Started.Equal(start) || list[0].Title != "call.txt" {
			t.Errorf("created %+v", list)
		}
		fin, _ := h.finish(s.SessionID())
		switch {
		case !failSave && (fin.status != store.StatusDone || h.saved[s.SessionID()] != "Hello, I would like a refund."):
			t.Errorf("finished %+v, saved %v", fin, h.saved)
		case failSave && (fin.status != store.StatusFailed || fin.errText == ""):
			t.Errorf("a failed save finished %+v, want failed with why", fin)
		}
	}
}

// TestAnalysisSessionStop stops an analysis the service has not
// answered: it is saved as cancelled and ends with context.Canceled.
func TestAnalysisSessionStop(t *testing.T) {
	t.Parallel()
	h := &responseHistory{}
	r := &fakeReader{hold: true, sent: make(chan struct{})}
	a := sessions.Analysis{Client: r, History: h}
	s := a.Session(sessions.AnalysisInput{Text: "Hello there."}, sessions.AllFeatures())
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := make(chan []sessions.Event, 1)
	go func() { got <- allEvents(t, s.Events()) }()
	<-r.sent
	if err := s.Stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop returned %v, want context.Canceled", err)
	}
	for _, ev := range <-got {
		if _, ok := ev.(*sessions.AnalysisDoneEvent); ok {
			t.Error("a stopped analysis delivered a result")
		}
	}
	if fin, ok := h.finish(s.SessionID()); !ok || fin.status != store.StatusCancelled {
		t.Errorf("finished %+v (%v), want cancelled", fin, ok)
	}
}

// TestAnalysisSessionRefused: a request that cannot be sent fails Start
// and saves nothing.
func TestAnalysisSessionRefused(t *testing.T) {
	t.Parallel()
	h := &responseHistory{}
	a := sessions.Analysis{Client: &fakeReader{}, History: h}
	for _, in := range []sessions.AnalysisInput{{}, {Path: filepath.Join(t.TempDir(), "gone.txt")}} {
		s := a.Session(in, sessions.AllFeatures())
		if err := s.Start(t.Context()); err == nil {
			t.Errorf("%+v: Start succeeded", in)
		}
		allEvents(t, s.Events())
		<-s.Done()
	}
	if list := h.sessions(); len(list) != 0 {
		t.Errorf("saved %+v", list)
	}
}

// countingReader records the text of each request and answers as the
// service does to a text of more than limit tokens.
type countingReader struct {
	limit int
	texts []string
}

func (c *countingReader) Read(_ context.Context, in api.ReadRequest, _ api.ReadOptions) (*api.ReadResponse, error) {
	c.texts = append(c.texts, in.Text)
	if textseg.Tokens(in.Text) > c.limit {
		return nil, &api.Error{Status: 400, Code: api.CodeTokenLimitExceeded, Message: "too many tokens"}
	}
	return &api.ReadResponse{Results: api.ReadResults{Summary: &api.ReadSummary{Text: "Long."}}}, nil
}

// TestAnalysisTooLong analyses a text over the service's limit in parts
// rather than refusing it; asked for the first part only, it sends the
// first sentences that fit. When the service counts more than Earshot
// (as the hosted one does) and refuses a part, the part is split again.
func TestAnalysisTooLong(t *testing.T) {
	t.Parallel()
	sentence := "Earshot reads this sentence once more. " // 7 tokens
	long := strings.Repeat(sentence, api.ReadTokenLimit/7+1)

	c := &countingReader{limit: api.ReadTokenLimit}
	a := sessions.Analysis{Client: c}
	analyse := func(in sessions.AnalysisInput) (*sessions.AnalysisResult, error) {
		s := a.Session(in, sessions.AllFeatures())
		if err := s.Start(t.Context()); err != nil {
			return nil, err
		}
		return s.Wait(nil)
	}
	res, err := analyse(sessions.AnalysisInput{Text: long})
	if err != nil {
		t.Fatal(err)
	}
	// Two parts of four fifths of the limit at most, and the summary.
	if res.PartCount() != 2 || len(c.texts) != 3 || res.Text != long {
		t.Fatalf("%d parts in %d requests", res.PartCount(), len(c.texts))
	}
	for _, text := range c.texts[:2] {
		if n := textseg.Tokens(text); n > api.ReadTokenLimit*4/5 || !strings.HasSuffix(text, "more.") {
			t.Errorf("sent %d tokens ending %q", n, text[len(text)-10:])
		}
	}

	c.texts = nil
	const first = api.ReadTokenLimit / 2
	res, err = analyse(sessions.AnalysisInput{Text: long, FirstTokens: first})
	if err != nil {
		t.Fatal(err)
	}
	if n := textseg.Tokens(c.texts[0]); len(c.texts) != 1 || n > first || n < first-7 || !strings.HasSuffix(c.texts[0], "more.") {
		t.Errorf("sent %d tokens ending %q", n, c.texts[0][len(c.texts[0])-10:])
	}
	if !strings.HasSuffix(res.Title, "(first part)") || res.Text != c.texts[0] || res.PartCount() != 1 {
		t.Errorf("title %q; text shown is the part sent: %v", res.Title, res.Text == c.texts[0])
	}

	hosted := &countingReader{limit: api.ReadTokenLimit / 2}
	a.Client = hosted
	res, err = analyse(sessions.AnalysisInput{Text: long})
	if err != nil || res.PartCount() < 3 {
		t.Fatalf("refused by the service: %v, %d parts", err, res.PartCount())
	}
}
