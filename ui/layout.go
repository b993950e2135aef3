package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// formColumns lays objects out in two columns, labels then controls, the
// controls taking the width left. The Conversation and Voices tabs lay
// out their sliders with it.
type formColumns struct{}

func (formColumns) MinSize(objects []fyne.CanvasObject) fyne.Size {
	lw, cw, h := float32(0), float32(0), float32(0)
	for i := 0; i+1 < len(objects); i += 2 {
		l, r := objects[i].MinSize(), objects[i+1].MinSize()
		lw, cw = max(lw, l.Width), max(cw, r.Width)
		h += max(l.Height, r.Height)
	}
	return fyne.NewSize(lw+cw+theme.Padding(), h)
}

func (formColumns) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	lw := float32(0)
	for i := 0; i < len(objects); i += 2 {
		lw = max(lw, objects[i].MinSize().Width)
	}
	y := float32(0)
	for i := 0; i+1 < len(objects); i += 2 {
		h := max(objects[i].MinSize().Height, objects[i+1].MinSize().Height)
		objects[i].Move(fyne.NewPos(0, y))
		objects[i].Resize(fyne.NewSize(lw, h))
		objects[i+1].Move(fyne.NewPos(lw+theme.Padding(), y))
		objects[i+1].Resize(fyne.NewSize(size.Width-lw-theme.Padding(), h))
		y += h
	}
}
