package ui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// teamUpdate is a made-up team update: pleased, then worried, with
// requests.
const teamUpdate = `The launch went very well and the whole team is proud of the new dashboard. Customers love the faster reports and the clean design.

However, the support queue is growing and response times are terrible this week. People are frustrated and some customers are angry.

Please hire two more support engineers before the end of the month. We also need to update the onboarding guide and schedule a review of the billing system.`

func TestAnalyzeTab(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	a := h.analyze
	h.ui(func() {
		h.SelectTab("Analyze")
		a.input.SetText(teamUpdate)
	})
	h.press(analyzeShortcut)
	h.waitFor(t, "the analysis", func() bool { return a.job == nil && a.shown != nil })
	res := a.shown
	h.ui(func() {
		if a.panel.summary.Text == "" || a.panel.summaryBox.Hidden {
			t.Error("no summary shown")
		}
		if !strings.HasPrefix(a.panel.average.Text, "Average: ") || len(a.panel.plot.segs) < 3 {
			t.Errorf("sentiment %q, %d passages plotted", a.panel.average.Text, len(a.panel.plot.segs))
		}
		if len(a.panel.topicRows) == 0 || len(a.panel.intentRows) == 0 {
			t.Errorf("%d topics, %d intents shown", len(a.panel.topicRows), len(a.panel.intentRows))
		}
		if !a.sourceBox.Visible() || a.input.box.Visible() {
			t.Error("the source is not shown in place of the input")
		}
	})
	if !strings.HasPrefix(h.analyzeStatus(), "Analysed ") {
		t.Errorf("status %q", h.analyzeStatus())
	}

	// Choosing a topic highlights its passage in the source.
	h.ui(func() {
		a.panel.topics.Select(0)
		seg := a.panel.topicRows[0]
		sp, ok := res.Words().Span(seg.startWord, seg.endWord)
		if !ok {
			t.Fatalf("topic %+v lies outside the document", seg)
		}
		if len(a.source.Segments) != 3 {
			t.Fatalf("the source has %d segments, want the passage between two", len(a.source.Segments))
		}
		mid, ok := a.source.Segments[1].(*widget.TextSegment)
		if !ok || mid.Text != teamUpdate[sp.Start:sp.End] || mid.Style != highlightStyle {
			t.Errorf("highlighted %+v, want %q in the highlight style", a.source.Segments[1], teamUpdate[sp.Start:sp.End])
		}
		if plain := a.source.Segments[0].(*widget.TextSegment); plain.Style == highlightStyle {
			t.Error("the text before the passage is highlighted")
		}
		if !strings.HasPrefix(a.panel.selected.Text, "Topic “"+seg.label+"”") {
			t.Errorf("selection line %q", a.panel.selected.Text)
		}
	})

	// The toggles are saved.
	h.ui(func() { test.Tap(a.checks.intents) })
	h.waitFor(t, "the toggles saved", func() bool {
		s, err := h.db.LoadSettings(t.Context())
		return err == nil && !s.AnalyzeIntents && s.AnalyzeSummary
	})

	// Export through the real dialogs (Ctrl+E on this tab).
	dir := t.TempDir()
	h.startFileDialogsIn(dir)
	h.press(exportShortcut)
	o := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.RadioGroup); return ok })
	if _, ok := o.(*widget.RadioGroup); !ok {
		t.Fatalf("no export dialog; window:\n%s", h.screen())
	}
	h.tapDialogButton(t, "Choose file…")
	h.tapDialogButton(t, "Save")
	h.waitFor(t, "the export", func() bool { return strings.HasPrefix(a.status.Text, "Saved ") })
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) != 1 {
		t.Fatalf("exported %v", files)
	}
	md, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Summary", "## Sentiment", "## Topics", "## Intents", "> "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the export lacks %q:\n%s", want, md)
		}
	}

	// History: reopen, then delete.
	h.waitFor(t, "the history", func() bool { return len(a.past) == 1 })
	h.ui(func() {
		a.onEdit()
		a.input.SetText("")
		a.shown = nil
		a.history.Select(0)
		test.Tap(a.reopen)
	})
	h.waitFor(t, "the reopened analysis", func() bool { return a.shown != nil })
	h.ui(func() {
		if a.shown.SessionID != res.SessionID || a.shown.Text != teamUpdate || len(a.panel.topicRows) == 0 {
			t.Errorf("reopened %d with %d topics", a.shown.SessionID, len(a.panel.topicRows))
		}
		a.history.Select(0)
		test.Tap(a.remove)
	})
	h.tapDialogButton(t, "Yes")
	h.waitFor(t, "the deletion", func() bool { return len(a.past) == 0 })
}

