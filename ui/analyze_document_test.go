package ui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/document"
)

// gardenPages are the pages of a made-up newsletter of a community
// garden, written for these tests: a heading and paragraphs a page, each
// page with a mood of its own.
var gardenPages = [][]string{
	{"Spring at Elm Street Garden",
		"The allotments are full again this spring and every bed has a keeper. Volunteers rebuilt the compost bays in March, and the children of the school planted a row of sunflowers along the fence.",
		"We are delighted with the new rain barrels. They caught enough water in April to carry the tomatoes through the first dry week, and the tap by the shed was hardly used."},
	{"The trouble with the shed",
		"The tool shed leaked badly during the storms and several bags of seed compost were ruined. The roof felt is torn and the door no longer closes, which is frustrating for everyone.",
		"Two spades and a wheelbarrow went missing last month. We are disappointed, and we ask members to lock the shed every evening without fail."},
	{"Plans for the summer",
		"Please sign up for the watering rota before the end of May. We also need volunteers to repair the shed roof and to build a new lock for the door.",
		"Could someone with a van collect the wood chips from the council depot? The paths by the pond need a fresh layer before the open day."},
	{"Open day",
		"The open day is on the last Saturday of June. There will be a plant sale, honey from our two hives and soup made from the garden's own vegetables.",
		"Thank you all for a wonderful start to the year. The garden has never looked better and we look forward to seeing you there."},
}

const gardenTitle = "Elm Street Garden Newsletter"

