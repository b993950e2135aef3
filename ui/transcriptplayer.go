package ui

import (
	"context"
	"errors"
	"image/color"
	"math"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// transcriptPlayer plays the audio kept with a past session under its
// transcript in a captionView: a bar with play/pause, the position and a
// seek slider; the caption being heard is highlighted and kept in view,
// and its word at the playhead marked. A tap on a caption plays from its
// start, on a word from the word's start. Space plays and pauses when
// nothing that takes typing has the focus.
//
// Touch it only on the UI goroutine. Loading the audio, starting and
// stopping the speaker run in the App's goroutines; each request bumps
// gen, and what comes back for an older one is dropped (and a speaker it
// started stopped).
type transcriptPlayer struct {
	app    *App
	view   *captionView
	status func(text string, imp widget.Importance)

	bar    *fyne.Container // hidden when the session shown has no audio
	play   *widget.Button
	pos    *widget.Label
	slider *widget.Slider

	kept    *sessions.KeptAudio // nil when none is loaded
	gen     int
	playing *sessions.Playing // nil when paused
	// starting is set while the speaker is being opened to play: the
	// player counts as playing.
	starting bool
	from     time.Duration // where playing started
	at       time.Duration // the playhead shown
	watch    context.CancelFunc
	marks    []*wordMarks // one per caption row, while audio is loaded
	caption  int          // the row highlighted, -1 for none
	setting  bool         // the slider is being moved by the player, not the person
	// window takes the space key and onScreen says whether the player
	// is seen there; nil: the main window, while the Captions tab shows.
	window   fyne.Window
	onScreen func() bool
}

func newTranscriptPlayer(a *App, v *captionView, status func(string, widget.Importance)) *transcriptPlayer {
	p := &transcriptPlayer{app: a, view: v, status: status, caption: -1}
	v.onReset = p.clear
	return p
}

// buildUI creates the bar, hidden until a session with audio is shown.
func (p *transcriptPlayer) buildUI() fyne.CanvasObject {
	p.play = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), p.toggle)
	p.pos = widget.NewLabel("0:00 / 0:00")
	p.slider = widget.NewSlider(0, 1)
	p.slider.Step = 0.1
	p.slider.OnChanged = func(v float64) {
		if !p.setting && p.kept != nil {
			p.pos.SetText(timecode.Of(v) + " / " + timecode.Of(p.kept.Duration().Seconds()))
		}
	}
	p.slider.OnChangeEnded = func(v float64) {
		if !p.setting {
			p.seek(secs(v), p.isPlaying())
		}
	}
	p.bar = container.NewBorder(nil, nil, p.play, p.pos, p.slider)
	p.bar.Hide()
	w := p.window
	if w == nil {
		w = p.app.window
	}
	if w != nil {
		prev := w.Canvas().OnTypedKey()
		w.Canvas().SetOnTypedKey(func(ev *fyne.KeyEvent) {
			if ev.Name == fyne.KeySpace && p.bar.Visible() && p.kept != nil && p.shownInTab() {
				p.toggle()
				return
			}
			if prev != nil {
				prev(ev)
			}
		})
	}
	return p.bar
}

// shownInTab reports whether the player is on screen: the Captions tab,
// where it is unless onScreen says otherwise, is the one shown.
func (p *transcriptPlayer) shownInTab() bool {
	if p.onScreen != nil {
		return p.onScreen()
	}
	t := p.app.tabs
	return t == nil || t.Selected() == nil || t.Selected().Text == "Captions"
}

// secs turns seconds into a duration.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// load reads the audio kept with session id and, when there is some,
// shows the bar. A session without audio shows none. then, when not nil,
// runs once the bar is shown or known to have nothing to show.
func (p *transcriptPlayer) load(id int64, then ...func()) {
	p.clear()
	p.gen++
	gen := p.gen
	p.app.goAsync(func(ctx context.Context) {
		kept, err := p.app.ws.SessionAudio(ctx, id)
		p.app.onUI(func() {
			for _, f := range then {
				defer f()
			}
			if gen != p.gen {
				return
			}
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) {
					p.app.log.Warn("the audio of a session", "session", id, "err", err)
					p.status(plainError(err), widget.WarningImportance)
				}
				return
			}
			if kept.Duration() <= 0 {
				return
			}
			p.kept = kept
			p.slider.Max = math.Max(kept.Duration().Seconds(), 0.1)
			p.attach()
			p.bar.Show()
			p.show(0)
		})
	})
}

