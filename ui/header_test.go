package ui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/store"
)

// notice reads the header's notice about the history, and whether it is
// on screen.
func (h *harness) notice() (string, bool) {
	var text string
	var shown bool
	h.ui(func() { text, shown = h.Notice() })
	return text, shown
}

// TestHistoryNoticeDamaged: a history SQLite cannot read is moved aside,
// and the header says so, with where the old file is kept, until the
// person hides it; hidden, it is one click away. Before, no window
// opened at all.
func TestHistoryNoticeDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, harnessConfig{dbPath: path, svc: &fakeService{answer: answers(result{info: localInfo})}}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil: a new history was started", err)
	}
	moved := h.db.Recovery().MovedTo
	text, shown := h.notice()
	want := "Earshot could not read its history file (it is damaged), so it started a new, empty history. The old file is kept, as it was, at " + moved + "."
	if !shown || text != want || filepath.Dir(moved) != dir {
		t.Fatalf("notice %q (shown %v)\nwant %q", text, shown, want)
	}
	h.ui(func() { test.Tap(h.findVisibleButton(t, "Hide")) })
	if _, shown := h.notice(); shown {
		t.Fatal("Hide left the notice on screen")
	}
	h.ui(func() { test.Tap(h.header.showNotice) })
	if text, shown := h.notice(); !shown || text != want {
		t.Fatalf("the History button brought back %q (shown %v)", text, shown)
	}
}

