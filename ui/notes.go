package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
)

// notesSize is the size the notes dialog asks for; a smaller window
// makes it smaller.
var notesSize = fyne.NewSize(760, 580)

// notesView shows a meeting's notes in a dialog over the window: the
// summary, the topics and the action items, each with who said it and
// when, and Export Markdown…, Write again, Cancel (while they are
// written) and Close. It reads the notes saved with the meeting, and
// writes them, through the service in use, when there are none or when
// asked to again. Closing it cancels the writing.
//
// Its fields are touched only on the UI goroutine.
type notesView struct {
	a *App

	d        *dialog.CustomDialog
	title    *widget.Label
	info     *widget.Label
	summary  *widget.Label
	topics   *fyne.Container
	actions  *fyne.Container
	body     *container.Scroll
	progress *widget.ProgressBarInfinite
	status   *widget.Label
	export   *widget.Button
	redo     *widget.Button
	cancel   *widget.Button
	close    *widget.Button

	id      int64           // the meeting shown
	notes   *sessions.Notes // its notes, nil while there are none
	working context.CancelFunc
	gen     int  // counts the loads; only the latest one's answer is shown
	open    bool // the dialog is on screen
}

// offerMeetingNotes shows the notes of meeting sessionID: at once when
// they were written before, else written now (with progress and Cancel).
// It is what the Meeting notes buttons call: the History list's, and the
// Captions tab's once a meeting stops.
func (a *App) offerMeetingNotes(sessionID int64) {
	if sessionID == 0 {
		return
	}
	v := a.captions.history.notesView()
	v.show(sessionID)
	v.load(false)
}

// meetingStopped writes the notes of meeting sessionID, which just
// stopped, when the settings ask for it ("Write meeting notes when a
// meeting stops") and it has words to take notes from; otherwise it
// does nothing.
func (a *App) meetingStopped(sessionID int64) {
	if sessionID == 0 {
		return
	}
	a.goAsync(func(ctx context.Context) {
		if a.notesOnStop(ctx, sessionID) {
			a.onUI(func() { a.offerMeetingNotes(sessionID) })
		}
	})
}

// notesOnStop reports whether the notes of meeting sessionID are to be
// written now that it stopped: the settings ask for it, and it has words
// to take notes from. It reads history: call it off the UI goroutine.
func (a *App) notesOnStop(ctx context.Context, sessionID int64) bool {
	s, err := a.ws.Settings(ctx)
	if err != nil || !s.NotesOnStop {
		return false
	}
	m, err := a.ws.Meeting(ctx, sessionID)
	return err == nil && m.Words() >= 2
}

// newMeetingNotesButton is a Notes button: tapped, it offers
// the notes of the meeting sessionID returns then (nothing for 0).
func (a *App) newMeetingNotesButton(sessionID func() int64) *widget.Button {
	return widget.NewButtonWithIcon("Notes", theme.DocumentIcon(), func() { a.offerMeetingNotes(sessionID()) })
}

// notesView returns the History list's notes dialog, built on first use.
func (h *historyPanel) notesView() *notesView {
	if h.notes == nil {
		h.notes = newNotesView(h.tab.app)
	}
	return h.notes
}

func newNotesView(a *App) *notesView {
	v := &notesView{a: a}
	v.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.title.Truncation = fyne.TextTruncateEllipsis
	v.info = widget.NewLabel("")
	v.info.Wrapping = fyne.TextWrapWord
	v.info.Importance = widget.LowImportance
	v.summary = widget.NewLabel("")
	v.summary.Wrapping = fyne.TextWrapWord
	v.topics = container.NewVBox()
	v.actions = container.NewVBox()
	v.body = container.NewVScroll(container.NewVBox(
		heading("Summary"), v.summary,
		heading("Topics"), v.topics,
		heading("Action items"), v.actions,
	))
	v.progress = widget.NewProgressBarInfinite()
	v.progress.Hide()
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.export = widget.NewButtonWithIcon("Export Markdown…", theme.DownloadIcon(), v.onExport)
	v.redo = widget.NewButtonWithIcon("Write again", theme.ViewRefreshIcon(), func() { v.load(true) })
	v.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), v.onCancel)
	v.close = widget.NewButton("Close", func() { v.d.Hide() })
	top := container.NewVBox(v.title, v.info)
	bottom := container.NewVBox(v.progress, v.status)
	v.d = dialog.NewCustomWithoutButtons("Meeting notes", container.NewBorder(top, bottom, nil, nil, v.body), a.window)
	v.d.SetButtons([]fyne.CanvasObject{v.export, v.redo, v.cancel, layout.NewSpacer(), v.close})
	v.d.SetOnClosed(func() {
		v.open = false
		v.onCancel()
	})
	return v
}

