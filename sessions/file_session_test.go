package sessions_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// responseHistory is a history that keeps responses, for the sessions
// that save one (files, analyses), with the times it was given. failSave,
// when set, makes SaveResponse fail with it.
type responseHistory struct {
	mu       sync.Mutex
	failSave error
	created  []store.Session
	saved    map[int64]string // the searchable text of each response
	finished map[int64]finished
}

type finished struct {
	ended    time.Time
	duration float64
	status   string
	errText  string
}

func (h *responseHistory) CreateSession(_ context.Context, s store.Session) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.created = append(h.created, s)
	return int64(len(h.created)), nil
}

func (h *responseHistory) SaveResponse(_ context.Context, id int64, _ []byte, text string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failSave != nil {
		return h.failSave
	}
	if h.saved == nil {
		h.saved = map[int64]string{}
	}
	h.saved[id] = text
	return nil
}

func (h *responseHistory) FinishSession(_ context.Context, id int64, ended time.Time, duration float64, status, errText string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished == nil {
		h.finished = map[int64]finished{}
	}
	h.finished[id] = finished{ended: ended, duration: duration, status: status, errText: errText}
	return nil
}

func (h *responseHistory) sessions() []store.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.created)
}

func (h *responseHistory) finish(id int64) (finished, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.finished[id]
	return f, ok
}

// fakeTranscriber reads the whole upload and answers with a transcript,
// or, when hold is set, waits for its context to end.
type fakeTranscriber struct {
	hold bool
	sent chan struct{} // closed once the upload has started, when not nil
}

func (f *fakeTranscriber) Transcribe(ctx context.Context, r io.Reader, _ string, _ api.ListenOptions) (*api.ListenResponse, error) {
	if f.hold {
		if f.sent != nil {
			close(f.sent)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	return &api.ListenResponse{
		Metadata: api.ListenMetadata{Duration: 3.5},
		Results:  api.ListenResults{Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{Transcript: "hello there"}}}}},
	}, nil
}

// audioFile writes n bytes standing for audio, and returns its path.
func audioFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "talk.wav")
	if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// allEvents reads a session's events until the channel closes.
func allEvents(t *testing.T, events <-chan sessions.Event) []sessions.Event {
	t.Helper()
	var out []sessions.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the events did not close; %d read", len(out))
		}
	}
}

// TestFileSessionSaveFailed has history refuse the transcript: the
// session still delivers the result, after a SaveFailedEvent that names
// what was not kept, and history does not list the session as done.
// Times come from the session's clock.
func TestFileSessionSaveFailed(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	h := &responseHistory{failSave: errors.New("disk full")}
	f := sessions.FileTranscription{Client: &fakeTranscriber{}, History: h, Backend: "Fake", Clock: clk}
	s := f.Session(audioFile(t, 1000), batchOptions())
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	evs := allEvents(t, s.Events())
	<-s.Done()
	if err := s.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil: the transcription itself succeeded", err)
	}
	var kinds []string
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *sessions.FileProgressEvent:
			kinds = append(kinds, "progress")
		case *sessions.SaveFailedEvent:
			kinds = append(kinds, "save failed")
			if ev.What != "the transcript" || ev.Err == nil {
				t.Errorf("save failed event %+v", ev)
			}
		case *sessions.FileDoneEvent:
			kinds = append(kinds, "done")
			if ev.Result.Response.Transcript() != "hello there" || ev.Result.SessionID != s.SessionID() || s.SessionID() == 0 {
				t.Errorf("result %+v of session %d", ev.Result, s.SessionID())
			}
		}
	}
	if n := len(kinds); n < 3 || kinds[n-2] != "save failed" || kinds[n-1] != "done" {
		t.Errorf("events %v, want progress, then the failed save, then done", kinds)
	}
	list := h.sessions()
	if len(list) != 1 || !list[0].Started.Equal(start) || list[0].Status != store.StatusRunning || list[0].Kind != store.KindFile {
		t.Fatalf("history created %+v", list)
	}
	fin, ok := h.finish(s.SessionID())
	if !ok || fin.status != store.StatusFailed || fin.errText == "" || !fin.ended.Equal(start) || fin.duration != 3.5 {
		t.Errorf("history finished %+v (%v), want failed with why, at the fake time", fin, ok)
	}
	// Stop after the end changes nothing.
	if err := s.Stop(); err != nil {
		t.Errorf("Stop after the end: %v", err)
	}
}

