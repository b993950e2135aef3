package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// header is the band at the top of the window: the app's name and which
// service it is connected to, visible whichever tab is open.
//
// Its fields are touched only on the UI goroutine.
type header struct {
	connection *widget.Label
	// useLocal offers the local engine when the service chosen does not
	// answer; onUseLocal switches to it.
	useLocal   *widget.Button
	onUseLocal func()
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

	row := container.NewBorder(nil, nil, container.NewHBox(img, title), container.NewHBox(h.connection, h.useLocal))
	return container.NewVBox(container.NewPadded(row), widget.NewSeparator())
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
