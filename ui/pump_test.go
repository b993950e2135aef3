package ui

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
)

// pumpRig runs a pump on a fake clock, with a UI goroutine the test plays
// by hand: batches handed over wait in ui until the test applies them,
// and a frame's wait is a timer of the clock the test moves.
type pumpRig struct {
	p       *pump
	clk     *esclock.Fake
	events  chan sessions.Event
	mute    chan bool
	ui      chan func() // handed to the UI goroutine, not run yet
	applied [][]sessions.Event
	handed  []time.Time // when each batch was handed over, on the fake clock
	muted   []bool
	done    chan struct{}
	closed  bool // events is closed

	mu sync.Mutex // guards handed, muted
}

func newPumpRig(t *testing.T, ctx context.Context) *pumpRig {
	r := &pumpRig{
		clk:    esclock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
		events: make(chan sessions.Event), // unbuffered: a send returns once the pump took it
		mute:   make(chan bool),
		ui:     make(chan func(), 8),
		done:   make(chan struct{}),
	}
	r.p = &pump{
		events: r.events,
		apply:  func(b []sessions.Event) { r.applied = append(r.applied, b) },
		ui: func(fn func()) {
			r.mu.Lock()
			r.handed = append(r.handed, r.clk.Now())
			r.mu.Unlock()
			r.ui <- fn
		},
		mute: r.mute,
		setMuted: func(m bool) {
			r.mu.Lock()
			r.muted = append(r.muted, m)
			r.mu.Unlock()
		},
		frame: frameInterval,
		clock: r.clk,
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(r.done)
		r.p.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		r.close()
		<-r.done
	})
	return r
}

// close closes the event channel, as a session does when it ends.
func (r *pumpRig) close() {
	if !r.closed {
		r.closed = true
		close(r.events)
	}
}

// sync returns once the pump has dealt with everything sent before: it
// takes a mute request only between two events.
func (r *pumpRig) sync(m bool) { r.mute <- m }

// handedOver returns the batch handed to the UI goroutine, or fails.
func (r *pumpRig) handedOver(t *testing.T) func() {
	t.Helper()
	select {
	case fn := <-r.ui:
		return fn
	case <-time.After(10 * time.Second):
		t.Fatal("no batch was handed to the UI goroutine")
	}
	return nil
}

// assertNothingHanded fails if a batch is waiting for the UI goroutine.
func (r *pumpRig) assertNothingHanded(t *testing.T, when string) {
	t.Helper()
	if n := len(r.ui); n > 0 {
		t.Errorf("%s: %d more batches were handed over", when, n)
	}
}

// frameWait waits until the pump waits for the end of a frame, and
// checks that the wait ends after d: not a moment before.
func (r *pumpRig) frameWait(t *testing.T, d time.Duration) {
	t.Helper()
	if !r.clk.WaitForWaiters(1, t.Context().Done()) {
		t.Fatal("the pump set no timer for the next frame")
	}
	r.clk.Advance(d - time.Nanosecond)
	if r.clk.Waiters() != 1 {
		t.Fatalf("the pump's frame ended before %v", d)
	}
	r.clk.Advance(time.Nanosecond)
}

func final(seq int) sessions.Event {
	return &sessions.FinalEvent{Caption: sessions.Caption{Seq: seq, Text: fmt.Sprint("final ", seq)}}
}

// TestPumpFrames: the pump hands the UI goroutine at most one batch per
// frame and never a second one before the first is applied; what comes
// meanwhile waits, in order, for the next batch, and nothing is dropped
// or merged.
func TestPumpFrames(t *testing.T) {
	r := newPumpRig(t, t.Context())

	// The first event goes at once: no frame was painted yet.
	first := final(0)
	r.events <- first
	apply1 := r.handedOver(t)

	// While it waits for the UI goroutine, events gather: no second batch
	// is handed over, and no frame is waited for.
	level := &sessions.LevelEvent{RMS: -20}
	interim := &sessions.InterimEvent{Text: "hello"}
	r.events <- level
	r.events <- interim
	r.events <- final(1)
	r.sync(true)
	r.assertNothingHanded(t, "before the first batch is applied")
	if r.clk.Waiters() != 0 {
		t.Error("the pump waits for a frame while a batch is in flight")
	}

	// Once applied, the rest waits for the frame to end.
	apply1()
	r.frameWait(t, frameInterval)
	r.handedOver(t)()
	if want := [][]sessions.Event{{first}, {level, interim, final(1)}}; !sameBatches(r.applied, want) {
		t.Errorf("applied %s, want %s", batchesString(r.applied), batchesString(want))
	}

	// A frame later, an event goes at once again.
	r.clk.Advance(3 * frameInterval)
	r.events <- final(2)
	apply3 := r.handedOver(t)
	r.sync(false)

	// The channel closes while the last batch is in flight: the pump
	// returns only once it is applied.
	r.close()
	select {
	case <-r.done:
		t.Fatal("the pump returned before its last batch was applied")
	default:
	}
	apply3()
	<-r.done
	if n := len(r.applied); n != 3 {
		t.Errorf("%d batches applied, want 3", n)
	}
	for i := 1; i < len(r.handed); i++ {
		if gap := r.handed[i].Sub(r.handed[i-1]); gap < frameInterval {
			t.Errorf("batches %d and %d were handed over %v apart, less than a frame", i-1, i, gap)
		}
	}
	if !slices.Equal(r.muted, []bool{true, false}) {
		t.Errorf("mute requests passed on: %v, want [true false]", r.muted)
	}
}

