package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/leaktest"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Tests of the record every session keeps in history, when the disk
// fills up: what cannot be written waits in memory, in order, and is
// written once there is room; what never finds room is reported, and
// nothing is called kept that is not.

// fullHistory is a fakeHistory on a disk that can be full: while full,
// every write fails as store.DB's do, with store.ErrDiskFull.
type fullHistory struct {
	fakeHistory
	full      atomic.Bool
	audioFull atomic.Bool // only the audio finds no room
	audio     atomic.Int32
}

func errFull(what string) error {
	return fmt.Errorf("store: %s: %w", what, store.MarkDiskFull(&fs.PathError{Op: "write", Path: "history.db-wal", Err: syscall.ENOSPC}))
}

func (h *fullHistory) CreateSession(ctx context.Context, s store.Session) (int64, error) {
	if h.full.Load() {
		return 0, errFull("create session")
	}
	return h.fakeHistory.CreateSession(ctx, s)
}

func (h *fullHistory) AddSegment(ctx context.Context, g store.Segment) (int64, error) {
	if h.full.Load() {
		return 0, errFull("add segment")
	}
	return h.fakeHistory.AddSegment(ctx, g)
}

func (h *fullHistory) FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error {
	if h.full.Load() {
		return errFull("finish session")
	}
	return h.fakeHistory.FinishSession(ctx, id, ended, duration, status, errText)
}

func (h *fullHistory) SaveAudio(context.Context, int64, store.Audio) error {
	if h.full.Load() || h.audioFull.Load() {
		return errFull("save audio")
	}
	h.audio.Add(1)
	return nil
}

func (h *fullHistory) created() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// historyEvents returns the HistoryEvents among evs.
func historyEvents(evs []sessions.Event) []*sessions.HistoryEvent {
	var out []*sessions.HistoryEvent
	for _, ev := range evs {
		if h, ok := ev.(*sessions.HistoryEvent); ok {
			out = append(out, h)
		}
	}
	return out
}

// lastHistory returns the last HistoryEvent among evs, or nil.
func lastHistory(evs []sessions.Event) *sessions.HistoryEvent {
	hs := historyEvents(evs)
	if len(hs) == 0 {
		return nil
	}
	return hs[len(hs)-1]
}

// waitHistory waits for a HistoryEvent that satisfies ok.
func waitHistory(t *testing.T, r *recorder, what string, ok func(*sessions.HistoryEvent) bool) *sessions.HistoryEvent {
	t.Helper()
	return r.first(t, what, func(ev sessions.Event) bool {
		h, is := ev.(*sessions.HistoryEvent)
		return is && ok(h)
	}).(*sessions.HistoryEvent)
}

// startOn starts captions on the fake service, saving to h, and returns
// them with their events, the service's stream and the source.
func startOn(t *testing.T, h sessions.CaptionHistory, keepAudio bool, clk sessions.Clock) (*sessions.Captions, *recorder, *fakeStream, *pushSource) {
	t.Helper()
	src := newPushSource(mono16k)
	f := newFakeStreamer()
	c := sessions.NewCaptions(sessions.CaptionsConfig{Streamer: f, Source: src, History: h, Options: streamOpts, KeepAudio: keepAudio, Clock: clk})
	rec := record(c, nil)
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("Start = %v; the captions must run whatever history can keep", err)
	}
	t.Cleanup(func() { c.Stop() })
	return c, rec, f.stream(t, 0), src
}

// oneCaptionThenStop has the service give one caption of a second of
// audio, then stops the session and waits for its end.
func oneCaptionThenStop(t *testing.T, c *sessions.Captions, rec *recorder, s *fakeStream, src *pushSource) {
	t.Helper()
	src.push(ramp(0, 16000), 320)
	s.final(0, 1, word("one", 0.2, 0.8))
	rec.waitFinals(t, 1)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t)
}

// diskFullWaiting reports whether err says writes wait for room.
func diskFullWaiting(err error) bool {
	var sf *sessions.SaveFailedEvent
	return errors.As(err, &sf) && sf.Waiting && errors.Is(err, store.ErrDiskFull)
}

