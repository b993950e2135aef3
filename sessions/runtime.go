package sessions

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
)

// The session runtime: the one life every session type leads, and the one
// receive pump that turns a stream's Next into a channel. The one way a
// session keeps its record in history is record.go's.
//
// A session type embeds *lifecycle, which gives it Events, Done and Stop,
// and implements Start by calling lifecycle.start with its preparation:
//
//	func (c *Captions) Start(ctx context.Context) error { return c.start(ctx, c.prepare) }
//
// prepare runs on the caller's goroutine (checks, the history record, a
// connection when the caller must know it failed) and returns the run
// function, which the lifecycle runs on the session's own goroutine. When
// run returns, the events still queued are delivered, the channel is
// closed, then Done is. Events coalesce interims and levels (eventQueue),
// in this one place; the UI pump paints what it reads at most once a frame.

// Clock is the time source of sessions: internal/clock's. The real one by
// default; tests inject a fake one and move it.
type Clock = clock.Clock

// Timer is a timer of a Clock.
type Timer = clock.Timer

// lifecycle is what every session shares: Start once, an idempotent Stop
// that waits for the end, and an event channel closed on stop. Its
// methods are safe for concurrent use.
type lifecycle struct {
	name  string
	ev    *eventQueue
	clock Clock

	startOnce sync.Once
	stopOnce  sync.Once
	endOnce   sync.Once
	stopCh    chan struct{}
	done      chan struct{}

	mu      sync.Mutex // guards started, err
	started bool
	err     error
}

// newLifecycle returns the lifecycle of a session called name (in its
// errors), timed by clk (nil for the real clock).
func newLifecycle(name string, clk Clock) *lifecycle {
	return &lifecycle{
		name:   name,
		ev:     newEventQueue(64),
		clock:  clock.Or(clk),
		stopCh: make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// runFunc is a session's work, run on its own goroutine until it returns;
// its error is why the session failed.
type runFunc func(ctx context.Context) error

// start runs prepare once. When prepare fails, the session ends without
// running (its events close, Done closes) and start returns the error;
// otherwise the run it returns goes on in the background. ctx bounds the
// whole session: cancelling it stops the session like Stop.
func (l *lifecycle) start(ctx context.Context, prepare func(ctx context.Context) (runFunc, error)) error {
	err := fmt.Errorf("%s: already started", l.name)
	l.startOnce.Do(func() {
		var run runFunc
		run, err = prepare(ctx)
		if err != nil {
			l.endUnstarted()
			return
		}
		l.mu.Lock()
		l.started = true
		l.mu.Unlock()
		go func() {
			rerr := run(ctx)
			l.mu.Lock()
			l.err = rerr
			l.mu.Unlock()
			l.ev.close()
			close(l.done)
		}()
	})
	return err
}

func (l *lifecycle) endUnstarted() {
	l.endOnce.Do(func() {
		l.ev.close()
		close(l.done)
	})
}

// Events returns the session's events. The channel is closed once the
// session has ended and every event has been delivered; it must be read
// until then.
func (l *lifecycle) Events() <-chan Event { return l.ev.out }

// Done is closed when the session has ended.
func (l *lifecycle) Done() <-chan struct{} { return l.done }

// Stop asks the session to end and waits until it has. It is idempotent
// and returns why the session failed, if it did.
func (l *lifecycle) Stop() error {
	l.requestStop()
	// A later Start does nothing; a Start under way is waited for, so the
	// session it starts is stopped and waited for below.
	l.startOnce.Do(func() {})
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if !started {
		l.endUnstarted()
		return nil
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Err returns why the session failed, once Done is closed.
func (l *lifecycle) Err() error {
	select {
	case <-l.done:
	default:
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// requestStop asks the run to end, as Stop does, without waiting.
func (l *lifecycle) requestStop() { l.stopOnce.Do(func() { close(l.stopCh) }) }

// stopping is closed once a stop was asked for.
func (l *lifecycle) stopping() <-chan struct{} { return l.stopCh }

// emit queues an event; it never blocks.
func (l *lifecycle) emit(ev Event) { l.ev.push(ev) }

// received is what the receive pump hands a run loop: a message with the
// time it arrived, or the error that ended the stream (io.EOF for a clean
// end).
type received[M any] struct {
	msg M
	at  time.Time
	err error
}

// pump calls next until it fails and hands each message, then the error,
// to out. It returns after handing over the error, or when ctx is done.
// It is the only goroutine that reads the stream.
func pump[M any](ctx context.Context, clk Clock, next func(context.Context) (M, error), out chan<- received[M]) {
	for {
		m, err := next(ctx)
		select {
		case out <- received[M]{msg: m, at: clk.Now(), err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
