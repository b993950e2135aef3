package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// overlayHarness is an App with no engine, whose service answers at
// once, with everything it loads on screen: nothing changes the status
// bar after that but what the test does.
func overlayHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	h.waitFor(t, "the microphones to be listed", func() bool { return !h.micsLoading })
	return h
}

// overlayLines reads what the overlay shows (see overlay.lines).
func (h *harness) overlayLines() []string {
	var out []string
	h.ui(func() { out = h.overlay.lines() })
	return out
}

// overlayScreen renders the overlay's window as Fyne's markup.
func (h *harness) overlayScreen() string {
	var s string
	h.ui(func() { s = test.RenderToMarkup(h.overlay.window.Canvas()) })
	return s
}

func overlayFinal(seq int, speaker *int, text string) *sessions.FinalEvent {
	return &sessions.FinalEvent{Caption: sessions.Caption{Seq: seq, Start: float64(seq), End: float64(seq) + 1, Speaker: speaker, Text: text}}
}

func overlayInterim(speaker *int, text string) *sessions.InterimEvent {
	return &sessions.InterimEvent{Text: text, Words: []api.Word{{Word: strings.Fields(text)[0], Speaker: speaker}}}
}

// TestOverlayFollowsCaptions: the overlay shows the last lines of the
// live captions as the Captions tab shows them (events go through the
// tab's applyLive), with their speakers and the interim, and waits for
// captions with a hint.
func TestOverlayFollowsCaptions(t *testing.T) {
	h := overlayHarness(t)
	o, c := h.overlay, h.captions
	first, second := 0, 1

	h.ui(func() {
		if o.window != nil {
			t.Error("the overlay's window was made before it was first shown")
		}
		test.Tap(o.button)
		if !o.shown || o.window.Title() != "Earshot captions" {
			t.Errorf("after Overlay: shown %v, title %q", o.shown, o.window.Title())
		}
	})
	if got := h.overlayLines(); !slices.Equal(got, []string{"Captions will appear here."}) {
		t.Errorf("with no captions the overlay shows %q", got)
	}
	// Fyne's test driver has no desktop to keep a window above others:
	// the status says so in plain words.
	want := "The caption overlay is shown, but not kept above other windows: this desktop gives apps no way to ask for it."
	if got := h.statusText(); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	h.ui(func() {
		if !o.aboveKnown || o.aboveProblem != aboveUnsupported {
			t.Errorf("kept above: known %v, problem %q", o.aboveKnown, o.aboveProblem)
		}
	})

	ls := &liveSession{}
	live := func(evs ...sessions.Event) { h.ui(func() { c.applyLive(ls, evs) }) }
	live(overlayInterim(&first, "good morning every"))
	if got, want := h.overlayLines(), []string{"~Speaker 1: good morning every"}; !slices.Equal(got, want) {
		t.Errorf("overlay shows %q, want %q", got, want)
	}
	live(overlayFinal(0, &first, "Good morning everyone."),
		overlayFinal(1, &second, "Morning! Shall we start?"),
		overlayFinal(2, nil, "A caption with no speaker."),
		overlayFinal(3, &first, "Yes, the first item is the budget."),
		overlayInterim(&second, "I read the"))
	want3 := []string{"A caption with no speaker.", "Speaker 1: Yes, the first item is the budget.", "~Speaker 2: I read the"}
	if got := h.overlayLines(); !slices.Equal(got, want3) {
		t.Errorf("overlay shows %q, want %q", got, want3)
	}
	// A batch of levels alone changes nothing.
	live(&sessions.LevelEvent{RMS: -20})
	if got := h.overlayLines(); !slices.Equal(got, want3) {
		t.Errorf("after a level the overlay shows %q, want %q", got, want3)
	}
	screen := h.overlayScreen()
	for _, s := range []string{">Speaker 2: <", ">I read the<", ">Yes, the first item is the budget.<"} {
		if !strings.Contains(screen, s) {
			t.Errorf("the overlay's window does not show %q:\n%s", s, screen)
		}
	}

	// The final replaces the interim: three finals.
	live(overlayFinal(4, &second, "I read the report."))
	want3 = []string{"A caption with no speaker.", "Speaker 1: Yes, the first item is the budget.", "Speaker 2: I read the report."}
	if got := h.overlayLines(); !slices.Equal(got, want3) {
		t.Errorf("overlay shows %q, want %q", got, want3)
	}

	// Hidden, it still follows, and shows the latest when shown again.
	h.press(overlayShortcut)
	live(overlayFinal(5, &first, "Let us begin."))
	h.press(overlayShortcut)
	if got := h.overlayLines(); len(got) != 3 || got[2] != "Speaker 1: Let us begin." {
		t.Errorf("shown again, the overlay shows %q", got)
	}

	// Whatever labels the captions carry ("You", "Others" of a call)
	// lead their lines.
	h.ui(func() {
		o.setCaptions([]overlayLine{{speaker: "You", text: "Can you hear me?"}}, overlayLine{speaker: "Others", text: "Yes we"})
	})
	if got, want := h.overlayLines(), []string{"You: Can you hear me?", "~Others: Yes we"}; !slices.Equal(got, want) {
		t.Errorf("overlay shows %q, want %q", got, want)
	}
}

