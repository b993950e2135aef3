package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// saveSession saves a finished session of kind with lines to the
// harness's history.
func (h *harness) saveSession(t *testing.T, kind, title string, lines ...pastLine) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := h.db.CreateSession(ctx, store.Session{Kind: kind, Title: title, Source: "Desk microphone",
		Backend: "Local engine", Started: clockTime.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		sp := l.speaker
		if _, err := h.db.AddSegment(ctx, store.Segment{SessionID: id, Seq: i, Start: l.start, End: l.start + 3,
			Speaker: &sp, Text: l.text, Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.db.FinishSession(ctx, id, clockTime, 70, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

// notesLabels returns the texts of the notes dialog's rows of topics or
// action items.
func notesLabels(box *fyne.Container) []string {
	var out []string
	for _, o := range box.Objects {
		walk(o, func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Label); ok && l.TextStyle.Bold {
				out = append(out, l.Text)
			}
		})
	}
	return out
}

var placedRow = regexp.MustCompile(`^• .+ \(Speaker [12], \d{1,2}:\d{2}\)$`)

// TestMeetingNotesView writes a meeting's notes from the History list's
// Meeting notes button, on the local engine, shows them (summary,
// topics, action items with speaker and time), exports them as Markdown
// through the app's file dialog, finds them again when the meeting is
// reopened, and writes them again when asked.
func TestMeetingNotesView(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	meeting := h.saveSession(t, store.KindCaptions, "Standup",
		pastLine{0.5, 0, "we shipped the new dashboard release on friday and customers love the faster reports"},
		pastLine{5, 1, "the support queue is growing and the dashboard reports need more work"},
		pastLine{65, 0, "please schedule a review of the dashboard reports with the support team"})
	file := h.saveSession(t, store.KindFile, "talk.wav")
	empty := h.saveSession(t, store.KindCaptions, "Silence")
	hp := h.captions.history
	h.ui(hp.reload)
	h.waitFor(t, "the history to be listed", func() bool { return len(hp.rows) == 3 })

	h.selectSession(t, file)
	h.ui(func() {
		if !hp.notesB.Disabled() {
			t.Error("Meeting notes is enabled for a file transcription")
		}
	})
	h.selectSession(t, meeting)
	h.waitFor(t, "the meeting to open", func() bool { return h.captions.shown.id == meeting })
	if got := h.statusText(); got != "Opened “Standup”." {
		t.Errorf("status %q, before the meeting has notes", got)
	}
	h.ui(func() { test.Tap(hp.notesB) })
	var v *notesView
	h.waitFor(t, "the notes to be written", func() bool {
		v = hp.notes
		return v != nil && v.shown() && v.notes != nil && v.working == nil
	})
	h.ui(func() {
		if v.title.Text != "Standup" || !strings.HasPrefix(v.status.Text, "Written by Local engine on ") {
			t.Errorf("title %q, status %q", v.title.Text, v.status.Text)
		}
		if !strings.Contains(v.info.Text, "Speakers: Speaker 1, Speaker 2") || !strings.Contains(v.info.Text, "1:10") {
			t.Errorf("info %q, want the length and speakers", v.info.Text)
		}
		if s := v.summary.Text; s == "" || s == sessions.NoSummary {
			t.Errorf("summary %q", s)
		}
		topics, actions := notesLabels(v.topics), notesLabels(v.actions)
		if len(topics) == 0 || len(actions) == 0 {
			t.Fatalf("topics %q, action items %q", topics, actions)
		}
		for _, r := range append(topics, actions...) {
			if !placedRow.MatchString(r) {
				t.Errorf("row %q is not placed by speaker and time", r)
			}
		}
		if last := actions[len(actions)-1]; !strings.HasSuffix(last, "(Speaker 1, 1:05)") {
			t.Errorf("the last action item is %q, want Speaker 1's request at 1:05", last)
		}
		if v.export.Disabled() || v.redo.Disabled() || !v.cancel.Disabled() {
			t.Error("Export and Write again should be enabled, Cancel disabled")
		}
	})
	h.assertShows(t, "Summary", "Topics", "Action items")
	written := v.notes.Written

	// Export Markdown… through the app's own file dialog.
	dir := t.TempDir()
	h.startFileDialogsIn(dir)
	h.ui(func() { test.Tap(v.export) })
	field := h.pathField(t)
	h.ui(func() {
		if got := filepath.Base(field.Text); got != "Standup notes.md" {
			t.Errorf("the file proposed is %q", got)
		}
	})
	h.tapDialogButton(t, "Save")
	h.waitFor(t, "the notes to be saved", func() bool { return v.status.Text == "Saved Standup notes.md (Markdown)." })
	md, err := os.ReadFile(filepath.Join(dir, "Standup notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Meeting notes: Standup\n", "## Summary\n", "## Topics\n", "## Action items\n", "(Speaker 1, 1:05)", "**1:05 Speaker 1:** please schedule"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	h.ui(func() { test.Tap(v.close) })
	h.waitFor(t, "the dialog to close", func() bool { return !v.shown() })

	// Reopened, the meeting says it has notes, which show without being
	// written again.
	h.selectSession(t, file)
	h.waitFor(t, "the file to open", func() bool { return h.captions.shown.id == file })
	h.selectSession(t, meeting)
	want := "Opened “Standup”. It has meeting notes: Notes shows them."
	h.waitFor(t, want, func() bool { return h.captions.status.Text == want })
	h.ui(func() { test.Tap(hp.notesB) })
	h.waitFor(t, "the saved notes", func() bool { return v.shown() && v.notes != nil && v.working == nil })
	h.ui(func() {
		if !v.notes.Written.Equal(written) {
			t.Errorf("the notes were written again at %v", v.notes.Written)
		}
	})
	h.ui(func() { test.Tap(v.redo) })
	h.waitFor(t, "the notes written again", func() bool { return v.working == nil && !v.notes.Written.Equal(written) })

	// A meeting without words is refused in plain words.
	h.ui(func() { test.Tap(v.close) })
	h.selectSession(t, empty)
	h.ui(func() { test.Tap(hp.notesB) })
	h.waitFor(t, "the refusal", func() bool {
		return v.shown() && v.status.Text == "This meeting has no words to take notes from."
	})
	h.ui(func() {
		if v.notes != nil || !v.export.Disabled() {
			t.Error("the empty meeting shows notes, or offers to export them")
		}
		if rows := notesLabels(v.actions); len(rows) != 0 {
			t.Errorf("the empty meeting shows action items %q", rows)
		}
	})
}

// TestMeetingNotesOnStop writes a meeting's notes as it stops when the
// setting asks for it, and only then.
func TestMeetingNotesOnStop(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	id := h.saveSession(t, store.KindCaptions, "Standup",
		pastLine{0.5, 0, "we shipped the release on friday"},
		pastLine{5, 1, "please update the onboarding guide before the end of the month"})
	empty := h.saveSession(t, store.KindCaptions, "Silence")

	// Off by default.
	h.ui(func() {
		if h.settings.notes.Checked {
			t.Error("the setting is on by default")
		}
	})
	if h.notesOnStop(t.Context(), id) {
		t.Error("notes are written on stop by default")
	}

	h.ui(func() { test.Tap(h.settings.notes) })
	h.ui(func() { test.Tap(h.settings.save) })
	h.waitFor(t, "the setting to be saved", func() bool {
		s, err := h.db.LoadSettings(t.Context())
		return err == nil && s.NotesOnStop
	})
	if h.notesOnStop(t.Context(), empty) {
		t.Error("notes would be written of a meeting without words")
	}
	h.ui(func() { h.meetingStopped(id) })
	h.waitFor(t, "the notes written on stop", func() bool {
		v := h.captions.history.notes
		return v != nil && v.shown() && v.notes != nil && v.working == nil
	})
	if _, err := h.ws.SavedNotes(t.Context(), id); err != nil {
		t.Errorf("the notes written on stop were not saved: %v", err)
	}
}
