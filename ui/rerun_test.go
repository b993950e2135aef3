package ui

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/internal/worddiff"
	"github.com/earshot-app/earshot/store"
)

// TestRerunDialog runs a transcribed recording again from the Captions
// tab's history with base, the local engine's fast search: Re-run… is
// enabled for the entry, the dialog runs, and it shows both sides, the
// models and times, the changed words coloured and the word error rate
// of the re-run against the original; and that it is saved to history,
// or, with history off (kept in memory), that it is kept until Earshot
// closes.
func TestRerunDialog(t *testing.T) {
	t.Run("history", func(t *testing.T) { rerunDialogTest(t, "", "Saved to history as “Re-run of reading.wav”.") })
	t.Run("history off", func(t *testing.T) {
		rerunDialogTest(t, filepath.Join(testkit.ReadOnlyDir(t), "earshot", "history.db"),
			"“Re-run of reading.wav”, kept until Earshot closes (history is off).")
	})
}

func rerunDialogTest(t *testing.T, dbPath, saved string) {
	settings := store.DefaultSettings()
	settings.Backend = store.BackendLocal
	settings.Model = "nova-3"
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &settings, dbPath: dbPath}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatal(err)
	}
	path := writeWAV(t, "reading.wav", recording(t, reader1))
	first, err := h.ws.TranscribeFile(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := first.SessionID
	h.ui(func() { h.historyChanged(store.KindFile) })
	h.waitFor(t, "the entry in the history", func() bool {
		for _, r := range h.captions.history.rows {
			if r.s.ID == id {
				return true
			}
		}
		return false
	})
	h.selectSession(t, id)
	h.waitFor(t, "Re-run… enabled", func() bool { return !h.captions.history.rerunB.Disabled() })
	h.ui(func() { test.Tap(h.captions.history.rerunB) })

	se, _ := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.SelectEntry); return ok }).(*widget.SelectEntry)
	if se == nil {
		t.Fatalf("no model field in the dialog:\n%s", h.screen())
	}
	h.ui(func() { se.SetText("base") })
	h.tapDialogButton(t, "Run")

	var werLabel string
	var colored int
	h.waitFor(t, "the comparison", func() bool {
		werLabel, colored = "", 0
		for _, o := range h.window.Canvas().Overlays().List() {
			walk(o, func(o fyne.CanvasObject) {
				switch w := o.(type) {
				case *widget.Label:
					if strings.HasPrefix(w.Text, "Word error rate") {
						werLabel = w.Text
					}
				case *widget.RichText:
					for _, s := range w.Segments {
						if ts, ok := s.(*widget.TextSegment); ok && (ts.Style.ColorName == theme.ColorNameSuccess || ts.Style.ColorName == theme.ColorNameWarning || ts.Style.ColorName == theme.ColorNameError) {
							colored++
						}
					}
				}
			})
		}
		return werLabel != ""
	})

	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
	if err != nil {
		t.Fatal(err)
	}
	rerun := list[0]
	if rerun.ID == id || rerun.Details != fmt.Sprintf(`{"rerun_of":%d}`, id) || rerun.Model != "base" {
		t.Fatalf("newest file entry %+v, want the re-run of %d", rerun, id)
	}
	newText, err := h.db.ResponseText(t.Context(), rerun.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := worddiff.Compare(first.Response.Transcript(), newText)
	if want := fmt.Sprintf("Word error rate of the re-run against the original: %.1f%%", 100*d.WER()); werLabel != want {
		t.Errorf("shows %q, want %q", werLabel, want)
	}
	if d.Errors() == 0 {
		t.Errorf("base heard %q as nova-3 did", newText)
	} else if colored == 0 {
		t.Error("no word is coloured, though the two differ")
	}
	texts := strings.Join(h.texts(), "\n")
	for _, want := range []string{"Original", "Re-run", "nova-3 (pocketsphinx-en-us) · Local engine · took ", "base (pocketsphinx-en-us-fast) · Local engine · took ", saved} {
		if !strings.Contains(texts, want) {
			t.Errorf("the dialog does not show %q:\n%s", want, texts)
		}
	}
	h.tapDialogButton(t, "Close")
}

// TestRerunCancel cancels a re-run while the service works on it: the
// request ends, the dialog says so and shows no comparison, and the
// entry it began is kept as cancelled. The service is a stand-in that
// answers nothing until its request is given up.
func TestRerunCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != api.PathListen {
			http.NotFound(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	base, err := api.ParseBaseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	local := func() (api.Endpoint, api.Secret, error) { return api.Endpoint{Base: base}, "stand-in-key", nil }
	settings := store.DefaultSettings()
	settings.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{local: local, settings: &settings}, Options{})
	_ = h.waitReady(t) // the stand-in lists no models: a failure to show

	id, err := h.db.CreateSession(t.Context(), store.Session{Kind: store.KindCaptions, Title: "Lecture", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, recording(t, reader2), 16000, 1); err != nil {
		t.Fatal(err)
	}
	if err := h.db.SaveAudio(t.Context(), id, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav.Bytes()}); err != nil {
		t.Fatal(err)
	}
	s, err := h.db.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	h.ui(func() { h.showRerun(s) })
	h.tapDialogButton(t, "Run")
	select {
	case <-arrived:
	case <-time.After(patience):
		t.Fatal("the audio never reached the service")
	}
	h.tapDialogButton(t, "Cancel")
	var status string
	h.waitFor(t, "the run to end", func() bool {
		status = ""
		for _, o := range h.window.Canvas().Overlays().List() {
			walk(o, func(o fyne.CanvasObject) {
				if b, ok := o.(*widget.Button); ok && b.Text == "Run" && !b.Disabled() {
					status = "idle"
				}
			})
		}
		return status != ""
	})
	texts := strings.Join(h.texts(), "\n")
	if !strings.Contains(texts, "The request was cancelled.") || strings.Contains(texts, "Word error rate") {
		t.Errorf("after Cancel the dialog shows:\n%s", texts)
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusCancelled {
		t.Errorf("the re-run's entry: %+v (%v), want one, cancelled", list, err)
	}
	h.tapDialogButton(t, "Close")
}
