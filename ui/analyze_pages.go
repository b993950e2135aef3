package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
)

// Styles of the page marks in the source of a paged document: each page
// starts with "p. N", the page a link led to in the highlight's colour.
var (
	pageMarkStyle = widget.RichTextStyle{
		Inline:    true,
		ColorName: theme.ColorNamePlaceHolder,
		SizeName:  theme.SizeNameCaptionText,
		TextStyle: fyne.TextStyle{Bold: true},
	}
	pageMarkChosenStyle = widget.RichTextStyle{
		Inline:    true,
		ColorName: theme.ColorNamePrimary,
		TextStyle: fyne.TextStyle{Bold: true},
	}
)

// pageMark is the mark that starts page n in the source.
func pageMark(n int) string { return fmt.Sprintf("p. %d ", n) }

// pageRow is a passage of the results with the page it starts on.
type pageRow struct {
	page int
	seg  intelSegment
}

// pageLinks lists the passages of an analysis of a paged source (a PDF)
// by page: every sentiment passage, topic and intent, each with a link
// to its page ("p. 3") that shows the page's start in the source, and
// the passage itself chosen by a tap on its row. Hidden for a source
// without pages. Touched only on the UI goroutine.
type pageLinks struct {
	onPage    func(page int)
	onPassage func(intelSegment)

	rows  []pageRow
	list  *widget.List
	box   *fyne.Container // heading and list
	split *container.Split
	body  *fyne.Container // the panel alone, or the split
	panel fyne.CanvasObject
	// starts are the byte offsets in the result's text where each page
	// starts, by page number.
	starts map[int]int
}

func newPageLinks(onPage func(int), onPassage func(intelSegment)) *pageLinks {
	return &pageLinks{onPage: onPage, onPassage: onPassage}
}

// wrap returns panel with the list under it, shown for paged sources.
func (p *pageLinks) wrap(panel fyne.CanvasObject) *fyne.Container {
	p.panel = panel
	p.list = widget.NewList(
		func() int { return len(p.rows) },
		func() fyne.CanvasObject {
			link := widget.NewHyperlink("p. 000", nil)
			text := widget.NewLabel("")
			text.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, link, nil, text)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < 0 || id >= len(p.rows) {
				return
			}
			r := p.rows[id]
			c, ok := o.(*fyne.Container)
			if !ok || len(c.Objects) != 2 {
				return
			}
			if text, ok := c.Objects[0].(*widget.Label); ok {
				text.SetText(rowWords(r.seg))
			}
			if link, ok := c.Objects[1].(*widget.Hyperlink); ok {
				link.SetText(fmt.Sprintf("p. %d", r.page))
				page := r.page
				link.OnTapped = func() { p.onPage(page) }
			}
		})
	p.list.OnSelected = func(id widget.ListItemID) {
		if id >= 0 && id < len(p.rows) {
			p.onPassage(p.rows[id].seg)
		}
	}
	p.box = container.NewBorder(heading("Passages by page"), nil, nil, nil, p.list)
	p.body = container.NewStack(panel)
	return p.body
}

// rowWords describes a passage in its row: what it is and its words.
func rowWords(s intelSegment) string {
	text := strings.Join(strings.Fields(s.text), " ")
	if len(text) > 160 {
		text = preview(text, 160) + "…"
	}
	return fmt.Sprintf("%s · %s (%s) — “%s”", s.kind, s.label, scoreWords(s), text)
}

