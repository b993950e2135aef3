//go:build linux

package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/fulldisk"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestFullDisk (must show): the app's history on a 2 MB tmpfs filled to
// the last byte. A file transcription, a synthesis, an analysis and an
// agent's turn each show their result, and each says in plain words that
// the disk is full and it was not saved; none says it was kept. The
// transcript not kept is exported from the screen. Live captions go on,
// say they are waiting to be written, and are in history once space is
// freed.
func TestFullDisk(t *testing.T) {
	disk := fulldisk.Mount(t, 2<<20)
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	// The live captions' recording holds before its last line until the
	// disk has room again, and then ends: the session stops by itself.
	room := hold{at: len(recording(t, reader1, cards1)), release: make(chan struct{})}
	mics := &fakeMics{samples: recording(t, reader1, cards1, reader2), speed: 1, holds: []hold{room}}
	h := newHarnessWith(t, harnessConfig{
		engine: true, mics: mics, settings: &s, dbPath: disk.Path("history.db"),
		speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}},
	}, Options{searchDelay: time.Millisecond})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	h.selectTestMic(t)
	disk.Fill()
	// No status says anything is kept while the disk is full; "saved to
	// history" only once it has room again, for the captions.
	kept := &claims{phrases: []string{"kept in history", "saved to history"}}
	h.ui(func() { h.observe = func() { kept.look(h) } })
	t.Cleanup(func() {
		if len(kept.seen) > 0 {
			t.Errorf("statuses said what was not kept was: %q", kept.seen)
		}
	})

	// notKept checks a status: the disk is full, what was not saved, and
	// no word of anything kept.
	notKept := func(t *testing.T, status, what string) {
		t.Helper()
		want := "The disk is full: " + what + " not saved to history. Free some space, or save "
		if !strings.Contains(status, want) || strings.Contains(status, "kept in history") || strings.Contains(status, "; saved") {
			t.Errorf("status %q; want it to say %q, and nothing kept", status, want)
		}
	}

	t.Run("file", func(t *testing.T) {
		c := h.captions
		path := writeWAV(t, "meeting.wav", recording(t, reader1))
		h.ui(func() { c.transcribeFile(path) })
		h.waitFor(t, "the transcription to end", func() bool { return c.file == nil })
		if lines := h.captionLines(); len(lines) == 0 {
			t.Fatalf("no transcript shown; status %q", h.statusText())
		}
		status := h.statusText()
		if !strings.HasPrefix(status, "Transcribed meeting.wav: ") {
			t.Errorf("status %q", status)
		}
		notKept(t, status, "the transcript was")
		// Save it as a file: from the screen, as history has none of it.
		out := filepath.Join(t.TempDir(), "meeting.txt")
		h.ui(func() {
			if c.export.Disabled() {
				t.Error("Export is disabled for a transcript history could not keep")
			}
			c.writeExport(c.shown.id, sessions.ExportText, out)
		})
		h.waitFor(t, "the export", func() bool { return strings.HasPrefix(c.status.Text, "Saved meeting.txt") })
		b, err := os.ReadFile(out)
		if err != nil || len(strings.Fields(string(b))) < 5 {
			t.Errorf("the export holds %q, %v", b, err)
		}
	})

	t.Run("synthesis", func(t *testing.T) {
		status := h.speakInVoices(t, "The disk is full, and this is spoken all the same.")
		if !strings.HasPrefix(status, "Spoke ") {
			t.Errorf("status %q", status)
		}
		notKept(t, status, "the synthesis was")
	})

	t.Run("analysis", func(t *testing.T) {
		a := h.analyze
		h.ui(func() {
			h.SelectTab("Analyze")
			a.input.SetText(teamUpdate)
		})
		h.press(analyzeShortcut)
		h.waitFor(t, "the analysis", func() bool { return a.job == nil && a.shown != nil })
		h.ui(func() {
			if a.panel.summary.Text == "" {
				t.Error("no summary shown")
			}
		})
		status := h.analyzeStatus()
		if !strings.HasPrefix(status, "Analysed ") {
			t.Errorf("status %q", status)
		}
		notKept(t, status, "the analysis was")
		// Save it as a file: from the screen, as history has none of it.
		out := filepath.Join(t.TempDir(), "update.md")
		h.ui(func() {
			if a.export.Disabled() {
				t.Error("Export is disabled for an analysis history could not keep")
			}
			a.writeExport(a.shown, sessions.AnalysisMarkdown, out)
		})
		h.waitFor(t, "the export", func() bool { return a.status.Text == "Saved update.md." })
		if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "## Summary") {
			t.Errorf("the export holds %q, %v", b, err)
		}
	})

	t.Run("agent", func(t *testing.T) {
		a := h.agent
		h.ui(func() { h.SelectTab("Agent") })
		h.waitFor(t, "the agent's models", func() bool { return len(a.models) > 0 && !a.start.Disabled() })
		h.ui(func() {
			a.typeOnly.SetChecked(true)
			test.Tap(a.start)
		})
		h.waitFor(t, "the conversation", func() bool { return a.live != nil && !a.input.Disabled() })
		h.ui(func() {
			a.input.SetText("what is two plus two")
			a.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		})
		h.waitFor(t, "the reply", func() bool {
			return a.live != nil && a.live.reply != nil && a.live.reply.Text == "Two plus two is four."
		})
		h.ui(func() { test.Tap(a.start) })
		h.waitFor(t, "the conversation to end", func() bool { return a.live == nil && strings.HasPrefix(a.status.Text, "Stopped. ") })
		h.assertShows(t, "Two plus two is four.")
		var status string
		h.ui(func() { status = a.status.Text })
		notKept(t, status, "the conversation with the agent was")
	})

	t.Run("captions", func(t *testing.T) {
		c := h.captions
		var roomAgain bool // the status said the captions waiting were written
		h.ui(func() {
			h.SelectTab("Captions")
			h.observe = func() {
				kept.look(h)
				roomAgain = roomAgain || c.status.Text == "The disk has room again: the captions that waited are in history now."
			}
			test.Tap(c.start)
		})
		h.waitFor(t, "captions waiting to be written", func() bool {
			return c.live != nil && len(finalsOf(c.view.lines())) > 0 &&
				strings.HasPrefix(c.status.Text, "The disk is full: waiting to write the live captions to history")
		})
		h.ui(func() { kept.phrases = []string{"kept in history"} }) // the captions are saved once there is room
		disk.Release()
		close(room.release)
		h.waitFor(t, "the session to end with its recording", func() bool { return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ") })
		h.ui(func() { h.observe = nil })
		if !roomAgain {
			t.Error("the window never said the captions that waited were written")
		}
		finals := finalsOf(h.captionLines())
		if want := "Stopped. " + plural(len(finals), "caption") + " saved to history."; h.statusText() != want {
			t.Errorf("status %q, want %q", h.statusText(), want)
		}
		list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindCaptions})
		if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
			t.Fatalf("history lists %+v, %v", list, err)
		}
		segs, err := h.db.Segments(t.Context(), list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) != len(finals) {
			t.Errorf("history holds %d captions, the window showed %d", len(segs), len(finals))
		}
		for i, g := range segs {
			if i < len(finals) && !strings.HasSuffix(finals[i], g.Text) {
				t.Errorf("caption %d: history holds %q, the window showed %q", i, g.Text, finals[i])
			}
		}
	})
}

