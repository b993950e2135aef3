package ui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestServiceChangeClearsStaleStatus: a tab that said the service could
// not be reached says so no more once another service is chosen, here
// the local engine in place of a server that is not there.
func TestServiceChangeClearsStaleStatus(t *testing.T) {
	cfg := unreachableService()
	cfg.engine = true
	h := newHarnessWith(t, cfg, Options{})
	h.waitReady(t) // the service does not answer: that is the point
	v := h.voices
	h.waitFor(t, "the voices to fail", func() bool { return strings.Contains(v.status.Text, "Cannot reach the service") })

	h.chooseBackend(store.BackendLocal)
	h.ui(func() { test.Tap(h.settings.save) })
	h.waitFor(t, "the local engine's voices", func() bool { return v.voices != nil && len(v.controls.voice.Options) > 0 })
	h.ui(func() {
		if strings.Contains(v.status.Text, "Cannot reach") || v.status.Text != voicesHint {
			t.Errorf("the Voices tab says %q after the switch to the local engine, want %q", v.status.Text, voicesHint)
		}
	})
}

// unreachableService is an App's configuration whose service is a
// server that is not there (the discard port of 127.0.0.1), with a key.
func unreachableService() harnessConfig {
	s := store.DefaultSettings()
	s.Backend, s.CustomURL = store.BackendCustom, "http://127.0.0.1:9"
	key := func(k string) string {
		if k == sessions.EnvAPIKey {
			return "a-key-for-a-server-that-is-not-there"
		}
		return ""
	}
	return harnessConfig{settings: &s, getenv: key}
}

// readyLocalHarness is an App on the local engine, with miniaudio's null
// speaker, ready.
func readyLocalHarness(t *testing.T) *harness {
	t.Helper()
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newVoicesHarness(t, s)
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	return h
}

// switchingMics lists no microphone until plugged, then one.
type switchingMics struct {
	mu      sync.Mutex
	plugged bool
}

func (m *switchingMics) plug() {
	m.mu.Lock()
	m.plugged = true
	m.mu.Unlock()
}

func (m *switchingMics) Devices(context.Context) ([]device.Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.plugged {
		return nil, nil
	}
	return []device.Device{{ID: fakeMicID, Name: "USB Microphone"}}, nil
}

func (m *switchingMics) Open(ctx context.Context, id string) (audio.Source, error) {
	return noMics{}.Open(ctx, id)
}

// TestRefreshClearsNoMicrophone: "No microphone found" goes once Refresh
// finds one, in the Captions tab and in the Agent tab, where Start said
// it; the microphone is offered.
func TestRefreshClearsNoMicrophone(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	mics := &switchingMics{}
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s, mics: mics}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	c, a := h.captions, h.agent
	h.waitFor(t, "no microphone", func() bool { return strings.HasPrefix(c.status.Text, "No microphone found") })
	h.waitFor(t, "the agent's models", func() bool { return len(a.models) > 0 && !a.start.Disabled() })
	h.ui(func() { test.Tap(a.start) })
	h.waitFor(t, "the agent's refusal", func() bool { return strings.HasPrefix(a.status.Text, "No microphone found") })

	mics.plug()
	h.ui(func() { test.Tap(c.micRefresh) })
	h.waitFor(t, "the microphone", func() bool { return len(c.mic.Options) > 1 })
	h.ui(func() {
		if strings.Contains(c.status.Text, "No microphone") {
			t.Errorf("the Captions tab still says %q", c.status.Text)
		}
		if strings.Contains(a.status.Text, "No microphone") {
			t.Errorf("the Agent tab still says %q", a.status.Text)
		}
	})
}
