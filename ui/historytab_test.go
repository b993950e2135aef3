package ui

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/historytest"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// seedHistory saves a finished session of kind started at, with a
// caption of each text, ten seconds apart.
func seedHistory(t *testing.T, db *store.DB, kind, title string, at time.Time, texts ...string) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := db.CreateSession(ctx, store.Session{Kind: kind, Title: title, Started: at, Source: "Test"})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: i, Start: float64(10 * i), End: float64(10*i + 4), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishSession(ctx, id, at.Add(time.Minute), float64(10*len(texts)), store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

// waitHistory waits until the History tab lists want, in order.
func (h *harness) waitHistory(t *testing.T, what string, want ...int64) {
	t.Helper()
	h.waitFor(t, what, func() bool {
		if len(h.history.rows) != len(want) || h.history.paging {
			return false
		}
		for i, r := range h.history.rows {
			if r.s.ID != want[i] {
				return false
			}
		}
		return true
	})
}

// selectHistory selects the row of session id.
func (h *harness) selectHistory(t *testing.T, id int64) {
	t.Helper()
	h.ui(func() {
		for i, r := range h.history.rows {
			if r.s.ID == id {
				h.history.list.Select(i)
				return
			}
		}
		t.Errorf("session %d is not listed", id)
	})
}

// historySeed is a history of every kind over a month, relative to the
// harness's clock; ids are oldest first.
type historySeed struct {
	captions, file, conversation, synthesis, agent, analysis int64
}

func seedKinds(t *testing.T, db *store.DB) historySeed {
	day := 24 * time.Hour
	return historySeed{
		analysis:     seedHistory(t, db, store.KindAnalysis, "Quarterly report", clockTime.Add(-40*day), "revenue grew in the north"),
		agent:        seedHistory(t, db, store.KindAgent, "Weather chat", clockTime.Add(-20*day), "what is the weather"),
		synthesis:    seedHistory(t, db, store.KindSynthesis, "Welcome message", clockTime.Add(-10*day), "welcome to the show"),
		conversation: seedHistory(t, db, store.KindConversation, "Support call", clockTime.Add(-3*day), "hello", "my invoice is wrong", "thanks"),
		file:         seedHistory(t, db, store.KindFile, "Lecture.wav", clockTime.Add(-2*time.Hour), "tides and the moon"),
		captions:     seedHistory(t, db, store.KindCaptions, "Standup", clockTime.Add(-time.Hour), "we ship the invoice screen", "then lunch"),
	}
}

func TestHistoryTabListsAndFilters(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	h.press(historyShortcut) // Ctrl+H opens the tab
	h.ui(func() {
		if got := h.tabs.Selected().Text; got != "History" {
			t.Errorf("Ctrl+H opened %s", got)
		}
		h.history.reload()
	})
	h.waitHistory(t, "every kind, newest first", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)
	h.assertShows(t, "Standup", "Quarterly report")

	h.ui(func() { h.history.kind.SetSelected("Agent") })
	h.waitHistory(t, "the agent only", ids.agent)
	h.ui(func() { h.history.kind.SetSelected("All kinds"); h.history.date.SetSelected(dateToday) })
	h.waitHistory(t, "today's", ids.captions, ids.file)
	h.ui(func() { h.history.date.SetSelected(date7) })
	h.waitHistory(t, "the last 7 days", ids.captions, ids.file, ids.conversation)
	h.ui(func() { h.history.date.SetSelected(date30) })
	h.waitHistory(t, "the last 30 days", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent)

	h.ui(func() { h.history.date.SetSelected(dateSince) })
	h.waitFor(t, "a hint to type a date", func() bool { return strings.Contains(h.history.empty.Text, "YYYY-MM-DD") && h.history.since.Visible() })
	h.ui(func() {
		h.window.Resize(fyne.NewSize(800, 600))
		if m := h.window.Content().MinSize(); m.Width > 800 {
			t.Errorf("History with the date field needs %.0f px", m.Width)
		}
	})
	h.ui(func() { h.history.since.SetText(clockTime.AddDate(0, 0, -15).Format(time.DateOnly)) })
	h.waitHistory(t, "since 15 days ago", ids.captions, ids.file, ids.conversation, ids.synthesis)
	h.ui(func() { h.history.kind.SetSelected("Syntheses") })
	h.waitHistory(t, "syntheses since 15 days ago", ids.synthesis)
}

func TestHistoryTabPages(t *testing.T) {
	h := newHarness(t, nil, Options{})
	const n = historyPage*2 + 30
	var want []int64
	for i := range n {
		want = append([]int64{seedHistory(t, h.db, store.KindCaptions, "Session "+itoa(i), clockTime.Add(-time.Duration(n-i)*time.Minute))}, want...)
	}
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitFor(t, "the first page", func() bool { return len(h.history.rows) == historyPage && !h.history.paging })
	// Scrolling to the end of what is read reads the next page, and the
	// next, until the history ends.
	for range 3 {
		h.ui(func() { h.history.list.ScrollToBottom() })
		h.waitFor(t, "a page", func() bool { return !h.history.paging })
	}
	h.waitHistory(t, "every session, read a page at a time", want...)
}

// TestHistoryTabHitPastAnHour: a hit an hour into a recording is listed
// at h:mm:ss, as the player shows it (the list wrote 62:03).
func TestHistoryTabHitPastAnHour(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ctx := t.Context()
	id, err := h.db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "Long lecture", Started: clockTime.Add(-2 * time.Hour), Source: "Test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.AddSegment(ctx, store.Segment{SessionID: id, Start: 3723.4, End: 3726, Text: "the lighthouse keeper"}); err != nil {
		t.Fatal(err)
	}
	if err := h.db.FinishSession(ctx, id, clockTime.Add(-time.Hour), 3726, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	h.ui(func() { h.SelectTab("History"); h.history.search.SetText("lighthouse") })
	h.waitFor(t, "the hit", func() bool { return len(h.history.rows) == 1 && h.history.rows[0].hasAt })
	h.assertShows(t, "Captions at 1:02:03: ")
}

func TestHistoryTabSearchAndOpen(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the history", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)

	h.ui(func() { h.history.search.SetText("invoice") })
	h.waitFor(t, "two hits", func() bool { return len(h.history.rows) == 2 && h.history.rows[0].snippet != "" })
	var call historyEntry
	h.ui(func() {
		for _, r := range h.history.rows {
			if r.s.ID == ids.conversation {
				call = r
			}
		}
	})
	if !call.hasAt || call.at != 10 || !strings.Contains(call.snippet, store.HighlightStart+"invoice"+store.HighlightEnd) {
		t.Errorf("the conversation's hit: %+v", call)
	}
	h.assertShows(t, "Conversation at 0:10: ")
	// A filter applies to the search too.
	h.ui(func() { h.history.kind.SetSelected("Captions") })
	h.waitHistory(t, "the captions' hit", ids.captions)
	h.ui(func() { h.history.kind.SetSelected("All kinds") })
	h.waitFor(t, "two hits again", func() bool { return len(h.history.rows) == 2 })

	// Open: the Captions tab shows the conversation, at its caption.
	h.selectHistory(t, ids.conversation)
	h.ui(func() { test.Tap(h.history.open) })
	h.waitFor(t, "the conversation in the Captions tab", func() bool {
		return h.tabs.Selected().Text == "Captions" && h.captions.shown.id == ids.conversation && strings.Contains(h.captions.status.Text, "at 0:10")
	})

	// An agent conversation opens in the Agent tab; an empty search
	// lists everything again.
	h.ui(func() { h.SelectTab("History"); h.history.search.SetText("") })
	h.waitHistory(t, "the history again", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)
	h.selectHistory(t, ids.agent)
	h.ui(func() { test.Tap(h.history.open) })
	h.waitFor(t, "the Agent tab", func() bool { return h.tabs.Selected().Text == "Agent" })
}

func TestHistoryTabDeleteUndo(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	fake := esclock.NewFake(clockTime)
	h.ui(func() { h.history.clock = fake; h.SelectTab("History"); h.history.reload() })
	all := []int64{ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis}
	h.waitHistory(t, "the history", all...)

	// Delete, then Undo: the row goes at once and comes back; nothing
	// was deleted.
	h.selectHistory(t, ids.file)
	h.ui(func() { test.Tap(h.history.del) })
	h.waitHistory(t, "the row gone at once", ids.captions, ids.conversation, ids.synthesis, ids.agent, ids.analysis)
	h.assertShows(t, "Deleted “Lecture.wav”.")
	h.ui(func() { test.Tap(h.history.undoBar.Objects[1].(*widget.Button)) })
	h.waitHistory(t, "the row back", all...)
	if _, err := h.db.Session(t.Context(), ids.file); err != nil {
		t.Fatalf("after Undo: %v", err)
	}
	// The delete's goroutine stops its timer once it sees Undo.
	if !waitNoTimers(t, fake) {
		t.Errorf("the undone delete left %d timers", fake.Waiters())
	}
	h.ui(func() {
		if h.history.undoBar.Visible() {
			t.Error("the undo bar stays after Undo")
		}
	})

	// Delete and let the time pass: it is deleted then, not before.
	h.selectHistory(t, ids.agent)
	h.ui(func() { test.Tap(h.history.del) })
	if !fake.WaitForWaiters(1, t.Context().Done()) {
		t.Fatal("no timer for the undo")
	}
	fake.Advance(undoDelay - time.Second)
	if _, err := h.db.Session(t.Context(), ids.agent); err != nil {
		t.Fatalf("deleted before the undo's time was over: %v", err)
	}
	fake.Advance(time.Second)
	h.waitFor(t, "the undo bar to go", func() bool { return !h.history.undoBar.Visible() && h.history.pending == nil })
	if _, err := h.db.Session(t.Context(), ids.agent); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the undo's time: %v, want deleted", err)
	}

	// A delete waiting when the app closes is done, not left half-done.
	h.selectHistory(t, ids.synthesis)
	h.ui(func() { test.Tap(h.history.del) })
	h.closeWindow()
	h.stop()
	if _, err := h.db.Session(t.Context(), ids.synthesis); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after closing: %v, want deleted", err)
	}
}

