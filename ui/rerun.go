package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/worddiff"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// The services a re-run can go to, as the dialog names them.
const (
	rerunLocal  = "Local engine"
	rerunHosted = "Hosted service"
)

// rerunRegions are the hosted service's regions, as the dialog names
// them, and their codes.
var (
	rerunRegionNames = []string{"Global", "European Union", "Australia", "India"}
	rerunRegionCodes = map[string]string{"Global": "", "European Union": "eu", "Australia": "au", "India": "in"}
)

// rerunDialog runs an entry's audio again and shows the two results side
// by side. Its fields are touched only on the UI goroutine.
type rerunDialog struct {
	a *App
	s store.Session

	d        *dialog.CustomDialog
	model    *widget.SelectEntry
	format   *widget.Check
	speakers *widget.Check
	backend  *widget.Select
	region   *widget.Select
	run      *widget.Button
	cancelB  *widget.Button
	progress *widget.ProgressBarInfinite
	status   *widget.Label
	result   *fyne.Container

	language string // the entry's language, asked for again

	cancel context.CancelFunc // ends the run under way, or nil
	gen    int                // counts runs: only the latest one's answer is shown
	closed bool
}

// showRerun opens the dialog that runs the audio of the history entry s
// again, with another model, service or region, and compares the two
// results: their words side by side with the changes coloured, the word
// error rate of the new one against the original and each one's time.
// Call it on the UI goroutine.
func (a *App) showRerun(s store.Session) {
	r := &rerunDialog{a: a, s: s}
	r.d = dialog.NewCustomWithoutButtons("Re-run “"+s.Title+"”", r.buildUI(), a.window)
	r.d.SetOnClosed(r.onClosed)
	r.d.Resize(fyne.NewSize(760, 540))
	r.d.Show()
	r.loadModels()
}

func (r *rerunDialog) buildUI() fyne.CanvasObject {
	// The entry's own options to start from.
	def := sessions.RerunDefaults(r.s)
	r.model = widget.NewSelectEntry(nil)
	r.model.SetPlaceHolder("The settings' model")
	r.model.SetText(def.Model)
	r.format = widget.NewCheck("Smart format", nil)
	r.format.SetChecked(def.SmartFormat)
	r.speakers = widget.NewCheck("Speakers", nil)
	r.speakers.SetChecked(def.Diarize)
	r.language = def.Language
	r.region = widget.NewSelect(rerunRegionNames, nil)
	r.region.SetSelected("Global")
	r.backend = widget.NewSelect([]string{rerunLocal, rerunHosted}, func(b string) {
		if b == rerunHosted {
			r.region.Enable()
		} else {
			r.region.Disable()
		}
	})
	r.backend.SetSelected(rerunLocal)
	r.run = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), r.onRun)
	r.run.Importance = widget.HighImportance
	r.cancelB = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), r.onCancel)
	r.cancelB.Disable()
	closeB := widget.NewButtonWithIcon("Close", theme.WindowCloseIcon(), func() { r.d.Hide() })
	r.progress = widget.NewProgressBarInfinite()
	r.progress.Stop()
	r.progress.Hide()
	r.status = widget.NewLabel("Pick a model and a service, then Run.")
	r.status.Wrapping = fyne.TextWrapWord
	r.result = container.NewStack()

	form := container.New(layout.NewFormLayout(), widget.NewLabel("Model"), r.model,
		widget.NewLabel("Options"), container.NewHBox(r.format, r.speakers),
		widget.NewLabel("Service"), r.backend, widget.NewLabel("Region"), r.region)
	buttons := container.NewHBox(r.run, r.cancelB, closeB)
	top := container.NewVBox(form, buttons, r.progress, r.status)
	return container.NewBorder(top, nil, nil, nil, r.result)
}

// loadModels fills the model list with the service's batch models.
func (r *rerunDialog) loadModels() {
	a := r.a
	a.goAsync(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, a.opts.queryTimeout())
		defer cancel()
		info, err := a.ws.Info(ctx)
		if err != nil {
			a.log.Info("re-run: the models could not be listed", "err", err)
			return
		}
		var names []string
		for _, m := range info.Models {
			if m.Kind == sessions.KindSpeechToText && m.Batch {
				names = append(names, m.Name)
			}
		}
		a.onUI(func() {
			if !r.closed {
				r.model.SetOptions(names)
			}
		})
	})
}

// options reads the dialog's choices.
func (r *rerunDialog) options() sessions.RerunOptions {
	o := sessions.RerunOptions{Model: strings.TrimSpace(r.model.Text), Backend: sessions.BackendLocal,
		Language: r.language, SmartFormat: r.format.Checked, Diarize: r.speakers.Checked}
	if r.backend.Selected == rerunHosted {
		o.Backend = sessions.BackendHosted
		o.Region = rerunRegionCodes[r.region.Selected]
	}
	return o
}

func (r *rerunDialog) onRun() {
	opts := r.options()
	r.gen++
	gen := r.gen
	ctx, cancel := context.WithCancel(r.a.ctx)
	r.cancel = cancel
	r.setRunning(true)
	r.status.SetText("Sending the audio…")
	a := r.a
	started := a.goAsync(func(context.Context) {
		defer cancel()
		res, err := a.ws.Rerun(ctx, r.s.ID, opts, func(p sessions.Progress) {
			if p.Phase == sessions.PhaseTranscribing {
				a.onUI(func() {
					if r.gen == gen && !r.closed {
						r.status.SetText("Transcribing…")
					}
				})
			}
		})
		a.onUI(func() {
			if r.gen != gen || r.closed {
				return
			}
			r.cancel = nil
			r.setRunning(false)
			if err != nil {
				a.log.Info("re-run failed", "session", r.s.ID, "err", err)
				r.status.SetText(plainError(err))
				if res == nil {
					return
				}
			} else if res.History.Kept() {
				r.status.SetText(fmt.Sprintf("Saved to history as “%s”.", res.New.Title))
			} else {
				r.status.SetText(fmt.Sprintf("“%s”, %s.", res.New.Title, keptForSession))
			}
			r.showResult(res)
			a.historyChanged(store.KindFile)
		})
	})
	if !started {
		cancel()
		r.cancel = nil
		r.setRunning(false)
	}
}

