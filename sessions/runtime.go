package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/store"
)

// The session runtime: the one life every session type leads, the one
// receive pump that turns a stream's Next into a channel, and the one way
// a session keeps its record in history.
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

// SaveFailedEvent reports that something could not be saved to history:
// the session goes on, and the person is told what was not kept.
type SaveFailedEvent struct {
	// What names what was not saved ("a caption", "the transcript").
	What string
	Err  error
}

func (*SaveFailedEvent) isEvent() {}

// Error says what was not saved and why: a SaveFailedEvent is also the
// error a person is shown.
func (e *SaveFailedEvent) Error() string {
	return "sessions: could not save " + e.What + " to history: " + e.Err.Error()
}

// Unwrap returns why the save failed.
func (e *SaveFailedEvent) Unwrap() error { return e.Err }

// RecordHistory is the part of history every session writes its record
// to; *store.DB implements it. Sessions ask for more (segments, answers,
// audio) through their own interfaces.
type RecordHistory interface {
	CreateSession(ctx context.Context, s store.Session) (int64, error)
	FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error
}

// record is a session's entry in history: created when the session
// starts, added to while it runs, finished when it ends. One policy for
// every failure: creating it fails the start (nothing would be kept);
// a later failure is logged and reported through report (a
// SaveFailedEvent, or an error returned to the caller), never dropped.
// A nil *record (no history) does nothing. It is not safe for concurrent
// use: the session's run loop owns it.
type record struct {
	h      RecordHistory
	words  func(error) string // why it failed, in words (SetErrorWords)
	id     int64
	clock  Clock
	log    *slog.Logger
	report func(*SaveFailedEvent)
	failed error // the first failure, for the finish
}

// errRecordCreate wraps a failure to open a session's record.
var errRecordCreate = errors.New("the session could not be saved to history")

// openRecord creates s in h. With no history it returns nil, nil.
func openRecord(ctx context.Context, h RecordHistory, s store.Session, clk Clock, log *slog.Logger, report func(*SaveFailedEvent)) (*record, error) {
	if h == nil {
		return nil, nil
	}
	clk = clock.Or(clk)
	if s.Started.IsZero() {
		s.Started = clk.Now()
	}
	if s.Status == "" {
		s.Status = store.StatusRunning
	}
	id, err := h.CreateSession(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRecordCreate, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &record{h: h, id: id, clock: clk, log: log, report: report, words: error.Error}
	if wh, ok := h.(interface{ errorWords(error) string }); ok {
		r.words = wh.errorWords
	}
	return r, nil
}

// ID returns the record's id in history, 0 without history.
func (r *record) ID() int64 {
	if r == nil {
		return 0
	}
	return r.id
}

// save runs one write to history under the record's error policy and
// reports whether it succeeded (true without history). The session's own
// context may be gone by the time its last words are saved: the write
// runs without its cancellation.
func (r *record) save(ctx context.Context, what string, write func(ctx context.Context, id int64) error) bool {
	if r == nil {
		return true
	}
	if err := write(context.WithoutCancel(ctx), r.id); err != nil {
		r.fail(what, err)
		return false
	}
	return true
}

func (r *record) fail(what string, err error) {
	r.log.Error("sessions: could not save "+what, "session", r.id, "err", err)
	if r.failed == nil {
		r.failed = fmt.Errorf("%s was not saved: %w", what, err)
	}
	if r.report != nil {
		r.report(&SaveFailedEvent{What: what, Err: err})
	}
}

// drop removes the record from history, with del, for a session that
// left nothing to keep: nothing said, nothing saved. It reports whether
// it did; when it could not, the record is finished as done, so that no
// entry stays "in progress".
func (r *record) drop(del func(ctx context.Context, id int64) error, duration float64) bool {
	if r == nil {
		return false
	}
	if err := del(context.Background(), r.id); err != nil {
		r.log.Warn("sessions: could not remove an empty entry from history", "session", r.id, "err", err)
		r.finish(store.StatusDone, duration, nil)
		return false
	}
	return true
}

// finish closes the record with status and the session's length in
// seconds; err, when not nil, is why the session failed.
func (r *record) finish(status string, duration float64, err error) {
	if r == nil {
		return
	}
	msg := ""
	if err != nil {
		msg = r.words(err)
	}
	if ferr := r.h.FinishSession(context.Background(), r.id, r.clock.Now(), duration, status, msg); ferr != nil {
		r.fail("the end of the session", ferr)
	}
}
