package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

func intp(i int) *int { return &i }

func TestSessionLifecycle(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	started := time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)
	in := Session{Kind: KindCaptions, Title: "Standup", Source: "USB microphone", Backend: "Hosted service",
		Model: "nova-3", Options: `{"diarize":["true"],"model":["nova-3"]}`, Started: started, Status: StatusRunning}
	id, err := d.CreateSession(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ID = id
	if !got.Started.Equal(started) || !got.Ended.IsZero() {
		t.Errorf("Started %v Ended %v, want %v and zero", got.Started, got.Ended, started)
	}
	got.Started, want.Started = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Session = %+v\nwant      %+v", got, want)
	}

	for i := range 3 {
		if _, err := d.AddSegment(ctx, Segment{SessionID: id, Seq: i, Start: float64(i), End: float64(i) + 0.9, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	ended := started.Add(90 * time.Second)
	if err := d.FinishSession(ctx, id, ended, 89.5, StatusFailed, "the connection closed (1011)"); err != nil {
		t.Fatal(err)
	}
	if err := d.RenameSession(ctx, id, "Standup, Friday"); err != nil {
		t.Fatal(err)
	}
	got, err = d.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Ended.Equal(ended) || got.Duration != 89.5 || got.Status != StatusFailed ||
		got.Error != "the connection closed (1011)" || got.Title != "Standup, Friday" || got.Segments != 3 {
		t.Errorf("after finish and rename: %+v", got)
	}
}

func TestCreateSessionDefaults(t *testing.T) {
	d := openTest(t)
	before := time.Now()
	id, err := d.CreateSession(t.Context(), Session{Kind: KindFile, Source: "memo.wav", Segments: 99})
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusRunning || s.Started.Before(before) || s.Started.After(time.Now()) || s.Segments != 0 {
		t.Errorf("defaults: status %q, started %v, segments %d", s.Status, s.Started, s.Segments)
	}
}

func TestCreateSessionRejects(t *testing.T) {
	d := openTest(t)
	tests := []struct {
		name string
		s    Session
	}{
		{"no kind", Session{}},
		{"kind not a word", Session{Kind: "Live Captions"}},
		{"unknown status", Session{Kind: KindFile, Status: "paused"}},
		{"options not JSON", Session{Kind: KindFile, Options: `{"model":`}},
		{"details not JSON", Session{Kind: KindAgent, Details: `nope`}},
		{"options with a key", Session{Kind: KindFile, Options: `{"model":["nova-3"],"api_key":["dg-123"]}`}},
		{"options with a token", Session{Kind: KindFile, Options: `{"Access-Token":"abc"}`}},
		{"options with authorization deep inside", Session{Kind: KindFile, Options: `{"headers":[{"Authorization":"Token dg"}]}`}},
		{"details with a secret", Session{Kind: KindAgent, Details: `{"agent":{"think":{"provider":{"secret":"x"}}}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.CreateSession(t.Context(), tt.s); !errors.Is(err, ErrInvalid) {
				t.Errorf("CreateSession(%+v) = %v, want ErrInvalid", tt.s, err)
			}
		})
	}
	list, err := d.Sessions(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("rejected sessions were saved: %+v", list)
	}
	// Words that merely contain "key" or "token" are options, not credentials.
	if _, err := d.CreateSession(t.Context(), Session{Kind: KindFile, Options: `{"keyterm":["Earshot"],"keywords":["a:2"],"tokens":1}`}); err != nil {
		t.Errorf("ordinary options refused: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	const missing = 4242
	checks := map[string]error{
		"Session":       func() error { _, err := d.Session(ctx, missing); return err }(),
		"FinishSession": d.FinishSession(ctx, missing, time.Now(), 1, StatusDone, ""),
		"RenameSession": d.RenameSession(ctx, missing, "x"),
		"DeleteSession": d.DeleteSession(ctx, missing),
		"AddSegment":    func() error { _, err := d.AddSegment(ctx, Segment{SessionID: missing, Text: "x"}); return err }(),
		"Segments":      func() error { _, err := d.Segments(ctx, missing); return err }(),
		"SaveResponse":  d.SaveResponse(ctx, missing, []byte(`{}`), "x"),
		"Response":      func() error { _, err := d.Response(ctx, missing); return err }(),
	}
	for name, err := range checks {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of a missing session = %v, want ErrNotFound", name, err)
		}
	}
	id := newSession(t, d, "no response")
	if _, err := d.Response(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Response of a session without one = %v, want ErrNotFound", err)
	}
	if segs, err := d.Segments(ctx, id); err != nil || segs == nil || len(segs) != 0 {
		t.Errorf("Segments of an empty session = %#v, %v; want an empty list", segs, err)
	}
}

func TestFinishSessionRejectsUnknownStatus(t *testing.T) {
	d := openTest(t)
	id := newSession(t, d, "x")
	if err := d.FinishSession(t.Context(), id, time.Now(), 1, "finished", ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("FinishSession with status \"finished\" = %v, want ErrInvalid", err)
	}
	if err := d.FinishSession(t.Context(), id, time.Time{}, 1, StatusCancelled, ""); err != nil {
		t.Fatal(err)
	}
	s, _ := d.Session(t.Context(), id)
	if s.Ended.IsZero() || s.Status != StatusCancelled {
		t.Errorf("a zero end time was not taken as now: %+v", s)
	}
}

func TestSessionsOrderAndFilter(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	kinds := []string{KindCaptions, KindFile, KindCaptions, KindFile, KindCaptions}
	for i, k := range kinds {
		// Created out of order: the list follows the start time.
		start := base.Add(time.Duration((i*3)%len(kinds)) * time.Hour)
		if _, err := d.CreateSession(ctx, Session{Kind: k, Title: fmt.Sprint(i), Started: start}); err != nil {
			t.Fatal(err)
		}
	}
	starts := func(list []Session) []int {
		var hours []int
		for _, s := range list {
			hours = append(hours, int(s.Started.Sub(base).Hours()))
		}
		return hours
	}
	tests := []struct {
		name string
		f    Filter
		want []int // hours after base, newest first
	}{
		{"all", Filter{}, []int{4, 3, 2, 1, 0}},
		{"captions", Filter{Kind: KindCaptions}, []int{2, 1, 0}}, // i = 0, 2, 4
		{"files", Filter{Kind: KindFile}, []int{4, 3}},           // i = 1, 3
		{"limit", Filter{Limit: 2}, []int{4, 3}},
		{"page two", Filter{Limit: 2, Offset: 2}, []int{2, 1}},
		{"past the end", Filter{Offset: 10}, nil},
		{"unknown kind", Filter{Kind: KindAgent}, nil},
		{"kinds", Filter{Kinds: []string{KindAgent, KindFile}}, []int{4, 3}},
		{"kind and kinds", Filter{Kind: KindCaptions, Kinds: []string{KindFile}, Limit: 3}, []int{4, 3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := d.Sessions(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := starts(list); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sessions(%+v) started at hours %v, want %v", tt.f, got, tt.want)
			}
		})
	}
	if _, err := d.Sessions(ctx, Filter{Limit: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a negative limit: %v, want ErrInvalid", err)
	}
}

func TestSegments(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id := newSession(t, d, "segments")
	other := newSession(t, d, "other")
	in := []Segment{
		{SessionID: id, Seq: 2, Start: 5, End: 6.5, Speaker: intp(1), Text: "third", Words: `[{"word":"third","start":5,"end":6.5,"speaker":1}]`, Confidence: 0.93, Channel: 0},
		{SessionID: id, Seq: 0, Start: 0.25, End: 2, Speaker: intp(0), Text: "first", Words: `[]`, Confidence: 0.99},
		{SessionID: id, Seq: 1, Start: 2, End: 4, Text: "second, no speaker", Channel: 1},
		{SessionID: id, Seq: 3, Start: 2, End: 3, Text: "same start, later seq", Details: `{"trigger":"model","latency_ms":270}`},
		{SessionID: other, Seq: 0, Start: 1, End: 2, Text: "elsewhere"},
	}
	for i := range in {
		var err error
		if in[i].ID, err = d.AddSegment(ctx, in[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Segments(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{in[1], in[2], in[3], in[0]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Segments =\n%+v\nwant\n%+v", got, want)
	}
	if *got[0].Speaker != 0 || got[1].Speaker != nil {
		t.Error("speaker 0 and no speaker are not told apart")
	}
	if _, err := d.AddSegment(ctx, Segment{SessionID: id, Text: "x", Words: "[{"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("words that are not JSON: %v, want ErrInvalid", err)
	}
	if _, err := d.AddSegment(ctx, Segment{SessionID: id, Text: "x", Details: "{"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("details that are not JSON: %v, want ErrInvalid", err)
	}
	if _, err := d.AddSegment(ctx, Segment{SessionID: id, Text: "x", Details: `{"api_key":"k"}`}); !errors.Is(err, ErrInvalid) {
		t.Errorf("details with a credential: %v, want ErrInvalid", err)
	}
}

func TestResponse(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id, err := d.CreateSession(ctx, Session{Kind: KindFile, Source: "interview.mp3"})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"metadata":{"request_id":"r1"},"results":{"channels":[{"alternatives":[{"transcript":"hello there"}]}]}}`)
	if err := d.SaveResponse(ctx, id, body, "hello there"); err != nil {
		t.Fatal(err)
	}
	got, err := d.Response(ctx, id)
	if err != nil || string(got) != string(body) {
		t.Fatalf("Response = %s, %v", got, err)
	}
	body2 := []byte(`{"metadata":{"request_id":"r2"}}`)
	if err := d.SaveResponse(ctx, id, body2, "general kenobi"); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Response(ctx, id); string(got) != string(body2) {
		t.Errorf("a second SaveResponse did not replace the first: %s", got)
	}
	if text, err := d.ResponseText(ctx, id); err != nil || text != "general kenobi" {
		t.Errorf("ResponseText = %q, %v; want the second text", text, err)
	}
	if _, err := d.ResponseText(ctx, id+100); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResponseText of a missing session = %v, want ErrNotFound", err)
	}
	if hits, _ := d.Search(ctx, "hello", 10); len(hits) != 0 {
		t.Errorf("the replaced transcript is still found: %+v", hits)
	}
	if hits, _ := d.Search(ctx, "kenobi", 10); len(hits) != 1 || hits[0].SessionID != id || hits[0].SegmentID != 0 {
		t.Errorf("the new transcript: %+v", hits)
	}
	if err := d.SaveResponse(ctx, id, []byte("not json"), "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a body that is not JSON: %v, want ErrInvalid", err)
	}
}

func TestDeleteSessionCascades(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	gone := newSession(t, d, "gone")
	kept := newSession(t, d, "kept")
	for _, id := range []int64{gone, kept} {
		for i := range 5 {
			if _, err := d.AddSegment(ctx, Segment{SessionID: id, Seq: i, Text: fmt.Sprintf("zebra crossing %d", id)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.SaveResponse(ctx, id, []byte(`{}`), "zebra transcript"); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteSession(ctx, gone); err != nil {
		t.Fatal(err)
	}
	count := func(table string) (n int) {
		if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE session_id = ?`, gone).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, table := range []string{"segments", "responses", "history_fts"} {
		if n := count(table); n != 0 {
			t.Errorf("%d rows of the deleted session left in %s", n, table)
		}
	}
	hits, err := d.Search(ctx, "zebra", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 6 {
		t.Errorf("%d hits, want the kept session's 5 segments and transcript", len(hits))
	}
	for _, h := range hits {
		if h.SessionID != kept {
			t.Errorf("a hit in the deleted session: %+v", h)
		}
	}
}

// TestConcurrentUse writes and reads from many goroutines at once, as the
// captions session, the history view and search do; -race checks it.
func TestConcurrentUse(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	const writers, perWriter = 4, 50
	ids := make([]int64, writers)
	for i := range ids {
		ids[i] = newSession(t, d, fmt.Sprint("w", i))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if _, err := d.AddSegment(ctx, Segment{SessionID: ids[w], Seq: i, Start: float64(i), Text: fmt.Sprintf("writer %d line %d parallel", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.Search(ctx, "parallel", 5); err != nil {
					t.Error(err)
					return
				}
				if _, err := d.Sessions(ctx, Filter{Limit: 10}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	for w, id := range ids {
		segs, err := d.Segments(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) != perWriter {
			t.Errorf("writer %d: %d segments saved, want %d", w, len(segs), perWriter)
		}
	}
}

var _ interface {
	CreateSession(ctx context.Context, s Session) (int64, error)
	AddSegment(ctx context.Context, seg Segment) (int64, error)
	FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error
} = (*DB)(nil) // sessions.CaptionHistory
