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
}

func newHeader() *header {
	return &header{}
}

// buildUI creates the header's widgets and lays them out.
func (h *header) buildUI() fyne.CanvasObject {
	img := canvas.NewImageFromResource(logo)
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSquareSize(40))

	title := widget.NewLabelWithStyle("Earshot", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.SizeName = theme.SizeNameHeadingText

	h.connection = widget.NewLabel("")

	row := container.NewBorder(nil, nil, container.NewHBox(img, title), h.connection)
	return container.NewVBox(container.NewPadded(row), widget.NewSeparator())
}

func (h *header) setConnecting() {
	h.connection.Importance = widget.LowImportance
	h.connection.SetText("Connecting…")
}

func (h *header) setConnected(info ServiceInfo) {
	h.connection.Importance = widget.SuccessImportance
	h.connection.SetText("Connected to " + orDash(info.Backend))
}

func (h *header) setUnreachable() {
	h.connection.Importance = widget.DangerImportance
	h.connection.SetText("Not connected")
}