func (r *rerunDialog) onCancel() {
	if r.cancel != nil {
		r.cancel()
		r.status.SetText("Cancelling…")
	}
}

func (r *rerunDialog) onClosed() {
	r.closed = true
	if r.cancel != nil {
		r.cancel()
		r.cancel = nil
	}
}

// setRunning switches the controls between running and idle.
func (r *rerunDialog) setRunning(running bool) {
	if running {
		r.run.Disable()
		r.cancelB.Enable()
		r.progress.Show()
		r.progress.Start()
		return
	}
	r.run.Enable()
	r.cancelB.Disable()
	r.progress.Stop()
	r.progress.Hide()
}

// showResult shows the two transcripts side by side, coloured by the
// diff, with each one's model, service and time, and the error rate.
func (r *rerunDialog) showResult(res *sessions.RerunResult) {
	left, right := diffSegments(res.Diff)
	column := func(heading string, side sessions.RerunSide, segs []widget.RichTextSegment) fyne.CanvasObject {
		title := widget.NewLabelWithStyle(heading, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		about := widget.NewLabel(rerunSideWords(side))
		about.Wrapping = fyne.TextWrapWord
		about.Importance = widget.LowImportance
		text := widget.NewRichText(segs...)
		text.Wrapping = fyne.TextWrapWord
		return container.NewBorder(container.NewVBox(title, about), nil, nil, nil, container.NewVScroll(text))
	}
	d := res.Diff
	rate := fmt.Sprintf("Word error rate of the re-run against the original: %.1f%%", 100*res.WER)
	if d.RefWords == 0 {
		rate = "Word error rate: none, as the original has no words."
	}
	wer := widget.NewLabelWithStyle(rate, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	counts := widget.NewLabel(fmt.Sprintf("%d changed, %d missing, %d added, of %s. Red: only in the original; green: only in the re-run; orange: changed.",
		d.Substitutions, d.Deletions, d.Insertions, plural(d.RefWords, "word")))
	counts.Wrapping = fyne.TextWrapWord
	counts.Importance = widget.LowImportance
	sides := container.NewGridWithColumns(2, column("Original", res.Original, left), column("Re-run", res.New, right))
	r.result.Objects = []fyne.CanvasObject{container.NewBorder(nil, container.NewVBox(wer, counts), nil, nil, sides)}
	r.result.Refresh()
}

// rerunSideWords says which model and service a side used and how long
// it took.
func rerunSideWords(s sessions.RerunSide) string {
	model := s.Model
	if model == "" {
		model = "default model"
	}
	if s.ModelName != "" && s.ModelName != s.Model {
		model += " (" + s.ModelName + ")"
	}
	parts := []string{model}
	if s.Backend != "" {
		parts = append(parts, s.Backend)
	}
	switch {
	case s.Took <= 0:
	case s.Live:
		parts = append(parts, fmt.Sprintf("live, %.1f s", s.Took.Seconds()))
	default:
		parts = append(parts, fmt.Sprintf("took %.2f s", s.Took.Seconds()))
	}
	return strings.Join(parts, " · ")
}

// diffSegments writes the alignment as two texts: the original's words,
// deleted ones red and substituted ones orange, and the re-run's, inserted
// ones green and substituted ones orange.
func diffSegments(d worddiff.Result) (left, right []widget.RichTextSegment) {
	word := func(text string, color fyne.ThemeColorName) *widget.TextSegment {
		st := widget.RichTextStyleInline
		if color != "" {
			st.ColorName = color
			st.TextStyle.Bold = true
		}
		return &widget.TextSegment{Text: text + " ", Style: st}
	}
	for _, op := range d.Ops {
		switch op.Kind {
		case worddiff.Equal:
			left = append(left, word(op.Ref, ""))
			right = append(right, word(op.Hyp, ""))
		case worddiff.Substitute:
			left = append(left, word(op.Ref, theme.ColorNameWarning))
			right = append(right, word(op.Hyp, theme.ColorNameWarning))
		case worddiff.Delete:
			left = append(left, word(op.Ref, theme.ColorNameError))
		case worddiff.Insert:
			right = append(right, word(op.Hyp, theme.ColorNameSuccess))
		}
	}
	return left, right
}

// checkRerun finds out, off the UI goroutine, whether entry id has audio
// to run again, and enables Re-run… if it is still the selected one.
func (h *historyPanel) checkRerun(id int64) {
	a := h.tab.app
	a.goAsync(func(ctx context.Context) {
		ok, err := a.ws.CanRerun(ctx, id)
		if err != nil {
			a.log.Info("re-run: could not tell whether the entry has audio", "session", id, "err", err)
		}
		a.onUI(func() {
			if h.selected == id && err == nil {
				h.rerunAsk = id
				if ok {
					h.canRerun = id
				}
				h.updateControls()
			}
		})
	})
}

// onRerun opens the re-run dialog for the selected entry.
func (h *historyPanel) onRerun() {
	if s, ok := h.selectedSession(); ok {
		h.tab.app.showRerun(s)
	}
}
