package ui

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
)

// speakerName names a speaker for people: the service counts from 0,
// people from 1.
func speakerName(n int) string {
	return "Speaker " + strconv.Itoa(n+1)
}

// captionView shows a transcript as it grows: one row per final caption,
// its time and speaker in a gutter and its text beside, and at the end the
// interim text, in dim italics, that may still change. It follows the end
// of the transcript while the reader is there, and stays put when they
// have scrolled back to read.
//
// Touch it only on the UI goroutine. Changes are gathered and shown by
// commit, so that a batch of events costs one layout.
type captionView struct {
	cols    *captionColumns
	list    *fyne.Container // the rows of finals, oldest first
	interim *fyne.Container // one row: the interim text; hidden when there is none
	scroll  *container.Scroll
	hint    *widget.Label

	captions []sessions.Caption // the finals shown, in order
	speakers map[int]bool       // speakers seen among them
	dirty    bool               // something changed since the last commit
	stick    bool               // the view was at the end when the change began
	relayout bool               // a gutter column grew: every row must be laid out again
	// onReset, when set, runs as the view is emptied (the player of
	// the audio shown, transcriptplayer.go, lets go of it).
	onReset func()
}

func newCaptionView() *captionView {
	return &captionView{cols: &captionColumns{}, speakers: map[int]bool{}}
}

// buildUI creates the view's widgets.
func (v *captionView) buildUI(hint string) fyne.CanvasObject {
	v.list = container.NewVBox()
	v.interim = newCaptionRow(v.cols)
	v.interim.Hide()
	v.scroll = container.NewVScroll(container.NewVBox(v.list, v.interim))
	v.hint = widget.NewLabel(hint)
	v.hint.Alignment = fyne.TextAlignCenter
	v.hint.Wrapping = fyne.TextWrapWord
	v.hint.Importance = widget.LowImportance
	return container.NewStack(v.scroll, container.NewCenter(container.New(widthLayout{width: 460}, v.hint)))
}

// reset empties the view and shows hint in its place ("" for none).
func (v *captionView) reset(hint string) {
	if v.onReset != nil {
		v.onReset()
	}
	v.list.Objects = nil
	v.list.Refresh()
	v.captions = nil
	v.speakers = map[int]bool{}
	*v.cols = captionColumns{}
	v.interim.Hide()
	v.hint.SetText(hint)
	v.hint.Show()
	v.scroll.ScrollToTop()
	v.dirty = false
}

// show replaces the transcript with caps, scrolled to its start.
func (v *captionView) show(caps []sessions.Caption, hint string) {
	v.reset(hint)
	for _, c := range caps {
		v.addFinal(c)
	}
	v.commit()
	v.scroll.ScrollToTop()
}

// mark notes a change; the first of a batch remembers whether the reader
// was at the end, so that commit can keep them there.
func (v *captionView) mark() {
	if v.dirty {
		return
	}
	v.dirty = true
	v.stick = v.atEnd()
}

// atEnd reports whether the end of the transcript is in view, within a
// line.
func (v *captionView) atEnd() bool {
	content := v.scroll.Content.Size().Height
	return v.scroll.Offset.Y+v.scroll.Size().Height >= content-2*theme.TextSize()
}

// addFinal appends a final caption.
func (v *captionView) addFinal(c sessions.Caption) {
	if strings.TrimSpace(c.Text) == "" {
		return
	}
	v.mark()
	row := newCaptionRow(v.cols)
	setCaptionRow(row, c.Start, c.Side, c.Speaker, c.Text, false)
	v.relayout = v.cols.fit(row) || v.relayout
	// Wrap the text at the width it will have, so the row's first height
	// is its real one.
	if w := v.cols.textWidth(v.list.Size().Width); w > 0 {
		row.Objects[2].Resize(fyne.NewSize(w, 0))
	}
	v.list.Objects = append(v.list.Objects, row)
	v.captions = append(v.captions, c)
	if c.Speaker != nil {
		v.speakers[*c.Speaker] = true
	}
	v.hint.Hide()
}

