package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// pastWindow shows a past captions, file or conversation session in a
// window of its own, with its player: how a session opens while the
// Captions tab is busy with live captions, which it must not leave.
type pastWindow struct {
	app    *App
	window fyne.Window
	info   *widget.Label
	status *widget.Label
	view   *captionView
	player *transcriptPlayer
	closed bool
}

// openPastWindow shows s in a window of its own, scrolled with hasAt to
// the caption said at at. A window already showing s comes forward.
func (a *App) openPastWindow(s store.Session, at float64, hasAt bool) {
	if pw := a.pastWindows[s.ID]; pw != nil {
		pw.window.Show()
		pw.window.RequestFocus()
		if hasAt {
			pw.view.scrollToTime(at)
		}
		return
	}
	w := a.app.NewWindow(s.Title + " · Earshot")
	w.SetIcon(icon)
	pw := &pastWindow{app: a, window: w, view: newCaptionView()}
	title := widget.NewLabelWithStyle(s.Title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.Truncation = fyne.TextTruncateEllipsis
	pw.info = widget.NewLabel(sessionDetails(s, a.now()))
	pw.info.Truncation = fyne.TextTruncateEllipsis
	pw.status = widget.NewLabel("Reading “" + s.Title + "”…")
	pw.status.Wrapping = fyne.TextWrapWord
	pw.player = newTranscriptPlayer(a, pw.view, pw.setStatus)
	pw.player.window = w
	pw.player.onScreen = func() bool { return !pw.closed }
	w.SetContent(container.NewBorder(
		container.NewPadded(container.NewVBox(title, pw.info)),
		container.NewVBox(pw.player.buildUI(), pw.status),
		nil, nil, pw.view.buildUI("")))
	w.Resize(fyne.NewSize(820, 560))
	w.SetOnClosed(func() {
		pw.closed = true
		pw.player.clear()
		if a.pastWindows[s.ID] == pw {
			delete(a.pastWindows, s.ID)
		}
	})
	if a.pastWindows == nil {
		a.pastWindows = map[int64]*pastWindow{}
	}
	a.pastWindows[s.ID] = pw
	w.Show()
	a.goAsync(func(ctx context.Context) {
		tr, err := a.ws.Transcript(ctx, s.ID)
		a.onUI(func() {
			if pw.closed {
				return
			}
			if err != nil {
				a.log.Warn("open a session in a window", "session", s.ID, "err", err)
				pw.setStatus(plainError(err), widget.DangerImportance)
				return
			}
			pw.show(s, tr, at, hasAt)
		})
	})
}

// show puts the transcript in the window and loads its audio.
func (pw *pastWindow) show(s store.Session, tr sessions.Transcript, at float64, hasAt bool) {
	info := sessionDetails(s, pw.app.now())
	if tr.Response != nil {
		info, _ = fileInfo(tr.Response, s.Model, requestedDiarization(s.Options))
	} else {
		info = joinDot(info, s.Model, plural(len(tr.Captions), "caption"))
	}
	pw.info.SetText(info)
	hint := ""
	if len(tr.Captions) == 0 {
		hint = noWordsHint(s.Status)
	}
	pw.view.show(tr.Captions, hint)
	pw.player.load(s.ID)
	if hasAt {
		pw.view.scrollToTime(at)
		pw.setStatus("Opened at "+timecode.Of(at)+", in its own window while the live captions run.", widget.MediumImportance)
		return
	}
	pw.setStatus("Opened in its own window while the live captions run.", widget.MediumImportance)
}

func (pw *pastWindow) setStatus(text string, imp widget.Importance) {
	pw.status.Importance = imp
	pw.status.SetText(text)
}
