package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// voicesHistoryLen is how many past syntheses the list shows.
const voicesHistoryLen = 50

// voicesHistory is the Voices tab's list of past syntheses, newest
// first, each to play again, save or delete.
type voicesHistory struct {
	list  *widget.List
	items []store.Session
}

// buildHistory creates the list. It is read again whenever a synthesis is
// saved or deleted, from this tab or another (App.historyChanged).
func (v *voicesTab) buildHistory() fyne.CanvasObject {
	h := &v.past
	h.list = widget.NewList(
		func() int { return len(h.items) },
		// Each row: the text spoken, on a line of its own (the column is
		// narrow), then the voice and length beside the buttons.
		func() fyne.CanvasObject {
			title := widget.NewLabel("")
			title.Truncation = fyne.TextTruncateEllipsis
			detail := widget.NewLabel("")
			detail.Truncation = fyne.TextTruncateEllipsis
			detail.SizeName = theme.SizeNameCaptionText
			detail.Importance = widget.LowImportance
			buttons := container.NewHBox(
				widget.NewButtonWithIcon("", theme.MediaPlayIcon(), nil),
				widget.NewButtonWithIcon("", theme.DocumentSaveIcon(), nil),
				widget.NewButtonWithIcon("", theme.DeleteIcon(), nil))
			return container.NewVBox(title, container.NewBorder(nil, nil, nil, buttons, detail))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(h.items) {
				return
			}
			s := h.items[i]
			rows := o.(*fyne.Container).Objects
			rows[0].(*widget.Label).SetText(s.Title)
			bottom := rows[1].(*fyne.Container).Objects
			bottom[0].(*widget.Label).SetText(historyDetail(s))
			btns := bottom[1].(*fyne.Container).Objects
			btns[0].(*widget.Button).OnTapped = func() { v.onReplayHistory(s.ID) }
			btns[1].(*widget.Button).OnTapped = func() { v.onSaveAs(s.ID) }
			btns[2].(*widget.Button).OnTapped = func() { v.onDeleteHistory(s.ID) }
		})
	v.app.watchHistory(func(kind string) {
		if kind == store.KindSynthesis {
			v.reloadHistory()
		}
	})
	return container.NewBorder(widget.NewLabelWithStyle("History", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, h.list)
}

// historyDetail says what spoke a past synthesis and for how long.
func historyDetail(s store.Session) string {
	d := fmt.Sprintf("%s · %.1f s", s.Model, s.Duration)
	if s.Status == store.StatusPartial {
		d += " · " + strings.ToLower(sessionStatus(s.Status))
	}
	return d
}

// reloadHistory lists past syntheses, off the UI goroutine.
func (v *voicesTab) reloadHistory() {
	if v.voices == nil {
		return
	}
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		list, err := voices.History(ctx, voicesHistoryLen)
		v.app.onUI(func() {
			if err != nil {
				v.showError("list the syntheses", err)
				return
			}
			v.past.items = list
			v.past.list.Refresh()
		})
	})
}

// withSaved reads a past synthesis off the UI goroutine and hands it to
// fn on it.
func (v *voicesTab) withSaved(id int64, fn func(sessions.SavedSynthesis)) {
	if v.voices == nil {
		return
	}
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		s, err := voices.Open(ctx, id)
		v.app.onUI(func() {
			if err != nil {
				v.showError("open the synthesis", err)
				return
			}
			if len(s.PCM) == 0 {
				v.setStatus("This synthesis kept no audio.", widget.WarningImportance)
				return
			}
			fn(s)
		})
	})
}

// onReplayHistory plays a past synthesis again and puts its text back.
func (v *voicesTab) onReplayHistory(id int64) {
	if v.busy() {
		return
	}
	v.withSaved(id, func(s sessions.SavedSynthesis) {
		v.controls.text.SetText(s.Text)
		v.run.metrics.SetText(fmt.Sprintf("Time to first audio: %.0f ms (%s)", s.Details.TimeToFirstAudioMS, s.Details.Voice))
		v.run.kept = []keptAudio{{label: s.Details.Voice, pcm: s.PCM, rate: s.SampleRate}}
		v.replay(s.PCM, s.SampleRate)
	})
}

// onDeleteHistory deletes a past synthesis, once confirmed.
func (v *voicesTab) onDeleteHistory(id int64) {
	if v.voices == nil {
		return
	}
	voices := v.voices
	dialog.ShowConfirm("Delete this synthesis?", "Its text and audio are removed from history.", func(ok bool) {
		if !ok {
			return
		}
		v.app.goAsync(func(ctx context.Context) {
			err := voices.Delete(ctx, id)
			v.app.onUI(func() {
				if err != nil {
					v.showError("delete the synthesis", err)
					return
				}
				v.app.historyChanged(store.KindSynthesis)
			})
		})
	}, v.app.window)
}
