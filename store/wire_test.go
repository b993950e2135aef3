package store

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func wireEvents(n int, first time.Time) []WireEvent {
	out := make([]WireEvent, n)
	for i := range out {
		out[i] = WireEvent{Time: first.Add(time.Duration(i) * time.Millisecond), Stream: 9, Direction: "received", Kind: "text",
			Path: "/v1/listen", Size: int64(10 + i), Text: fmt.Sprintf(`{"type":"Results","n":%d}`, i)}
	}
	return out
}

// TestWireEventsRoundTrip keeps every field of a session's events, in
// order across batches, and searches their text.
func TestWireEventsRoundTrip(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id, err := d.CreateSession(ctx, Session{Kind: KindCaptions, Title: "Standup"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 123)
	first := []WireEvent{{Time: t0, Stream: 4, Direction: "sent", Kind: "request", Method: "POST", Path: "/v1/speak",
		Query: "model=aura-2", Status: 0, RequestID: "", Size: 21, Text: `{"text":"100% sure_"}`, Truncated: true,
		Elapsed: 0}, {Time: t0.Add(time.Second), Stream: 4, Direction: "received", Kind: "response", Method: "POST",
		Path: "/v1/speak", Status: 200, RequestID: "req-9", Size: -1, Marker: "first audio", Latency: 250 * time.Millisecond,
		Elapsed: 250 * time.Millisecond}}
	if n, err := d.AddWireEvents(ctx, id, first); err != nil || n != 2 {
		t.Fatalf("AddWireEvents = %d, %v", n, err)
	}
	if n, err := d.AddWireEvents(ctx, id, wireEvents(3, t0.Add(2*time.Second))); err != nil || n != 3 {
		t.Fatalf("AddWireEvents = %d, %v", n, err)
	}
	got, err := d.WireEvents(ctx, id, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d events, want 5", len(got))
	}
	for i, e := range got {
		if e.Seq != int64(i) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	for i, w := range first {
		w.Seq = int64(i)
		g := got[i]
		if !g.Time.Equal(w.Time) {
			t.Errorf("event %d at %v, want %v", i, g.Time, w.Time)
		}
		g.Time = w.Time
		if g != w {
			t.Errorf("event %d read back as\n%+v\nwant\n%+v", i, g, w)
		}
	}
	for _, tc := range []struct {
		search string
		want   int
	}{{"results", 3}, {`"n":2`, 1}, {"100%", 1}, {"%sure", 0}, {"s_r", 0}, {"sure_", 1}, {"req-9", 1}, {"/v1/SPEAK", 2}, {"response", 1}} {
		got, err := d.WireEvents(ctx, id, tc.search, 0)
		if err != nil || len(got) != tc.want {
			t.Errorf("search %q: %d events, %v; want %d", tc.search, len(got), err, tc.want)
		}
	}
	if got, _ := d.WireEvents(ctx, id, "", 2); len(got) != 2 || got[1].Seq != 1 {
		t.Errorf("limit 2 gave %d events", len(got))
	}
	if _, err := d.AddWireEvents(ctx, id+100, first); !errors.Is(err, ErrNotFound) {
		t.Errorf("events of no session: %v, want ErrNotFound", err)
	}
}

// TestWireEventsGoWithTheirSession deletes a session's events and counts
// with it, and leaves another's.
func TestWireEventsGoWithTheirSession(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	a := newSession(t, d, "a")
	b := newSession(t, d, "b")
	for _, id := range []int64{a, b} {
		if _, err := d.AddWireEvents(ctx, id, wireEvents(4, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	var left, counts int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM wire_events WHERE session_id = ?`, a).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM wire_counts WHERE session_id = ?`, a).Scan(&counts); err != nil {
		t.Fatal(err)
	}
	if left != 0 || counts != 0 {
		t.Errorf("%d events and %d counts left of a deleted session", left, counts)
	}
	if got, err := d.WireEvents(ctx, b, "", 0); err != nil || len(got) != 4 {
		t.Errorf("the other session has %d events, %v", len(got), err)
	}
}

// TestWireEventsBound keeps at most the bound and counts the rest.
func TestWireEventsBound(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id := newSession(t, d, "long")
	const limit = 10
	for _, tc := range []struct{ add, kept int }{{6, 6}, {6, 4}, {3, 0}} {
		n, err := d.addWireEvents(ctx, id, wireEvents(tc.add, time.Now()), limit)
		if err != nil || n != tc.kept {
			t.Fatalf("adding %d: kept %d, %v; want %d", tc.add, n, err, tc.kept)
		}
	}
	c, err := d.WireCounts(ctx, id)
	if err != nil || c != (WireCounts{Stored: 10, Dropped: 5}) {
		t.Errorf("counts %+v, %v; want 10 stored, 5 dropped", c, err)
	}
	got, err := d.WireEvents(ctx, id, "", 0)
	if err != nil || len(got) != limit || got[limit-1].Seq != limit-1 {
		t.Errorf("%d events kept, %v", len(got), err)
	}
	if MaxWireEvents < 100_000 {
		t.Errorf("the bound %d is below the 100,000 events the inspector shows", MaxWireEvents)
	}
}
