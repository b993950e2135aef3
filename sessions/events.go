package sessions

import (
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
)

// Caption is one final piece of transcript, in one speaker's voice.
// Times are seconds from the start of the session, continuous across
// mutes and reconnections.
type Caption struct {
	// Seq numbers the captions of a session from 0.
	Seq        int
	Start, End float64
	// Speaker is set when the session diarizes.
	Speaker    *int
	Text       string
	Words      []api.Word
	Confidence float64
	// SpeechFinal marks the end of a stretch of speech (an endpoint).
	SpeechFinal bool
	// Channel is the audio channel the caption was heard on; Side names
	// it in a multichannel session ("You" for the microphone, "Others"
	// for the computer's sound), "" otherwise.
	Channel int
	Side    string
}

// Event is something a session reports: *InterimEvent, *FinalEvent,
// *StateEvent, *LevelEvent or *UtteranceEndEvent.
type Event interface{ isEvent() }

// InterimEvent is a transcript that may still change.
type InterimEvent struct {
	Start, End float64
	Text       string
	Words      []api.Word
	// Channel and Side are those of a multichannel session (see
	// CaptionsConfig.Sides): "You", "Others".
	Channel int
	Side    string
}

// FinalEvent carries a caption that will not change; it has been saved to
// history by the time it is delivered.
type FinalEvent struct{ Caption Caption }

// State is where a session is in its life.
type State int

// States of a session.
const (
	StateConnecting State = iota + 1
	// StateLoading: the local engine loads its recogniser (the first
	// session after a start, or after a few idle minutes).
	StateLoading
	StateLive
	StateMuted
	StateReconnecting
	StateStopping
	StateStopped
	StateFailed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateLoading:
		return "loading the recogniser"
	case StateLive:
		return "live"
	case StateMuted:
		return "muted"
	case StateReconnecting:
		return "reconnecting"
	case StateStopping:
		return "stopping"
	case StateStopped:
		return "stopped"
	case StateFailed:
		return "failed"
	}
	return "unknown"
}

// StateEvent reports a change of state. While reconnecting, Buffered is
// how much audio waits to be sent, Attempt counts the tries and RetryIn is
// the wait before the next one; Err is why the connection was lost or why
// the session failed.
type StateEvent struct {
	State    State
	Buffered time.Duration
	Attempt  int
	RetryIn  time.Duration
	Err      error
}

// LevelEvent is the input level, for a meter, in dB below full scale.
type LevelEvent struct{ RMS, Peak float64 }

// UtteranceEndEvent reports a gap after the last word (utterance_end_ms).
type UtteranceEndEvent struct{ LastWordEnd float64 }

func (*InterimEvent) isEvent()      {}
func (*FinalEvent) isEvent()        {}
func (*StateEvent) isEvent()        {}
func (*LevelEvent) isEvent()        {}
func (*UtteranceEndEvent) isEvent() {}

// eventQueue delivers events to a channel without ever blocking the
// producer. Interims and levels not yet delivered are replaced by newer
// ones (coalesced) unless another kind of event was queued between them;
// every other event is kept, in order, so finals are never dropped. It is
// safe for concurrent use.
type eventQueue struct {
	out chan Event

	mu     sync.Mutex // guards q, closed
	q      []Event
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newEventQueue(size int) *eventQueue {
	e := &eventQueue{out: make(chan Event, size), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go e.deliver()
	return e
}

// push queues ev, replacing a queued event it supersedes.
func (e *eventQueue) push(ev Event) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	replaced := false
	switch ev.(type) {
	case *InterimEvent, *LevelEvent:
		for i := len(e.q) - 1; i >= 0; i-- {
			if sameKind(e.q[i], ev) {
				e.q[i] = ev
				replaced = true
				break
			}
			if !coalescable(e.q[i]) {
				// A coalesced event never moves ahead of one that is kept:
				// an interim may not jump ahead of a final, a state change
				// or an utterance end pushed before it.
				break
			}
		}
	}
	if !replaced {
		e.q = append(e.q, ev)
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func coalescable(e Event) bool {
	switch e.(type) {
	case *InterimEvent, *LevelEvent:
		return true
	}
	return false
}

func sameKind(a, b Event) bool {
	switch a.(type) {
	case *InterimEvent:
		_, ok := b.(*InterimEvent)
		return ok
	case *LevelEvent:
		_, ok := b.(*LevelEvent)
		return ok
	}
	return false
}

// close delivers what is queued, then closes the channel.
func (e *eventQueue) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	<-e.done
}

func (e *eventQueue) deliver() {
	defer close(e.done)
	defer close(e.out)
	for {
		e.mu.Lock()
		if len(e.q) == 0 {
			closed := e.closed
			e.mu.Unlock()
			if closed {
				return
			}
			<-e.wake
			continue
		}
		ev := e.q[0]
		e.q[0] = nil
		e.q = e.q[1:]
		e.mu.Unlock()
		e.out <- ev
	}
}
