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

// TestAnalyzeLongDocument pastes a document of 1 MiB, over the service's
// limit of tokens: the Analyze tab keeps it aside instead of choking on
// it, refuses it before anything is sent, and offers its first part;
// that part is analysed and shown a page at a time.
func TestAnalyzeLongDocument(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	a := h.analyze
	doc := strings.Repeat(teamUpdate+"\n\n", (1<<20)/(len(teamUpdate)+2)+1)
	if n := textseg.Tokens(doc); n <= api.ReadTokenLimit {
		t.Fatalf("the document has %d tokens, not over the limit", n)
	}
	h.ui(func() {
		h.SelectTab("Analyze")
		a.checks.set(sessions.Features{Summary: true})
		a.input.entry.TypedShortcut(&fyne.ShortcutPaste{Clipboard: &textClipboard{text: doc}})
	})
	h.assertShows(t, "Pasted text · "+megabytes(int64(len(doc))))
	h.press(analyzeShortcut)
	h.waitFor(t, "the refusal", func() bool { return a.job == nil && a.part.Visible() })
	h.ui(func() {
		want := "The pasted text is too long for one analysis: the service analyses at most 150,000 tokens at a time, and it has " +
			thousands(textseg.Tokens(doc)) + ". Analyse its first 150,000 tokens instead?"
		if a.status.Text != want {
			t.Errorf("status %q, want %q", a.status.Text, want)
		}
		test.Tap(a.part)
	})
	h.waitFor(t, "the first part's analysis", func() bool { return a.job == nil && a.shown != nil })
	h.ui(func() {
		res := a.shown
		if !strings.HasSuffix(res.Title, "(first part)") || textseg.Tokens(res.Text) > api.ReadTokenLimit || !strings.HasPrefix(doc, res.Text) {
			t.Errorf("shown %q, %d tokens", res.Title, textseg.Tokens(res.Text))
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
