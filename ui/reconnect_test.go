package ui

import (
	"regexp"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
)

// TestLiveReconnectingShown cuts the service from under a live session:
// the status bar says the session is reconnecting, how much audio it holds
// and when it tries again, the captions already shown stay, and Stop still
// ends the session: after waiting, as it says, for a connection to take
// the buffered audio (sessions' closeTimeout, 10 s), since the service
// stays down.
func TestLiveReconnectingShown(t *testing.T) {
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			l.Close()
		}
	})
	local := func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil }
	mics := &fakeMics{samples: recording(t, twoSpeakers...), speed: 3, loop: true}
	h := newHarnessWith(t, harnessConfig{local: local, mics: mics, settings: diarizing()}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	h.selectTestMic(t)
	c := h.captions

	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "a final caption", func() bool { return len(finalsOf(c.view.lines())) > 0 })
	var before []string
	h.ui(func() { before = finalsOf(c.view.lines()) })

	closed = true
	if err := l.Close(); err != nil {
		t.Fatalf("closing the engine: %v", err)
	}
	words := regexp.MustCompile(`^Reconnecting, \d+ s buffered(, retry in \d+ s)?$`)
	h.waitFor(t, "the reconnecting state", func() bool { return words.MatchString(c.status.Text) })
	h.ui(func() {
		after := finalsOf(c.view.lines())
		if len(after) < len(before) {
			t.Errorf("captions lost on the cut: %d shown before, %d after", len(before), len(after))
		}
		for i := range before {
			if i < len(after) && after[i] != before[i] {
				t.Errorf("caption %d changed on the cut: %q, was %q", i, after[i], before[i])
			}
		}
		if c.start.Text != "Stop" {
			t.Errorf("the start button reads %q while reconnecting, want Stop", c.start.Text)
		}
	})

	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the session to stop", func() bool { return c.live == nil && c.start.Text == "Start" })
}