func TestAnalyzeEnglishOnly(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend, s.Language = store.BackendLocal, "de"
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatal(err)
	}
	h.ui(func() {
		h.SelectTab("Analyze")
		h.analyze.input.SetText("Guten Tag.")
		test.Tap(h.analyze.analyze)
	})
	want := "The local engine analyses English only. Set the language in Settings to English (en) to analyse text."
	h.waitFor(t, want, func() bool { return h.analyze.status.Text == want })
}

func TestFileIntelligence(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	s.FileSummary, s.FileSentiment, s.FileTopics, s.FileIntents = true, true, true, true
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatal(err)
	}
	path := writeWAV(t, "reading.wav", recording(t, reader1, reader2))
	h.ui(func() { h.captions.transcribeFile(path) })
	h.waitFor(t, "the intelligence", func() bool { return h.captions.file == nil && h.fileIntel.shown() })
	h.ui(func() {
		p := h.fileIntel.panel
		if len(p.plot.segs) == 0 {
			t.Fatal("no sentiment shown")
		}
		if !strings.HasPrefix(h.fileIntel.title.Text, "Intelligence of reading.wav") {
			t.Errorf("title %q", h.fileIntel.title.Text)
		}
		p.choose(p.plot.segs[0])
		if !strings.Contains(p.selected.Text, "0:0") || !strings.Contains(p.selected.Text, "–") {
			t.Errorf("the passage chosen is not given as a time range: %q", p.selected.Text)
		}
		// The intelligence shares the transcript's column: the history
		// beside it keeps the height of the tab (it was squeezed to one
		// row when the intelligence spanned the whole tab).
		if list, tab := h.captions.history.list.Size().Height, h.tabs.Size().Height; list < tab/2 {
			t.Errorf("the history list is %.0f high in a tab of %.0f", list, tab)
		}
	})
	// Reopened from History, the file shows its intelligence again.
	var id int64
	h.ui(h.fileIntel.hide)
	h.waitFor(t, "the file in History", func() bool {
		for _, r := range h.captions.history.rows {
			if r.s.Kind == store.KindFile {
				id = r.s.ID
			}
		}
		return id != 0
	})
	h.selectSession(t, id)
	h.ui(func() { test.Tap(h.captions.history.open) })
	h.waitFor(t, "the reopened file's intelligence", h.fileIntel.shown)

	// The toggles come from the settings, and show in the Settings tab.
	h.ui(func() {
		if f := h.settings.fileIntel.features(); f != sessions.FileFeatures(s) {
			t.Errorf("settings show %+v", f)
		}
	})
}

func (h *harness) analyzeStatus() string {
	var s string
	h.ui(func() { s = h.analyze.status.Text })
	return s
}

// TestAnalysisNotSaved: an analysis history could not keep is still
// shown, with a warning that says it was not saved and why.
func TestAnalysisNotSaved(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	a := h.analyze
	// What the window shows once it has loaded would replace the status.
	_ = h.waitReady(t)
	res := &sessions.AnalysisResult{Title: "Notes", Text: "Hello there.", Response: &api.ReadResponse{}}
	unsaved := &sessions.SaveFailedEvent{What: "the analysis", Err: errors.New("disk I/O error")}
	h.ui(func() { a.done(&analysisJob{}, "the text", analysisEnd{res: res, unsaved: unsaved}) })
	want := "Analysed Notes. Could not save the analysis to history: something went wrong: Disk I/O error."
	if got := h.analyzeStatus(); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	h.ui(func() {
		if a.shown != res || a.status.Importance != widget.WarningImportance {
			t.Errorf("shown %p (want %p), importance %v", a.shown, res, a.status.Importance)
		}
	})
}
