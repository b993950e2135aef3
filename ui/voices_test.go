package ui

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestVoicesTab drives the Voices tab on the local engine, playing
// through miniaudio's null backend: the filters narrow the voices, the
// sliders follow the voice chosen, Play (Ctrl+Enter) draws the waveform
// and shows the time to first audio, the synthesis is listed in history,
// Save as writes the chosen format through the real file dialog, and
// Stop (Esc) cuts a long text short.
func TestVoicesTab(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newVoicesHarness(t, s)
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	v := h.voices
	h.ui(func() {
		if !h.SelectTab("Voices") {
			t.Fatal("no Voices tab")
		}
	})
	h.waitFor(t, "the voices to be listed", func() bool { return len(v.controls.all) > 0 && v.controls.selectedVoice() != "" })

	// Filters: Spanish narrows the list to Spanish voices.
	h.ui(func() {
		// Languages are offered by name, not as bare codes.
		for _, o := range v.controls.language.Options {
			if len(o) <= 3 {
				t.Errorf("the language filter offers the bare code %q", o)
			}
		}
		v.controls.language.SetSelected("Spanish (es)")
	})
	h.ui(func() {
		if len(v.controls.shown) == 0 {
			t.Fatal("no Spanish voice")
		}
		for _, x := range v.controls.shown {
			if x.Language != "es" {
				t.Errorf("the Spanish filter shows %s", x.Name)
			}
		}
	})
	h.ui(func() { v.controls.language.SetSelected(anyLanguage) })

	// Sliders follow the voice: a first-generation voice has a fixed
	// speed and no expressivity; a flux voice has both.
	pick := func(name string) {
		h.ui(func() {
			for i, x := range v.controls.shown {
				if x.Name == name {
					v.controls.voice.SetSelectedIndex(i)
					return
				}
			}
			t.Fatalf("%s is not offered", name)
		})
	}
	pick("aura-asteria-en")
	h.ui(func() {
		if !v.controls.speed.Disabled() || !v.controls.expr.Disabled() || !v.controls.turns.Disabled() || !strings.Contains(v.controls.speedWhy.Text, "aura-2") {
			t.Errorf("aura-asteria-en: speed disabled %v, expressivity disabled %v, reason %q", v.controls.speed.Disabled(), v.controls.expr.Disabled(), v.controls.speedWhy.Text)
		}
	})
	pick("flux-kit-en")
	h.ui(func() {
		if v.controls.speed.Disabled() || v.controls.expr.Disabled() || v.controls.speed.Min != 0.5 || v.controls.speed.Max != 1.5 || v.controls.speed.Step != 0.05 {
			t.Errorf("flux-kit-en: speed disabled %v (%g..%g step %g), expressivity disabled %v", v.controls.speed.Disabled(), v.controls.speed.Min, v.controls.speed.Max, v.controls.speed.Step, v.controls.expr.Disabled())
		}
	})
	pick("aura-2-thalia-en")
	h.ui(func() {
		if v.controls.speed.Disabled() || v.controls.speed.Min != 0.7 || !v.controls.expr.Disabled() {
			t.Errorf("aura-2-thalia-en: speed disabled %v from %g, expressivity disabled %v", v.controls.speed.Disabled(), v.controls.speed.Min, v.controls.expr.Disabled())
		}
		v.controls.speed.SetValue(1.2)
		test.Type(v.controls.text.entry, "Hello from the voices tab.")
	})

	// Play with Ctrl+Enter: the waveform fills, the time to first audio
	// shows, the synthesis lands in history, the settings keep the voice.
	h.press(playShortcut)
	h.waitFor(t, "the synthesis to end", func() bool {
		return !v.busy() && len(v.run.kept) == 1 && strings.HasPrefix(v.status.Text, "Spoke")
	})
	h.ui(func() {
		if v.run.wave.samples != len(v.run.kept[0].pcm) || v.run.wave.Duration() <= 0 {
			t.Errorf("the waveform holds %d samples of %d", v.run.wave.samples, len(v.run.kept[0].pcm))
		}
		if !strings.Contains(v.run.metrics.Text, "Time to first audio: ") || !strings.Contains(v.run.metrics.Text, "playback started") {
			t.Errorf("metrics %q", v.run.metrics.Text)
		}
	})
	h.waitFor(t, "the history", func() bool { return len(v.past.items) == 1 })
	// Compare A/B becomes possible as soon as a voice B is picked.
	h.ui(func() {
		if !v.run.compare.Disabled() {
			t.Error("Compare A/B is possible with no voice B")
		}
		v.controls.voiceB.SetSelectedIndex(0)
		if v.run.compare.Disabled() {
			t.Errorf("Compare A/B stays disabled with voice B %q picked", v.controls.voiceB.Selected)
		}
	})
	// The history row gives the text spoken room to be read, not "Hel…".
	h.ui(func() {
		title := v.past.items[0].Title
		var label *widget.Label
		walk(v.past.list, func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Label); ok && l.Text == title {
				label = l
			}
		})
		if label == nil {
			t.Fatalf("no history row shows %q", title)
		}
		want := fyne.MeasureText(string([]rune(title)[:min(20, len([]rune(title)))]), theme.TextSize(), label.TextStyle).Width
		if got := label.Size().Width - 2*theme.InnerPadding(); got < want {
			t.Errorf("the history row gives the title %.0f of the %.0f its first 20 characters need", got, want)
		}
	})
	saved, err := h.db.LoadSettings(t.Context())
	if err != nil || saved.Voice != "aura-2-thalia-en" || saved.SpeakSpeed != 1.2 {
		t.Errorf("settings saved %q at %v (%v)", saved.Voice, saved.SpeakSpeed, err)
	}

	// Save as: choose flac, then the real file dialog; the file decodes.
	dir := t.TempDir()
	h.startFileDialogsIn(dir)
	h.ui(func() { v.save.format.SetSelected("flac") })
	h.press(saveShortcut)
	path := filepath.Join(dir, "hello.flac")
	saveThroughDialog(t, h, "hello.flac", ".flac")
	h.waitFor(t, "the file to be saved", func() bool { return strings.HasPrefix(v.status.Text, "Saved hello.flac") })
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := audio.Decode(t.Context(), bytes.NewReader(b))
	if err != nil || buf.Container != audio.ContainerFLAC || buf.Duration() < 500e6 {
		t.Fatalf("saved %v, %v", buf, err)
	}
	// A saved file knows its length (players show it): not a stream's 0.
	if n := binary.BigEndian.Uint64(b[18:26]) & (1<<36 - 1); n != uint64(buf.Frames()) {
		t.Errorf("the saved FLAC says %d samples, it holds %d", n, buf.Frames())
	}
	h.ui(func() { v.save.format.SetSelected(api.EncodingLinear16) })
	h.press(saveShortcut)
	saveThroughDialog(t, h, "hello.wav", ".wav")
	h.waitFor(t, "the WAV file to be saved", func() bool { return strings.HasPrefix(v.status.Text, "Saved hello.wav") })
	wav, err := os.ReadFile(filepath.Join(dir, "hello.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if riff := binary.LittleEndian.Uint32(wav[4:8]); int(riff) != len(wav)-8 {
		t.Errorf("the saved WAV's RIFF size is %#x, the file %d bytes", riff, len(wav))
	}

	// Stop (Esc) cuts a long text short.
	h.ui(func() {
		v.controls.text.SetText(strings.Repeat("This text goes on for a long while so that there is time to stop it. ", 6))
	})
	h.press(playShortcut)
	h.waitFor(t, "audio", func() bool { return v.run.wave.samples > 0 })
	h.press(stopShortcut)
	h.waitFor(t, "the stop", func() bool { return !v.busy() && strings.HasPrefix(v.status.Text, "Stopped") })
	h.ui(func() {
		if l := v.run.turnLabels[0]; l == nil || !strings.Contains(l.Text, "interrupted") {
			t.Errorf("the turn does not show the interruption: %v", l)
		}
	})
}

