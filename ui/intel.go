package ui

import (
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// intelSegment is a passage the intelligence panel links to: a sentiment
// passage, or the passage of a topic or an intent.
type intelSegment struct {
	kind      string // "Sentiment", "Topic" or "Intent"
	label     string // the sentiment, topic or intent
	score     float64
	text      string
	startWord int
	endWord   int
}

// intelPanel shows the intelligence of a document or a transcript: the
// summary, the average sentiment with a plot of the sentiment along the
// document, and the topics and intents with their confidence. Choosing a
// passage (a topic, an intent, a bar of the plot) calls onSelect, which
// shows it in the source: highlighted in a document, as a time range in
// a transcript. The Analyze tab and the file transcription view share it.
// Its fields are touched only on the UI goroutine.
type intelPanel struct {
	onSelect func(intelSegment)

	summary    *widget.Label
	summaryBox *fyne.Container
	average    *widget.Label
	plot       *sentimentPlot
	sentBox    *fyne.Container
	topics     *widget.List
	intents    *widget.List
	selected   *widget.Label

	topicRows, intentRows []intelSegment
}

func newIntelPanel(onSelect func(intelSegment)) *intelPanel {
	return &intelPanel{onSelect: onSelect}
}

func (p *intelPanel) buildUI() fyne.CanvasObject {
	p.summary = widget.NewLabel("")
	p.summary.Wrapping = fyne.TextWrapWord
	p.summaryBox = container.NewVBox(heading("Summary"), p.summary)
	p.average = widget.NewLabel("")
	p.plot = newSentimentPlot(func(s intelSegment) { p.choose(s) })
	p.sentBox = container.NewVBox(heading("Sentiment"), p.average, p.plot)
	p.topics = p.newList(&p.topicRows)
	p.intents = p.newList(&p.intentRows)
	p.selected = widget.NewLabel("")
	p.selected.Wrapping = fyne.TextWrapWord
	lists := container.NewGridWithColumns(2,
		container.NewBorder(heading("Topics"), nil, nil, nil, p.topics),
		container.NewBorder(heading("Intents"), nil, nil, nil, p.intents))
	p.clear()
	// A long summary scrolls rather than squeezing the lists out of sight.
	split := container.NewVSplit(container.NewVScroll(container.NewVBox(p.summaryBox, p.sentBox)), lists)
	split.Offset = 0.7
	return container.NewBorder(nil, p.selected, nil, nil, split)
}

// selectFirst chooses the first intent, or the first topic when there is
// no intent, as a click on it does.
func (p *intelPanel) selectFirst() {
	switch {
	case len(p.intentRows) > 0:
		p.intents.Select(0)
	case len(p.topicRows) > 0:
		p.topics.Select(0)
	}
}

func heading(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// newList lists *rows, a label and its confidence a line.
func (p *intelPanel) newList(rows *[]intelSegment) *widget.List {
	l := widget.NewList(
		func() int { return len(*rows) },
		func() fyne.CanvasObject {
			name := widget.NewLabel("")
			name.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, nil, widget.NewLabel("100%"), name)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < 0 || id >= len(*rows) {
				return
			}
			r := (*rows)[id]
			c := o.(*fyne.Container)
			c.Objects[0].(*widget.Label).SetText(r.label)
			c.Objects[1].(*widget.Label).SetText(sessions.Percent(r.score))
		})
	l.OnSelected = func(id widget.ListItemID) {
		if id >= 0 && id < len(*rows) {
			p.choose((*rows)[id])
		}
	}
	return l
}

// choose shows what was chosen and tells the owner.
func (p *intelPanel) choose(s intelSegment) {
	if p.onSelect != nil {
		p.onSelect(s)
	}
}

// setSelected describes the passage chosen, under the lists.
func (p *intelPanel) setSelected(text string) { p.selected.SetText(text) }

// clear empties the panel.
func (p *intelPanel) clear() { p.show("", nil, nil, nil) }

// show fills the panel; a nil result or "" summary hides its part.
func (p *intelPanel) show(summary string, s *api.Sentiments, t *api.Topics, in *api.Intents) {
	p.summary.SetText(strings.TrimSpace(summary))
	p.summaryBox.Hidden = summary == ""
	p.summaryBox.Refresh()
	var segs []intelSegment
	if s != nil {
		p.average.SetText(fmt.Sprintf("Average: %s (%+.2f) over %s", s.Average.Sentiment, s.Average.SentimentScore, plural(len(s.Segments), "passage")))
		for _, x := range s.Segments {
			segs = append(segs, intelSegment{kind: "Sentiment", label: x.Sentiment, score: x.SentimentScore, text: x.Text, startWord: x.StartWord, endWord: x.EndWord})
		}
	}
	p.plot.setSegments(segs)
	p.sentBox.Hidden = s == nil
	p.sentBox.Refresh()
	p.topicRows = labelledRows("Topic", sessions.TopicSegments(t))
	p.intentRows = labelledRows("Intent", sessions.IntentSegments(in))
	for _, l := range []*widget.List{p.topics, p.intents} {
		l.UnselectAll()
		l.Refresh()
	}
	p.selected.SetText("")
}

// labelledRows lists every label of segs with its passage.
func labelledRows(kind string, segs []sessions.LabelledSegment) []intelSegment {
	var out []intelSegment
	for _, s := range segs {
		for _, l := range s.Labels {
			out = append(out, intelSegment{kind: kind, label: l.Name, score: l.Confidence, text: s.Text, startWord: s.StartWord, endWord: s.EndWord})
		}
	}
	return out
}

// hasIntelligence reports whether a batch response carries any audio
// intelligence.
func hasIntelligence(r *api.ListenResponse) bool {
	if r == nil {
		return false
	}
	x := r.Results
	return x.Summary != nil || x.Sentiments != nil || x.Topics != nil || x.Intents != nil
}

// Colours of the sentiment plot, by label.
var (
	positiveColor = color.NRGBA{R: 0x2e, G: 0x9d, B: 0x5b, A: 0xff}
	negativeColor = color.NRGBA{R: 0xd6, G: 0x45, B: 0x45, A: 0xff}
	neutralColor  = color.NRGBA{R: 0x90, G: 0x90, B: 0x90, A: 0xff}
)

func sentimentColor(label string) color.Color {
	switch label {
	case "positive":
		return positiveColor
	case "negative":
		return negativeColor
	}
	return neutralColor
}

// sentimentPlot draws the sentiment along the document: one bar per
// passage, as wide as the passage's share of the words, rising for
// positive scores and falling for negative ones, coloured by label.
// Tapping a bar chooses its passage.
type sentimentPlot struct {
	widget.BaseWidget
	segs  []intelSegment
	total int // words covered, for the x axis
	onTap func(intelSegment)
}

func newSentimentPlot(onTap func(intelSegment)) *sentimentPlot {
	p := &sentimentPlot{onTap: onTap}
	p.ExtendBaseWidget(p)
	return p
}

func (p *sentimentPlot) setSegments(segs []intelSegment) {
	p.segs = segs
	p.total = 0
	for _, s := range segs {
		p.total = max(p.total, s.endWord+1)
	}
	p.Refresh()
}

// bar returns where segment i is drawn along a width w, or false when it
// falls outside the words.
func (p *sentimentPlot) bar(i int, w float32) (x0, x1 float32, ok bool) {
	s := p.segs[i]
	if p.total <= 0 || s.endWord < s.startWord || s.endWord < 0 {
		return 0, 0, false
	}
	scale := w / float32(p.total)
	x0 = float32(max(s.startWord, 0)) * scale
	x1 = float32(s.endWord+1) * scale
	return x0, max(x1, x0+1), true
}

// Tapped chooses the passage under the tap.
func (p *sentimentPlot) Tapped(ev *fyne.PointEvent) {
	w := p.Size().Width
	for i := range p.segs {
		if x0, x1, ok := p.bar(i, w); ok && ev.Position.X >= x0 && ev.Position.X < x1 {
			if p.onTap != nil {
				p.onTap(p.segs[i])
			}
			return
		}
	}
}

func (p *sentimentPlot) MinSize() fyne.Size { return fyne.NewSize(200, 56) }

func (p *sentimentPlot) CreateRenderer() fyne.WidgetRenderer {
	r := &plotRenderer{p: p, axis: canvas.NewLine(theme.Color(theme.ColorNameSeparator))}
	return r
}

type plotRenderer struct {
	p    *sentimentPlot
	axis *canvas.Line
	bars []*canvas.Rectangle
}

func (r *plotRenderer) Layout(size fyne.Size) {
	mid := size.Height / 2
	r.axis.Position1 = fyne.NewPos(0, mid)
	r.axis.Position2 = fyne.NewPos(size.Width, mid)
	for i, b := range r.bars {
		x0, x1, ok := r.p.bar(i, size.Width)
		if !ok {
			b.Hide()
			continue
		}
		score := float32(min(max(r.p.segs[i].score, -1), 1))
		h := max(abs32(score)*(mid-2), 2)
		y := mid - h
		if score < 0 {
			y = mid
		}
		b.Move(fyne.NewPos(x0, y))
		b.Resize(fyne.NewSize(max(x1-x0-1, 1), h))
		b.Show()
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

func (r *plotRenderer) MinSize() fyne.Size { return r.p.MinSize() }

func (r *plotRenderer) Refresh() {
	for len(r.bars) < len(r.p.segs) {
		r.bars = append(r.bars, canvas.NewRectangle(neutralColor))
	}
	r.bars = r.bars[:len(r.p.segs)]
	for i, b := range r.bars {
		b.FillColor = sentimentColor(r.p.segs[i].label)
		b.Refresh()
	}
	r.axis.StrokeColor = theme.Color(theme.ColorNameSeparator)
	r.Layout(r.p.Size())
	canvas.Refresh(r.p)
}

func (r *plotRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.axis}
	for _, b := range r.bars {
		objs = append(objs, b)
	}
	return objs
}

func (r *plotRenderer) Destroy() {}