// TestPumpLastBatchWaitsForItsFrame: events pending when the channel
// closes are handed over at the end of the frame, and run returns once
// they are applied.
func TestPumpLastBatchWaitsForItsFrame(t *testing.T) {
	r := newPumpRig(t, t.Context())
	r.events <- final(0)
	r.handedOver(t)()
	r.events <- final(1)
	r.close()
	r.frameWait(t, frameInterval)
	r.handedOver(t)()
	<-r.done
	if want := [][]sessions.Event{{final(0)}, {final(1)}}; !sameBatches(r.applied, want) {
		t.Errorf("applied %s, want %s", batchesString(r.applied), batchesString(want))
	}
}

// TestPumpStopsWithContext: once ctx is done nothing more is handed over,
// even while a batch is in flight that will never be applied (the App
// drops what it is handed once it stops), and the rest of the events is
// read so that the session can finish.
func TestPumpStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r := newPumpRig(t, ctx)
	r.events <- final(0)
	r.handedOver(t) // never applied
	r.events <- final(1)
	cancel()
	for i := 2; i < 10; i++ {
		r.events <- final(i) // read unseen
	}
	r.close()
	<-r.done
	r.assertNothingHanded(t, "after the context ended")
	if len(r.applied) != 0 {
		t.Errorf("applied %s after the context ended", batchesString(r.applied))
	}
}

// TestPumpKeepsEveryEventInOrder runs a pump on the real clock against a
// UI goroutine that is slow now and then: every event arrives once, in
// order, with never two batches waiting for the UI goroutine.
func TestPumpKeepsEveryEventInOrder(t *testing.T) {
	const n = 5000
	events := make(chan sessions.Event, 64)
	uiQueue := make(chan func(), n)
	var (
		mu          sync.Mutex
		outstanding int
		most        int
		got         []int
		batches     int
	)
	p := &pump{
		events: events,
		apply: func(b []sessions.Event) {
			if len(b) == 0 {
				t.Error("an empty batch was applied")
			}
			batches++
			for _, ev := range b {
				got = append(got, ev.(*sessions.FinalEvent).Caption.Seq)
			}
			// Applied: the pump may hand the next batch over from now on.
			mu.Lock()
			outstanding--
			mu.Unlock()
		},
		ui: func(fn func()) {
			mu.Lock()
			outstanding++
			most = max(most, outstanding)
			mu.Unlock()
			uiQueue <- fn
		},
		frame: time.Millisecond,
		clock: esclock.Real{},
	}
	// The UI goroutine: every seventh batch it has more to do.
	uiDone := make(chan struct{})
	go func() {
		defer close(uiDone)
		i := 0
		for fn := range uiQueue {
			if i++; i%7 == 0 {
				busyWork()
			}
			fn()
		}
	}()
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		p.run(t.Context())
	}()
	for i := range n {
		events <- final(i)
	}
	close(events)
	<-pumped
	close(uiQueue)
	<-uiDone
	if len(got) != n {
		t.Fatalf("%d events applied, want %d", len(got), n)
	}
	for i, seq := range got {
		if seq != i {
			t.Fatalf("event %d applied in place %d", seq, i)
		}
	}
	if most > 1 {
		t.Errorf("%d batches waited for the UI goroutine at once, want at most 1", most)
	}
	t.Logf("%d events in %d batches", n, batches)
}

// busyWork keeps the UI goroutine busy for a while, as a repaint would.
func busyWork() {
	x := 0
	for i := range 200000 {
		x += i % 7
	}
	_ = fmt.Sprint(x)
}

func sameBatches(a, b [][]sessions.Event) bool {
	return batchesString(a) == batchesString(b)
}

// batchesString writes batches of events for a message.
func batchesString(bs [][]sessions.Event) string {
	s := ""
	for _, b := range bs {
		s += "["
		for i, ev := range b {
			if i > 0 {
				s += " "
			}
			switch e := ev.(type) {
			case *sessions.FinalEvent:
				s += fmt.Sprintf("final(%d)", e.Caption.Seq)
			case *sessions.InterimEvent:
				s += fmt.Sprintf("interim(%q)", e.Text)
			case *sessions.LevelEvent:
				s += fmt.Sprintf("level(%g)", e.RMS)
			default:
				s += fmt.Sprintf("%T", ev)
			}
		}
		s += "]"
	}
	return s
}
