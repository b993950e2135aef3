package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/store"
)

// The one way a session keeps its record in history, and tells its UI
// what history holds of it.

// heldRetry is how often a record whose writes wait for room on the disk
// tries them again, besides at its next write: a full disk is freed by a
// person, in seconds or minutes, and each try costs a failed write.
const heldRetry = 5 * time.Second

// SaveFailedEvent reports that something could not be saved to history:
// the session goes on, and the person is told what was not kept. It is
// also the error a HistoryEvent carries while writes wait for room.
type SaveFailedEvent struct {
	// What names what was not saved ("a caption", "the transcript",
	// "12 captions and the audio").
	What string
	// Plural reports that What names more than one thing, for the verb
	// that follows it.
	Plural bool
	// Waiting reports that What is not lost but held in memory, to be
	// written once there is room (only while the session runs).
	Waiting bool
	Err     error
}

func (*SaveFailedEvent) isEvent() {}

// Error says what was not saved and why: a SaveFailedEvent is also the
// error a person is shown.
func (e *SaveFailedEvent) Error() string {
	if e.Waiting {
		return "sessions: waiting to save " + e.What + " to history: " + e.Err.Error()
	}
	return "sessions: could not save " + e.What + " to history: " + e.Err.Error()
}

// Unwrap returns why the save failed.
func (e *SaveFailedEvent) Unwrap() error { return e.Err }

// Keeping is what history holds of a session.
type Keeping struct {
	// ID is the session's entry in history: 0 without history, and while
	// (or when) the entry could not be made.
	ID int64
	// Waiting counts the writes held in memory because the disk is full:
	// the session tries them again on its next write and every few
	// seconds, in order, and they are in history once there is room.
	Waiting int
	// Err says what is not in history and why, as a *SaveFailedEvent:
	// what waits (Waiting) while the session runs, what was lost once it
	// has ended. nil when everything so far is kept.
	Err error
	// InMemory reports that history is kept in memory for this session
	// of Earshot only (store.OpenMemory: history is off): what it holds
	// is gone when Earshot closes.
	InMemory bool
}

// Written reports whether history holds everything of the session so
// far: in memory only, when InMemory.
func (k Keeping) Written() bool { return k.ID != 0 && k.Waiting == 0 && k.Err == nil }

// Kept reports whether history keeps everything of the session so far
// for good: written, and not in memory only. It is the only word for
// "kept in history".
func (k Keeping) Kept() bool { return k.Written() && !k.InMemory }

// HistoryEvent reports what history holds of a session when that changes:
// writes start waiting for room on a full disk, more wait, they are
// written; and, last of all (Final), when the session has ended. Every
// session with history sends a final one: the only word a UI should take
// for "kept in history".
type HistoryEvent struct {
	Keeping
	// Final marks the session's last report: nothing more is written.
	Final bool
}

func (*HistoryEvent) isEvent() {}

// RecordHistory is the part of history every session writes its record
// to; *store.DB implements it. Sessions ask for more (segments, answers,
// audio) through their own interfaces.
type RecordHistory interface {
	CreateSession(ctx context.Context, s store.Session) (int64, error)
	FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error
}

// record is a session's entry in history: created when the session
// starts, added to while it runs, finished when it ends. It is the one
// way sessions write history, under one policy:
//
//   - A write that fails because the disk is full (store.ErrDiskFull) is
//     held in memory with every write after it, in order, and tried again
//     at the record's next write and every heldRetry while the session
//     runs (its run loop selects on retry). Making the entry is such a
//     write: a session whose entry cannot be made yet runs all the same.
//   - Any other failure is logged and reported (a *SaveFailedEvent),
//     never dropped; a session whose entry cannot be made at all keeps
//     nothing more.
//   - What still waits when the session finishes is lost, and reported.
//
// Every change of what history holds is reported as a *HistoryEvent, the
// last one Final. A nil *record (no history) does nothing. It is not
// safe for concurrent use: the session's run loop owns it.
type record struct {
	h      RecordHistory
	words  func(error) string // why it failed, in words (SetErrorWords)
	entry  store.Session
	id     int64
	dead   bool // the entry cannot be made: nothing more is written
	memory bool // history is in memory for the session only (Keeping.InMemory)
	clock  Clock
	log    *slog.Logger
	report func(Event)

	held    []heldWrite // waiting for room, in order
	heldErr error       // why they wait
	timer   Timer       // retries the held writes; made when first needed

	lost    []string // what failed for good, in order
	lostErr error    // why the first of it did
	failed  error    // the first failure, for the finish
}

// endWhat names the last write of a record, its status.
const endWhat = "the end of the session"

// heldWrite is a write waiting for room on the disk.
type heldWrite struct {
	what  string
	write func(ctx context.Context, id int64) error
}