// TestCaptionsWhileDiskFull (must show): live captions on a full disk
// start, show every final, say that they wait to be written, and are all
// in history, in order, once there is room: at the retry on the
// session's clock, then at the next write.
func TestCaptionsWhileDiskFull(t *testing.T) {
	leaktest.Check(t)
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	h := &fullHistory{}
	h.full.Store(true)
	c, rec, s, src := startOn(t, h, false, clk)
	src.push(ramp(0, 3*16000), 320)
	s.final(0, 1, word("one", 0.2, 0.8))
	s.final(1, 1, word("two", 1.2, 1.8))
	rec.waitFinals(t, 2)
	w := waitHistory(t, rec, "two captions waiting", func(e *sessions.HistoryEvent) bool { return e.Waiting == 3 })
	if w.ID != 0 || w.Kept() || !diskFullWaiting(w.Err) {
		t.Errorf("while the disk is full: %+v (%v)", w.Keeping, w.Err)
	}
	var sf *sessions.SaveFailedEvent
	if errors.As(w.Err, &sf); sf == nil || sf.What != "the live captions" || !sf.Plural {
		t.Errorf("what waits: %+v", sf)
	}
	if h.created() != 0 || len(h.segmentList()) != 0 {
		t.Fatal("history took writes on a full disk")
	}

	// Room again: the retry on the session's clock writes them all.
	h.full.Store(false)
	clk.Advance(5 * time.Second)
	waitHistory(t, rec, "the waiting captions written", func(e *sessions.HistoryEvent) bool { return e.Waiting == 0 && e.ID != 0 })
	if segs := h.segmentList(); len(segs) != 2 || segs[0].Text != "one" || segs[1].Text != "two" || segs[0].SessionID != 1 {
		t.Fatalf("history after the disk had room: %+v", segs)
	}
	if c.SessionID() != 1 {
		t.Errorf("SessionID = %d once the entry was made, want 1", c.SessionID())
	}

	// Full again: the next final waits; the one after it, with room,
	// writes both, in order, without waiting for the clock.
	h.full.Store(true)
	s.final(2, 0.5, word("three", 2.1, 2.4))
	waitHistory(t, rec, "the third caption waiting", func(e *sessions.HistoryEvent) bool { return e.Waiting == 1 })
	h.full.Store(false)
	s.final(2.5, 0.5, word("four", 2.6, 2.9))
	rec.waitFinals(t, 4)
	eventually(t, "four captions saved", func() bool { return len(h.segmentList()) == 4 })
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t)
	var texts []string
	for _, g := range h.segmentList() {
		texts = append(texts, g.Text)
	}
	if !slices.Equal(texts, []string{"one", "two", "three", "four"}) {
		t.Errorf("saved %q, want the four captions in order", texts)
	}
	last := lastHistory(rec.all())
	if last == nil || !last.Final || !last.Kept() {
		t.Errorf("the session's last word on history: %+v", last)
	}
	if fin := h.finishes(); len(fin) != 1 || fin[0].status != store.StatusDone {
		t.Errorf("finishes %+v", fin)
	}
}

// TestCaptionsDiskFullToTheEnd: a disk that stays full loses what waited
// when the session ends, and says so: its final HistoryEvent is not
// kept, and names what was lost.
func TestCaptionsDiskFullToTheEnd(t *testing.T) {
	leaktest.Check(t)
	h := &fullHistory{}
	h.full.Store(true)
	c, rec, s, src := startOn(t, h, true, nil)
	oneCaptionThenStop(t, c, rec, s, src)
	last := lastHistory(rec.all())
	if last == nil || !last.Final || last.Kept() || last.ID != 0 {
		t.Fatalf("the last HistoryEvent %+v", last)
	}
	var sf *sessions.SaveFailedEvent
	if !errors.As(last.Err, &sf) || sf.Waiting || sf.What != "the live captions" || !errors.Is(sf, store.ErrDiskFull) {
		t.Errorf("what was lost: %+v", sf)
	}
	if h.audio.Load() != 0 || h.created() != 0 {
		t.Error("history took writes on a full disk")
	}
}

// TestKeptAudioFullKeepsTranscript: when only the kept audio finds no
// room, the captions are kept, the session is done, and the audio is
// said not to be.
func TestKeptAudioFullKeepsTranscript(t *testing.T) {
	leaktest.Check(t)
	h := &fullHistory{}
	h.audioFull.Store(true)
	c, rec, s, src := startOn(t, h, true, nil)
	src.push(sine(mono16k, 440, 0.3, 1), 320)
	eventually(t, "the audio taken", func() bool { return s.receivedLen() == 32000 })
	s.final(0, 1, word("one", 0.2, 0.8))
	rec.waitFinals(t, 1)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t)
	if segs := h.segmentList(); len(segs) != 1 {
		t.Errorf("%d captions saved, want the one", len(segs))
	}
	if fin := h.finishes(); len(fin) != 1 || fin[0].status != store.StatusDone {
		t.Errorf("finishes %+v, want done", fin)
	}
	last := lastHistory(rec.all())
	var sf *sessions.SaveFailedEvent
	if last == nil || last.Kept() || !errors.As(last.Err, &sf) || sf.What != "the audio" || !errors.Is(sf, store.ErrDiskFull) {
		t.Errorf("the last HistoryEvent %+v (%v), want the audio not kept for a full disk", last, last.Err)
	}
}

// TestCaptionsHistoryRefusesEntry: a history that cannot make the entry
// for another reason than room does not stop the captions; it is
// reported, once, and nothing is called kept.
func TestCaptionsHistoryRefusesEntry(t *testing.T) {
	leaktest.Check(t)
	errBroken := errors.New("disk I/O error")
	c, rec, s, src := startOn(t, &fakeHistory{fail: errBroken}, false, nil)
	oneCaptionThenStop(t, c, rec, s, src)
	var failed []*sessions.SaveFailedEvent
	for _, ev := range rec.all() {
		if sf, ok := ev.(*sessions.SaveFailedEvent); ok {
			failed = append(failed, sf)
		}
	}
	if len(failed) != 1 || failed[0].What != "the live captions" || !errors.Is(failed[0], errBroken) {
		t.Errorf("reported %+v, want the entry not made, once", failed)
	}
	if last := lastHistory(rec.all()); last == nil || !last.Final || last.Kept() || !errors.Is(last.Err, errBroken) {
		t.Errorf("the last HistoryEvent %+v", last)
	}
}
