package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestUsageView: a request made through the app appears in the usage the
// Service tab shows, from an engine of the test's own.
func TestUsageView(t *testing.T) {
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", err)
	}
	t.Cleanup(func() { l.Close() })
	local := func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil }
	h := newHarnessWith(t, harnessConfig{local: local}, Options{})
	h.waitShown(t)
	u := h.service.usage
	h.waitFor(t, "the usage before any request", func() bool {
		return !u.loading && len(u.rows) == 1 && u.project.Text == "Earshot local engine"
	})
	h.ui(func() {
		for _, ti := range h.tabs.Items {
			if ti.Text == "Service" {
				h.tabs.Select(ti)
			}
		}
		h.service.sections.SelectIndex(1)
	})
	h.assertShows(t, "Usage", "Earshot local engine", "None (nothing is charged, or no prepaid balance)")

	text := "Usage counts this one analysis."
	if _, err := h.ws.Analyze(t.Context(), sessions.AnalysisInput{Text: text}, sessions.AllFeatures(), nil); err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	// The engine records a request once its handler has returned, a
	// moment after the answer: show the usage again until it is there.
	deadline := time.Now().Add(patience)
	for {
		h.ui(func() { test.Tap(u.show) })
		done := false
		h.waitFor(t, "an answer", func() bool { return !u.loading })
		h.ui(func() { done = len(u.rows) == 2 && u.rows[1].Requests == 1 })
		if done || time.Now().After(deadline) {
			break
		}
	}
	h.ui(func() {
		if len(u.rows) != 2 || u.rows[0].Requests != 1 || u.rows[0].Day != time.Now().UTC().Format(api.ManagementDate) || u.rows[1].Day != "Total" {
			t.Errorf("rows %+v, want today's one request and the total", u.rows)
		}
	})

	h.ui(func() { u.period.SetSelectedIndex(0) })
	h.waitFor(t, "the last 7 days", func() bool { return !u.loading && len(u.rows) == 2 })
	h.assertShows(t, "Last 7 days", "Total")
}

// TestUsageRegionalMessage: on a regional backend the view says plainly
// why there is no usage.
func TestUsageRegionalMessage(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = sessions.BackendHosted
	s.Region = "eu"
	secrets := &store.Memory{}
	if err := secrets.Set("usage-view-key-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, harnessConfig{secrets: secrets, settings: &s, svc: &fakeService{answer: answers(result{info: localInfo})}}, Options{})
	h.waitShown(t)
	u := h.service.usage
	h.waitFor(t, "the regional message", func() bool {
		return !u.loading && u.status.Text != "" && u.status.Importance == widget.WarningImportance
	})
	h.ui(func() {
		if want := "Usage is kept on the service's main host only"; len(u.status.Text) < len(want) || u.status.Text[:len(want)] != want {
			t.Errorf("status %q, want the regional message", u.status.Text)
		}
	})
}