// TestFileSessionWait is the synchronous form: progress in order, the
// result, and a failed save as an error beside it.
func TestFileSessionWait(t *testing.T) {
	t.Parallel()
	for _, failSave := range []bool{false, true} {
		h := &responseHistory{}
		if failSave {
			h.failSave = errors.New("disk full")
		}
		f := sessions.FileTranscription{Client: &fakeTranscriber{}, History: h}
		s := f.Session(audioFile(t, 200_000), batchOptions())
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		var log progressLog
		res, err := s.Wait(log.report)
		if res == nil || res.Response.Transcript() != "hello there" {
			t.Errorf("failSave %v: result %+v", failSave, res)
		}
		if (err != nil) != failSave || failSave && !errors.Is(err, h.failSave) {
			t.Errorf("failSave %v: error %v", failSave, err)
		}
		prog := log.all()
		if len(prog) < 2 || prog[0].Phase != sessions.PhaseUploading || prog[len(prog)-1].Phase != sessions.PhaseDone {
			t.Errorf("failSave %v: progress %+v", failSave, prog)
		}
		if h.saved[res.SessionID] != "hello there" && !failSave {
			t.Errorf("saved %v", h.saved)
		}
	}
}

// TestFileSessionStop stops a session the service has not answered:
// Stop returns context.Canceled, no result comes, history says
// cancelled; and cancelling Start's context does the same.
func TestFileSessionStop(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"Stop", "context"} {
		t.Run(how, func(t *testing.T) {
			h := &responseHistory{}
			tr := &fakeTranscriber{hold: true, sent: make(chan struct{})}
			f := sessions.FileTranscription{Client: tr, History: h}
			s := f.Session(audioFile(t, 1000), batchOptions())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			got := make(chan []sessions.Event, 1)
			go func() { got <- allEvents(t, s.Events()) }()
			<-tr.sent
			var err error
			if how == "Stop" {
				err = s.Stop()
			} else {
				cancel()
				<-s.Done()
				err = s.Err()
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the session ended with %v, want context.Canceled", err)
			}
			for _, ev := range <-got {
				if _, ok := ev.(*sessions.FileDoneEvent); ok {
					t.Error("a stopped session delivered a result")
				}
			}
			if fin, ok := h.finish(s.SessionID()); !ok || fin.status != store.StatusCancelled {
				t.Errorf("history finished %+v (%v), want cancelled", fin, ok)
			}
		})
	}
}

// TestFileSessionStartRefused: what cannot be sent fails Start, saves
// nothing and ends the session.
func TestFileSessionStartRefused(t *testing.T) {
	t.Parallel()
	bad := batchOptions()
	bad.InterimResults = true // streaming only
	tests := []struct {
		name string
		path string
		opts api.ListenOptions
	}{
		{"missing file", filepath.Join(t.TempDir(), "gone.wav"), batchOptions()},
		{"folder", t.TempDir(), batchOptions()},
		{"refused options", audioFile(t, 10), bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &responseHistory{}
			f := sessions.FileTranscription{Client: &fakeTranscriber{}, History: h}
			s := f.Session(tt.path, tt.opts)
			if err := s.Start(t.Context()); err == nil {
				t.Fatal("Start succeeded")
			}
			if evs := allEvents(t, s.Events()); len(evs) != 0 {
				t.Errorf("events %v", evs)
			}
			<-s.Done()
			if err := s.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
			if list := h.sessions(); len(list) != 0 {
				t.Errorf("saved %+v", list)
			}
		})
	}
}
