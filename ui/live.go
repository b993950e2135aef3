package ui

import (
	"context"
	"time"

	"github.com/earshot-app/earshot/sessions"
)

// frameInterval is the shortest time between two repaints of a live
// session: one frame of a 60 Hz display. Interims arrive faster than
// that when audio is sent faster than real time.
const frameInterval = time.Second / 60

// liveBatch is what a live session reported since the last repaint:
// every final, in order, and only the latest interim, level and state.
type liveBatch struct {
	finals []sessions.Caption
	// interim is the latest interim after the last final; nil with
	// clearInterim means the finals replaced the interim shown.
	interim      *sessions.InterimEvent
	clearInterim bool
	level        *sessions.LevelEvent
	// state is the latest change of state, except that a failure is
	// never hidden by a later one.
	state *sessions.StateEvent
}

func (b *liveBatch) empty() bool {
	return len(b.finals) == 0 && b.interim == nil && !b.clearInterim && b.level == nil && b.state == nil
}

// add folds ev into the batch.
func (b *liveBatch) add(ev sessions.Event) {
	switch e := ev.(type) {
	case *sessions.FinalEvent:
		b.finals = append(b.finals, e.Caption)
		b.interim = nil
		b.clearInterim = true
	case *sessions.InterimEvent:
		b.interim = e
	case *sessions.LevelEvent:
		b.level = e
	case *sessions.StateEvent:
		if b.state != nil && b.state.State == sessions.StateFailed {
			return // the failure stays on screen
		}
		b.state = e
	case *sessions.UtteranceEndEvent:
		// The speaker paused: the interim shown is as final as it gets
		// until the final itself arrives, so nothing changes on screen.
	}
}

// pumpLive reads a live session's events until the channel is closed,
// and hands them to show in batches, at most one per frameInterval and
// never while the previous batch is still waiting for the UI goroutine:
// a UI that falls behind gets fewer, larger batches, and the session
// (which coalesces interims itself) never waits for it.
//
// show is called on the pump's goroutine; it must pass the batch to the
// UI goroutine and call applied once the batch is on screen. Requests
// on mute are passed to setMuted in order, latest first when they pile
// up. pumpLive returns when events is closed: after handing over the
// last batch, or, once ctx is done, after reading the rest unseen.
func pumpLive(ctx context.Context, events <-chan sessions.Event, mute <-chan bool, setMuted func(bool), frame time.Duration, show func(b liveBatch, applied func())) {
	pumpBatches(ctx, events, mute, setMuted, frame, show)
}

// eventBatch is what pumpBatches gathers events into between frames.
type eventBatch interface {
	add(sessions.Event)
	empty() bool
}

// pumpBatches is pumpLive for any kind of batch: B's zero value is an
// empty batch, and *B folds events in.
func pumpBatches[B any, PB interface {
	*B
	eventBatch
}](ctx context.Context, events <-chan sessions.Event, mute <-chan bool, setMuted func(bool), frame time.Duration, show func(b B, applied func())) {
	var (
		pending  B
		inFlight bool
		last     time.Time
		timer    = time.NewTimer(time.Hour)
		timerC   <-chan time.Time
		applied  = make(chan struct{}, 1)
	)
	timer.Stop()
	defer timer.Stop()
	send := func() {
		b := pending
		var zero B
		pending = zero
		inFlight = true
		last = time.Now()
		show(b, func() {
			select {
			case applied <- struct{}{}:
			default:
			}
		})
	}
	// schedule sends the pending batch as soon as the frame allows.
	schedule := func() {
		if inFlight || timerC != nil || PB(&pending).empty() {
			return
		}
		wait := frame - time.Since(last)
		if wait <= 0 {
			send()
			return
		}
		timer.Reset(wait)
		timerC = timer.C
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if !PB(&pending).empty() {
					send()
				}
				return
			}
			PB(&pending).add(ev)
			schedule()
		case m := <-mute:
			setMuted(m)
		case <-timerC:
			timerC = nil
			schedule()
		case <-applied:
			inFlight = false
			schedule()
		case <-ctx.Done():
			// Nobody is looking any more, but the session, which ctx
			// also ends, can only finish once its events are read.
			for range events {
			}
			return
		}
	}
}