// TestOverlayControls: the overlay's text size and width change with its
// buttons and its own shortcuts, within limits, are saved in the
// preferences, and are restored when it is shown again, in this run and
// the next.
func TestOverlayControls(t *testing.T) {
	h := overlayHarness(t)
	o := h.overlay
	prefs := h.fyneApp.Preferences()
	h.ui(o.open)

	size := func() (fyne.Size, float32) {
		var s fyne.Size
		var ts float32
		h.ui(func() { s, ts = o.window.Canvas().Size(), overlayTheme{o: o}.Size(theme.SizeNameText) })
		return s, ts
	}
	start, text := size()
	if start != fyne.NewSize(overlayWidthDefault, overlayHeightDefault) || text != overlayTextDefault {
		t.Fatalf("the overlay opens at %v with %v pt text, want %dx%d and %d pt", start, text, overlayWidthDefault, overlayHeightDefault, overlayTextDefault)
	}

	h.ui(func() {
		test.Tap(o.larger)
		test.Tap(o.larger)
		test.Tap(o.wider)
	})
	got, text := size()
	if text != overlayTextDefault+2*overlayTextStep || got.Width != overlayWidthDefault+overlayWidthStep {
		t.Errorf("after A+ A+ Wider: %v pt, %v wide", text, got.Width)
	}
	if got.Height <= start.Height {
		t.Errorf("larger text left the window %v high, was %v", got.Height, start.Height)
	}
	if screen := h.overlayScreen(); !strings.Contains(screen, fmt.Sprintf(`textSize="%d"`, overlayTextDefault+2*overlayTextStep)) {
		t.Errorf("the captions are not drawn at %d pt:\n%s", overlayTextDefault+2*overlayTextStep, screen)
	}
	if p := prefs.Float(prefOverlayText); p != overlayTextDefault+2*overlayTextStep {
		t.Errorf("saved text size %v", p)
	}
	if p := prefs.Float(prefOverlayWidth); p != overlayWidthDefault+overlayWidthStep {
		t.Errorf("saved width %v", p)
	}

	// The overlay's own shortcuts, when it has the keyboard.
	shortcut := func(sc fyne.Shortcut) { h.ui(func() { o.typedShortcut(sc) }) }
	shortcut(overlaySmallerShortcut)
	shortcut(overlayNarrowerShortcut)
	shortcut(overlayNarrowerShortcut)
	got, text = size()
	if text != overlayTextDefault+overlayTextStep || got.Width != overlayWidthDefault-overlayWidthStep {
		t.Errorf("after Ctrl+- and Ctrl+[ twice: %v pt, %v wide", text, got.Width)
	}

	// The limits: the buttons that could go past them are disabled.
	for range 40 {
		shortcut(overlaySmallerShortcut)
		shortcut(overlayNarrowerShortcut)
	}
	h.ui(func() {
		if o.textSize != overlayTextMin || o.size.Width != overlayWidthMin {
			t.Errorf("at the limits: %v pt, %v wide", o.textSize, o.size.Width)
		}
		if !o.smaller.Disabled() || !o.narrower.Disabled() || o.larger.Disabled() || o.wider.Disabled() {
			t.Errorf("at the lower limits: A− disabled %v, Narrower %v, A+ %v, Wider %v",
				o.smaller.Disabled(), o.narrower.Disabled(), o.larger.Disabled(), o.wider.Disabled())
		}
		test.Tap(o.larger)
		test.Tap(o.wider)
		test.Tap(o.wider)
	})
	want, wantText := fyne.NewSize(overlayWidthMin+2*overlayWidthStep, 0), float32(overlayTextMin+overlayTextStep)

	// A person resizes the window: its height is kept too.
	h.ui(func() { o.window.Resize(fyne.NewSize(want.Width, 260)) })
	want.Height = 260
	h.waitFor(t, "the new size to be saved", func() bool {
		return prefs.Float(prefOverlayHeight) == 260 && prefs.Float(prefOverlayWidth) == float64(want.Width)
	})

	// Hidden and shown again: as it was.
	h.ui(func() {
		o.hide()
		if o.shown || o.button.Importance != widget.MediumImportance {
			t.Errorf("hidden: shown %v, toggle importance %v", o.shown, o.button.Importance)
		}
		o.window.Resize(fyne.NewSize(500, 500)) // not laid out as the overlay's: it is hidden
		o.open()
		if !o.shown || o.button.Importance != widget.HighImportance {
			t.Errorf("shown: shown %v, toggle importance %v", o.shown, o.button.Importance)
		}
	})
	if got, text := size(); got != want || text != wantText {
		t.Errorf("shown again at %v with %v pt, want %v with %v pt", got, text, want, wantText)
	}

	// Where the desktop said the window is, is saved once it stops moving.
	h.ui(func() { o.moved(o.gen, 140, 620) })
	h.waitFor(t, "the place to be saved", func() bool {
		return prefs.Bool(prefOverlayPlaced) && prefs.Int(prefOverlayX) == 140 && prefs.Int(prefOverlayY) == 620
	})
	h.ui(func() { o.moved(o.gen-1, 1, 1) }) // from an earlier showing: too late
	h.ui(o.hide)

	// The next run reads them back.
	h.ui(func() {
		next := newOverlay(h.App)
		if next.textSize != wantText || next.size != want || !next.placed || next.x != 140 || next.y != 620 {
			t.Errorf("the next run's overlay: %v pt, %v, placed %v at %d,%d; want %v pt, %v, at 140,620",
				next.textSize, next.size, next.placed, next.x, next.y, wantText, want)
		}
	})
}