// openRecord makes s's entry in h, or holds it until there is room.
// report receives the record's events (nil drops them). With no history
// it returns nil.
func openRecord(ctx context.Context, h RecordHistory, s store.Session, clk Clock, log *slog.Logger, report func(Event)) *record {
	if h == nil {
		return nil
	}
	clk = clock.Or(clk)
	if s.Started.IsZero() {
		s.Started = clk.Now()
	}
	if s.Status == "" {
		s.Status = store.StatusRunning
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if report == nil {
		report = func(Event) {}
	}
	r := &record{h: h, entry: s, clock: clk, log: log, report: report, words: error.Error}
	if wh, ok := h.(interface{ errorWords(error) string }); ok {
		r.words = wh.errorWords
	}
	if m, ok := h.(interface{ InMemory() bool }); ok {
		r.memory = m.InMemory()
	}
	r.save(ctx, kindName(s.Kind), bounded(r.create))
	return r
}

// lateID passes a record's events to emit, and the id of an entry made
// late (once a full disk had room for it) to set.
func lateID(emit func(Event), set func(id int64)) func(Event) {
	return func(ev Event) {
		if h, ok := ev.(*HistoryEvent); ok && h.ID != 0 {
			set(h.ID)
		}
		emit(ev)
	}
}

// create makes the entry: the first write of every record.
func (r *record) create(ctx context.Context, _ int64) error {
	id, err := r.h.CreateSession(ctx, r.entry)
	if err != nil {
		if !errors.Is(err, store.ErrDiskFull) {
			r.dead = true
		}
		return err
	}
	r.id = id
	return nil
}

// ID returns the record's id in history: 0 without history, and while
// its entry could not be made.
func (r *record) ID() int64 {
	if r == nil {
		return 0
	}
	return r.id
}

// save runs one write to history under the record's policy and reports
// whether it is in history now (true without history): on a full disk
// it waits in memory, its turn after the writes already waiting. The
// session's own context may be gone by the time its last words are
// saved: the write runs without its cancellation.
func (r *record) save(ctx context.Context, what string, write func(ctx context.Context, id int64) error) bool {
	return r.put(ctx, what, write, true)
}

// saveOnce runs a large write (the audio kept with a session) that is
// never held: it would hold its memory, and the writes after it, for as
// long as the disk is full. When the disk has no room for it, or writes
// still wait, it is reported as not kept, and the rest of the session is
// kept without it.
func (r *record) saveOnce(ctx context.Context, what string, write func(ctx context.Context, id int64) error) bool {
	return r.put(ctx, what, write, false)
}

// put runs a write after the held ones; holdable says whether, on a full
// disk, it waits in memory or is lost.
func (r *record) put(ctx context.Context, what string, write func(ctx context.Context, id int64) error, holdable bool) bool {
	if r == nil {
		return true
	}
	if r.dead {
		return false
	}
	ctx = context.WithoutCancel(ctx)
	r.flush(ctx)
	err := r.heldErr // while writes wait, this one cannot go first
	if len(r.held) == 0 {
		if err = write(ctx, r.id); err == nil {
			return true
		}
	}
	if holdable && errors.Is(err, store.ErrDiskFull) {
		r.hold(what, write, err)
	} else {
		r.fail(what, err)
	}
	return false
}

// hold keeps a write until there is room.
func (r *record) hold(what string, write func(ctx context.Context, id int64) error, why error) {
	if len(r.held) == 0 {
		r.log.Warn("sessions: history is full; writes wait in memory", "session", r.id, "err", why)
		if r.timer == nil {
			r.timer = r.clock.NewTimer(heldRetry)
		} else {
			r.timer.Reset(heldRetry)
		}
	}
	r.held = append(r.held, heldWrite{what: what, write: write})
	r.heldErr = why
	r.changed(false)
}

// flush tries the held writes again, in order, up to the first that
// still finds no room.
func (r *record) flush(ctx context.Context) {
	if len(r.held) == 0 {
		return
	}
	n := 0
	for _, w := range r.held {
		if r.dead {
			n = len(r.held) // no entry: the rest cannot be written
			break
		}
		err := w.write(ctx, r.id)
		if errors.Is(err, store.ErrDiskFull) {
			r.heldErr = err
			break
		}
		n++
		if err != nil {
			r.fail(w.what, err)
		}
	}
	if n == 0 {
		return
	}
	r.held = append([]heldWrite(nil), r.held[n:]...)
	if len(r.held) == 0 {
		r.heldErr = nil
		r.timer.Stop()
		r.log.Info("sessions: history had room again; the waiting writes are saved", "session", r.id)
	}
	r.changed(false)
}

// retry is the channel of the timer that tries the held writes again:
// nil, which never fires, while none wait.
func (r *record) retry() <-chan time.Time {
	if r == nil || len(r.held) == 0 {
		return nil
	}
	return r.timer.C()
}

// retryHeld tries the held writes again when retry fired, and waits
// another heldRetry for those that still find no room.
func (r *record) retryHeld(ctx context.Context) {
	if r == nil || len(r.held) == 0 {
		return
	}
	r.flush(context.WithoutCancel(ctx))
	if len(r.held) > 0 {
		r.timer.Reset(heldRetry)
	}
}

func (r *record) fail(what string, err error) {
	r.log.Error("sessions: could not save "+what, "session", r.id, "err", err)
	if r.failed == nil {
		r.failed = fmt.Errorf("%s was not saved: %w", what, err)
		r.lostErr = err
	}
	r.lost = append(r.lost, what)
	r.report(&SaveFailedEvent{What: what, Err: err})
}

// keeping says what history holds of the session so far.
func (r *record) keeping() Keeping {
	if r == nil {
		return Keeping{}
	}
	k := Keeping{ID: r.id, Waiting: len(r.held), InMemory: r.memory}
	switch {
	case len(r.lost) > 0:
		what, plural := r.lostWhat()
		k.Err = &SaveFailedEvent{What: what, Plural: plural, Err: r.lostErr}
	case len(r.held) > 0:
		whats := make([]string, len(r.held))
		for i, w := range r.held {
			whats[i] = w.what
		}
		what, plural := counted(whats)
		if r.id == 0 {
			what, plural = r.name()
		}
		k.Err = &SaveFailedEvent{What: what, Plural: plural, Waiting: true, Err: r.heldErr}
	}
	return k
}

// changed reports what history holds now.
func (r *record) changed(final bool) {
	r.report(&HistoryEvent{Keeping: r.keeping(), Final: final})
}

// lostWhat names what the session lost: the whole session when its
// entry was never made.
func (r *record) lostWhat() (string, bool) {
	if r.id == 0 {
		return r.name()
	}
	return counted(r.lost)
}

// name is what the session is to a person ("the synthesis"), and
// whether the words are plural.
func (r *record) name() (string, bool) {
	return kindName(r.entry.Kind), r.entry.Kind == store.KindCaptions
}

// kindName names a session of kind to a person.
func kindName(kind string) string {
	switch kind {
	case store.KindCaptions:
		return "the live captions"
	case store.KindFile:
		return "the transcript"
	case store.KindSynthesis:
		return "the synthesis"
	case store.KindAnalysis:
		return "the analysis"
	case store.KindConversation:
		return "the conversation"
	case store.KindAgent:
		return "the conversation with the agent"
	}
	return "the session"
}

// counted names things, each counted, in order of first mention: "a
// caption" three times and "the audio" is "3 captions and the audio".
// It reports whether the words are plural.
func counted(whats []string) (string, bool) {
	var (
		order []string
		n     = map[string]int{}
	)
	for _, w := range whats {
		if n[w] == 0 {
			order = append(order, w)
		}
		n[w]++
	}
	parts := make([]string, len(order))
	plural := len(order) > 1
	for i, w := range order {
		parts[i] = w
		if rest, ok := strings.CutPrefix(w, "a "); ok && n[w] > 1 {
			word, tail, _ := strings.Cut(rest, " ")
			parts[i] = strings.TrimSpace(strconv.Itoa(n[w]) + " " + word + "s " + tail)
			plural = true
		}
	}
	if len(parts) <= 1 {
		return strings.Join(parts, ""), plural
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1], plural
}

// written tries the held writes once more and reports whether everything
// of the session is in history: a result held for room may be in it now.
func (r *record) written(ctx context.Context) bool {
	if r == nil {
		return true
	}
	r.flush(context.WithoutCancel(ctx))
	return r.keeping().Written()
}

// drop removes the record from history, with del, for a session that
// left nothing to keep: nothing said, nothing saved; what waited for
// room goes too. It reports whether it did; when it could not, the
// record is finished as done, so that no entry stays "in progress". A
// dropped record sends no final HistoryEvent: there is nothing to keep.
func (r *record) drop(del func(ctx context.Context, id int64) error, duration float64) bool {
	if r == nil {
		return false
	}
	if len(r.held) > 0 {
		r.timer.Stop()
		r.held, r.heldErr = nil, nil
	}
	if r.id == 0 {
		return true // never made
	}
	if err := del(context.Background(), r.id); err != nil {
		r.log.Warn("sessions: could not remove an empty entry from history", "session", r.id, "err", err)
		r.finish(store.StatusDone, duration, nil)
		return false
	}
	return true
}

// finish closes the record with status and the session's length in
// seconds; err, when not nil, is why the session failed. What still
// waits for room is lost, and reported; then the final HistoryEvent.
func (r *record) finish(status string, duration float64, err error) {
	if r == nil {
		return
	}
	msg := ""
	if err != nil {
		msg = r.words(err)
	}
	ended := r.clock.Now()
	r.save(context.Background(), endWhat, func(ctx context.Context, id int64) error {
		return r.h.FinishSession(ctx, id, ended, duration, status, msg)
	})
	if len(r.held) > 0 {
		r.timer.Stop()
		r.log.Error("sessions: the disk stayed full; what waited is not saved", "session", r.id, "writes", len(r.held), "err", r.heldErr)
		if r.failed == nil {
			r.failed = fmt.Errorf("not saved: %w", r.heldErr)
			r.lostErr = r.heldErr
		}
		for i, w := range r.held {
			// The end is worth naming only when nothing else is lost.
			if w.what != endWhat || i == 0 && len(r.lost) == 0 {
				r.lost = append(r.lost, w.what)
			}
		}
		r.held = nil
		r.heldErr = nil
		what, plural := r.lostWhat()
		r.report(&SaveFailedEvent{What: what, Plural: plural, Err: r.lostErr})
	}
	r.changed(true)
}
