package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// diarizing is the default settings with speaker labels on.
func diarizing() *store.Settings {
	s := store.DefaultSettings()
	s.Diarize = true
	return &s
}

// liveHarness is an App on the local engine whose one microphone
// replays the two-speaker conversation at speed times real time.
func liveHarness(t *testing.T, speed float64, loop bool) *harness {
	t.Helper()
	mics := &fakeMics{samples: recording(t, twoSpeakers...), speed: speed, loop: loop}
	h := newHarnessWith(t, harnessConfig{engine: true, mics: mics, settings: diarizing()}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	h.selectTestMic(t)
	return h
}

// selectTestMic picks the replayed recording in the Captions tab's
// microphone picker, once the microphones are listed, and waits until
// the choice is saved.
func (h *harness) selectTestMic(t *testing.T) {
	t.Helper()
	h.waitFor(t, "the microphones to be listed", func() bool { return len(h.captions.mic.Options) == 2 })
	h.ui(func() { h.captions.mic.SetSelected("Test recording") })
	h.waitFor(t, "the microphone to be saved", func() bool { return h.captions.settings.InputDevice == fakeMicID })
	s, err := h.db.LoadSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.InputDevice != fakeMicID {
		t.Errorf("saved input device = %q, want %q", s.InputDevice, fakeMicID)
	}
}

// captionLines reads the caption view's rows (see captionView.lines).
func (h *harness) captionLines() []string {
	var out []string
	h.ui(func() { out = h.captions.view.lines() })
	return out
}

// interim returns the interim row shown, if any.
func interimOf(lines []string) (string, bool) {
	if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], "~") {
		return lines[n-1], true
	}
	return "", false
}

func finalsOf(lines []string) []string {
	if _, ok := interimOf(lines); ok {
		return lines[:len(lines)-1]
	}
	return lines
}

// historyTitles lists the titles the History list shows, in order.
func (h *harness) historyTitles() []string {
	var out []string
	h.ui(func() {
		for _, r := range h.captions.history.rows {
			out = append(out, r.s.Title)
		}
	})
	return out
}