// setInterim shows the interim text at the end; nil (or empty text)
// removes it.
func (v *captionView) setInterim(ev *sessions.InterimEvent) {
	if ev == nil || strings.TrimSpace(ev.Text) == "" {
		if v.interim.Visible() {
			v.mark()
			v.interim.Hide()
		}
		return
	}
	v.mark()
	var speaker *int
	if len(ev.Words) > 0 {
		speaker = ev.Words[0].Speaker
	}
	setCaptionRow(v.interim, ev.Start, ev.Side, speaker, ev.Text, true)
	v.relayout = v.cols.fit(v.interim) || v.relayout
	v.interim.Show()
	v.hint.Hide()
}

// commit shows what changed since the last commit, in one layout, and
// keeps the end in view if the reader was there.
func (v *captionView) commit() {
	if !v.dirty {
		return
	}
	v.dirty = false
	if v.relayout {
		v.relayout = false
		v.list.Refresh()
	} else {
		v.list.Layout.Layout(v.list.Objects, v.list.Size())
	}
	v.interim.Refresh()
	v.scroll.Content.Resize(fyne.NewSize(v.scroll.Size().Width, v.scroll.Content.MinSize().Height))
	if v.stick {
		v.scroll.ScrollToBottom()
	} else {
		v.scroll.Refresh()
	}
}

// speakerCount is how many speakers the finals shown have.
func (v *captionView) speakerCount() int { return len(v.speakers) }

// lines reads back what the rows show, one string per row: time,
// speaker and text separated by "|", the interim last and marked with a
// leading "~". Tests use it.
func (v *captionView) lines() []string {
	var out []string
	read := func(row *fyne.Container) string {
		t := row.Objects[0].(*widget.Label).Text
		s := ""
		if sp := row.Objects[1].(*widget.RichText); sp.Visible() {
			s = sp.String()
		}
		return t + "|" + s + "|" + row.Objects[2].(*widget.Label).Text
	}
	for _, o := range v.list.Objects {
		out = append(out, read(o.(*fyne.Container)))
	}
	if v.interim.Visible() {
		out = append(out, "~"+read(v.interim))
	}
	return out
}

// newCaptionRow makes an empty row: a time, a speaker and the text. The
// time is in the text font, right-aligned: its digits are all of one
// width, so the times line up as a monospaced font would line them, and
// the window need not load a monospaced font (two faces, 1.5 MB) to show
// the Captions tab.
func newCaptionRow(cols *captionColumns) *fyne.Container {
	t := widget.NewLabelWithStyle("", fyne.TextAlignTrailing, fyne.TextStyle{})
	t.Importance = widget.LowImportance
	s := widget.NewRichText()
	text := widget.NewLabel("")
	text.Wrapping = fyne.TextWrapWord
	text.Selectable = true
	return container.New(captionRowLayout{cols: cols}, t, s, text)
}

// whoSaid names who said a caption, and the colour of the name: the side
// of a meeting heard both ways ("You"; "Others", with the speaker among
// them when speakers are told apart), else the speaker; ok is false when
// the caption says neither.
func whoSaid(side string, speaker *int) (name string, color int, ok bool) {
	switch {
	case side == sessions.SideYou:
		return side, 0, true
	case side != "" && speaker != nil:
		return fmt.Sprintf("%s (speaker %d)", side, *speaker+1), *speaker + 1, true
	case side != "":
		return side, 1, true
	case speaker != nil:
		return speakerName(*speaker), *speaker, true
	}
	return "", 0, false
}

