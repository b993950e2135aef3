package ui

import (
	"context"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Shortcuts of the Voices tab. Ctrl+S saves the audio while the tab is
// open (elsewhere it saves the settings).
var (
	playShortcut = ctrl(fyne.KeyReturn)
	stopShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyEscape}
)

// voicesHint is what the Voices tab says before anything is spoken.
const voicesHint = "Type or paste text, pick a voice and press Play (Ctrl+Enter). Esc stops."

// voicesTab is the Voices tab: the voice playground. This file holds the
// tab, its layout and its menu; the controls, the runs (play, stop,
// compare), saving and the history each have their own file. Its fields
// are touched only on the UI goroutine.
type voicesTab struct {
	app    *App
	ui     lazyTab // its widgets, built when the tab is first shown
	status *widget.Label

	controls voiceControls // voice picker, filters, text and sliders (voices_controls.go)
	run      voicesRun     // what is speaking and what it left (voices_playback.go)
	save     voicesSaving  // the save format and Save as (voices_save.go)
	past     voicesHistory // the past syntheses (voices_history.go)

	settings store.Settings
	voices   *sessions.Voices // nil until the voices are listed
	off      *offWhy          // why controls are off, under the buttons
}

func newVoicesTab(a *App) *voicesTab {
	return &voicesTab{app: a, settings: store.DefaultSettings(), run: voicesRun{turnLabels: map[int]*widget.Label{}}, off: newOffWhy()}
}

func (v *voicesTab) buildUI() fyne.CanvasObject {
	filters, sliders := v.buildControls()
	v.buildRun()
	v.buildSave()
	history := v.buildHistory()
	v.status = widget.NewLabel(voicesHint)
	v.status.Wrapping = fyne.TextWrapWord

	c, r := &v.controls, &v.run
	// Two rows, so that the controls fit a window 800 pixels wide.
	actions := container.NewVBox(
		container.NewHBox(r.play, r.stop, c.turns),
		container.NewHBox(container.New(widthLayout{width: 220}, c.voiceB), r.compare, widget.NewSeparator(),
			container.New(widthLayout{width: 110}, v.save.format), v.save.saveAs))
	left := container.NewVBox(filters, c.text.box, sliders, actions, v.off.line, r.wave, r.metrics, r.results, r.turnBox)
	split := container.NewHSplit(container.NewPadded(container.NewVScroll(left)), container.NewPadded(history))
	split.Offset = 0.64
	v.showValues()
	v.updateControls()
	return container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), v.status), nil, nil, split)
}

func (v *voicesTab) setStatus(text string, imp widget.Importance) {
	v.status.Importance = imp
	v.status.SetText(text)
}

func (v *voicesTab) showError(what string, err error) {
	v.app.log.Warn(what, "err", err)
	v.setStatus(plainError(err), widget.DangerImportance)
	v.app.noteStatus(v.status, err, voicesHint)
}

// busy reports whether something is speaking.
func (v *voicesTab) busy() bool { return v.run.busy() }

// updateControls enables what can be done now.
func (v *voicesTab) updateControls() {
	name := v.controls.selectedVoice()
	busy := v.busy()
	r, c := &v.run, &v.controls
	// While a voice speaks all is off but Stop: no need to say why.
	why := func(words string) string {
		if busy {
			return ""
		}
		return words
	}
	o := v.off
	o.set(r.play, !busy && name != "", why("Pick a voice to play the text."))
	enable(r.stop, busy)
	noB := ""
	if name != "" {
		noB = why("Compare A/B needs a voice B: pick one beside it.")
	}
	o.set(r.compare, !busy && name != "" && c.voiceB.Selected != "", noB)
	o.set(v.save.saveAs, !busy && len(r.kept) > 0, why("Save as saves what was spoken: play something first."))
	enable(c.voice, !busy)
	enable(c.language, !busy)
	enable(c.accent, !busy)
	sr := sessions.SpeedRangeOf(name)
	enable(c.speed, !busy && sr.Adjustable) // the line under the slider says why
	flux := why("Expressivity and Speak turn by turn are for turn-based voices (flux-…); this one is not.")
	if name == "" {
		flux = ""
	}
	o.set(c.expr, !busy && sessions.Expressive(name), flux)
	o.set(c.turns, !busy && sessions.Expressive(name), flux)
	o.show()
}

