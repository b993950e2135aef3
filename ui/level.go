package ui

import (
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Range of the level meter, in dB below full scale: speech into a
// microphone sits around -30 to -10 dBFS, and below -60 is silence.
const (
	levelFloor   = -60.0
	levelLoud    = -12.0 // from here the bar turns amber
	levelClipped = -3.0  // and from here red: the input is near clipping
)

// levelMeter is a horizontal bar showing the input level. Touch it only
// on the UI goroutine.
type levelMeter struct {
	widget.BaseWidget
	fraction float32 // 0 to 1 of the bar filled
	dbfs     float64
}

func newLevelMeter() *levelMeter {
	m := &levelMeter{dbfs: math.Inf(-1)}
	m.ExtendBaseWidget(m)
	return m
}

// SetLevel shows a level in dBFS; -Inf (or anything below the floor)
// empties the bar.
func (m *levelMeter) SetLevel(dbfs float64) {
	f := float32(0)
	if !math.IsNaN(dbfs) && dbfs > levelFloor {
		f = float32(min((dbfs-levelFloor)/-levelFloor, 1))
	}
	if f == m.fraction && dbfs == m.dbfs {
		return
	}
	m.fraction, m.dbfs = f, dbfs
	m.Refresh()
}

func (m *levelMeter) CreateRenderer() fyne.WidgetRenderer {
	r := &levelRenderer{m: m, track: canvas.NewRectangle(nil), bar: canvas.NewRectangle(nil)}
	r.Refresh()
	return r
}

type levelRenderer struct {
	m          *levelMeter
	track, bar *canvas.Rectangle
}

const levelBarHeight = 8

func (r *levelRenderer) Layout(size fyne.Size) {
	h := float32(levelBarHeight)
	y := (size.Height - h) / 2
	r.track.Move(fyne.NewPos(0, y))
	r.track.Resize(fyne.NewSize(size.Width, h))
	r.bar.Move(fyne.NewPos(0, y))
	r.bar.Resize(fyne.NewSize(size.Width*r.m.fraction, h))
}

func (r *levelRenderer) MinSize() fyne.Size { return fyne.NewSize(80, levelBarHeight) }

func (r *levelRenderer) Refresh() {
	th := r.m.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.track.FillColor = th.Color(theme.ColorNameInputBackground, v)
	r.track.CornerRadius = levelBarHeight / 2
	name := theme.ColorNameSuccess
	switch {
	case r.m.dbfs >= levelClipped:
		name = theme.ColorNameError
	case r.m.dbfs >= levelLoud:
		name = theme.ColorNameWarning
	}
	r.bar.FillColor = th.Color(name, v)
	r.bar.CornerRadius = levelBarHeight / 2
	r.Layout(r.m.Size())
	r.track.Refresh()
	r.bar.Refresh()
}

func (r *levelRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.track, r.bar} }

func (r *levelRenderer) Destroy() {}
