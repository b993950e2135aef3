package ui

import (
	"strings"
	"testing"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestDisabledControlsSayWhy: a control that is off for a reason the
// screen does not show says why beside it: Speak turn by turn for a voice
// that is not turn-based, the region for the local engine, Re-run for an
// entry whose audio was not kept, Analyze with no analysis ticked.
func TestDisabledControlsSayWhy(t *testing.T) {
	h := readyLocalHarness(t)

	// Voices: an aura voice has no turn by turn.
	v := h.voices
	h.ui(func() { h.SelectTab("Voices") })
	h.waitFor(t, "the voices", func() bool { return v.controls.selectedVoice() != "" })
	var line string
	h.ui(func() {
		line = v.off.line.Text
		name := v.controls.selectedVoice()
		if sessions.Expressive(name) {
			t.Fatalf("the voice chosen, %s, is turn-based", name)
		}
		if !v.controls.turns.Disabled() {
			t.Errorf("Speak turn by turn is on for %s", name)
		}
		if !v.off.line.Visible() || !strings.Contains(v.off.line.Text, "Speak turn by turn are for turn-based voices") {
			t.Errorf("the Voices tab says %q of why Speak turn by turn is off", v.off.line.Text)
		}
		if !strings.Contains(v.off.line.Text, "Save as saves what was spoken") {
			t.Errorf("the Voices tab says %q of why Save as is off", v.off.line.Text)
		}
	})
	// On screen, word-wrapped.
	if !strings.Contains(h.screen(), "Save as saves what was spoken") {
		t.Errorf("the window does not show %q", line)
	}

	// Settings: the local engine has no region.
	h.ui(func() {
		st := h.settings
		if !st.region.Disabled() {
			t.Error("the region is on for the local engine")
		}
		if hint := st.forms[0].Items[3].HintText; !strings.Contains(hint, "local engine") {
			t.Errorf("the region's hint says %q", hint)
		}
	})

	// History: an entry with no audio kept cannot be run again.
	id := seedHistory(t, h.db, store.KindFile, "Lecture.wav", clockTime, "tides and the moon")
	h.ui(func() { h.SelectTab("History"); h.history.reload() })
	h.waitHistory(t, "the entry", id)
	h.selectHistory(t, id)
	h.waitFor(t, "why Re-run is off", func() bool {
		return h.history.rerun.Disabled() && strings.Contains(h.history.off.line.Text, "Re-run needs the entry's audio")
	})

	// Analyze: nothing ticked.
	h.ui(func() {
		a := h.analyze
		a.input.SetText("The harvest was good this year.")
		a.checks.set(sessions.Features{})
		a.updateControls()
		if !a.analyze.Disabled() || !strings.Contains(a.off.line.Text, "Tick at least one analysis") {
			t.Errorf("Analyze off: %v, the tab says %q", a.analyze.Disabled(), a.off.line.Text)
		}
	})
}
