package ui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/store"
)

func TestLazyTabRunsWaitingWorkInOrderOnce(t *testing.T) {
	var l lazyTab
	var got []string
	builds := 0
	content := l.init(func() fyne.CanvasObject {
		builds++
		got = append(got, "build")
		return widget.NewLabel("built")
	})
	l.do(func() { got = append(got, "first") })
	l.do(func() {
		got = append(got, "second")
		l.do(func() { got = append(got, "nested") }) // built by now: runs at once
	})
	if len(got) != 0 || len(content.Objects) != 0 {
		t.Fatalf("before ensure: ran %v, content %v", got, content.Objects)
	}
	l.ensure()
	l.ensure()
	if want := []string{"build", "first", "second", "nested"}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	if builds != 1 || len(content.Objects) != 1 {
		t.Errorf("%d builds, %d objects in the content; want 1 and 1", builds, len(content.Objects))
	}
	l.do(func() { got = append(got, "after") })
	if got[len(got)-1] != "after" {
		t.Errorf("do on a built tab did not run at once: %v", got)
	}
}

// TestTabsBuiltWhenFirstShown: the window opens with only the Captions
// tab built; each other tab is built when first shown and then shows what
// the app learnt while it was not built: the saved settings, the key's
// status, the microphones and the service's models.
func TestTabsBuiltWhenFirstShown(t *testing.T) {
	saved := store.DefaultSettings()
	saved.Language = "en-GB"
	saved.InputDevice = fakeMicID
	h := newHarnessWith(t, harnessConfig{
		svc:      &fakeService{answer: answers(result{info: localInfo})},
		mics:     &fakeMics{},
		settings: &saved,
		lazyTabs: true,
	}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	// Listed: before, the Captions tab offers the saved microphone as
	// not connected, which makes two options too.
	h.waitFor(t, "the microphones to be listed", func() bool { return slices.Contains(h.captions.mic.Options, "Test recording") })

	h.ui(func() {
		for i, l := range h.lazyTabs {
			if l != nil && l.built {
				t.Errorf("tab %s was built before it was shown", h.tabs.Items[i].Text)
			}
		}
		if h.settings.save != nil || h.service.table != nil || h.converse.source.picker != nil {
			t.Error("widgets of tabs not shown exist")
		}
	})
	h.assertShows(t, "Connected to Local engine")

	h.ui(func() { h.SelectTab("Settings") })
	h.ui(func() {
		if !h.settings.ui.built {
			t.Fatal("Settings not built when shown")
		}
		if got := h.settings.language.Text; got != "en-GB" {
			t.Errorf("language shown %q, want the saved en-GB", got)
		}
		if got := h.settings.input.Selected; got != "Test recording" {
			t.Errorf("microphone shown %q, want the saved Test recording", got)
		}
		if got := h.settings.keyInUse.Text; got == "Checking…" {
			t.Errorf("key status still %q", got)
		}
		if !slices.Contains(h.settings.model.Options, "nova-3") {
			t.Errorf("models offered %v, want the service's nova-3", h.settings.model.Options)
		}
		if h.settings.dirty() {
			t.Error("the settings shown differ from the saved ones")
		}
	})

	h.ui(func() { h.tabs.SelectIndex(7) }) // as a click on the tab does (Service)
	h.assertShows(t, "http://127.0.0.1:40123", "Models (2)", "aura-2-thalia-en")

	h.ui(func() { h.SelectTab("Conversation") })
	h.ui(func() {
		if got := h.converse.source.picker.Options; !slices.Contains(got, "Test recording") {
			t.Errorf("conversation sources %v, want the listed microphone", got)
		}
	})
}
