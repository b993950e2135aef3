package sessions_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/sessions"
)

// eventLog keeps every event a session delivers and wakes whoever waits
// on it at each one, so that tests wait for what happened rather than
// poll on a timer. Its methods are safe for concurrent use.
type eventLog struct {
	mu      sync.Mutex // guards events, changed
	events  []sessions.Event
	changed chan struct{} // closed at the next event, then replaced
	closed  chan struct{} // closed with the session's channel
}

// logEvents reads events until the channel closes, calling each (when not
// nil) for every event before it is logged.
func logEvents(events <-chan sessions.Event, each func(sessions.Event)) *eventLog {
	l := &eventLog{changed: make(chan struct{}), closed: make(chan struct{})}
	go func() {
		defer close(l.closed)
		for ev := range events {
			if each != nil {
				each(ev)
			}
			l.mu.Lock()
			l.events = append(l.events, ev)
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
	}()
	return l
}

// all returns the events so far.
func (l *eventLog) all() []sessions.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// patience is how long a test waits for something that will happen
// unless the code is broken. Real time, because a hung session has no
// other way to show: two minutes, far beyond what a loaded 2-core machine
// under -race takes, so that only a fault makes a test wait that long.
const patience = 2 * time.Minute

// until waits until cond holds of the events so far. It fails t when the
// session ends without it, or after patience.
func (l *eventLog) until(t *testing.T, what string, cond func([]sessions.Event) bool) {
	t.Helper()
	limit := time.NewTimer(patience)
	defer limit.Stop()
	for {
		l.mu.Lock()
		evs, changed := slices.Clone(l.events), l.changed
		l.mu.Unlock()
		if cond(evs) {
			return
		}
		select {
		case <-changed:
		case <-l.closed:
			if cond(l.all()) {
				return
			}
			t.Fatalf("the session ended without %s; events: %s", what, describeEvents(l.all()))
		case <-limit.C:
			t.Fatalf("gave up after %v waiting for %s; events: %s", patience, what, describeEvents(l.all()))
		}
	}
}

// first waits for the first event that satisfies cond and returns it.
func (l *eventLog) first(t *testing.T, what string, cond func(sessions.Event) bool) sessions.Event {
	t.Helper()
	var found sessions.Event
	l.until(t, what, func(evs []sessions.Event) bool {
		i := slices.IndexFunc(evs, cond)
		if i >= 0 {
			found = evs[i]
		}
		return i >= 0
	})
	return found
}

// wait waits for the session's channel to close.
func (l *eventLog) wait(t *testing.T) {
	t.Helper()
	select {
	case <-l.closed:
	case <-time.After(patience):
		t.Fatalf("the events channel was not closed within %v", patience)
	}
}