// writeGardenPDF makes the newsletter a PDF of four pages with groff, as
// a person's typesetting would, and returns its path.
func writeGardenPDF(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (scripts/setup installs it)")
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext is not installed (poppler-utils; scripts/setup installs it)")
	}
	var ms strings.Builder
	ms.WriteString(".pdfinfo /Title " + gardenTitle + "\n")
	for i, page := range gardenPages {
		if i > 0 {
			ms.WriteString(".bp\n")
		}
		ms.WriteString(".SH\n" + page[0] + "\n")
		for _, p := range page[1:] {
			ms.WriteString(".PP\n" + p + "\n")
		}
	}
	cmd := exec.Command("groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
	cmd.Stdin = strings.NewReader(ms.String())
	pdf, err := cmd.Output()
	if err != nil {
		t.Fatalf("groff: %v", err)
	}
	path := filepath.Join(t.TempDir(), "garden.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAnalyzePDF drops a PDF on the window: the Analyze tab opens it,
// shows its text with its format and pages, and analyses it; each
// passage of the results links to its page, and a link shows that page's
// start in the source.
func TestAnalyzePDF(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	a := h.analyze
	path := writeGardenPDF(t)
	h.ui(func() {
		h.SelectTab("Captions")
		h.dropped(fyne.NewPos(10, 10), []fyne.URI{storage.NewFileURI(path)})
		if sel := h.tabs.Selected(); sel == nil || sel.Text != "Analyze" {
			t.Errorf("a dropped file selects %v, want the Analyze tab", sel)
		}
	})
	h.waitFor(t, "the PDF read", func() bool { return a.job == nil && a.opened != nil })
	var doc *document.Document
	h.ui(func() {
		doc = a.opened.doc
		if want := "PDF, 4 pages · garden.pdf"; a.info.Text != want || !a.info.Visible() {
			t.Errorf("source line %q, want %q", a.info.Text, want)
		}
		if a.title.Text != gardenTitle {
			t.Errorf("title %q, want %q", a.title.Text, gardenTitle)
		}
		if text := a.input.Text(); !strings.Contains(text, "Two spades and a wheelbarrow went missing") || !strings.Contains(text, "honey from our two hives") {
			t.Errorf("the input does not show the PDF's text: %q", preview(text, 200))
		}
		if want := "Opened garden.pdf: PDF, 4 pages. Read or edit its text, then press Analyze (Ctrl+Enter)."; a.status.Text != want {
			t.Errorf("status %q", a.status.Text)
		}
		if a.sourceBox.Visible() || a.analyze.Disabled() {
			t.Error("the text is not shown to analyse")
		}
	})
	if doc.Pages() != 4 {
		t.Fatalf("the PDF has %d pages, want 4", doc.Pages())
	}

	h.press(analyzeShortcut)
	h.waitFor(t, "the analysis", func() bool { return a.job == nil && a.shown != nil })
	h.ui(func() {
		res := a.shown
		if res.Format != string(document.PDF) || len(res.Pages) != 4 {
			t.Fatalf("analysed as %q with %d pages", res.Format, len(res.Pages))
		}
		if want := "PDF, 4 pages · garden.pdf"; a.info.Text != want {
			t.Errorf("source line %q, want %q", a.info.Text, want)
		}
		if a.status.Text != "Analysed garden.pdf." {
			t.Errorf("status %q", a.status.Text)
		}
		rows := a.pageList.rows
		if !a.pageList.visible() || len(rows) < 4 {
			t.Fatalf("%d passages listed by page", len(rows))
		}
		pages := map[int]bool{}
		kinds := map[string]bool{}
		for _, r := range rows {
			if want := res.PageOf(r.seg.startWord); r.page != want || r.page < 1 || r.page > 4 {
				t.Errorf("%s %q listed on p. %d, starts on p. %d", r.seg.kind, r.seg.label, r.page, want)
			}
			pages[r.page], kinds[r.seg.kind] = true, true
		}
		if len(pages) < 3 || !kinds["Sentiment"] || !kinds["Topic"] {
			t.Errorf("passages on pages %v of kinds %v", pages, kinds)
		}

		// A passage chosen from the list says its page.
		a.pageList.list.Select(len(rows) - 1)
		last := rows[len(rows)-1]
		if want := ", p. " + itoa(last.page) + "."; !strings.HasSuffix(a.panel.selected.Text, want) {
			t.Errorf("selection line %q, want it to end %q", a.panel.selected.Text, want)
		}
	})

	// The link of a passage on page 3, tapped, shows page 3's start.
	link := h.pageLink(t, 3)
	h.ui(func() { test.TapAt(link, fyne.NewPos(link.Size().Width/2, link.Size().Height/2)) })
	h.ui(func() {
		var first string
		for _, p := range doc.Paragraphs {
			if p.Page == 3 {
				first = p.Text
				break
			}
		}
		found := false
		for i, s := range a.source.Segments {
			ts, ok := s.(*widget.TextSegment)
			if !ok || ts.Text != pageMark(3) {
				continue
			}
			found = true
			if ts.Style != pageMarkChosenStyle {
				t.Errorf("the mark of page 3 is not in the chosen style")
			}
			next, ok := a.source.Segments[i+1].(*widget.TextSegment)
			if !ok || !strings.HasPrefix(next.Text, first) {
				t.Errorf("page 3 starts %q, want %q", next.Text, first)
			}
		}
		if !found {
			t.Errorf("no mark of page 3 in the source: %q", richText(a.source))
		}
		if !strings.HasPrefix(a.panel.selected.Text, "Page 3 of 4, which starts “"+first[:20]) {
			t.Errorf("selection line %q", a.panel.selected.Text)
		}
	})

	// Edited, the text is sent as plain text, and the source line says
	// the pages are lost.
	h.ui(func() {
		test.Tap(a.edit)
		a.input.SetText(a.input.Text() + "\n\nA last word from the committee.")
		if !strings.Contains(a.info.Text, "edited: sent as plain text, without its pages") {
			t.Errorf("source line after an edit %q", a.info.Text)
		}
	})
	h.press(analyzeShortcut)
	h.waitFor(t, "the edited text's analysis", func() bool { return a.job == nil && a.shown != nil && a.shown.SourceKind == "text" })
	h.ui(func() {
		if a.pageList.visible() || !strings.HasPrefix(a.info.Text, "Text edited from garden.pdf") {
			t.Errorf("after an edit: %d passages by page, source line %q", len(a.pageList.rows), a.info.Text)
		}
	})
}

// pageLink finds, on screen, the link of a passage listed on page n.
func (h *harness) pageLink(t *testing.T, n int) *widget.Hyperlink {
	t.Helper()
	var link *widget.Hyperlink
	h.ui(func() {
		a := h.analyze
		for i, r := range a.pageList.rows {
			if r.page == n {
				a.pageList.list.ScrollTo(i)
				break
			}
		}
		walk(h.window.Canvas().Content(), func(o fyne.CanvasObject) {
			if l, ok := o.(*widget.Hyperlink); ok && link == nil && l.Visible() && l.Text == "p. "+itoa(n) {
				link = l
			}
		})
	})
	if link == nil {
		t.Fatalf("no link to page %d on screen:\n%s", n, h.screen())
	}
	return link
}

// TestAnalyzeDocumentErrors: a document Earshot cannot read is refused
// in plain words, opened from the dialog's choice or dropped.
func TestAnalyzeDocumentErrors(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	_ = h.waitReady(t)
	a := h.analyze
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, []byte("  \n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.ui(func() { h.dropped(fyne.NewPos(0, 0), []fyne.URI{storage.NewFileURI(empty)}) })
	want := "There is no text in this document."
	h.waitFor(t, want, func() bool { return a.job == nil && a.status.Text == want })
	h.ui(func() {
		if a.opened != nil || a.status.Importance != widget.DangerImportance {
			t.Errorf("opened %v, importance %v", a.opened, a.status.Importance)
		}
		a.openPath(filepath.Join(dir, "gone.pdf"), nil)
	})
	want = "“gone.pdf”: the file could not be found. Was it moved or deleted?"
	h.waitFor(t, want, func() bool { return a.job == nil && a.status.Text == want })
}

// TestAnalyzeURL fetches a web page from an address: its main text is
// shown as a file's is, with its format, and analysed; an address that
// answers 404 is refused in plain words.
func TestAnalyzeURL(t *testing.T) {
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>Garden news</title></head><body><nav><a href=\"/\">Home</a> <a href=\"/join\">Join us</a></nav><main><h1>Garden news</h1>")
	for _, p := range gardenPages {
		page.WriteString("<h2>" + p[0] + "</h2>")
		for _, para := range p[1:] {
			page.WriteString("<p>" + para + "</p>")
		}
	}
	page.WriteString("</main><footer>Copyright the garden committee</footer></body></html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/news" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page.String()))
	}))
	defer srv.Close()

	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	_ = h.waitReady(t)
	a := h.analyze
	h.ui(func() {
		h.SelectTab("Analyze")
		a.url.SetText(srv.URL + "/missing")
		test.Tap(a.fetch)
	})
	want := "There is no page at this address (the site answered 404 Not Found). Check the address."
	h.waitFor(t, want, func() bool { return a.job == nil && a.status.Text == want })

	h.ui(func() {
		a.url.SetText(srv.URL + "/news")
		a.url.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
	h.waitFor(t, "the page fetched", func() bool { return a.job == nil && a.opened != nil })
	h.ui(func() {
		if !strings.HasPrefix(a.info.Text, "Web page, ") || !strings.HasSuffix(a.info.Text, " words · "+srv.URL+"/news") {
			t.Errorf("source line %q", a.info.Text)
		}
		text := a.input.Text()
		if !strings.Contains(text, "The tool shed leaked badly") || strings.Contains(text, "Copyright") || strings.Contains(text, "Join us") {
			t.Errorf("the page's text shown: %q", preview(text, 300))
		}
	})
	h.press(analyzeShortcut)
	h.waitFor(t, "the page's analysis", func() bool { return a.job == nil && a.shown != nil })
	h.ui(func() {
		if a.shown.Format != string(document.HTML) || a.shown.SourceKind != "url" || a.pageList.visible() {
			t.Errorf("analysed %q from %q; %d passages by page", a.shown.Format, a.shown.SourceKind, len(a.pageList.rows))
		}
		if !strings.HasPrefix(a.info.Text, "Web page, ") {
			t.Errorf("source line %q", a.info.Text)
		}
	})
}

// TestAnalyzeOpenPDF opens a PDF through Open file…: Fyne's file dialog
// lists it among the documents, and the tab shows its text.
func TestAnalyzeOpenPDF(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	_ = h.waitReady(t)
	a := h.analyze
	path := writeGardenPDF(t)
	h.startFileDialogsIn(filepath.Dir(path))
	h.ui(func() {
		h.SelectTab("Analyze")
		test.Tap(a.openFile)
	})
	h.chooseFile(t)
	h.waitFor(t, "the PDF read", func() bool { return a.job == nil && a.opened != nil })
	h.ui(func() {
		if a.opened.path != path || a.info.Text != "PDF, 4 pages · garden.pdf" {
			t.Errorf("opened %q, source line %q", a.opened.path, a.info.Text)
		}
	})
}