// show opens the dialog on meeting id, empty until its notes are read.
func (v *notesView) show(id int64) {
	v.onCancel()
	if id != v.id {
		v.id, v.notes = id, nil
		v.title.SetText("")
		v.info.SetText("")
		v.fill()
	}
	size := notesSize
	if c := v.a.window.Canvas(); c != nil && c.Size().Width > 0 {
		size = fyne.NewSize(min(size.Width, c.Size().Width-40), min(size.Height, c.Size().Height-40))
	}
	v.d.Resize(size)
	v.d.Show()
	v.open = true
}

// shown reports whether the dialog is on screen.
func (v *notesView) shown() bool { return v != nil && v.open }

// load reads the meeting's notes, or writes them when there are none or
// redo asks for new ones, off the UI goroutine.
func (v *notesView) load(redo bool) {
	v.onCancel()
	v.gen++
	gen, id := v.gen, v.id
	ctx, cancel := context.WithCancel(v.a.ctx)
	v.working = cancel
	if redo {
		v.setStatus("Writing the notes…", widget.MediumImportance)
	} else {
		v.setStatus("Reading the notes…", widget.MediumImportance)
	}
	v.progress.Show()
	v.progress.Start()
	v.updateControls()
	started := v.a.goAsync(func(context.Context) {
		defer cancel()
		n, err := v.a.ws.MeetingNotes(ctx, id, redo, func(p sessions.NotesProgress) {
			text := "Writing the notes…"
			if p.Parts > 1 {
				text = fmt.Sprintf("Writing the notes: part %d of %d…", p.Part, p.Parts)
			}
			v.a.onUI(func() {
				if gen == v.gen && v.working != nil {
					v.setStatus(text, widget.MediumImportance)
				}
			})
		})
		cancelled := ctx.Err() != nil
		v.a.onUI(func() {
			if gen != v.gen {
				return
			}
			v.done()
			var sf *sessions.SaveFailedEvent
			switch {
			case err == nil || errors.As(err, &sf):
				v.notes = &n
				v.fill()
				if err != nil {
					v.a.log.Warn("save meeting notes", "err", err)
					v.setStatus(plainError(err), widget.WarningImportance)
				} else {
					v.setStatus(notesWritten(n), widget.MediumImportance)
				}
			case cancelled && errors.Is(err, context.Canceled):
				v.setStatus("Cancelled: the notes were not written.", widget.WarningImportance)
			default:
				v.a.log.Warn("meeting notes", "session", id, "err", err)
				v.setStatus(notesError(err), widget.DangerImportance)
			}
			v.updateControls()
		})
	})
	if !started {
		cancel()
		v.done()
	}
}

// notesWritten says who wrote the notes, and when.
func notesWritten(n sessions.Notes) string {
	by := "Written"
	if n.Backend != "" {
		by += " by " + n.Backend
	}
	if !n.Written.IsZero() {
		by += " on " + n.Written.Local().Format("2 January 2006 at 15:04")
	}
	return by + "."
}

// notesError says in plain words why there are no notes.
func notesError(err error) string {
	switch {
	case errors.Is(err, sessions.ErrNoWords), errors.Is(err, sessions.ErrNotMeeting):
		return sentence(err.Error())
	case errors.Is(err, sessions.ErrEnglishOnly):
		return "Notes are written in English only. Set the language in Settings to English (en)."
	}
	return plainError(err)
}

