package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/document"
)

// ReadDocument reads the document at path, in any format package
// document reads, as an analysis of a file reads it: the app's one way to
// open a document to show or analyse. A file that cannot be opened, or a
// folder, is a *FileError that names it; the document's own errors (a
// scanned PDF, a format it does not read, no text) name the file
// themselves.
func ReadDocument(ctx context.Context, path string) (*document.Document, error) {
	name := filepath.Base(path)
	info, err := os.Stat(path)
	if err != nil {
		return nil, &FileError{Name: name, Err: err}
	}
	if info.IsDir() {
		return nil, &FileError{Name: name, Err: fmt.Errorf("%w: %w", ErrFolder, ErrNotText)}
	}
	doc, err := document.ReadFile(ctx, path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &FileError{Name: name, Err: pe.Err}
		}
		return nil, err
	}
	return doc, nil
}

// FetchDocument fetches the document at u (http or https) and reads it,
// as an analysis of a URL fetches it (document.Fetch, with its own
// timeout): a web page or a PDF to be sent as text, or a plain-text
// document (PlainURL) that the service fetches by its address.
func FetchDocument(ctx context.Context, u string) (*document.Fetched, error) {
	return document.Fetch(ctx, nil, u)
}

// useDocument sends doc's text and keeps its format and pages with the
// result.
func useDocument(req *api.ReadRequest, res *AnalysisResult, doc *document.Document) error {
	text := doc.Text()
	switch {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%s: %w", res.Source, document.ErrEmpty)
	case len(text) > MaxAnalysisBytes:
		return fmt.Errorf("the text of %s is larger than %d MB: %w", res.Source, MaxAnalysisBytes>>20, ErrNotText)
	}
	req.Text, res.Text = text, text
	res.Format, res.Pages = string(doc.Format), pageStarts(doc)
	return nil
}

// pageStarts lists where each page of doc starts in its text, in words;
// nil for a document without pages.
func pageStarts(doc *document.Document) []PageStart {
	if doc.Pages() == 0 {
		return nil
	}
	var out []PageStart
	words := 0
	for _, p := range doc.Paragraphs {
		if p.Page > 0 && (len(out) == 0 || out[len(out)-1].Page != p.Page) {
			out = append(out, PageStart{Page: p.Page, StartWord: words})
		}
		words += len(strings.Fields(p.Text))
	}
	return out
}

// checkDocument accepts b as a document when it is UTF-8 text without
// NUL bytes, of at most MaxAnalysisBytes, and not blank.
func checkDocument(b []byte, name string) (string, error) {
	switch {
	case len(b) > MaxAnalysisBytes:
		return "", fmt.Errorf("%s is larger than %d MB: %w", name, MaxAnalysisBytes>>20, ErrNotText)
	case !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0:
		return "", fmt.Errorf("%s is not UTF-8 text: %w", name, ErrNotText)
	case strings.TrimSpace(string(b)) == "":
		return "", fmt.Errorf("%s is empty: %w", name, ErrNoInput)
	}
	return strings.TrimPrefix(string(b), "\uFEFF"), nil
}

// fetch reads the plain-text document at u again, as the service read
// it, for the source view (or to analyse it in parts): with the fetcher
// that read it first (document.Fetch), its text decoded as that decodes
// text and kept as it stands.
func (a *Analysis) fetch(ctx context.Context, u string) (string, error) {
	f, err := document.Fetch(ctx, a.HTTPClient, u)
	if err != nil {
		return "", fmt.Errorf("fetch the document: %w", err)
	}
	if !f.PlainURL {
		return "", fmt.Errorf("fetch the document: %s: %w", f.ContentType, ErrNotText)
	}
	return checkDocument([]byte(f.Plain), "the document")
}

// redactURL names a URL for history and people: its scheme, host and
// path, without user information, query or fragment, where credentials
// and signed tokens travel.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "a web address"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// titleOf names pasted text by its first words.
func titleOf(text string) string {
	const words = 8
	f := strings.Fields(text)
	if len(f) > words {
		return strings.Join(f[:words], " ") + "…"
	}
	return strings.Join(f, " ")
}
