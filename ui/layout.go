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

// columnsOrRows lays its objects side by side in columns of equal width
// when each fits its column, else one under another: the Settings tab's
// cards, two columns in a wide window and one in a narrow one. Its
// minimum width is the widest object's, so the window can be narrow.
// Its minimum height follows the arrangement last laid out; when the
// arrangement changes, changed is called to lay the parent out again.
type columnsOrRows struct {
	columns bool
	changed func()
}

func (l *columnsOrRows) fits(objects []fyne.CanvasObject, width float32) bool {
	pad := theme.Padding()
	col := (width - pad*float32(len(objects)-1)) / float32(len(objects))
	for _, o := range objects {
		if o.MinSize().Width > col {
			return false
		}
	}
	return true
}

func (l *columnsOrRows) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var w, tallest, sum float32
	for _, o := range objects {
		m := o.MinSize()
		w = max(w, m.Width)
		tallest = max(tallest, m.Height)
		sum += m.Height
	}
	if len(objects) > 1 {
		sum += theme.Padding() * float32(len(objects)-1)
	}
	if l.columns {
		return fyne.NewSize(w, tallest)
	}
	return fyne.NewSize(w, sum)
}

func (l *columnsOrRows) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	if len(objects) == 0 {
		return
	}
	columns := l.fits(objects, size.Width)
	if columns != l.columns {
		l.columns = columns
		if l.changed != nil {
			fyne.Do(l.changed) // later: the parent is laying out now
		}
	}
	pad := theme.Padding()
	if columns {
		col := (size.Width - pad*float32(len(objects)-1)) / float32(len(objects))
		for i, o := range objects {
			o.Move(fyne.NewPos(float32(i)*(col+pad), 0))
			o.Resize(fyne.NewSize(col, size.Height))
		}
		return
	}
	y := float32(0)
	for _, o := range objects {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h + pad
	}
}