// done ends the work under way, if any.
func (v *notesView) done() {
	if v.working != nil {
		v.working()
		v.working = nil
	}
	v.progress.Stop()
	v.progress.Hide()
}

// onCancel cancels the writing under way, if any.
func (v *notesView) onCancel() {
	if v.working == nil {
		return
	}
	v.gen++ // the answer of the work cancelled is not shown
	v.done()
	v.setStatus("Cancelled: the notes were not written.", widget.WarningImportance)
	v.updateControls()
}

func (v *notesView) setStatus(text string, imp widget.Importance) {
	v.status.Importance = imp
	v.status.SetText(text)
}

func (v *notesView) updateControls() {
	busy := v.working != nil
	enable(v.export, v.notes != nil && !busy)
	enable(v.redo, v.id != 0 && !busy)
	enable(v.cancel, busy)
}

// fill shows the notes, or nothing when there are none.
func (v *notesView) fill() {
	n := v.notes
	if n == nil {
		v.summary.SetText("")
		v.topics.Objects = nil
		v.actions.Objects = nil
		v.body.Content.Refresh()
		v.updateControls()
		return
	}
	v.title.SetText(n.Title)
	speakers := "Speakers not labelled"
	if len(n.Speakers) > 0 {
		speakers = "Speakers: " + strings.Join(n.Speakers, ", ")
	}
	v.info.SetText(joinDot(when(n.Started, v.a.now()), timecode.Of(n.Length), speakers))
	summary := strings.TrimSpace(n.Summary)
	if summary == "" {
		summary = sessions.NoSummary
	}
	v.summary.SetText(summary)
	v.topics.Objects = noteRows(n.Topics, sessions.NoTopics)
	v.actions.Objects = noteRows(n.ActionItems, sessions.NoActionItems)
	// The rows changed the height of what scrolls: lay it out again.
	v.body.Content.Refresh()
	v.body.Refresh()
	v.body.ScrollToTop()
	v.updateControls()
}

// noteRows shows items, each its label with who said it and when, and
// the words it was found in; none when there are no items.
func noteRows(items []sessions.NoteItem, none string) []fyne.CanvasObject {
	if len(items) == 0 {
		l := widget.NewLabel(none)
		l.Importance = widget.LowImportance
		return []fyne.CanvasObject{l}
	}
	var rows []fyne.CanvasObject
	for _, it := range items {
		text := "• " + it.Label
		if where := sessions.ItemWhere(it); where != "" {
			text += " (" + where + ")"
		}
		name := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		name.Wrapping = fyne.TextWrapWord
		row := container.New(stackedLayout{}, name)
		if p := strings.TrimSpace(it.Passage); p != "" {
			passage := widget.NewLabelWithStyle("“"+p+"”", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
			passage.Wrapping = fyne.TextWrapWord
			passage.Importance = widget.LowImportance
			row.Add(passage)
		}
		rows = append(rows, row)
	}
	return rows
}

// onExport asks where to save the notes, then writes them there as
// Markdown with the transcript.
func (v *notesView) onExport() {
	if v.notes == nil {
		return
	}
	id, title := v.id, v.notes.Title
	req := pathRequest{title: "Export the meeting notes", confirm: "Save", save: true,
		extensions: []string{".md"}, name: exportFileName(title+" notes", sessions.ExportFormat("md"))}
	v.a.askPath(req, func(path string) { v.writeMarkdown(id, path) })
}

// writeMarkdown writes the notes of meeting id to path, off the UI
// goroutine.
func (v *notesView) writeMarkdown(id int64, path string) {
	name := filepath.Base(path)
	v.setStatus("Exporting to "+name+"…", widget.MediumImportance)
	v.a.goAsync(func(ctx context.Context) {
		err := sessions.WriteFile(path, func(w io.Writer) error { return v.a.ws.ExportMeetingNotes(ctx, id, w) })
		v.a.onUI(func() {
			if err != nil {
				v.a.log.Warn("export meeting notes", "err", err)
				v.setStatus(plainError(err), widget.DangerImportance)
				return
			}
			v.setStatus("Saved "+name+" (Markdown).", widget.SuccessImportance)
		})
	})
}
