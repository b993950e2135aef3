package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/store"
)

// TestFailedSessionsOpenInPlainWords: a run that failed before any words
// (a file the service refused, live captions that never connected) opens
// with why there is nothing, never an internal error, and offers no
// export; a session with captions can be exported.
func TestFailedSessionsOpenInPlainWords(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	ctx := t.Context()
	started := time.Date(2026, 3, 4, 10, 0, 0, 0, time.Local)
	add := func(kind, title, status string, words string) int64 {
		t.Helper()
		id, err := h.db.CreateSession(ctx, store.Session{Kind: kind, Title: title, Started: started})
		if err != nil {
			t.Fatal(err)
		}
		started = started.Add(time.Minute)
		if words != "" {
			if _, err := h.db.AddSegment(ctx, store.Segment{SessionID: id, Text: words, End: 2}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.db.FinishSession(ctx, id, started, 1, status, "api: listen: 400 Bad Request"); err != nil {
			t.Fatal(err)
		}
		return id
	}
	failedFile := add(store.KindFile, "talk.wav", store.StatusFailed, "")
	failedLive := add(store.KindCaptions, "Live captions", store.StatusFailed, "")
	good := add(store.KindCaptions, "Standup", store.StatusDone, "good morning everyone")
	h.ui(h.captions.history.reload)
	h.waitFor(t, "the history", func() bool { return len(h.captions.history.rows) == 3 })

	c := h.captions
	for _, id := range []int64{failedFile, failedLive} {
		h.selectSession(t, id)
		h.waitFor(t, "the failed session to open", func() bool { return c.shown.id == id })
		h.ui(func() {
			if st := c.status.Text; strings.Contains(st, "store:") || strings.Contains(st, "not found") || strings.Contains(st, "400") {
				t.Errorf("opening a failed session says %q", st)
			}
			if !c.export.Disabled() {
				t.Error("Export is offered for a session with nothing in it")
			}
			if hint := c.view.hint.Text; !c.view.hint.Visible() || !strings.HasPrefix(hint, "This session failed before any words were saved") {
				t.Errorf("the view says %q, want why it is empty", hint)
			}
		})
	}
	h.selectSession(t, good)
	h.waitFor(t, "the session to open", func() bool { return c.shown.id == good })
	h.ui(func() {
		if c.export.Disabled() {
			t.Error("Export is not offered for a session with captions")
		}
	})
}