// show lists the passages of res, which panel shows, by page; for a
// source without pages it hides the list.
func (p *pageLinks) show(res *sessions.AnalysisResult, panel *intelPanel) {
	p.rows = nil
	p.starts = nil
	p.list.UnselectAll()
	if len(res.Pages) == 0 || res.Text == "" {
		p.body.Objects = []fyne.CanvasObject{p.panel}
		p.body.Refresh()
		return
	}
	p.starts = make(map[int]int, len(res.Pages))
	for _, ps := range res.Pages {
		if sp, ok := res.Words().Span(ps.StartWord, ps.StartWord); ok {
			if _, seen := p.starts[ps.Page]; !seen {
				p.starts[ps.Page] = sp.Start
			}
		}
	}
	var segs []intelSegment
	segs = append(segs, panel.plot.segs...)
	segs = append(segs, panel.topicRows...)
	segs = append(segs, panel.intentRows...)
	for _, s := range segs {
		if s.text == "" {
			s.text = res.Passage(s.startWord, s.endWord, "")
		}
		p.rows = append(p.rows, pageRow{page: res.PageOf(s.startWord), seg: s})
	}
	slices.SortStableFunc(p.rows, func(a, b pageRow) int {
		return cmp.Or(cmp.Compare(a.page, b.page), cmp.Compare(a.seg.startWord, b.seg.startWord))
	})
	if p.split == nil {
		p.split = container.NewVSplit(p.panel, p.box)
		p.split.Offset = 0.5
	}
	p.body.Objects = []fyne.CanvasObject{p.split}
	p.body.Refresh()
	p.list.Refresh()
}

// selectPage chooses the first passage listed on page n or after, as a
// tap on its row does, with its row in view; false when
// there is none.
func (p *pageLinks) selectPage(n int) bool {
	for i, r := range p.rows {
		if r.page >= n {
			p.list.Select(i)
			// The rows after it in view too, where its page goes on.
			p.list.ScrollTo(min(i+2, len(p.rows)-1))
			return true
		}
	}
	return false
}

// visible reports whether the list is shown.
func (p *pageLinks) visible() bool { return len(p.rows) > 0 }

// showPage shows the start of page n of the result shown in the source:
// its page mark in the highlight's colour, scrolled into view.
func (t *analyzeTab) showPage(n int) {
	res := t.shown
	off, ok := t.pageList.starts[n]
	if res == nil || !ok {
		return
	}
	t.pages.showOffset(off)
	from, to := t.pages.span()
	t.source.Segments = t.pagedSegments(res.Text, from, to, nil, n)
	t.source.Refresh()
	t.scrollSourceTo(from, to, off)
	words := preview(strings.TrimSpace(res.Text[off:min(off+200, len(res.Text))]), 80)
	last := 0
	for _, ps := range res.Pages {
		last = max(last, ps.Page)
	}
	t.panel.setSelected(fmt.Sprintf("Page %d of %d, which starts “%s…”.", n, last, words))
}

// pagedSegments cuts text[from:to] of a paged result into the source's
// segments: a page mark where each page starts (page chosen in the
// highlight's colour), and the passage hl, if any, highlighted.
func (t *analyzeTab) pagedSegments(text string, from, to int, hl *sessions.Span, chosen int) []widget.RichTextSegment {
	marks := map[int]int{} // offset -> page
	cuts := []int{from, to}
	for page, off := range t.pageList.starts {
		if off >= from && off < to {
			marks[off] = page
			cuts = append(cuts, off)
		}
	}
	hlStart, hlEnd := -1, -1
	if hl != nil {
		hlStart, hlEnd = max(hl.Start, from), min(hl.End, to)
		if hlStart < hlEnd {
			cuts = append(cuts, hlStart, hlEnd)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var segs []widget.RichTextSegment
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if page, ok := marks[a]; ok {
			style := pageMarkStyle
			if page == chosen {
				style = pageMarkChosenStyle
			}
			segs = append(segs, &widget.TextSegment{Text: pageMark(page), Style: style})
		}
		style := widget.RichTextStyleInline
		if a >= hlStart && a < hlEnd {
			style = highlightStyle
		}
		segs = append(segs, &widget.TextSegment{Text: text[a:b], Style: style})
	}
	return segs
}

// scrollSourceTo scrolls the source so that byte off of the page from-to
// is in the upper third of the view, by its place in the page (lines
// wrap, so this is close, not exact).
func (t *analyzeTab) scrollSourceTo(from, to, off int) {
	full := t.source.MinSize().Height
	y := full*float32(off-from)/float32(max(to-from, 1)) - t.sourceBox.Size().Height/3
	t.sourceBox.ScrollToOffset(fyne.NewPos(0, max(y, 0)))
}
