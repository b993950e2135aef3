package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// TestSidebarFollowsTheSessionShown: a session opened in the Captions tab
// from the History tab is the one the sidebar beside it selects, so that
// its Delete, Export, Re-run and Notes name and act on the session on
// screen, not the one clicked before.
func TestSidebarFollowsTheSessionShown(t *testing.T) {
	h := newHarness(t, nil, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	ids := seedKinds(t, h.db)
	c := h.captions
	h.ui(c.history.reload)
	h.waitFor(t, "the sidebar", func() bool { return len(c.history.rows) == 3 })
	// The captions session, opened from the sidebar.
	h.selectSession(t, ids.captions)
	h.waitFor(t, "the captions session", func() bool { return c.shown.id == ids.captions })

	// The conversation, opened from the History tab.
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the history", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)
	h.selectHistory(t, ids.conversation)
	h.ui(func() { test.Tap(h.history.open) })
	h.waitFor(t, "the conversation in the Captions tab", func() bool {
		return h.tabs.Selected().Text == "Captions" && c.shown.id == ids.conversation
	})
	h.ui(func() {
		if c.history.selected != ids.conversation {
			t.Errorf("the sidebar selects session %d while the view shows the conversation (%d)", c.history.selected, ids.conversation)
		}
		if s, ok := c.history.selectedSession(); !ok || s.Title != c.title.Text {
			t.Errorf("the sidebar's buttons act on %q while the view shows %q", s.Title, c.title.Text)
		}
		test.Tap(c.history.del)
	})
	h.assertShows(t, "Delete session?")
	var asked string
	for _, s := range h.texts() {
		if strings.Contains(s, "will be deleted") {
			asked = s
		}
	}
	if !strings.Contains(asked, "“Support call”") {
		t.Errorf("Delete asks %q, want it to name the conversation on screen", asked)
	}
	h.tapDialogButton(t, "Keep")

	// A session deleted from the view leaves nothing selected.
	h.ui(func() { c.shownDeleted(ids.conversation) })
	h.ui(func() {
		if c.history.selected != 0 || !c.history.del.Disabled() {
			t.Errorf("after the view was cleared the sidebar selects %d", c.history.selected)
		}
	})
}
