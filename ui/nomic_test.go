package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// noMics is a machine without a microphone, as the device layer reports
// it: nothing listed, and the default refusing to open.
type noMics struct{}

func (noMics) Devices(context.Context) ([]device.Device, error) { return nil, nil }
func (noMics) Open(context.Context, string) (audio.Source, error) {
	return nil, fmt.Errorf("audio: open microphone: %w: miniaudio: Failed to open backend device ([ALSA] snd_pcm_open() failed)", device.ErrNoDevice)
}

// TestNoMicrophone: with no microphone, the Captions tab says so as soon
// as it has looked, and again on Start, in plain words that point to
// Open file, not in the audio library's.
func TestNoMicrophone(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s, mics: noMics{}}, Options{})
	want := "No microphone found. Connect one, or use Open file… to transcribe a recording."
	h.waitFor(t, "the microphones listed", func() bool { return !h.micsLoading && h.captions.status.Text == want })
	h.press(startShortcut)
	h.waitFor(t, "the refusal", func() bool { return h.captions.live == nil && !h.captions.starting })
	if got := h.statusText(); !strings.HasPrefix(got, want) || strings.Contains(got, "miniaudio") {
		t.Errorf("status after Start %q, want %q", got, want)
	}
}

// zeroMics is one input that is no microphone: it gives zeros as fast as
// they are read (ALSA's null plugin did, and was offered).
type zeroMics struct{}

func (zeroMics) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: "zeros", Name: "Zeros"}}, nil
}
func (zeroMics) Open(context.Context, string) (audio.Source, error) {
	return sessions.RealTime(zeroSource{}, nil), nil
}

type zeroSource struct{}

func (zeroSource) Format() audio.Format {
	return audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
}
func (zeroSource) Read(context.Context) ([]int16, error) { return make([]int16, 320), nil }
func (zeroSource) Close() error                          { return nil }

// TestFasterThanRealTimeInput: captions from an input that runs ahead of
// the clock stop within seconds of audio, saying why, instead of
// recording hours of silence.
func TestFasterThanRealTimeInput(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s, mics: zeroMics{}}, Options{})
	h.waitFor(t, "the microphones listed", func() bool { return !h.micsLoading })
	h.press(startShortcut)
	want := "This input delivers audio faster than real time, so it is not a microphone."
	h.waitFor(t, "the refusal", func() bool {
		return h.captions.live == nil && !h.captions.starting && strings.Contains(h.captions.status.Text, want)
	})
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindCaptions})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Duration > 5 {
			t.Errorf("recorded %.0f s of audio from an input that ran for a moment", s.Duration)
		}
	}
}
