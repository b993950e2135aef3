package ui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/store"
)

func TestSettingsRetention(t *testing.T) {
	h := newHarness(t, nil, Options{})
	day := 24 * time.Hour
	old := seedHistory(t, h.db, store.KindCaptions, "Old", clockTime.Add(-45*day), "old words")
	month := seedHistory(t, h.db, store.KindFile, "Last month", clockTime.Add(-20*day), "recent words")
	today := seedHistory(t, h.db, store.KindAnalysis, "Today", clockTime.Add(-time.Hour), "new words")
	// The sessions were saved behind the app's back: as a tab does, say so.
	h.ui(func() { h.SelectTab("Settings"); h.historyChanged("") })
	h.waitFor(t, "the space used", func() bool { return strings.HasSuffix(h.settings.kept.space.Text, " for 3 sessions") })
	h.waitFor(t, "the settings", func() bool { return h.settings.loaded && h.settings.kept.keep.Selected == "Forever" })

	// Seven days would delete two sessions: asked, and kept.
	h.ui(func() { h.settings.kept.keep.SetSelected("7 days") })
	h.waitFor(t, "the confirmation", func() bool { return h.window.Canvas().Overlays().Top() != nil })
	want := "Keeping 7 days deletes 2 sessions started before " + clockTime.AddDate(0, 0, -7).Format("2 January 2006") + ", now. This cannot be undone."
	if !slices.Contains(h.texts(), want) {
		t.Errorf("the confirmation does not say %q; window:\n%s", want, h.screen())
	}
	h.tapDialogButton(t, "Keep")
	h.waitFor(t, "the choice undone", func() bool { return h.settings.kept.keep.Selected == "Forever" })
	for _, id := range []int64{old, month, today} {
		if _, err := h.db.Session(t.Context(), id); err != nil {
			t.Fatalf("after Keep: %v", err)
		}
	}

	// Thirty days deletes one, once confirmed, and is saved.
	h.ui(func() { h.settings.kept.keep.SetSelected("30 days") })
	h.tapDialogButton(t, "Delete")
	h.waitFor(t, "the retention applied", func() bool {
		return h.settings.status.Text == "History is kept 30 days. Deleted 1 older session."
	})
	if _, err := h.db.Session(t.Context(), old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the 45-day-old session: %v, want deleted", err)
	}
	if _, err := h.db.Session(t.Context(), month); err != nil {
		t.Errorf("the 20-day-old session: %v, want kept", err)
	}
	s, err := h.db.LoadSettings(t.Context())
	if err != nil || s.RetentionDays != 30 {
		t.Errorf("saved retention %d, %v; want 30", s.RetentionDays, err)
	}
	h.waitFor(t, "the space measured again", func() bool { return strings.HasSuffix(h.settings.kept.space.Text, " for 2 sessions") })

	// Forever deletes nothing and asks nothing.
	h.ui(func() { h.settings.kept.keep.SetSelected("Forever") })
	h.waitFor(t, "forever", func() bool { return h.settings.status.Text == "History is kept forever." })
	if h.dialogOpen() {
		t.Error("a dialog opened for a retention that deletes nothing")
	}
	if s, _ := h.db.LoadSettings(t.Context()); s.RetentionDays != 0 {
		t.Errorf("saved retention %d, want 0", s.RetentionDays)
	}
}
