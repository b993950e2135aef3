package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

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

// TestFailedEntryKeepsItsReason: a file transcription that fails (the
// service chosen is not there) is kept with why, in the words the window
// said, and both history lists show it.
func TestFailedEntryKeepsItsReason(t *testing.T) {
	h := newHarnessWith(t, unreachableService(), Options{})
	h.waitReady(t) // the service does not answer: that is the point
	path := writeWAV(t, "talk.wav", recording(t, cards1))
	c := h.captions
	h.ui(func() { c.transcribeFile(path) })
	h.waitFor(t, "the transcription to fail", func() bool { return c.file == nil && c.status.Importance == widget.DangerImportance })
	var shown string
	h.ui(func() { shown = c.status.Text })
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusFailed {
		t.Fatalf("history %+v, %v; want the failed transcription", list, err)
	}
	want := "Cannot reach the service at http://127.0.0.1:9. Nothing is listening there."
	if list[0].Error != want || !strings.Contains(shown, want) {
		t.Errorf("history keeps %q, the window said %q; want %q in both", list[0].Error, shown, want)
	}
	h.waitFor(t, "the entry in the sidebar", func() bool { return len(c.history.rows) == 1 })
	h.ui(func() { h.SelectTab("History") })
	h.waitFor(t, "the entry in the History tab", func() bool { return len(h.history.rows) == 1 })
	if got := sessionDetails(list[0], clockTime); !strings.HasSuffix(got, "Failed: "+want) {
		t.Errorf("the row says %q, want the reason", got)
	}
	var rows []string
	h.ui(func() {
		walk(h.window.Content(), func(o fyne.CanvasObject) {
			if r, ok := o.(*widget.RichText); ok && strings.Contains(r.String(), "Failed: Cannot reach") {
				rows = append(rows, r.String())
			}
		})
	})
	if len(rows) == 0 {
		t.Error("no row of the History tab says why the entry failed")
	}
}