// clear stops playing and hides the bar: the view shows something else.
func (p *transcriptPlayer) clear() {
	p.gen++
	p.stopPlaying()
	p.detach()
	p.kept = nil
	p.at, p.caption = 0, -1
	if p.bar != nil {
		p.bar.Hide()
		p.setPlayButton(false)
	}
}

// attach lays a wordMarks over each caption row's text.
func (p *transcriptPlayer) attach() {
	v := p.view
	p.marks = p.marks[:0]
	for i, o := range v.list.Objects {
		row, ok := o.(*fyne.Container)
		if !ok || i >= len(v.captions) || len(row.Objects) < 3 {
			continue
		}
		label := row.Objects[2].(*widget.Label)
		m := newWordMarks(label, v.captions[i], func(sec float64) { p.seek(secs(sec), true) })
		row.Objects = append(row.Objects[:3], m)
		p.marks = append(p.marks, m)
	}
	v.list.Refresh()
}

// detach takes the marks away and the highlight off.
func (p *transcriptPlayer) detach() {
	if p.view.list == nil {
		return
	}
	for _, o := range p.view.list.Objects {
		if row, ok := o.(*fyne.Container); ok && len(row.Objects) > 3 {
			row.Objects = row.Objects[:3]
			if l, ok := row.Objects[2].(*widget.Label); ok && l.Importance == widget.HighImportance {
				l.Importance = widget.MediumImportance
				l.Refresh()
			}
		}
	}
	p.marks = nil
}

// toggle plays or pauses.
func (p *transcriptPlayer) toggle() {
	if p.kept == nil {
		return
	}
	if p.isPlaying() {
		p.pause()
		return
	}
	at := p.at
	if at >= p.kept.Duration()-10*time.Millisecond {
		at = 0 // played to the end: again from the start
	}
	p.seek(at, true)
}

// isPlaying reports whether the player plays, or is about to.
func (p *transcriptPlayer) isPlaying() bool { return p.playing != nil || p.starting }

// pause stops the speaker where it is.
func (p *transcriptPlayer) pause() {
	p.gen++
	at := p.position()
	p.stopPlaying()
	p.setPlayButton(false)
	p.show(at)
}

// position is the playhead: where playing started plus what has been
// played, or where it stopped.
func (p *transcriptPlayer) position() time.Duration {
	if p.playing == nil {
		return p.at
	}
	return p.from + p.playing.Played()
}

// stopPlaying silences the speaker in the background.
func (p *transcriptPlayer) stopPlaying() {
	if p.watch != nil {
		p.watch()
		p.watch = nil
	}
	p.starting = false
	if pl := p.playing; pl != nil {
		p.playing = nil
		p.app.goAsync(func(context.Context) { _ = pl.Stop() })
	}
}

// seek moves the playhead to at, and plays from there when play is set.
func (p *transcriptPlayer) seek(at time.Duration, play bool) {
	if p.kept == nil {
		return
	}
	at = max(0, min(at, p.kept.Duration()))
	p.gen++
	gen := p.gen
	p.stopPlaying()
	p.show(at)
	if !play {
		p.setPlayButton(false)
		return
	}
	p.setPlayButton(true)
	p.starting = true
	kept := p.kept
	if at >= kept.Duration() {
		p.setPlayButton(false)
		return
	}
	p.app.goAsync(func(ctx context.Context) {
		pl, err := p.app.ws.PlayKept(ctx, kept, at)
		p.app.onUI(func() {
			if gen != p.gen {
				if pl != nil {
					p.app.goAsync(func(context.Context) { _ = pl.Stop() })
				}
				return
			}
			p.starting = false
			if err != nil {
				p.setPlayButton(false)
				p.status(plainError(err), widget.DangerImportance)
				return
			}
			p.playing, p.from = pl, at
			p.follow(pl, gen)
		})
	})
}