func TestHistoryTabRenameAndExport(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the history", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)

	h.selectHistory(t, ids.conversation)
	h.ui(func() { test.Tap(h.history.rename) })
	var field *boundedEntry
	h.waitFor(t, "the rename dialog", func() bool {
		for _, ov := range h.window.Canvas().Overlays().List() {
			walk(ov, func(x fyne.CanvasObject) {
				if e, ok := x.(*boundedEntry); ok && e.Text == "Support call" {
					field = e
				}
			})
		}
		return field != nil
	})
	h.ui(func() { field.SetText("  Billing call ") })
	h.tapDialogButton(t, "Rename")
	h.waitFor(t, "the new title", func() bool {
		r, ok := h.history.selectedEntry()
		return ok && r.s.Title == "Billing call" && h.history.status.Text == "Renamed to “Billing call”."
	})
	if s, err := h.db.Session(t.Context(), ids.conversation); err != nil || s.Title != "Billing call" {
		t.Errorf("saved title %q, %v", s.Title, err)
	}

	dir := t.TempDir()
	h.startFileDialogsIn(dir)
	h.ui(func() { test.Tap(h.history.export) })
	h.tapDialogButton(t, "Choose file…")
	h.tapDialogButton(t, "Save")
	h.waitFor(t, "the export", func() bool { return h.history.status.Text == "Saved Billing call.srt." })
	b, err := os.ReadFile(filepath.Join(dir, "Billing call.srt"))
	if err != nil || !strings.Contains(string(b), "00:00:10,000 --> 00:00:14,000\nmy invoice is wrong") {
		t.Errorf("Billing call.srt: %v\n%s", err, b)
	}
}