// speakInVoices speaks text with Play in the Voices tab, and returns the
// tab's status once the synthesis has ended.
func (h *harness) speakInVoices(t *testing.T, text string) string {
	t.Helper()
	v := h.voices
	h.waitFor(t, "the voices", func() bool { return len(v.controls.all) > 0 })
	h.ui(func() {
		h.SelectTab("Voices")
		v.controls.text.SetText(text)
	})
	h.press(playShortcut)
	h.waitFor(t, "the synthesis to end", func() bool { return !v.busy() && len(v.run.kept) == 1 })
	var status string
	h.ui(func() { status = v.status.Text })
	return status
}

// claims collects the statuses the window showed that say one of
// phrases, not denied ("not saved to history", "could not be saved to
// history"): what it claimed was kept.
type claims struct {
	phrases []string
	seen    []string
}

// look reads the status of every tab a session ends in, and the header's
// notice. Call it as the UI goroutine (h.observe).
func (c *claims) look(h *harness) {
	notice, _ := h.Notice()
	for _, text := range []string{h.captions.status.Text, h.converse.status.Text, h.voices.status.Text,
		h.agent.status.Text, h.analyze.status.Text, notice} {
		said := strings.NewReplacer("not saved to history", "", "not be saved to history", "", "nothing was kept in history", "").Replace(text)
		for _, p := range c.phrases {
			if strings.Contains(said, p) && !slices.Contains(c.seen, text) {
				c.seen = append(c.seen, text)
			}
		}
	}
}

// TestFullDiskAtOpen: the disk is full when the app opens, so history is
// kept in memory for the session. The header names the full disk in
// plain words (not SQLite's "database or disk is full (13)"); a
// synthesis and live captions show their result and say they are kept
// until Earshot closes; no status ever says anything is kept in, or
// saved to, history.
func TestFullDiskAtOpen(t *testing.T) {
	disk := fulldisk.Mount(t, 2<<20)
	disk.Fill()
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{
		engine: true, settings: &s, dbPath: disk.Path("history.db"),
		mics:     &fakeMics{samples: recording(t, reader1), speed: 1},
		speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}},
	}, Options{searchDelay: time.Millisecond})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	kept := &claims{phrases: []string{"kept in history", "saved to history"}}
	h.ui(func() { h.observe = func() { kept.look(h) } })
	notice, shown := h.notice()
	want := "History is off: the disk is full, so Earshot cannot write its history in " + disk.Dir + ". What you do now is kept until Earshot closes, " +
		"and settings saved now are not kept either. Free some space, and open Earshot again to keep history."
	if !shown || notice != want {
		t.Errorf("notice %q (shown %v)\nwant %q", notice, shown, want)
	}
	h.selectTestMic(t)

	t.Run("synthesis", func(t *testing.T) {
		status := h.speakInVoices(t, "The disk is full, and this is spoken all the same.")
		if !strings.HasPrefix(status, "Spoke ") || !strings.HasSuffix(status, ", kept until Earshot closes (history is off).") {
			t.Errorf("status %q", status)
		}
	})

	t.Run("captions", func(t *testing.T) {
		c := h.captions
		h.ui(func() {
			h.SelectTab("Captions")
			test.Tap(c.start)
		})
		h.waitFor(t, "the session to end with its recording", func() bool {
			return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ")
		})
		finals := finalsOf(h.captionLines())
		if want := "Stopped. " + plural(len(finals), "caption") + ", kept until Earshot closes (history is off)."; len(finals) == 0 || h.statusText() != want {
			t.Errorf("status %q, want %q", h.statusText(), want)
		}
	})

	h.ui(func() { h.observe = nil })
	if len(kept.seen) > 0 {
		t.Errorf("statuses said what history is off for was kept: %q", kept.seen)
	}
}
