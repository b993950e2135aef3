package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/sessions"
)

// TestAnalyzeLongDocument pastes a document over the service's limit of
// tokens: the Analyze tab keeps it aside instead of choking on it, and
// analyses it in parts, saying which part it is at; Cancel stops such an
// analysis, and the result, shown a page at a time, says it was analysed
// in parts.
func TestAnalyzeLongDocument(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	a := h.analyze
	doc := teamUpdate
	for textseg.Tokens(doc) <= api.ReadTokenLimit {
		doc += "\n\n" + doc
	}
	h.ui(func() {
		h.SelectTab("Analyze")
		a.checks.set(sessions.Features{Summary: true, Sentiment: true})
		a.input.entry.TypedShortcut(&fyne.ShortcutPaste{Clipboard: &textClipboard{text: doc}})
	})
	h.assertShows(t, "Pasted text · "+megabytes(int64(len(doc))))

	// Cancelled as soon as its first part is under way.
	var seen []string
	h.ui(func() {
		h.observe = func() {
			if s := a.status.Text; a.job != nil && strings.HasPrefix(s, "Analysing part 1 of ") && !a.job.cancelled {
				seen = append(seen, s)
				if !a.parts.Visible() || a.parts.Max < 2 {
					t.Errorf("progress bar shown %v, of %v parts", a.parts.Visible(), a.parts.Max)
				}
				a.onCancel()
			}
		}
	})
	h.press(analyzeShortcut)
	h.waitFor(t, "the cancellation", func() bool { return a.job == nil && len(seen) > 0 })
	if want := "The analysis of the pasted text was cancelled."; h.analyzeStatus() != want {
		t.Errorf("status %q, want %q", h.analyzeStatus(), want)
	}

	// Analysed in parts, each part said.
	seen = nil
	h.ui(func() {
		h.observe = func() {
			if s := a.status.Text; a.job != nil && strings.HasPrefix(s, "Analysing part ") && (len(seen) == 0 || seen[len(seen)-1] != s) {
				seen = append(seen, s)
			}
		}
	})
	h.press(analyzeShortcut)
	h.waitFor(t, "the analysis in parts", func() bool { return a.job == nil && a.shown != nil })
	h.ui(func() {
		h.observe = nil
		res := a.shown
		n := res.PartCount()
		if n < 2 || res.Text != doc {
			t.Fatalf("analysed in %d parts, %d bytes of %d", n, len(res.Text), len(doc))
		}
		parts := itoa(n)
		if len(seen) < 2 || seen[0] != "Analysing part 1 of "+parts+"…" || seen[len(seen)-1] != "Analysing part "+parts+" of "+parts+"…" {
			t.Errorf("progress shown: %q", seen)
		}
		if !strings.HasSuffix(a.status.Text, " in "+parts+" parts.") || !strings.HasSuffix(a.info.Text, "analysed in "+parts+" parts") {
			t.Errorf("status %q, source line %q", a.status.Text, a.info.Text)
		}
		pages := (len(res.Text) + sourcePageBytes - 1) / sourcePageBytes
		if !a.pages.bar.Visible() || !strings.HasPrefix(a.pages.label.Text, "Part 1 of ") || len(a.pages.pages) < pages {
			t.Errorf("pager %q, %d pages for %d bytes", a.pages.label.Text, len(a.pages.pages), len(res.Text))
		}
		first := richText(a.source)
		if len(first) > sourcePageBytes || !strings.HasPrefix(res.Text, first) {
			t.Errorf("the first page shows %d bytes", len(first))
		}
		test.Tap(a.pages.next)
		if a.pages.label.Text != "Part 2 of "+itoa(len(a.pages.pages)) || !strings.HasPrefix(res.Text[len(first):], richText(a.source)) {
			t.Errorf("after Next: %q", a.pages.label.Text)
		}
	})
}

// richText returns the text of a rich text's segments.
func richText(r interface{ String() string }) string { return r.String() }
