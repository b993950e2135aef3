package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// waveformColumns is how many bars the waveform draws at most: its
// envelope is kept at this resolution, whatever the audio's length.
const waveformColumns = 400

// waveform draws audio as bars of its peak level, with a playhead. Audio
// is appended as it streams in; the envelope is kept per block of
// samples, so memory does not grow with the audio. Touch it only on the
// UI goroutine.
type waveform struct {
	widget.BaseWidget
	rate     int
	samples  int     // samples appended in all
	block    int     // samples per envelope value
	peaks    []int16 // the peak of each block
	cur      int16   // the peak of the block being filled
	inBlock  int
	playhead time.Duration
}

func newWaveform() *waveform {
	w := &waveform{rate: 24000, block: 240}
	w.ExtendBaseWidget(w)
	return w
}

// Reset empties the waveform for audio at rate.
func (w *waveform) Reset(rate int) {
	w.rate, w.samples, w.block, w.peaks, w.cur, w.inBlock, w.playhead = rate, 0, max(rate/100, 1), nil, 0, 0, 0
	w.Refresh()
}

// Append adds samples to the end.
func (w *waveform) Append(pcm []int16) {
	for _, s := range pcm {
		if s < 0 {
			s = -max(s, -32767)
		}
		w.cur = max(w.cur, s)
		w.inBlock++
		if w.inBlock == w.block {
			w.peaks = append(w.peaks, w.cur)
			w.cur, w.inBlock = 0, 0
		}
	}
	w.samples += len(pcm)
	if len(w.peaks) > 4*waveformColumns {
		// Halve the resolution: pairs of blocks become one.
		for i := 0; i < len(w.peaks)/2; i++ {
			w.peaks[i] = max(w.peaks[2*i], w.peaks[2*i+1])
		}
		w.peaks = w.peaks[:len(w.peaks)/2]
		w.block *= 2
	}
	w.Refresh()
}

// SetPlayhead moves the playhead.
func (w *waveform) SetPlayhead(d time.Duration) {
	if d == w.playhead {
		return
	}
	w.playhead = d
	w.Refresh()
}

// Duration returns the length of the audio drawn.
func (w *waveform) Duration() time.Duration {
	if w.rate <= 0 {
		return 0
	}
	return time.Duration(int64(w.samples) * int64(time.Second) / int64(w.rate))
}

func (w *waveform) CreateRenderer() fyne.WidgetRenderer {
	r := &waveformRenderer{w: w, bg: canvas.NewRectangle(nil), head: canvas.NewRectangle(nil)}
	r.Refresh()
	return r
}

type waveformRenderer struct {
	w    *waveform
	bg   *canvas.Rectangle
	bars []*canvas.Rectangle
	head *canvas.Rectangle
	objs []fyne.CanvasObject
}

func (r *waveformRenderer) Layout(fyne.Size) { r.Refresh() }

func (r *waveformRenderer) MinSize() fyne.Size { return fyne.NewSize(200, 72) }

// columns returns the envelope in n columns: the peak of each.
func (w *waveform) columns(n int) []float32 {
	peaks := w.peaks
	if w.inBlock > 0 {
		peaks = append(peaks[:len(peaks):len(peaks)], w.cur)
	}
	if len(peaks) == 0 || n <= 0 {
		return nil
	}
	n = min(n, len(peaks))
	out := make([]float32, n)
	for i := range n {
		from, to := i*len(peaks)/n, max((i+1)*len(peaks)/n, i*len(peaks)/n+1)
		var p int16
		for _, v := range peaks[from:to] {
			p = max(p, v)
		}
		out[i] = float32(p) / 32767
	}
	return out
}

func (r *waveformRenderer) Refresh() {
	w := r.w
	th := w.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	size := w.Size()
	r.bg.FillColor = th.Color(theme.ColorNameInputBackground, v)
	r.bg.CornerRadius = th.Size(theme.SizeNameInputRadius)
	r.bg.Resize(size)
	const barW, gap = 2, 1
	cols := w.columns(min(int(size.Width/(barW+gap)), waveformColumns))
	for len(r.bars) < len(cols) {
		r.bars = append(r.bars, canvas.NewRectangle(nil))
	}
	// The audio fills the width as it arrives: each column is the same
	// share of it.
	step := float32(0)
	if len(cols) > 0 {
		step = size.Width / float32(len(cols))
	}
	played := th.Color(theme.ColorNamePrimary, v)
	ahead := th.Color(theme.ColorNameDisabled, v)
	headX := float32(0)
	if d := w.Duration(); d > 0 {
		headX = size.Width * float32(min(float64(w.playhead)/float64(d), 1))
	}
	mid := size.Height / 2
	for i, b := range r.bars {
		if i >= len(cols) {
			b.Hide()
			continue
		}
		h := max(cols[i]*(size.Height-8), 1)
		x := float32(i) * step
		b.Move(fyne.NewPos(x, mid-h/2))
		b.Resize(fyne.NewSize(max(step-gap, 1), h))
		if x < headX {
			b.FillColor = played
		} else {
			b.FillColor = ahead
		}
		b.Show()
		b.Refresh()
	}
	r.head.FillColor = th.Color(theme.ColorNameForeground, v)
	r.head.Move(fyne.NewPos(headX, 0))
	r.head.Resize(fyne.NewSize(2, size.Height))
	if w.playhead > 0 && w.samples > 0 {
		r.head.Show()
	} else {
		r.head.Hide()
	}
	r.objs = append(r.objs[:0], r.bg)
	for _, b := range r.bars {
		r.objs = append(r.objs, b)
	}
	r.objs = append(r.objs, r.head)
	r.bg.Refresh()
	r.head.Refresh()
}

func (r *waveformRenderer) Objects() []fyne.CanvasObject { return r.objs }

func (r *waveformRenderer) Destroy() {}
