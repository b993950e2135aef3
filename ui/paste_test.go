package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
)

// pasteBudget is the most a paste may hold the UI goroutine, and a tab
// switch after it take. Keeping a text aside is a few milliseconds, so a
// loaded machine under the race detector has room. A tab switch under
// Fyne's test driver lays out and paints the tab on the UI goroutine:
// 20 to 75 ms on a loaded machine, and several times that under the race
// detector. So the switch is held to pasteBudget or, when the same
// switch without a paste is slower than a quarter of that, to four times
// its slowest: the paste must not make the window slower.
const pasteBudget = 200 * time.Millisecond

// TestLongPastesKeepTheWindowAnswering pastes 1 MB and 10 MB of text
// into every field that takes free text, as Ctrl+V or the field's menu
// does, and then switches tab. Neither may hold the UI goroutine longer
// than pasteBudget: Fyne's entry took minutes to lay out 1 MB, and the
// window froze. Each field does what its tab says: the Analyze and
// Voices boxes keep the text aside as their document (Voices its first
// 20,000 characters), the others refuse it and say why; none is changed
// by a refused paste.
func TestLongPastesKeepTheWindowAnswering(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	para := "Earshot keeps a long document aside instead of choking on it. Every field is bounded.\n\n"
	type field struct {
		name, tab string
		entry     func() *boundedEntry
		status    func() *widget.Label
		// check reports what is wrong with the field after a paste of
		// text, "" for nothing.
		check func(text string) string
	}
	refused := func(e func() *boundedEntry, status func() *widget.Label) func(string) string {
		return func(string) string {
			if e().Text != "" {
				return "the field took " + megabytes(int64(len(e().Text)))
			}
			if !strings.HasPrefix(status().Text, "Not pasted: the text is ") {
				return "status " + status().Text
			}
			return ""
		}
	}
	analyze := func() *widget.Label { return h.analyze.status }
	voices := func() *widget.Label { return h.voices.status }
	settings := func() *widget.Label { return h.settings.status }
	fields := []field{
		{name: "Analyze text", tab: "Analyze", entry: func() *boundedEntry { return h.analyze.input.entry }, status: analyze,
			check: func(text string) string {
				if !h.analyze.input.Held() || h.analyze.input.Text() != text || h.analyze.input.entry.Visible() {
					return "the text is not kept as the document"
				}
				return ""
			}},
		{name: "Analyze address", tab: "Analyze", entry: func() *boundedEntry { return h.analyze.url }, status: analyze},
		{name: "Voices text", tab: "Voices", entry: func() *boundedEntry { return h.voices.controls.text.entry }, status: voices,
			check: func(text string) string {
				got := h.voices.controls.text.Text()
				if len(got) > sessions.MaxSynthesisChars || !strings.HasPrefix(text, got) || len(got) < sessions.MaxSynthesisChars-len(para) {
					return "kept " + megabytes(int64(len(got)))
				}
				if !strings.HasPrefix(h.voices.status.Text, "Kept the first ") {
					return "status " + h.voices.status.Text
				}
				return ""
			}},
		{name: "Key terms", tab: "Conversation", entry: func() *boundedEntry { return h.converse.tuning.keyterms },
			status: func() *widget.Label { return h.converse.status }},
		{name: "History search", tab: "Captions", entry: func() *boundedEntry { return h.captions.history.search },
			status: func() *widget.Label { return h.captions.status }},
		{name: "API key", tab: "Settings", entry: func() *boundedEntry { return h.settings.keyEntry }, status: settings},
		{name: "Custom address", tab: "Settings", entry: func() *boundedEntry { return h.settings.customURL }, status: settings},
	}
	var switchBudget time.Duration
	for range 3 {
		for _, f := range fields {
			h.ui(func() {
				h.SelectTab(f.tab)
				start := time.Now()
				h.SelectTab("Service")
				switchBudget = max(switchBudget, 4*time.Since(start))
			})
		}
	}
	switchBudget = max(switchBudget, pasteBudget)
	for _, size := range []int{1 << 20, 10 << 20} {
		text := strings.Repeat(para, size/len(para)+1)[:size]
		for _, f := range fields {
			if f.check == nil {
				f.check = refused(f.entry, f.status)
			}
			t.Run(f.name+"/"+fmt.Sprintf("%dMiB", size>>20), func(t *testing.T) {
				clip := &textClipboard{text: text}
				var pasted, switched time.Duration
				var problem string
				h.ui(func() {
					h.SelectTab(f.tab)
					h.analyze.input.SetText("")
					h.voices.controls.text.SetText("")
					start := time.Now()
					f.entry().TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
					pasted = time.Since(start)
					problem = f.check(text)
					start = time.Now()
					h.SelectTab("Service")
					switched = time.Since(start)
				})
				if problem != "" {
					t.Error(problem)
				}
				if pasted > pasteBudget || switched > switchBudget {
					t.Errorf("the paste held the UI goroutine %v (want %v at most) and the tab switch after it %v (want %v)", pasted, pasteBudget, switched, switchBudget)
				}
			})
		}
	}
}

// textClipboard is a clipboard that holds one text.
type textClipboard struct{ text string }

func (c *textClipboard) Content() string           { return c.text }
func (c *textClipboard) SetContent(content string) { c.text = content }
