package ui

import (
	"context"
	"time"

	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
)

// frameInterval is the shortest time between two batches a pump hands to
// the UI goroutine: one frame of a 60 Hz display. A session reports
// faster than that when audio is sent faster than real time.
const frameInterval = time.Second / 60

// pump is the one bridge from a session's event channel to a tab. It
// reads the events off the UI goroutine and hands what arrived since the
// last frame, in order, to apply on the UI goroutine: at most one batch
// per frame, and never a second one while the previous batch has not
// been applied. A UI that falls behind gets fewer, larger batches; the
// session, which coalesces interims and levels itself, never waits for
// the UI. Nothing is coalesced here: every event is applied, in the
// order it came.
//
// Build one with App.newPump, set mute and setMuted if the session can
// be muted, and call run on a goroutine the App owns.
type pump struct {
	events <-chan sessions.Event
	// apply shows a batch; it runs on the UI goroutine.
	apply func([]sessions.Event)
	// ui hands fn to the UI goroutine: App.onUI, which drops fn once the
	// App is stopping.
	ui func(fn func())

	// mute carries the muting a tab asks for; run passes each request to
	// setMuted off the UI goroutine. Both nil when the session cannot be
	// muted.
	mute     <-chan bool
	setMuted func(bool)

	frame time.Duration
	clock esclock.Clock // paces the frames
}

// newPump returns a pump that hands events to apply through onUI, at
// most once per frameInterval.
func (a *App) newPump(events <-chan sessions.Event, apply func([]sessions.Event)) *pump {
	return &pump{events: events, apply: apply, ui: a.onUI, frame: frameInterval, clock: a.clock}
}

// run reads events until the channel is closed, and returns once the
// last batch has been applied. Once ctx is done it stops handing
// batches over, reads the rest unseen (the session, which ctx also ends,
// can only finish once its events are read) and returns when the channel
// is closed.
func (p *pump) run(ctx context.Context) {
	var (
		pending  []sessions.Event
		inFlight bool          // a batch was handed over and is not applied yet
		last     time.Time     // when the last batch was handed over
		timer    esclock.Timer // the frame's end, while one is waited for
		wake     <-chan time.Time
		events   = p.events
		applied  = make(chan struct{}, 1)
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	send := func() {
		b := pending
		pending = nil
		inFlight = true
		last = p.clock.Now()
		p.ui(func() {
			p.apply(b)
			applied <- struct{}{} // one batch in flight: never blocks
		})
	}
	// schedule hands the pending events over as soon as the frame and
	// the UI allow.
	schedule := func() {
		if inFlight || wake != nil || len(pending) == 0 {
			return
		}
		if wait := p.frame - p.clock.Since(last); wait > 0 {
			if timer == nil {
				timer = p.clock.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			wake = timer.C()
			return
		}
		send()
	}
	for events != nil || inFlight || len(pending) > 0 {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil // the last events wait for their frame
				break
			}
			pending = append(pending, ev)
			schedule()
		case m := <-p.mute:
			p.setMuted(m)
		case <-wake:
			wake = nil
			schedule()
		case <-applied:
			inFlight = false
			schedule()
		case <-ctx.Done():
			if events != nil {
				for range events {
				}
			}
			return
		}
	}
}
