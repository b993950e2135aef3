package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/count"
)

// sourcePageBytes is the most of a document the Analyze tab lays out at
// once: a rich text grows slow to lay out as an entry does (see
// editorLimit), and a document may be 10 MB.
const sourcePageBytes = 12 << 10

// heldPreviewBytes is how much of a text kept aside is shown.
const heldPreviewBytes = 1500

// pager shows a long text a page at a time: its bar, hidden for a text of
// one page, says where the page is and turns it. Touched only on the UI
// goroutine.
type pager struct {
	pages      [][2]int
	page       int
	bar        *fyne.Container
	label      *widget.Label
	prev, next *widget.Button
	turned     func()
}

func newPager(turned func()) *pager {
	p := &pager{turned: turned}
	p.label = widget.NewLabel("")
	p.prev = widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { p.turn(-1) })
	p.next = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { p.turn(1) })
	p.bar = container.NewHBox(p.prev, p.label, p.next)
	p.bar.Hide()
	return p
}

// set cuts text into pages and shows the first.
func (p *pager) set(text string) {
	p.pages = pageSpans(text, sourcePageBytes)
	p.page = 0
	p.refresh()
}

// span returns the byte offsets of the page shown.
func (p *pager) span() (from, to int) {
	if len(p.pages) == 0 {
		return 0, 0
	}
	return p.pages[p.page][0], p.pages[p.page][1]
}

// showOffset turns to the page holding the byte at off.
func (p *pager) showOffset(off int) {
	for i, pg := range p.pages {
		if off >= pg[0] && off < pg[1] {
			p.page = i
			break
		}
	}
	p.refresh()
}

func (p *pager) turn(by int) {
	if n := p.page + by; n >= 0 && n < len(p.pages) {
		p.page = n
		p.refresh()
		p.turned()
	}
}

func (p *pager) refresh() {
	if len(p.pages) < 2 {
		p.bar.Hide()
		return
	}
	p.label.SetText(fmt.Sprintf("Part %d of %d", p.page+1, len(p.pages)))
	enable(p.prev, p.page > 0)
	enable(p.next, p.page < len(p.pages)-1)
	p.bar.Show()
}

// pageSpans cuts text into spans of at most size bytes, each ending at a
// paragraph, else a line, else a word, when one ends in its second half.
func pageSpans(text string, size int) [][2]int {
	var out [][2]int
	for start := 0; start < len(text); {
		end := len(text)
		if end-start > size {
			end = start + size
			window := text[start:end]
			for _, sep := range []string{"\n\n", "\n", " "} {
				if i := strings.LastIndex(window, sep); i >= size/2 {
					end = start + i + len(sep)
					break
				}
			}
			for end > start+1 && end < len(text) && !utf8.RuneStart(text[end]) {
				end--
			}
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

// preview returns the start of text, at most n bytes, cut between words.
func preview(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	head := text[:n]
	if i := strings.LastIndexAny(head, " \n\t"); i > n/2 {
		head = head[:i]
	}
	return head
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string { return count.Digits(n) }

// upperName starts a sentence with name: "the pasted text" becomes
// "The pasted text"; a file's name is quoted and kept as it is.
func upperName(name string) string {
	if rest, ok := strings.CutPrefix(name, "the "); ok {
		return "The " + rest
	}
	return "“" + name + "”"
}
