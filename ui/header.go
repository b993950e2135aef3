package ui

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/store"
)

// header is the band at the top of the window: the app's name and which
// service it is connected to, visible whichever tab is open, and under
// them a notice of what happened to the history at start, when anything
// did (setNotice).
//
// Its fields are touched only on the UI goroutine.
type header struct {
	connection *widget.Label
	// useLocal offers the local engine when the service chosen does not
	// answer; onUseLocal switches to it.
	useLocal   *widget.Button
	onUseLocal func()

	// notice says what happened to the history at start; noticeRow holds
	// it with its Hide button. Hidden, it stays one click away: the
	// showNotice button, beside the connection, brings it back.
	notice     *widget.Label
	noticeRow  *fyne.Container
	showNotice *widget.Button
}

func newHeader(onUseLocal func()) *header {
	return &header{onUseLocal: onUseLocal}
}

// buildUI creates the header's widgets and lays them out.
func (h *header) buildUI() fyne.CanvasObject {
	img := canvas.NewImageFromResource(logo)
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSquareSize(40))

	title := widget.NewLabelWithStyle("Earshot", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.SizeName = theme.SizeNameHeadingText

	h.connection = widget.NewLabel("")
	h.useLocal = widget.NewButtonWithIcon("Use the local engine", theme.ComputerIcon(), h.onUseLocal)
	h.useLocal.Hide()

	h.notice = widget.NewLabel("")
	h.notice.Wrapping = fyne.TextWrapWord
	h.notice.Importance = widget.WarningImportance
	hide := widget.NewButton("Hide", func() {
		h.noticeRow.Hide()
		h.showNotice.Show()
	})
	hide.Importance = widget.LowImportance
	h.noticeRow = container.NewBorder(nil, nil, widget.NewIcon(theme.WarningIcon()), container.NewCenter(hide), h.notice)
	h.noticeRow.Hide()
	h.showNotice = widget.NewButtonWithIcon("History", theme.WarningIcon(), func() {
		h.showNotice.Hide()
		h.noticeRow.Show()
	})
	h.showNotice.Importance = widget.LowImportance
	h.showNotice.Hide()

	row := container.NewBorder(nil, nil, container.NewHBox(img, title), container.NewHBox(h.showNotice, h.connection, h.useLocal))
	return container.NewVBox(container.NewPadded(row), h.noticeRow, widget.NewSeparator())
}

// setNotice shows text under the header's row, until Hide is pressed.
func (h *header) setNotice(text string) {
	h.notice.SetText(text)
	h.showNotice.Hide()
	h.noticeRow.Show()
}

// showHistoryRecovery says in the header what was done to open the
// history, when it could not be opened as it was: a damaged file moved
// aside, or history kept in memory for the session, and why.
func (a *App) showHistoryRecovery() {
	rec := a.ws.HistoryRecovery()
	if rec == nil {
		return
	}
	words := plainError(rec)
	a.log.Warn("history notice shown", "notice", words, "err", rec)
	a.header.setNotice(words)
}

// settingsSavedWords says where settings just saved are kept: for good,
// or, with history in memory, for this session only.
func (a *App) settingsSavedWords() (string, widget.Importance) {
	if a.ws.HistoryKept() {
		return "Saved.", widget.SuccessImportance
	}
	return "Saved for this session only: history is off, so settings are not kept when Earshot closes.", widget.WarningImportance
}

func (h *header) setConnecting() {
	h.connection.Importance = widget.LowImportance
	h.connection.SetText("Connecting…")
}

func (h *header) setConnected(info ServiceInfo) {
	h.connection.Importance = widget.SuccessImportance
	h.connection.SetText("Connected to " + orDash(info.Backend))
	h.useLocal.Hide()
}

// setSwitching says that the local engine is being switched to.
func (h *header) setSwitching() {
	h.connection.Importance = widget.LowImportance
	h.connection.SetText("Switching to the local engine…")
	h.useLocal.Hide()
}

// setSwitchFailed says why the local engine could not be switched to,
// and offers it again.
func (h *header) setSwitchFailed(why string) {
	h.connection.Importance = widget.DangerImportance
	h.connection.SetText("Could not switch to the local engine: " + why)
	h.useLocal.Show()
}

// setUnreachable says that the service chosen does not answer, naming
// it, and offers the local engine unless it is the one.
func (h *header) setUnreachable(info ServiceInfo) {
	h.connection.Importance = widget.DangerImportance
	switch info.Backend {
	case "", "Not connected":
		h.connection.SetText("Not connected")
	default:
		h.connection.SetText(info.Backend + " does not answer")
	}
	if info.Local || h.onUseLocal == nil {
		h.useLocal.Hide()
	} else {
		h.useLocal.Show()
	}
}

// recoveryWords says what was done to open the history (plainError's
// words for a *store.Recovery), and, when history is in memory, what
// that means for the person.
func recoveryWords(r *store.Recovery) string {
	const off = " What you do now is kept until Earshot closes, and settings saved now are not kept either."
	switch {
	case r.Damage != nil && r.MovedTo != "" && !r.InMemory():
		return "Earshot could not read its history file (it is damaged), so it started a new, empty history. The old file is kept, as it was, at " + r.MovedTo + "."
	case r.Damage != nil && r.MovedTo != "":
		return "Earshot could not read its history file (it is damaged) and moved it to " + r.MovedTo +
			", but could not start a new one (" + writeProblem(r.Off) + "), so history is off." + off
	case r.Damage != nil && errors.Is(r.Off, store.ErrInUse):
		return "Earshot could not read its history file " + r.Path + " (it is damaged), and leaves it where it is while another Earshot has it open, so history is off." + off
	case r.Damage != nil:
		return "Earshot could not read its history file " + r.Path + " (it is damaged) and could not move it aside (" + writeProblem(r.Off) + "), so history is off." + off
	case errors.Is(r.Off, store.ErrNewerSchema):
		return "History is off: " + r.Path + " was written by a newer version of Earshot, which this one leaves as it is." + off
	case errors.Is(r.Off, store.ErrDiskFull):
		return "History is off: the disk is full, so Earshot cannot write its history in " + filepath.Dir(r.Path) + "." + off +
			" Free some space, and open Earshot again to keep history."
	case r.Folder() != "":
		return "History is off: Earshot cannot write in " + r.Folder() + " (" + writeProblem(r.Off) + ")." + off
	}
	return "History is off: Earshot cannot keep it on disk (" + writeProblem(r.Off) + ")." + off
}

// writeProblem says in a few words why a file could not be written.
func writeProblem(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "the disk is read-only"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, store.ErrDiskFull):
		return "the disk is full"
	case errors.Is(err, fs.ErrPermission):
		return "it has no permission there"
	case errors.Is(err, syscall.ENOTDIR):
		return "it is a file, where a folder should be"
	case errors.Is(err, syscall.EISDIR):
		return "it is a folder, where the history file should be"
	}
	// The innermost error says it best: the layers above add where.
	for inner := errors.Unwrap(err); inner != nil; inner = errors.Unwrap(err) {
		err = inner
	}
	return lowerFirst(strings.TrimSuffix(err.Error(), "."))
}
