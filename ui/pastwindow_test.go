package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

// TestPastSessionWindowWhileLive: while live captions run, a past
// session opens in a window of its own, with its captions and its player,
// instead of being refused; the live view is left as it was; opening it
// again brings the same window forward; closing it stops its player.
func TestPastSessionWindowWhileLive(t *testing.T) {
	release := make(chan struct{})
	mics := &fakeMics{samples: recording(t, reader1), speed: 2, holds: []hold{{at: 16000, release: release}}}
	h := newHarnessWith(t, harnessConfig{engine: true, mics: mics,
		speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	past := savePlayedSession(t, h.db, true)
	h.selectTestMic(t)
	c := h.captions
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the session to be live", func() bool { return c.live != nil })
	windows := func() int { return len(fyne.CurrentApp().Driver().AllWindows()) }
	var before int
	h.ui(func() {
		before = windows()
		c.openSession(past)
	})
	var pw *pastWindow
	h.waitFor(t, "the past session in its own window", func() bool {
		pw = h.pastWindows[past.ID]
		return pw != nil && len(pw.view.captions) == len(playedCaptions) && pw.player.kept != nil
	})
	h.ui(func() {
		if got := windows(); got != before+1 {
			t.Errorf("%d windows after opening a past session while live, want %d", got, before+1)
		}
		if got := pw.window.Title(); got != "Played back · Earshot" {
			t.Errorf("the window is titled %q", got)
		}
		if !pw.player.bar.Visible() || !strings.Contains(pw.status.Text, "in its own window") {
			t.Errorf("the window's player shows %v, its status %q", pw.player.bar.Visible(), pw.status.Text)
		}
		var texts []string
		walk(pw.window.Content(), func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Label); ok {
				texts = append(texts, l.Text)
			}
		})
		if all := strings.Join(texts, "\n"); !strings.Contains(all, "four five six") {
			t.Errorf("the window does not show the past captions:\n%s", all)
		}
		if c.live == nil || c.shown.id == past.ID {
			t.Error("the live session's view was replaced")
		}
		// The same session again: the same window.
		c.openSession(past)
		if got := windows(); got != before+1 || h.pastWindows[past.ID] != pw {
			t.Errorf("opening it again made %d windows", got-before)
		}
		// Space plays in that window.
		pw.window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeySpace})
		if !pw.player.isPlaying() {
			t.Error("space in the past session's window did not play it")
		}
	})
	h.waitFor(t, "the window's player playing", func() bool { return pw.player.playing != nil })
	h.ui(func() { pw.window.Close() })
	h.waitFor(t, "the window gone, its player stopped", func() bool {
		return h.pastWindows[past.ID] == nil && !pw.player.isPlaying() && pw.player.kept == nil
	})
	// From the History tab, a caption found by a search: its window,
	// at that caption, and the History tab stays in front.
	h.ui(func() { h.SelectTab("History"); h.history.search.SetText("five") })
	h.waitFor(t, "the hit", func() bool { return len(h.history.rows) == 1 && h.history.rows[0].hasAt })
	h.selectHistory(t, past.ID)
	h.ui(func() { test.Tap(h.history.open) })
	h.waitFor(t, "the window at the caption", func() bool {
		pw = h.pastWindows[past.ID]
		return pw != nil && strings.Contains(pw.status.Text, "Opened at 0:03")
	})
	h.ui(func() {
		if got := h.tabs.Selected().Text; got != "History" {
			t.Errorf("opening in a window turned the window to the %s tab", got)
		}
		pw.window.Close()
	})
	close(release)
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the live session to stop", func() bool { return c.live == nil })
}
