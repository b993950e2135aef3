package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// noSpeakers is a machine without a sound card, as miniaudio reports it.
type noSpeakers struct{}

func (noSpeakers) Devices(context.Context) ([]device.Device, error) { return nil, nil }
func (noSpeakers) Open(context.Context, string, int) (sessions.Player, error) {
	return nil, fmt.Errorf("audio: open speaker: %w: miniaudio: Failed to open backend device ([ALSA] snd_pcm_open() failed)", device.ErrNoOutputDevice)
}

// TestVoicesWithoutSpeaker: with no sound device, Play still makes the
// audio: it is kept, drawn as a waveform, saved to history and offered
// to save, with a plain note instead of miniaudio's words.
func TestVoicesWithoutSpeaker(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s, speakers: noSpeakers{}}, Options{searchDelay: time.Millisecond})
	v := h.voices
	h.waitFor(t, "the voices", func() bool { return len(v.controls.all) > 0 })
	h.ui(func() {
		h.SelectTab("Voices")
		v.controls.text.SetText("Nobody hears this, and it is kept.")
	})
	h.press(playShortcut)
	h.waitFor(t, "the synthesis to end", func() bool { return !v.busy() && len(v.run.kept) == 1 })
	h.ui(func() {
		want := "No speaker available: no speaker or headphones were found. The "
		if !strings.HasPrefix(v.status.Text, want) || !strings.Contains(v.status.Text, "are ready to save (Save, below), and kept in history.") {
			t.Errorf("status %q", v.status.Text)
		}
		if strings.Contains(v.status.Text, "miniaudio") || strings.Contains(v.status.Text, "ALSA") {
			t.Errorf("status %q shows the audio library's words", v.status.Text)
		}
		if len(v.run.kept[0].pcm) == 0 || v.run.wave.samples != len(v.run.kept[0].pcm) {
			t.Errorf("kept %d samples, waveform %d", len(v.run.kept[0].pcm), v.run.wave.samples)
		}
		saves := 0
		walk(v.run.results, func(o fyne.CanvasObject) {
			if b, ok := o.(*widget.Button); ok && b.Text == "Save" && !b.Disabled() {
				saves++
			}
		})
		if saves != 1 {
			t.Errorf("%d Save buttons for the audio kept", saves)
		}
	})
	h.waitFor(t, "the history", func() bool { return len(v.past.items) == 1 })
}