// follow shows the playhead of pl until it ends or the player moves on.
func (p *transcriptPlayer) follow(pl *sessions.Playing, gen int) {
	ctx, cancel := context.WithCancel(p.app.ctx)
	p.watch = cancel
	p.app.goAsync(func(context.Context) {
		p.app.followPlaying(ctx, pl, func(time.Duration) {
			if gen == p.gen && p.playing == pl {
				p.show(p.position())
			}
		}, func(error) {
			if gen == p.gen {
				p.ended()
			}
		})
	})
}

// ended shows the end of what was played.
func (p *transcriptPlayer) ended() {
	at := p.position()
	if err := p.playing.Err(); err != nil {
		p.status(plainError(err), widget.DangerImportance)
	}
	p.playing = nil
	if p.watch != nil {
		p.watch()
		p.watch = nil
	}
	p.setPlayButton(false)
	p.show(at)
}

func (p *transcriptPlayer) setPlayButton(playing bool) {
	if playing {
		p.play.SetText("Pause")
		p.play.SetIcon(theme.MediaPauseIcon())
	} else {
		p.play.SetText("Play")
		p.play.SetIcon(theme.MediaPlayIcon())
	}
}

// show puts the playhead at at: the position, the slider, the caption
// heard and its word.
func (p *transcriptPlayer) show(at time.Duration) {
	if p.kept == nil {
		return
	}
	p.at = at
	sec := at.Seconds()
	p.pos.SetText(timecode.Of(sec) + " / " + timecode.Of(p.kept.Duration().Seconds()))
	p.setting = true
	p.slider.SetValue(sec)
	p.setting = false
	row := -1
	for i, c := range p.view.captions {
		if c.Start <= sec+0.001 {
			row = i
		} else {
			break
		}
	}
	if row != p.caption {
		p.highlight(p.caption, false)
		p.highlight(row, true)
		p.caption = row
		p.view.scrollIntoView(row)
	}
	for i, m := range p.marks {
		if i == row {
			m.markAt(sec)
		} else {
			m.setMark(-1)
		}
	}
}

// highlight draws row i's text in the accent colour, or as before.
func (p *transcriptPlayer) highlight(i int, on bool) {
	if i < 0 || i >= len(p.view.list.Objects) {
		return
	}
	row := p.view.list.Objects[i].(*fyne.Container)
	l := row.Objects[2].(*widget.Label)
	l.Importance = widget.MediumImportance
	if on {
		l.Importance = widget.HighImportance
	}
	l.Refresh()
}

// heard returns the row highlighted and the text of the word marked, ""
// when none. Tests use it.
func (p *transcriptPlayer) heard() (int, string) {
	if p.caption < 0 || p.caption >= len(p.marks) {
		return p.caption, ""
	}
	return p.caption, p.marks[p.caption].markedText()
}

// wordMarks lies over a caption row's text: it marks the word at the
// playhead and turns a tap into a seek, to the word tapped or else to the
// caption's start. It places the words as the label wraps them (greedy,
// at spaces, inside the label's inner padding), which is where a person
// sees them.
type wordMarks struct {
	widget.BaseWidget
	label   *widget.Label
	caption sessions.Caption
	tokens  []string // the label's text split at spaces
	mark    int      // token marked, -1 for none
	onTap   func(sec float64)
	rect    *canvas.Rectangle
}

func newWordMarks(label *widget.Label, c sessions.Caption, onTap func(float64)) *wordMarks {
	m := &wordMarks{label: label, caption: c, tokens: strings.Fields(label.Text), mark: -1, onTap: onTap}
	m.ExtendBaseWidget(m)
	return m
}

// wordOf is the word of the caption that token i shows: the same index
// when the caption's text is its words joined, else the word at the same
// share of the caption.
func (m *wordMarks) wordOf(i int) int {
	n, t := len(m.caption.Words), len(m.tokens)
	switch {
	case n == 0 || t == 0:
		return -1
	case n == t:
		return i
	}
	return min(n-1, i*n/t)
}

// tokenOf is the token that shows word w.
func (m *wordMarks) tokenOf(w int) int {
	n, t := len(m.caption.Words), len(m.tokens)
	switch {
	case w < 0 || n == 0 || t == 0:
		return -1
	case n == t:
		return w
	}
	return min(t-1, w*t/n)
}

