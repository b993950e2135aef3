package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// batchOptions are the options the app's default settings give a file.
func batchOptions() api.ListenOptions {
	return api.ListenOptions{Model: "nova-3", Language: "en", Punctuate: true, SmartFormat: true, Utterances: true, Paragraphs: true}
}

// progressLog records the progress a transcription reports.
type progressLog struct {
	mu   sync.Mutex
	list []sessions.Progress
}

func (p *progressLog) report(pr sessions.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, pr)
}

func (p *progressLog) all() []sessions.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sessions.Progress(nil), p.list...)
}

// TestFileTranscription transcribes a recording with the local engine:
// progress rises to the whole file, the result has words and
// utterances, and history holds the response.
func TestFileTranscription(t *testing.T) {
	t.Parallel()
	eng := localEngine(t)
	path := librivoxPath("0920")
	info, err := os.Stat(path)
	if err != nil {
		t.Skipf("test file missing (scripts/setup installs it): %v", err)
	}
	db := openDB(t)
	ctx := testContext(t, time.Minute)
	f := sessions.FileTranscription{Client: newClient(t, eng.Endpoint(), eng.Key), History: db, Backend: "Local engine"}
	s := f.Session(path, batchOptions())
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var (
		log progressLog
		res *sessions.FileResult
	)
	for ev := range s.Events() {
		if res != nil {
			t.Errorf("%T after the result", ev)
		}
		switch ev := ev.(type) {
		case *sessions.FileProgressEvent:
			log.report(ev.Progress)
		case *sessions.FileDoneEvent:
			res = ev.Result
		case *sessions.HistoryEvent:
			if !ev.Final || !ev.Kept() {
				t.Errorf("history holds %+v", ev)
			}
		default:
			t.Errorf("unexpected %T %+v", ev, ev)
		}
	}
	<-s.Done()
	if err := s.Err(); err != nil || res == nil {
		t.Fatalf("the session ended with %v and result %v", err, res)
	}
	if res.SessionID != s.SessionID() {
		t.Errorf("the result is session %d, the session %d", res.SessionID, s.SessionID())
	}

	prog := log.all()
	if len(prog) < 2 {
		t.Fatalf("%d progress reports, want the start and the end at least", len(prog))
	}
	for i, p := range prog {
		if p.Total != info.Size() {
			t.Errorf("report %d: total %d, the file has %d bytes", i, p.Total, info.Size())
		}
		if i > 0 && (p.Sent < prog[i-1].Sent || p.Phase < prog[i-1].Phase) {
			t.Errorf("report %d %+v goes back from %+v", i, p, prog[i-1])
		}
	}
	if first := prog[0]; first.Phase != sessions.PhaseUploading || first.Fraction() != 0 {
		t.Errorf("first report %+v, want uploading at 0", first)
	}
	if last := prog[len(prog)-1]; last.Phase != sessions.PhaseDone || last.Fraction() != 1 {
		t.Errorf("last report %+v, want done at 100%%", last)
	}

	resp := res.Response
	if len(resp.Results.Channels) == 0 || len(resp.Results.Channels[0].Alternatives) == 0 {
		t.Fatalf("no alternatives in %+v", resp.Results)
	}
	alt := resp.Results.Channels[0].Alternatives[0]
	if len(alt.Words) == 0 || len(resp.Results.Utterances) == 0 {
		t.Errorf("%d words and %d utterances, want both", len(alt.Words), len(resp.Results.Utterances))
	}
	want := truth(t)["0920"]
	if o := testkit.WordOverlap(resp.Transcript(), want); o < 0.6 {
		t.Errorf("transcript %q matches %q at %.2f, want at least 0.6", resp.Transcript(), want, o)
	}

	sess, err := db.Session(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Kind != store.KindFile || sess.Status != store.StatusDone || sess.Source != path || sess.Duration <= 0 {
		t.Errorf("history has %+v, want a finished file session", sess)
	}
	body, err := db.Response(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var saved api.ListenResponse
	if err := json.Unmarshal(body, &saved); err != nil {
		t.Fatalf("the saved response: %v", err)
	}
	if saved.Transcript() != resp.Transcript() || len(saved.Results.Utterances) != len(resp.Results.Utterances) {
		t.Errorf("history holds %q with %d utterances, the result was %q with %d", saved.Transcript(), len(saved.Results.Utterances), resp.Transcript(), len(resp.Results.Utterances))
	}
}

// TestFileTranscriptionCancel stops an upload the proxy slows down:
// Stop returns context.Canceled and history marks the session cancelled.
func TestFileTranscriptionCancel(t *testing.T) {
	t.Parallel()
	eng := localEngine(t)
	path := librivoxPath("0870")
	info, err := os.Stat(path)
	if err != nil {
		t.Skipf("test file missing (scripts/setup installs it): %v", err)
	}
	proxy := newFaultProxy(t, eng.URL.Host)
	proxy.setUpRate(16 << 10) // the file would take 14 s
	db := openDB(t)
	ctx := testContext(t, time.Minute)
	f := sessions.FileTranscription{Client: newClient(t, proxy.endpoint(), eng.Key), History: db}
	s := f.Session(path, batchOptions())
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var log progressLog
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range s.Events() {
			if p, ok := ev.(*sessions.FileProgressEvent); ok {
				log.report(p.Progress)
			}
		}
	}()
	eventually(t, "the upload under way", func() bool {
		conns := proxy.connections()
		return len(conns) == 1 && conns[0].upBytes() > 0
	})
	stopped := make(chan error, 1)
	go func() { stopped <- s.Stop() }()
	select {
	case err = <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return")
	}
	<-drained
	if !errors.Is(err, context.Canceled) || !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("Stop returned %v (Err %v), want context.Canceled", err, s.Err())
	}
	if again := s.Stop(); !errors.Is(again, context.Canceled) {
		t.Errorf("a second Stop returned %v", again)
	}
	if up := proxy.connections()[0].upBytes(); up >= info.Size() {
		t.Errorf("%d bytes reached the engine, the whole file (%d): not cancelled mid-upload", up, info.Size())
	}
	for _, p := range log.all() {
		if p.Phase == sessions.PhaseDone {
			t.Errorf("a cancelled transcription reported done: %+v", p)
		}
	}
	list, err := db.Sessions(testContext(t, 10*time.Second), store.Filter{Kind: store.KindFile})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Status != store.StatusCancelled || list[0].Ended.IsZero() {
		t.Fatalf("history has %+v, want one cancelled file session", list)
	}
}
