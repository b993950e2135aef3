package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/sessions"
)

// groffPDF makes a PDF of pages (each a list of paragraphs) with groff,
// as a person's tool would.
func groffPDF(t *testing.T, pages [][]string) string {
	t.Helper()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (scripts/setup installs it)")
	}
	var ms strings.Builder
	for i, page := range pages {
		if i > 0 {
			ms.WriteString(".bp\n")
		}
		for _, p := range page {
			ms.WriteString(".LP\n" + p + "\n")
		}
	}
	cmd := exec.Command("groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
	cmd.Stdin = strings.NewReader(ms.String())
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("groff: %v: %s", err, stderr.String())
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAnalysisPDF analyses a PDF of three pages: its text is extracted
// and sent, every passage maps to its page, and reopened from history
// the analysis still knows the format and the pages.
func TestAnalysisPDF(t *testing.T) {
	t.Parallel()
	pages := [][]string{
		{"The harbour council met on Monday to discuss the flooded road.", "Residents were furious about the delay."},
		{"On the second page the budget for the winter is described in detail.", "Copies are kept at the town hall."},
		{"The third page closes the report with a wonderful result."},
	}
	path := groffPDF(t, pages)
	db := openDB(t)
	r := &partsReader{}
	a := sessions.Analysis{Client: r, History: db}
	res, err := analyseWait(t, a, sessions.AnalysisInput{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	calls := r.calls()
	if len(calls) != 1 || calls[0].text != res.Text || !strings.Contains(res.Text, "second page the budget") {
		t.Fatalf("sent %+v", calls)
	}
	if res.Format != "pdf" || len(res.Pages) != 3 {
		t.Fatalf("format %q, pages %+v", res.Format, res.Pages)
	}
	words := strings.Fields(res.Text)
	for want, word := range map[int]string{1: "harbour", 2: "budget", 3: "third"} {
		i := slices.Index(words, word)
		if got := res.PageOf(i); got != want {
			t.Errorf("%q (word %d) is on page %d, want %d", word, i, got, want)
		}
		if got := res.PageAtOffset(strings.Index(res.Text, word)); got != want {
			t.Errorf("%q by its offset is on page %d, want %d", word, got, want)
		}
	}
	back, err := sessions.LoadAnalysis(t.Context(), db, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Format != "pdf" || !slices.Equal(back.Pages, res.Pages) || back.Text != res.Text {
		t.Errorf("reopened: format %q, pages %+v", back.Format, back.Pages)
	}
	var md bytes.Buffer
	if err := sessions.ExportAnalysis(&md, sessions.AnalysisMarkdown, back); err != nil || !strings.Contains(md.String(), "(page 1)") {
		t.Errorf("the report names no page (%v):\n%s", err, md.String())
	}
}

// TestAnalysisFormats: a file of any format is read and its text sent;
// one that cannot be read fails Start and saves nothing, with the
// document's own reason.
func TestAnalysisFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	html := filepath.Join(dir, "page.html")
	if err := os.WriteFile(html, []byte(`<html><head><title>Notes</title></head><body><nav>Home | About</nav><main><h1>Budget</h1><p>The budget was approved.</p><p>Everyone was pleased.</p></main></body></html>`), 0o600); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "photo.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &responseHistory{}
	r := &partsReader{}
	a := sessions.Analysis{Client: r, History: h}
	res, err := analyseWait(t, a, sessions.AnalysisInput{Path: html})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "html" || res.Pages != nil || !strings.Contains(res.Text, "The budget was approved.") || strings.Contains(res.Text, "About") {
		t.Errorf("format %q, text %q", res.Format, res.Text)
	}
	var unsupported *document.UnsupportedError
	if _, err := analyseWait(t, a, sessions.AnalysisInput{Path: png}); !errors.As(err, &unsupported) {
		t.Errorf("a picture: %v", err)
	}
	if _, err := analyseWait(t, a, sessions.AnalysisInput{Path: empty}); !errors.Is(err, document.ErrEmpty) {
		t.Errorf("an empty file: %v", err)
	}
	var fe *sessions.FileError
	if _, err := analyseWait(t, a, sessions.AnalysisInput{Path: filepath.Join(dir, "gone.pdf")}); !errors.As(err, &fe) || fe.Name != "gone.pdf" {
		t.Errorf("a missing file: %v", err)
	}
	if n := len(h.sessions()); n != 1 {
		t.Errorf("%d sessions saved, want the one analysed", n)
	}

	// A document already read (shown first) is sent as it is.
	doc := &document.Document{Format: document.PDF, Paragraphs: []document.Paragraph{{Text: "One two.", Page: 4}, {Text: "Three four.", Page: 5}}}
	res, err = analyseWait(t, a, sessions.AnalysisInput{Path: filepath.Join(dir, "never-read.pdf"), Document: doc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "One two.\n\nThree four." || res.PageOf(2) != 5 || res.Source != "never-read.pdf" {
		t.Errorf("text %q, page of word 2 %d, source %q", res.Text, res.PageOf(2), res.Source)
	}
}

// TestAnalysisWebPage: a web page named by URL is fetched and read by the
// app and its text sent; a plain-text one still goes to the service by
// its address.
func TestAnalysisWebPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><html><head><title>Harbour news</title></head><body><header><a href="/">Home</a></header><article><h1>Harbour news</h1><p>The harbour reopened after the storm, and people were delighted.</p></article><footer>Contact us</footer></body></html>`))
		case "/notes.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("Plain notes."))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	r := &partsReader{}
	a := sessions.Analysis{Client: r, HTTPClient: srv.Client()}
	res, err := analyseWait(t, a, sessions.AnalysisInput{URL: srv.URL + "/article"})
	if err != nil {
		t.Fatal(err)
	}
	calls := r.calls()
	if len(calls) != 1 || !strings.Contains(calls[0].text, "The harbour reopened") || strings.Contains(calls[0].text, "Contact us") {
		t.Fatalf("sent %+v", calls)
	}
	if res.Format != "html" || res.Title != "Harbour news" || res.SourceKind != sessions.SourceURL || res.Text != calls[0].text {
		t.Errorf("format %q, title %q, kind %q", res.Format, res.Title, res.SourceKind)
	}

	url := &urlReader{}
	a.Client = url
	res, err = analyseWait(t, a, sessions.AnalysisInput{URL: srv.URL + "/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if url.url != srv.URL+"/notes.txt" || res.Text != "Plain notes." {
		t.Errorf("sent url %q, text shown %q", url.url, res.Text)
	}
	var he *document.HTTPError
	if _, err := analyseWait(t, a, sessions.AnalysisInput{URL: srv.URL + "/gone"}); !errors.As(err, &he) || he.StatusCode != 404 {
		t.Errorf("a missing page: %v", err)
	}
}

// urlReader answers a document sent by its address, keeping the address.
type urlReader struct{ url string }

func (u *urlReader) Read(_ context.Context, in api.ReadRequest, _ api.ReadOptions) (*api.ReadResponse, error) {
	u.url = in.URL
	return &api.ReadResponse{Results: api.ReadResults{Summary: &api.ReadSummary{Text: "Notes."}}}, nil
}

// TestAnalysisURLSourceDecoded: the source view of a plain-text document
// the service fetched by its address is read by the app's one fetcher,
// which decodes a legacy encoding as it does for every document (the
// analysis kept a fetcher of its own that took only UTF-8, and said "not
// UTF-8 text" of a document the service had analysed).
func TestAnalysisURLSourceDecoded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		_, _ = w.Write([]byte("Caf\xe9 au lait for the customer, please.\nThe na\xefve barista smiled."))
	}))
	defer srv.Close()
	url := &urlReader{}
	res, err := analyseWait(t, sessions.Analysis{Client: url, HTTPClient: srv.Client()}, sessions.AnalysisInput{URL: srv.URL + "/order.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Café au lait for the customer, please.\nThe naïve barista smiled."
	if url.url != srv.URL+"/order.txt" || res.TextErr != nil || res.Text != want {
		t.Errorf("sent url %q; source view %q (%v), want %q", url.url, res.Text, res.TextErr, want)
	}
}