// newVoicesHarness is newHarnessWith's App on the local engine, with
// settings saved first and a workspace whose speaker is miniaudio's null
// backend (real time, no sound card).
func newVoicesHarness(t *testing.T, s store.Settings) *harness {
	t.Helper()
	cfg := harnessConfig{engine: true, settings: &s, speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}}
	return newHarnessWith(t, cfg, Options{searchDelay: time.Millisecond})
}

// saveThroughDialog names the file in Earshot's file dialog, which
// proposes a file in dir, and saves.
func saveThroughDialog(t *testing.T, h *harness, name, ext string) {
	t.Helper()
	var e *boundedEntry
	h.waitFor(t, "the save dialog", func() bool {
		for _, o := range h.window.Canvas().Overlays().List() {
			walk(o, func(o fyne.CanvasObject) {
				if x, ok := o.(*boundedEntry); ok && x.Visible() && e == nil {
					e = x
				}
			})
		}
		return e != nil
	})
	h.ui(func() {
		if filepath.Ext(e.Text) != ext {
			t.Errorf("the save dialog proposes %q, want a %s file", e.Text, ext)
		}
		e.SetText(name)
	})
	h.tapDialogButton(t, "Save")
}

// TestSettingsSpeaker chooses the speaker the Voices tab plays on: the
// Settings tab lists the output devices and saves the one chosen.
func TestSettingsSpeaker(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newVoicesHarness(t, s)
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	st := h.settings
	h.waitFor(t, "the speakers", func() bool { return len(st.output.Options) > 1 })
	var id string
	h.ui(func() {
		if st.output.Selected != defaultSpeaker {
			t.Errorf("speaker %q before any choice, want %q", st.output.Selected, defaultSpeaker)
		}
		st.output.SetSelectedIndex(1)
		id = st.outIDs[1]
		test.Tap(st.save)
	})
	h.waitFor(t, "the speaker saved", func() bool {
		got, err := h.db.LoadSettings(t.Context())
		return err == nil && got.OutputDevice == id
	})
}

// TestPartialSynthesisShown: a synthesis history keeps as partial says so
// in the Voices tab's list and in the History tab.
func TestPartialSynthesisShown(t *testing.T) {
	s := store.Session{Model: "aura-asteria-en", Duration: 356, Status: store.StatusPartial}
	if got := historyDetail(s); got != "aura-asteria-en · 356.0 s · partial" {
		t.Errorf("Voices list: %q", got)
	}
	if got := sessionStatus(store.StatusPartial); got != "Partial" {
		t.Errorf("History: %q", got)
	}
}