// TestOverlayShortcut: Ctrl+Shift+O shows and hides the overlay from the
// main window, whatever tab is open, and hides it from the overlay
// itself; the Overlay button says whether it is shown.
func TestOverlayShortcut(t *testing.T) {
	h := overlayHarness(t)
	o := h.overlay
	h.ui(func() { h.SelectTab("Settings") })
	h.press(overlayShortcut)
	h.ui(func() {
		if !o.shown || o.button.Importance != widget.HighImportance {
			t.Errorf("after Ctrl+Shift+O: shown %v, toggle importance %v", o.shown, o.button.Importance)
		}
		if got := h.tabs.Selected().Text; got != "Settings" {
			t.Errorf("Ctrl+Shift+O opened the %s tab", got)
		}
		o.typedShortcut(overlayShortcut)
		if o.shown || o.button.Importance != widget.MediumImportance {
			t.Errorf("after Ctrl+Shift+O in the overlay: shown %v, toggle importance %v", o.shown, o.button.Importance)
		}
	})
	h.press(overlayShortcut)
	h.press(overlayShortcut)
	h.ui(func() {
		if o.shown {
			t.Error("Ctrl+Shift+O twice left the overlay shown")
		}
	})
	// The Captions menu lists it, so that a person can find it.
	found := false
	h.ui(func() {
		for _, m := range h.window.MainMenu().Items {
			for _, it := range m.Items {
				if it.Shortcut != nil && it.Shortcut.ShortcutName() == overlayShortcut.ShortcutName() {
					found = m.Label == "Captions"
				}
			}
		}
	})
	if !found {
		t.Error("the Captions menu has no item with Ctrl+Shift+O")
	}
}

// TestOverlayLiveCaptions: live captions of a real recording on the local
// engine reach the overlay: every time the caption view changes, the
// overlay shows its last lines, speakers and interim included.
func TestOverlayLiveCaptions(t *testing.T) {
	h := liveHarness(t, 3, false)
	c, o := h.captions, h.overlay
	h.ui(func() { test.Tap(o.button) })

	// Every state the window passes through: the overlay agrees with the
	// view.
	var (
		mismatch string
		interims int
		speakers = map[string]bool{}
	)
	h.ui(func() {
		h.observe = func() {
			view := c.view.lines()
			var want []string
			for _, l := range view {
				interim := strings.HasPrefix(l, "~")
				parts := strings.SplitN(strings.TrimPrefix(l, "~"), "|", 3)
				s := parts[2]
				if parts[1] != "" {
					s = parts[1] + ": " + s
				}
				if interim {
					s = "~" + s
					interims++
				}
				want = append(want, s)
			}
			if len(want) > overlayLines {
				want = want[len(want)-overlayLines:]
			}
			if len(want) == 0 {
				want = []string{overlayHint}
			}
			got := o.lines()
			if !slices.Equal(got, want) && mismatch == "" {
				mismatch = fmt.Sprintf("the overlay shows %q, the view ends with %q", got, want)
			}
			for _, l := range got {
				if sp, _, ok := strings.Cut(strings.TrimPrefix(l, "~"), ": "); ok && strings.HasPrefix(sp, "Speaker ") {
					speakers[sp] = true
				}
			}
		}
	})
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the recording to be captioned", func() bool {
		return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ")
	})
	h.ui(func() {
		h.observe = nil
		if mismatch != "" {
			t.Error(mismatch)
		}
		if interims == 0 {
			t.Error("no interim was shown")
		}
		if !speakers["Speaker 1"] || !speakers["Speaker 2"] {
			t.Errorf("the overlay labelled speakers %v, want Speaker 1 and Speaker 2", speakers)
		}
		lines := o.lines()
		if len(lines) != overlayLines || strings.HasPrefix(lines[len(lines)-1], "~") {
			t.Errorf("after the session the overlay shows %q: want the last %d finals", lines, overlayLines)
		}
	})
}