func TestShowHistorySearch(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	if err := h.waitReady(t); err != nil {
		t.Logf("ready with %v", err)
	}
	h.ui(func() {
		if !h.ShowHistorySearch("invoice ") {
			t.Error("no History tab")
		}
		if !h.waiting[partHistorySearch] {
			t.Error("OnReady does not wait for the search")
		}
	})
	h.waitFor(t, "the hits", func() bool { return !h.waiting[partHistorySearch] && h.tabs.Selected().Text == "History" })
	h.waitFor(t, "the two sessions that say invoice", func() bool {
		got := map[int64]bool{}
		for _, r := range h.history.rows {
			got[r.s.ID] = true
		}
		return len(h.history.rows) == 2 && got[ids.captions] && got[ids.conversation]
	})
	h.assertShows(t, "2 sessions matching “invoice”, best first")
}

func TestHistoryTabRerunNeedsAudio(t *testing.T) {
	h := newHarness(t, nil, Options{})
	ids := seedKinds(t, h.db)
	if err := h.db.SaveAudio(t.Context(), ids.captions, store.Audio{ContentType: "audio/ogg", Encoding: "opus", SampleRate: 48000, Data: []byte("OggS")}); err != nil {
		t.Fatal(err)
	}
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the history", ids.captions, ids.file, ids.conversation, ids.synthesis, ids.agent, ids.analysis)
	h.selectHistory(t, ids.file)
	h.waitFor(t, "the selection", func() bool { return h.history.selected == ids.file && !h.history.open.Disabled() })
	h.waitFor(t, "Re-run off without audio", func() bool { return h.history.rerun.Disabled() })
	h.selectHistory(t, ids.captions)
	h.waitFor(t, "Re-run on with audio", func() bool { return !h.history.rerun.Disabled() && h.history.hasAudio })
	h.ui(func() { test.Tap(h.history.rerun) })
	h.waitFor(t, "the re-run dialog", func() bool { return h.window.Canvas().Overlays().Top() != nil })
}

// waitNoTimers waits until no timer of fake is waiting, for at most
// 20 s: a margin for a goroutine to run on a loaded machine, not a pace.
func waitNoTimers(t *testing.T, fake *esclock.Fake) bool {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	return fake.WaitForNoWaiters(ctx.Done())
}