// load lists the service's voices and the history, off the UI goroutine.
func (v *voicesTab) load() {
	v.app.goAsync(func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, v.app.opts.queryTimeout())
		defer cancel()
		voices, err := v.app.ws.Voices(qctx)
		var list []sessions.Voice
		if err == nil {
			list, err = voices.List(qctx)
		}
		v.app.onUI(func() {
			if err != nil {
				v.controls.voice.PlaceHolder = "No voices"
				v.controls.voice.Refresh()
				v.showError("list the voices", err)
				if v.app.opts.AutoSpeak != "" && !v.run.autoSpoken {
					v.run.autoSpoken, v.run.autoing = true, true
				}
				v.autoDone(err)
				return
			}
			v.voices = voices
			v.setVoices(list)
			v.reloadHistory()
			if text := v.app.opts.AutoSpeak; text != "" && !v.run.autoSpoken {
				v.run.autoSpoken, v.run.autoing = true, true
				v.controls.text.SetText(text)
				v.onPlay()
			}
		})
	})
}

// settingsChanged takes saved settings: the voice, speed, expressivity
// and save format they hold, and the service (which lists the voices).
func (v *voicesTab) settingsChanged(s store.Settings) {
	v.ui.do(func() {
		old := v.settings
		v.settings = s
		if f := v.save.format; f != nil && slices.Contains(sessions.SaveEncodings, s.SaveEncoding) {
			f.Selected = s.SaveEncoding
			f.Refresh()
		}
		if v.voices == nil || old.Backend != s.Backend || old.CustomURL != s.CustomURL || old.Region != s.Region || old.OutputDevice != s.OutputDevice {
			if !v.busy() {
				v.controls.speed.Value, v.controls.expr.Value = s.SpeakSpeed, float64(s.Expressivity)
				v.load()
			}
		}
	})
}

// keyChanged lists the voices again, with the key now in force.
func (v *voicesTab) keyChanged() {
	v.ui.do(func() {
		if !v.busy() {
			v.load()
		}
	})
}

// voicesMenu is the Voices menu, with the tab's shortcuts.
func (a *App) voicesMenu(item func(string, fyne.Shortcut, fyne.Resource, func()) *fyne.MenuItem) *fyne.Menu {
	on := func(action func()) func() {
		return func() {
			a.SelectTab("Voices")
			action()
		}
	}
	return fyne.NewMenu("Voices",
		item(voicesPlayItem, playShortcut, theme.MediaPlayIcon(), on(a.voices.onPlay)),
		item("Stop", stopShortcut, theme.MediaStopIcon(), on(a.voices.onStop)),
		item("Save audio as…", nil, theme.DocumentSaveIcon(), on(func() { a.voices.onSaveAs(0) })),
	)
}

// voicesPlayItem labels the Voices menu's Play.
const voicesPlayItem = "Play"

// shareVoiceShortcuts lets the Voices tab share Ctrl+Enter with another
// menu item that takes it (Analyze): the one item left with the shortcut
// plays while the Voices tab is open, and does its own work elsewhere.
// Fyne keeps one action per shortcut, so two items must not both carry
// it.
func (a *App) shareVoiceShortcuts(m *fyne.MainMenu) *fyne.MainMenu {
	var mine *fyne.MenuItem
	var others []*fyne.MenuItem
	for _, menu := range m.Items {
		for _, it := range menu.Items {
			if it.Shortcut == nil || it.Shortcut.ShortcutName() != playShortcut.ShortcutName() {
				continue
			}
			if menu.Label == "Voices" && it.Label == voicesPlayItem {
				mine = it
			} else {
				others = append(others, it)
			}
		}
	}
	if mine == nil || len(others) == 0 {
		return m
	}
	mine.Shortcut = nil
	for _, it := range others {
		own := it.Action
		it.Action = func() {
			if a.tabs.Selected() != nil && a.tabs.Selected().Text == "Voices" {
				a.voices.onPlay()
				return
			}
			own()
		}
	}
	return m
}

// voicesSave is Ctrl+S: the audio's Save as while the Voices tab is
// open, else save, as before.
func (a *App) voicesSave(other func()) func() {
	return func() {
		if a.tabs.Selected() != nil && a.tabs.Selected().Text == "Voices" {
			a.voices.onSaveAs(0)
			return
		}
		other()
	}
}