func TestLiveCaptions(t *testing.T) {
	testStart := time.Now()
	h := liveHarness(t, 1, true)
	c := h.captions

	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the session to be live", func() bool { return c.live != nil && c.status.Text == "Live" })
	h.ui(func() {
		if c.start.Text != "Stop" {
			t.Errorf("while live the Start button reads %q, want Stop", c.start.Text)
		}
		if c.mute.Disabled() || c.openFile.Disabled() == false || !c.mic.Disabled() {
			t.Errorf("while live: Mute disabled=%v, Open file disabled=%v, microphone disabled=%v; want false, true, true",
				c.mute.Disabled(), c.openFile.Disabled(), c.mic.Disabled())
		}
	})
	h.assertShows(t, "Live captions", "Live")

	// The words appear as interim text first, then are replaced by the
	// final caption that ends them.
	var firstInterim string
	h.waitFor(t, "an interim caption", func() bool {
		l, ok := interimOf(c.view.lines())
		firstInterim = l
		return ok
	})
	if !strings.Contains(firstInterim, "|") || len(strings.TrimSpace(firstInterim[strings.LastIndex(firstInterim, "|")+1:])) == 0 {
		t.Errorf("interim row %q has no text", firstInterim)
	}
	h.waitFor(t, "the level meter to move", func() bool { return c.level.fraction > 0 })
	h.waitFor(t, "a final caption", func() bool { return len(finalsOf(c.view.lines())) > 0 })
	h.ui(func() {
		if !c.view.hint.Hidden {
			t.Error("the hint stays over the captions")
		}
	})

	// Both speakers of the conversation are labelled.
	h.waitFor(t, "both speakers' captions", func() bool {
		all := strings.Join(finalsOf(c.view.lines()), "\n")
		return strings.Contains(all, "|Speaker 1|") && strings.Contains(all, "|Speaker 2|")
	})

	// Mute: the state is shown, and the meter stops.
	h.ui(func() { test.Tap(c.mute) })
	h.waitFor(t, "the muted state", func() bool { return strings.HasPrefix(c.status.Text, "Muted") })
	h.ui(func() {
		if c.mute.Text != "Unmute" {
			t.Errorf("while muted the Mute button reads %q, want Unmute", c.mute.Text)
		}
		if c.level.fraction != 0 || !math.IsInf(c.level.dbfs, -1) {
			t.Errorf("while muted the level meter shows %.2f (%v dBFS), want it empty", c.level.fraction, c.level.dbfs)
		}
	})
	h.assertShows(t, "Muted: no audio is sent, and the connection is kept open.", "Unmute")
	// The microphone still reports levels to the session: the meter
	// stays empty all the same, however many of them arrive.
	var seen *sessions.LevelEvent
	h.ui(func() { seen = c.live.level })
	for range 6 {
		h.waitFor(t, "a level reported while muted", func() bool {
			l := c.live.level
			if l == seen {
				return false
			}
			seen = l
			return true
		})
	}
	h.ui(func() {
		if c.level.fraction != 0 {
			t.Errorf("the level meter moved while muted: %.2f", c.level.fraction)
		}
	})

	h.ui(func() { test.Tap(c.mute) })
	h.waitFor(t, "the live state again", func() bool { return c.status.Text == "Live" && c.mute.Text == "Mute" })
	h.waitFor(t, "the level meter to move again", func() bool { return c.level.fraction > 0 })

	stopAt := time.Now()
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the session to stop", func() bool { return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ") })
	t.Logf("stop took %v; test ran %v", time.Since(stopAt), time.Since(testStart))

	lines := h.captionLines()
	if _, ok := interimOf(lines); ok {
		t.Errorf("an interim row stays after Stop: %q", lines)
	}
	finals := finalsOf(lines)
	want := "Stopped. " + plural(len(finals), "caption") + " saved to history."
	if got := h.statusText(); got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	h.ui(func() {
		if c.start.Text != "Start" || c.start.Disabled() || !c.mute.Disabled() {
			t.Errorf("after Stop: Start reads %q (disabled %v), Mute disabled %v", c.start.Text, c.start.Disabled(), c.mute.Disabled())
		}
		if c.level.fraction != 0 {
			t.Errorf("after Stop the level meter shows %.2f", c.level.fraction)
		}
	})

	// The session is in history, with the captions shown.
	h.waitFor(t, "the session in the History list", func() bool {
		return len(c.history.rows) == 1 && c.history.rows[0].s.Status == store.StatusDone
	})
	sess := h.historyTitles()
	if sess[0] != "Live captions" {
		t.Errorf("history lists %q, want Live captions", sess)
	}
	var id int64
	h.ui(func() { id = c.history.rows[0].s.ID })
	segs, err := h.db.Segments(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != len(finals) {
		t.Errorf("history holds %d captions, the view showed %d", len(segs), len(finals))
	}
	for i, s := range segs {
		if i < len(finals) && !strings.HasSuffix(finals[i], "|"+strings.TrimSpace(s.Text)) {
			t.Errorf("caption %d: saved %q, shown %q", i, s.Text, finals[i])
		}
	}
	h.assertShows(t, "Live captions")
}

func TestLiveShortcuts(t *testing.T) {
	h := liveHarness(t, 1, true)
	c := h.captions

	// The shortcuts work from another tab: they bring the Captions tab.
	h.ui(func() { h.SelectTab("Settings") })
	h.press(startShortcut)
	h.waitFor(t, "Ctrl+L to start live captions", func() bool { return c.live != nil && c.status.Text == "Live" })
	h.ui(func() {
		if got := h.tabs.Selected().Text; got != "Captions" {
			t.Errorf("after Ctrl+L the %s tab is open, want Captions", got)
		}
	})

	h.press(muteShortcut)
	h.waitFor(t, "Ctrl+M to mute", func() bool { return strings.HasPrefix(c.status.Text, "Muted") && c.mute.Text == "Unmute" })
	h.press(muteShortcut)
	h.waitFor(t, "Ctrl+M to unmute", func() bool { return c.status.Text == "Live" && c.mute.Text == "Mute" })

	h.press(startShortcut)
	h.waitFor(t, "Ctrl+L to stop live captions", func() bool { return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ") })
	h.waitFor(t, "the session in the History list", func() bool { return len(c.history.rows) == 1 })

	// With nothing live, Ctrl+M does nothing.
	h.press(muteShortcut)
	h.ui(func() {
		if !strings.HasPrefix(c.status.Text, "Stopped. ") {
			t.Errorf("Ctrl+M with nothing live changed the status to %q", c.status.Text)
		}
	})
}