// seedSynthesis saves a finished synthesis of text with voice as the
// Voices tab does: its details, its request and, with pcm, its audio as
// WAV at 24 kHz.
func seedSynthesis(t *testing.T, db *store.DB, title, text, voice string, pcm []int16) int64 {
	return historytest.SaveSynthesis(t, db, historytest.Synthesis{
		Session: store.Session{Title: title, Started: clockTime.Add(-30 * time.Minute)},
		Voice:   voice, Text: text, PCM: pcm, Ended: clockTime.Add(-29 * time.Minute),
		Details: sessions.SynthesisDetails{Family: string(sessions.FamilyGeneral), Speed: 1, TimeToFirstAudioMS: 150},
	})
}

// exportHistoryAs exports the selected entry with the History tab's
// Export as a person would: choice is picked in the dialog, and the file
// dialog's proposed name, in dir, is kept or, with name, replaced. It
// returns the file's name and contents.
func (h *harness) exportHistoryAs(t *testing.T, choice, name, dir string) (string, []byte) {
	t.Helper()
	h.startFileDialogsIn(dir)
	h.ui(func() { test.Tap(h.history.export) })
	formats, ok := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.RadioGroup); return ok }).(*widget.RadioGroup)
	if !ok {
		t.Fatalf("the export dialog offers no formats; window:\n%s", h.screen())
	}
	h.ui(func() {
		if !slices.Contains(formats.Options, choice) {
			t.Errorf("the export dialog offers %q, not %q", formats.Options, choice)
		}
		formats.SetSelected(choice)
	})
	h.tapDialogButton(t, "Choose file…")
	field, ok := h.inOverlays(func(o fyne.CanvasObject) bool { e, ok := o.(*boundedEntry); return ok && e.Visible() }).(*boundedEntry)
	if !ok {
		t.Fatalf("the save dialog has no file name; window:\n%s", h.screen())
	}
	h.ui(func() {
		if name != "" {
			field.SetText(filepath.Join(dir, name))
		}
		name = filepath.Base(field.Text)
	})
	h.tapDialogButton(t, "Save")
	h.waitFor(t, "Saved "+name, func() bool { return h.history.status.Text == "Saved "+name+"." })
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return name, b
}

// TestHistoryTabExportSynthesis exports a synthesis from the History tab
// as Markdown, JSON and its audio.
func TestHistoryTabExportSynthesis(t *testing.T) {
	h := newHarness(t, nil, Options{})
	pcm := make([]int16, 12000) // half a second of a 440 Hz tone
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
	}
	silent := seedSynthesis(t, h.db, "Silent note", "Nothing was kept of this.", "aura-2-luna-en", nil)
	id := seedSynthesis(t, h.db, "Welcome message", "Welcome to the show, everyone.", "aura-2-thalia-en", pcm)
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the syntheses", id, silent)

	h.selectHistory(t, id)
	h.waitFor(t, "Export on, with the audio found", func() bool { return !h.history.export.Disabled() && h.history.hasAudio })
	dir := t.TempDir()
	name, md := h.exportHistoryAs(t, "Markdown (.md)", "", dir)
	if name != "Welcome message.md" || !strings.Contains(string(md), "Welcome to the show, everyone.") || !strings.Contains(string(md), "- Voice: aura-2-thalia-en") {
		t.Errorf("%s:\n%s", name, md)
	}
	name, js := h.exportHistoryAs(t, "JSON (.json)", "", dir)
	var got struct{ Text, Voice string }
	if err := json.Unmarshal(js, &got); err != nil || name != "Welcome message.json" || got.Text != "Welcome to the show, everyone." || got.Voice != "aura-2-thalia-en" {
		t.Errorf("%s: %v\n%s", name, err, js)
	}
	// The audio, in the Voices tab's format unless the file's name asks
	// for another.
	enc := h.voices.settings.SaveEncoding
	_, wav := h.exportHistoryAs(t, "The audio, "+enc+" ("+sessions.SaveExtension(enc)+")", "welcome.wav", dir)
	if len(wav) != 44+2*len(pcm) || string(wav[:4]) != "RIFF" {
		t.Errorf("welcome.wav: %d bytes", len(wav))
	}

	// Without audio kept, the text still exports, and no audio is offered.
	h.selectHistory(t, silent)
	h.waitFor(t, "the silent synthesis selected", func() bool { return h.history.selected == silent && !h.history.export.Disabled() })
	_, md = h.exportHistoryAs(t, "Markdown (.md)", "", dir)
	if !strings.Contains(string(md), "Nothing was kept of this.") {
		t.Errorf("Silent note.md:\n%s", md)
	}
	h.ui(func() { test.Tap(h.history.export) })
	formats, _ := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.RadioGroup); return ok }).(*widget.RadioGroup)
	h.ui(func() {
		if formats == nil || len(formats.Options) != 2 {
			t.Errorf("a synthesis without audio offers %v", formats)
		}
	})
	h.tapDialogButton(t, "Cancel")
}
