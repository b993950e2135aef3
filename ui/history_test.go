package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/store"
)

// pastSession is a finished captions session to put in history.
type pastSession struct {
	title   string
	started time.Time
	lines   []pastLine
}

type pastLine struct {
	start   float64
	speaker int
	text    string
}

// historyHarness is an App whose history holds sessions, listed once the
// window is ready. It returns their ids, in the order given.
func historyHarness(t *testing.T, past ...pastSession) (*harness, []int64) {
	t.Helper()
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	var ids []int64
	for _, p := range past {
		id, err := h.db.CreateSession(t.Context(), store.Session{
			Kind: store.KindCaptions, Title: p.title, Source: "Desk microphone", Backend: "Local engine",
			Model: "nova-3", Started: p.started,
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range p.lines {
			sp := l.speaker
			if _, err := h.db.AddSegment(t.Context(), store.Segment{
				SessionID: id, Seq: i, Start: l.start, End: l.start + 2, Speaker: &sp, Text: l.text, Confidence: 0.9,
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.db.FinishSession(t.Context(), id, p.started.Add(time.Minute), 60, store.StatusDone, ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	h.ui(h.captions.history.reload)
	h.waitFor(t, "the history to be listed", func() bool { return len(h.captions.history.rows) == len(past) })
	return h, ids
}

var (
	standup = pastSession{title: "Standup", started: clockTime.Add(-2 * time.Hour), lines: []pastLine{
		{0.5, 0, "we shipped the release on friday"},
		{4.25, 1, "and the budget is approved"},
		{65, 0, "next we plan the roadmap"},
	}}
	planning = pastSession{title: "Planning", started: clockTime.Add(-time.Hour), lines: []pastLine{
		{1, 0, "spring roadmap for the garden"},
	}}
)

// selectSession selects the session id in the History list, as a click
// on its row does.
func (h *harness) selectSession(t *testing.T, id int64) {
	t.Helper()
	found := false
	h.ui(func() {
		for i, r := range h.captions.history.rows {
			if r.s.ID == id {
				h.captions.history.list.Select(i)
				found = true
			}
		}
	})
	if !found {
		t.Fatalf("session %d is not in the History list %q", id, h.historyTitles())
	}
}

func TestHistoryReopen(t *testing.T) {
	h, ids := historyHarness(t, standup, planning)
	c := h.captions

	if got := strings.Join(h.historyTitles(), ","); got != "Planning,Standup" {
		t.Errorf("History lists %s, want the newest first: Planning,Standup", got)
	}
	h.ui(func() {
		if !c.history.open.Disabled() || !c.history.del.Disabled() {
			t.Error("Open and Delete are enabled with nothing selected")
		}
	})
	h.assertShows(t, "History", "Standup", "Planning")
	h.assertShows(t, joinDot("Captions", when(standup.started, clockTime), "1:00", "Done", "Desk microphone"))

	h.selectSession(t, ids[0])
	h.waitFor(t, "the session to open", func() bool { return c.shown.id == ids[0] })
	want := []string{
		"0:00|Speaker 1|we shipped the release on friday",
		"0:04|Speaker 2|and the budget is approved",
		"1:05|Speaker 1|next we plan the roadmap",
	}
	if got := h.captionLines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the reopened session shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := h.statusText(); got != "Opened “Standup”." {
		t.Errorf("status = %q", got)
	}
	h.ui(func() {
		if c.title.Text != "Standup" {
			t.Errorf("title = %q, want Standup", c.title.Text)
		}
		if !strings.Contains(c.info.Text, "3 captions") || !strings.Contains(c.info.Text, "nova-3") {
			t.Errorf("info line = %q, want the model and 3 captions", c.info.Text)
		}
		if c.export.Disabled() || c.history.open.Disabled() || c.history.export.Disabled() ||
			c.history.rename.Disabled() || c.history.del.Disabled() {
			t.Error("Export, Open, Rename or Delete is disabled with a session selected")
		}
	})
	h.assertShows(t, "Speaker 1", "Speaker 2", "we shipped the release on friday", "1:05")

	// Another session replaces it; Open shows the selected one again.
	h.selectSession(t, ids[1])
	h.waitFor(t, "the other session to open", func() bool { return c.shown.id == ids[1] })
	if got := h.captionLines(); len(got) != 1 || got[0] != "0:01|Speaker 1|spring roadmap for the garden" {
		t.Errorf("the second session shows %q", got)
	}
	// A transcript history does not hold replaces it: the list selects
	// nothing (its buttons would act on what is not on screen), and the
	// session opens again from its row.
	h.ui(func() {
		c.showTranscript(0, "Captions", nil, "", "", store.StatusDone)
		if c.history.selected != 0 || !c.history.open.Disabled() {
			t.Errorf("the list still selects %d, Open enabled %v, for a view of no entry", c.history.selected, !c.history.open.Disabled())
		}
	})
	h.selectSession(t, ids[1])
	h.waitFor(t, "the selected session to open again", func() bool { return c.shown.id == ids[1] })
	h.ui(func() { test.Tap(c.history.open) })
	h.waitFor(t, "Open to show the selected session", func() bool { return c.shown.id == ids[1] })
}

func TestHistorySearch(t *testing.T) {
	h, ids := historyHarness(t, standup, planning)
	c := h.captions
	hist := c.history

	// Ctrl+F puts the cursor in the search box.
	h.ui(func() { h.SelectTab("Settings") })
	h.press(searchShortcut)
	h.ui(func() {
		if h.window.Canvas().Focused() != fyne.Focusable(hist.search) {
			t.Error("Ctrl+F did not focus the search box")
		}
		if h.tabs.Selected().Text != "Captions" {
			t.Error("Ctrl+F did not open the Captions tab")
		}
	})

	tests := []struct {
		query   string
		want    []int64
		heading string
		empty   string
	}{
		{"budget", ids[:1], "History: 1 session matching “budget”", ""},
		{"roadmap", []int64{ids[0], ids[1]}, "History: 2 sessions matching “roadmap”", ""},
		{"garden", ids[1:], "History: 1 session matching “garden”", ""},
		{"zebra", nil, "History: 0 sessions matching “zebra”", "Nothing in the history matches “zebra”."},
		{"", []int64{ids[1], ids[0]}, "History", ""},
	}
	for _, tt := range tests {
		t.Run("q="+tt.query, func(t *testing.T) {
			h.ui(func() {
				hist.search.SetText("")
				test.Type(hist.search, tt.query)
			})
			h.waitFor(t, "the search's answer", func() bool { return hist.heading.Text == tt.heading })
			var got []int64
			h.ui(func() {
				for _, r := range hist.rows {
					got = append(got, r.s.ID)
					if tt.query != "" && !strings.Contains(r.snippet, store.HighlightStart) {
						t.Errorf("hit %q has no highlighted words: %q", r.s.Title, r.snippet)
					}
				}
				if tt.empty != "" && (!hist.empty.Visible() || hist.empty.Text != tt.empty) {
					t.Errorf("the empty list says %q (shown %v), want %q", hist.empty.Text, hist.empty.Visible(), tt.empty)
				}
			})
			if !sameIDs(got, tt.want) {
				t.Errorf("search %q lists %v, want %v", tt.query, got, tt.want)
			}
		})
	}

	// The snippet shows the matched word in bold.
	segs := snippetSegments("the " + store.HighlightStart + "budget" + store.HighlightEnd + " is approved")
	if len(segs) != 3 || segs[1].(*widget.TextSegment).Text != "budget" || !segs[1].(*widget.TextSegment).Style.TextStyle.Bold ||
		segs[0].(*widget.TextSegment).Style.TextStyle.Bold {
		t.Errorf("snippet segments = %+v", segs)
	}
}

// sameIDs compares the ids, ignoring order when both have two or more
// (the search ranks hits; the test does not).
func sameIDs(got, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[int64]bool{}
	for _, id := range got {
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			return false
		}
	}
	return true
}

func TestHistoryRename(t *testing.T) {
	h, ids := historyHarness(t, standup, planning)
	c := h.captions
	h.selectSession(t, ids[0])
	h.waitFor(t, "the session to open", func() bool { return c.shown.id == ids[0] })

	h.ui(func() { test.Tap(c.history.rename) })
	o := h.inOverlays(func(o fyne.CanvasObject) bool { e, ok := o.(*boundedEntry); return ok && e.Text == "Standup" })
	entry, ok := o.(*boundedEntry)
	if !ok {
		t.Fatalf("the Rename dialog has no title field holding the title; window:\n%s", h.screen())
	}
	// An empty title cannot be saved.
	h.ui(func() { entry.SetText("   ") })
	if b := h.findButton("Rename"); b == nil || !b.Disabled() {
		t.Error("Rename is possible with an empty title")
	}
	h.ui(func() {
		entry.SetText("")
		test.Type(entry, "Weekly standup")
	})
	h.tapDialogButton(t, "Rename")
	h.waitFor(t, "the new title in the list", func() bool {
		return c.status.Text == "Renamed to “Weekly standup”." && strings.Contains(strings.Join(titlesOf(c.history.rows), ","), "Weekly standup")
	})
	s, err := h.db.Session(t.Context(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Weekly standup" {
		t.Errorf("history holds the title %q", s.Title)
	}
	h.ui(func() {
		if c.title.Text != "Weekly standup" {
			t.Errorf("the view's title = %q", c.title.Text)
		}
		if c.history.selected != ids[0] {
			t.Error("the renamed session is no longer selected")
		}
	})

	// Cancel keeps the title.
	h.ui(func() { test.Tap(c.history.rename) })
	h.tapDialogButton(t, "Cancel")
	if s, _ := h.db.Session(t.Context(), ids[0]); s.Title != "Weekly standup" {
		t.Errorf("Cancel renamed the session to %q", s.Title)
	}

	// Enter in the title field renames, as the button does; not when the
	// title is empty.
	h.ui(func() { test.Tap(c.history.rename) })
	o = h.inOverlays(func(o fyne.CanvasObject) bool { e, ok := o.(*boundedEntry); return ok && e.Text == "Weekly standup" })
	entry, ok = o.(*boundedEntry)
	if !ok {
		t.Fatalf("no title field in the second Rename dialog; window:\n%s", h.screen())
	}
	h.ui(func() {
		entry.SetText("")
		entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
	h.assertShows(t, "Rename session")
	h.ui(func() {
		test.Type(entry, "Daily standup")
		entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
	h.waitFor(t, "the title given with Enter", func() bool { return c.status.Text == "Renamed to “Daily standup”." })
	h.assertHides(t, "Rename session")
}

func titlesOf(rows []historyEntry) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.s.Title)
	}
	return out
}

func TestHistoryDelete(t *testing.T) {
	h, ids := historyHarness(t, standup, planning)
	c := h.captions
	h.selectSession(t, ids[1])
	h.waitFor(t, "the session to open", func() bool { return c.shown.id == ids[1] })

	// Keep, in the confirmation, keeps it.
	h.ui(func() { test.Tap(c.history.del) })
	h.assertShows(t, "Delete session?")
	h.tapDialogButton(t, "Keep")
	if _, err := h.db.Session(t.Context(), ids[1]); err != nil {
		t.Errorf("Keep deleted the session: %v", err)
	}

	h.ui(func() { test.Tap(c.history.del) })
	h.tapDialogButton(t, "Delete")
	h.waitFor(t, "the session to leave the list", func() bool {
		return len(c.history.rows) == 1 && c.status.Text == "Deleted “Planning”."
	})
	if _, err := h.db.Session(t.Context(), ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted session is still in history: %v", err)
	}
	h.ui(func() {
		if c.shown.id != 0 || c.title.Text != "Captions" || len(c.view.lines()) != 0 {
			t.Errorf("the view still shows the deleted session: %q %q", c.title.Text, c.view.lines())
		}
		if !c.export.Disabled() || !c.history.del.Disabled() {
			t.Error("Export or Delete stays enabled with nothing selected")
		}
	})
	if got := h.historyTitles(); len(got) != 1 || got[0] != "Standup" {
		t.Errorf("History lists %q, want Standup", got)
	}
}
