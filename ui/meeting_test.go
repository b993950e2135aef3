package ui

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/store"
)

// meetingMics are a microphone (a reader) and the computer's sound (a
// card player), both replayed.
type meetingMics struct {
	you, others *fakeMics
}

const fakeSystemID = "test-speakers.monitor"

func (m *meetingMics) Devices(ctx context.Context) ([]device.Device, error) {
	return m.you.Devices(ctx)
}

func (m *meetingMics) SystemDevices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: fakeSystemID, Name: "Sound from Test speakers", Default: true}}, nil
}

func (m *meetingMics) Open(ctx context.Context, id string) (audio.Source, error) {
	if id == fakeSystemID {
		return m.others.Open(ctx, id)
	}
	return m.you.Open(ctx, id)
}

// TestMeetingCaptions: the picker offers the computer's sound, alone and
// with the microphone; chosen, it is kept in the settings, and captions
// of both say who spoke, You or Others.
func TestMeetingCaptions(t *testing.T) {
	mics := &meetingMics{
		you:    &fakeMics{samples: recording(t, reader1, reader2), speed: 3},
		others: &fakeMics{samples: recording(t, cards1, cards2), speed: 3},
	}
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{engine: true, mics: mics, settings: &s}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	c := h.captions
	const both = "Microphone and sound from Test speakers"
	h.waitFor(t, "the sources to be listed", func() bool { return len(c.mic.Options) == 4 })
	h.ui(func() {
		if got := strings.Join(c.mic.Options, "|"); got != defaultMic+"|Test recording|Sound from Test speakers|"+both {
			t.Errorf("the picker offers %q", got)
		}
		c.mic.SetSelected(both)
	})
	h.waitFor(t, "the choice to be saved", func() bool { return c.settings.CaptureSource == store.CaptureBoth })
	saved, err := h.db.LoadSettings(t.Context())
	if err != nil || saved.CaptureSource != store.CaptureBoth || saved.SystemDevice != fakeSystemID {
		t.Fatalf("saved %q, %q, %v", saved.CaptureSource, saved.SystemDevice, err)
	}
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "captions of both sides", func() bool {
		all := strings.Join(finalsOf(c.view.lines()), "\n")
		return strings.Contains(all, "|You|") && strings.Contains(all, "|Others|")
	})
	h.ui(func() {
		if !strings.Contains(c.info.Text, "Sound from Test speakers") {
			t.Errorf("the session's source reads %q", c.info.Text)
		}
		test.Tap(c.start)
	})
	h.waitFor(t, "the end", func() bool { return c.live == nil && !c.starting })
}