// findVisibleButton finds the visible button labelled text in the
// window. Call it as the UI goroutine.
func (h *harness) findVisibleButton(t *testing.T, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	walk(h.window.Content(), func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text && b.Visible() && found == nil {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no button %q in the window", text)
	}
	return found
}

// TestHistoryNoticeReadOnly: with nowhere to write, history is in memory
// for the session, the header says so, and saved settings say they are
// kept for this session only.
func TestHistoryNoticeReadOnly(t *testing.T) {
	ro := testkit.ReadOnlyDir(t)
	h := settingsHarness(t, harnessConfig{dbPath: filepath.Join(ro, "earshot", "history.db")}, Options{})
	text, shown := h.notice()
	want := "History is off: Earshot cannot write in " + ro + " (the disk is read-only). What you do now is kept until Earshot closes, and settings saved now are not kept either."
	if !shown || text != want {
		t.Fatalf("notice %q (shown %v)\nwant %q", text, shown, want)
	}
	h.ui(func() { test.Tap(h.settings.diarize) })
	h.press(saveShortcut)
	h.waitFor(t, "the settings to be saved", func() bool { return h.settings.status.Text != "Saving…" })
	if got, want := h.settingsStatus(), "Saved for this session only: history is off, so settings are not kept when Earshot closes."; got != want {
		t.Fatalf("after saving, the status says %q, want %q", got, want)
	}
	if s, err := h.db.LoadSettings(t.Context()); err != nil || !s.Diarize {
		t.Fatalf("the settings were not kept for the session: %+v, %v", s, err)
	}
	h.waitFor(t, "the history's settings", func() bool { return h.settings.loaded && h.settings.kept.keep.Selected == "Forever" })
	h.ui(func() { h.settings.kept.keep.SetSelected("30 days") })
	want = "History is off for this session, so this choice lasts until Earshot closes."
	h.waitFor(t, want, func() bool { return h.settings.status.Text == want })
}

// TestNoNoticeWhenHistoryOpens: a history that opened as it was gets no
// notice, and saved settings just say "Saved.".
func TestNoNoticeWhenHistoryOpens(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	if text, shown := h.notice(); shown || text != "" {
		t.Fatalf("notice %q (shown %v) over a history that opened", text, shown)
	}
	h.ui(func() {
		if h.header.showNotice.Visible() {
			t.Error("the History button shows with no notice")
		}
	})
}

// TestRecoveryWords: what the header says for each way the history could
// not be opened as it was.
func TestRecoveryWords(t *testing.T) {
	damaged := fmt.Errorf("store: open /h/history.db: %w: file is not a database (26)", store.ErrDamaged)
	pathErr := func(op, path string, errno syscall.Errno) error {
		return fmt.Errorf("store: open /h/history.db: %w", &os.PathError{Op: op, Path: path, Err: errno})
	}
	const off = " What you do now is kept until Earshot closes, and settings saved now are not kept either."
	tests := []struct {
		rec  store.Recovery
		want string
	}{
		{store.Recovery{Path: "/h/history.db", Damage: damaged, MovedTo: "/h/history-damaged-20261207-143005.db"},
			"Earshot could not read its history file (it is damaged), so it started a new, empty history. The old file is kept, as it was, at /h/history-damaged-20261207-143005.db."},
		{store.Recovery{Path: "/h/history.db", Damage: damaged, MovedTo: "/h/history-damaged-20261207-143005.db", Off: pathErr("open", "/h/history.db", syscall.ENOSPC)},
			"Earshot could not read its history file (it is damaged) and moved it to /h/history-damaged-20261207-143005.db, but could not start a new one (the disk is full), so history is off." + off},
		{store.Recovery{Path: "/h/history.db", Damage: damaged, Off: fmt.Errorf("move: %w", store.ErrInUse)},
			"Earshot could not read its history file /h/history.db (it is damaged), and leaves it where it is while another Earshot has it open, so history is off." + off},
		{store.Recovery{Path: "/h/history.db", Damage: damaged, Off: &os.LinkError{Op: "rename", Old: "/h/history.db", New: "/h/x", Err: syscall.EROFS}},
			"Earshot could not read its history file /h/history.db (it is damaged) and could not move it aside (the disk is read-only), so history is off." + off},
		{store.Recovery{Path: "/h/history.db", Off: fmt.Errorf("migrate: %w", store.ErrNewerSchema)},
			"History is off: /h/history.db was written by a newer version of Earshot, which this one leaves as it is." + off},
		{store.Recovery{Path: "/h/history.db", Off: store.MarkDiskFull(pathErr("write", "/h/history.db-wal", syscall.ENOSPC))},
			"History is off: the disk is full, so Earshot cannot write its history in /h." + off + " Free some space, and open Earshot again to keep history."},
		{store.Recovery{Path: "/h/.local/share/earshot/history.db", Off: pathErr("mkdir", "/h/.local", syscall.EROFS)},
			"History is off: Earshot cannot write in /h (the disk is read-only)." + off},
		{store.Recovery{Path: "/h/f/earshot/history.db", Off: pathErr("mkdir", "/h/f", syscall.ENOTDIR)},
			"History is off: Earshot cannot write in /h/f (it is a file, where a folder should be)." + off},
		{store.Recovery{Path: "/h/history.db", Off: pathErr("open", "/h/history.db", syscall.EACCES)},
			"History is off: Earshot cannot write in /h (it has no permission there)." + off},
		{store.Recovery{Off: fmt.Errorf("store: default path: %w", errors.New("$HOME is not defined"))},
			"History is off: Earshot cannot keep it on disk ($HOME is not defined)." + off},
	}
	for _, tt := range tests {
		if got := plainError(&tt.rec); got != tt.want {
			t.Errorf("%v:\n got %q\nwant %q", &tt.rec, got, tt.want)
		}
	}
}

// TestInterruptedInHistory: a session interrupted by a crash reads so in
// the history lists, with what it saved, and in the Agent tab's.
func TestInterruptedInHistory(t *testing.T) {
	at := time.Date(2026, 12, 7, 14, 30, 0, 0, time.Local)
	tests := []struct {
		s    store.Session
		want string
	}{
		{store.Session{Kind: store.KindCaptions, Status: store.StatusInterrupted, Segments: 12, Duration: 42, Source: "Microphone"},
			"Interrupted: 12 captions saved"},
		{store.Session{Kind: store.KindConversation, Status: store.StatusInterrupted, Segments: 1},
			"Interrupted: 1 turn saved"},
		{store.Session{Kind: store.KindAgent, Status: store.StatusInterrupted, Segments: 4},
			"Interrupted: 4 lines saved"},
		{store.Session{Kind: store.KindFile, Status: store.StatusInterrupted},
			"Interrupted: Earshot stopped before it ended"},
	}
	for _, tt := range tests {
		tt.s.Started = at
		if got := sessionDetails(tt.s, at.Add(time.Hour)); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want it to say %q", tt.s.Kind, got, tt.want)
		}
	}
	if got := statusWord(store.StatusInterrupted); got != "interrupted" {
		t.Errorf("the Agent tab calls an interrupted conversation %q", got)
	}
}