// markAt marks the word said at sec: the last that began by then.
func (m *wordMarks) markAt(sec float64) {
	w := -1
	for i, word := range m.caption.Words {
		if word.Start <= sec+0.001 {
			w = i
		}
	}
	m.setMark(m.tokenOf(w))
}

func (m *wordMarks) setMark(tok int) {
	if tok == m.mark {
		return
	}
	m.mark = tok
	m.Refresh()
}

// markedText is the token marked, "" for none.
func (m *wordMarks) markedText() string {
	if m.mark < 0 || m.mark >= len(m.tokens) {
		return ""
	}
	return m.tokens[m.mark]
}

// boxes places each token as the label draws it in a width of w.
func (m *wordMarks) boxes(w float32) []fyne.Position {
	th := m.label.Theme()
	pad := th.Size(theme.SizeNameInnerPadding)
	size := th.Size(theme.SizeNameText)
	style := m.label.TextStyle
	space := fyne.MeasureText(" ", size, style).Width
	lineH := fyne.MeasureText("M", size, style).Height
	out := make([]fyne.Position, len(m.tokens))
	x, y := pad, pad
	for i, tok := range m.tokens {
		tw := fyne.MeasureText(tok, size, style).Width
		if x > pad && x+tw > w-pad {
			x, y = pad, y+lineH
		}
		out[i] = fyne.NewPos(x, y)
		x += tw + space
	}
	return out
}

// Tapped seeks to the word under the tap, or to the caption's start.
func (m *wordMarks) Tapped(ev *fyne.PointEvent) {
	sec := m.caption.Start
	if tok := m.tokenAt(ev.Position); tok >= 0 {
		if w := m.wordOf(tok); w >= 0 {
			sec = m.caption.Words[w].Start
		}
	}
	m.onTap(sec)
}

// tokenAt is the token drawn at pos, -1 for none.
func (m *wordMarks) tokenAt(pos fyne.Position) int {
	th := m.label.Theme()
	size := th.Size(theme.SizeNameText)
	lineH := fyne.MeasureText("M", size, m.label.TextStyle).Height
	for i, b := range m.boxes(m.Size().Width) {
		tw := fyne.MeasureText(m.tokens[i], size, m.label.TextStyle).Width
		if pos.Y >= b.Y && pos.Y < b.Y+lineH && pos.X >= b.X-2 && pos.X < b.X+tw+2 {
			return i
		}
	}
	return -1
}

// tapToken taps the middle of token i. Tests use it.
func (m *wordMarks) tapToken(i int) {
	b := m.boxes(m.Size().Width)[i]
	m.Tapped(&fyne.PointEvent{Position: b.Add(fyne.NewPos(2, 4))})
}

func (m *wordMarks) CreateRenderer() fyne.WidgetRenderer {
	m.rect = canvas.NewRectangle(color.Transparent)
	m.rect.CornerRadius = 3
	return &wordMarksRenderer{m: m}
}

type wordMarksRenderer struct{ m *wordMarks }

func (r *wordMarksRenderer) Layout(size fyne.Size) {
	m := r.m
	if m.mark < 0 || m.mark >= len(m.tokens) {
		m.rect.Hide()
		return
	}
	th := m.label.Theme()
	ts := th.Size(theme.SizeNameText)
	b := m.boxes(size.Width)[m.mark]
	s := fyne.MeasureText(m.tokens[m.mark], ts, m.label.TextStyle)
	m.rect.Move(b.Subtract(fyne.NewPos(2, 0)))
	m.rect.Resize(fyne.NewSize(s.Width+4, s.Height))
	m.rect.Show()
}

func (r *wordMarksRenderer) MinSize() fyne.Size { return fyne.NewSize(0, 0) }

func (r *wordMarksRenderer) Refresh() {
	m := r.m
	c := theme.Color(theme.ColorNamePrimary)
	rr, g, b, _ := c.RGBA()
	// A highlighter's stroke: the word stays readable through it.
	m.rect.FillColor = color.NRGBA{R: uint8(rr >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x48}
	r.Layout(m.Size())
	m.rect.Refresh()
}

func (r *wordMarksRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.m.rect} }
func (r *wordMarksRenderer) Destroy()                     {}