// setCaptionRow fills a row. An interim is drawn dim and in italics.
func setCaptionRow(row *fyne.Container, start float64, side string, speaker *int, text string, interim bool) {
	t := row.Objects[0].(*widget.Label)
	s := row.Objects[1].(*widget.RichText)
	x := row.Objects[2].(*widget.Label)
	t.Text = timecode.Of(start)
	if name, color, ok := whoSaid(side, speaker); ok {
		s.Segments = []widget.RichTextSegment{&widget.TextSegment{
			Text: name,
			Style: widget.RichTextStyle{
				Inline:    true,
				ColorName: speakerColor(color),
				TextStyle: fyne.TextStyle{Bold: !interim, Italic: interim},
			},
		}}
		s.Show()
	} else {
		s.Segments = nil
		s.Hide()
	}
	x.Text = strings.TrimSpace(text)
	x.TextStyle = fyne.TextStyle{Italic: interim}
	x.Importance = widget.MediumImportance
	if interim {
		x.Importance = widget.LowImportance
	}
	t.Refresh()
	s.Refresh()
	x.Refresh()
}

// captionColumns are the widths of the gutter's columns, shared by every
// row so that times, speakers and texts line up. They only grow.
type captionColumns struct {
	time, speaker float32
}

// fit widens the columns to the row's time and speaker, and reports
// whether they grew.
func (c *captionColumns) fit(row *fyne.Container) bool {
	grew := false
	if w := row.Objects[0].MinSize().Width; w > c.time {
		c.time, grew = w, true
	}
	if s := row.Objects[1]; s.Visible() {
		if w := s.MinSize().Width; w > c.speaker {
			c.speaker, grew = w, true
		}
	}
	return grew
}

// textWidth is the width left for the text in a row of the given width.
func (c *captionColumns) textWidth(row float32) float32 {
	gaps := theme.Padding()
	if c.speaker > 0 {
		gaps *= 2
	}
	return row - c.time - c.speaker - gaps
}

// captionRowLayout lays out a row on the shared columns. The text is
// wrapped at its column's width before the row's height is taken from it.
type captionRowLayout struct{ cols *captionColumns }

func (l captionRowLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	t, s, x := objects[0], objects[1], objects[2]
	pad := theme.Padding()
	tw := max(l.cols.time, t.MinSize().Width)
	sw := l.cols.speaker
	textX := tw + pad
	if sw > 0 {
		textX += sw + pad
	}
	xw := max(size.Width-textX, 0)
	x.Resize(fyne.NewSize(xw, x.Size().Height))
	h := max(t.MinSize().Height, x.MinSize().Height)
	if s.Visible() {
		h = max(h, s.MinSize().Height)
	}
	t.Move(fyne.NewPos(0, 0))
	t.Resize(fyne.NewSize(tw, h))
	s.Move(fyne.NewPos(tw+pad, 0))
	s.Resize(fyne.NewSize(sw, h))
	x.Move(fyne.NewPos(textX, 0))
	x.Resize(fyne.NewSize(xw, h))
	if len(objects) > 3 { // what lies over the text (transcriptplayer.go's word marks)
		objects[3].Move(x.Position())
		objects[3].Resize(x.Size())
	}
}

func (l captionRowLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	t, s, x := objects[0], objects[1], objects[2]
	h := max(t.MinSize().Height, x.MinSize().Height)
	if s.Visible() {
		h = max(h, s.MinSize().Height)
	}
	w := max(l.cols.time, t.MinSize().Width) + theme.Padding() + x.MinSize().Width
	if l.cols.speaker > 0 {
		w += l.cols.speaker + theme.Padding()
	}
	return fyne.NewSize(w, h)
}

// scrollIntoView scrolls just enough to show row i whole, when it is
// not: the caption being played follows the playhead.
func (v *captionView) scrollIntoView(i int) {
	if i < 0 || i >= len(v.list.Objects) {
		return
	}
	row := v.list.Objects[i]
	top, h := row.Position().Y, row.Size().Height
	view := v.scroll.Size().Height
	switch {
	case top < v.scroll.Offset.Y:
		v.scroll.Offset.Y = top
	case top+h > v.scroll.Offset.Y+view:
		v.scroll.Offset.Y = max(0, top+h-view)
	default:
		return
	}
	v.scroll.Refresh()
}
