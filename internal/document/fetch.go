package document

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// DefaultFetchTimeout bounds a whole fetch (connection, answer and body)
// when Fetch is given no client; a caller's client keeps its own timeout,
// and ctx bounds both.
const DefaultFetchTimeout = 60 * time.Second

// maxRedirects is how many redirects Fetch follows.
const maxRedirects = 10

// Fetched is a document fetched from a URL.
type Fetched struct {
	// Doc is the extracted document.
	Doc *Document
	// PlainURL is true when the URL answered text/plain, which the
	// service can fetch by its url itself; Doc holds its text as well.
	PlainURL bool
	// ContentType is the media type the server named, without parameters.
	ContentType string
	// Plain, for a text/plain answer (PlainURL), is its text as it stands,
	// line breaks and all, decoded to UTF-8 as Extract decodes text: what
	// the service reads by the URL. Doc holds the same words as paragraphs.
	Plain string
}

// Fetch gets url (http or https only) and extracts the document it
// answers: web pages, PDFs, and the other formats by their content type or
// content. At most MaxBytes are read and at most ten redirects followed,
// to http or https only. With a nil client, a client with
// DefaultFetchTimeout is used; ctx bounds the fetch either way.
func Fetch(ctx context.Context, client *http.Client, rawURL string) (*Fetched, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("%q is not a web address: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q is not a web address: only http and https addresses can be fetched", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q is not a web address: it names no host", rawURL)
	}
	c := &http.Client{Timeout: DefaultFetchTimeout}
	if client != nil {
		copied := *client
		c = &copied
	}
	callerCheck := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Scheme)
		}
		if callerCheck != nil {
			return callerCheck(req, via)
		}
		return nil
	}
	name := u.Redacted()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", name, err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5")
	req.Header.Set("User-Agent", "Earshot (document reader)")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fetchError(ctx, name, c.Timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &HTTPError{URL: name, StatusCode: resp.StatusCode, Status: resp.Status}
	}
	if resp.ContentLength > MaxBytes {
		return nil, tooLarge(name, resp.ContentLength, MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return nil, fetchError(ctx, name, c.Timeout, err)
	}
	if len(data) > MaxBytes {
		return nil, tooLarge(name, int64(len(data)), MaxBytes)
	}

	header := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(header)
	mediaType = strings.ToLower(mediaType)
	out := &Fetched{ContentType: mediaType}
	// The last path element names the document in errors and hints at
	// its format when the server says only "application/octet-stream".
	hint := path.Base(resp.Request.URL.Path)
	if f, ok := formatOfMediaType(mediaType); ok {
		hint = hintName(hint, f)
	}
	// Only text/plain: the service fetches a url only when it points to a
	// plain-text document (service-interface.md 4.6).
	out.PlainURL = mediaType == "text/plain"
	doc, err := extract(ctx, name, hint, data, header)
	if err != nil {
		return nil, err
	}
	out.Doc = doc
	if out.PlainURL {
		out.Plain, _ = decodeText(data)
	}
	return out, nil
}

// formatOfMediaType maps content types to formats.
func formatOfMediaType(t string) (Format, bool) {
	switch t {
	case "application/pdf", "application/x-pdf":
		return PDF, true
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return DOCX, true
	case "application/vnd.oasis.opendocument.text":
		return ODT, true
	case "application/epub+zip":
		return EPUB, true
	case "application/rtf", "text/rtf":
		return RTF, true
	case "text/html", "application/xhtml+xml":
		return HTML, true
	case "text/markdown", "text/x-markdown":
		return Markdown, true
	case "text/plain":
		return Text, true
	}
	return "", false
}

// hintName gives name the extension of format f, which the server named:
// "page.php" served as text/html is a web page. Markdown served as
// text/plain (as code hosts serve it) keeps its extension.
func hintName(name string, f Format) string {
	ext := path.Ext(name)
	if f == Text {
		switch strings.ToLower(ext) {
		case ".md", ".markdown", ".mdown", ".mkd":
			return name
		}
	}
	want := map[Format]string{PDF: ".pdf", DOCX: ".docx", ODT: ".odt", EPUB: ".epub", RTF: ".rtf",
		HTML: ".html", Markdown: ".md", Text: ".txt"}[f]
	if name == "" || name == "/" || name == "." {
		name = "document"
	}
	return strings.TrimSuffix(name, ext) + want
}

// fetchError says plainly why a fetch failed: time, the network, or the
// redirects.
func fetchError(ctx context.Context, name string, timeout time.Duration, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return fmt.Errorf("fetching %s took too long: %w", name, ctx.Err())
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Errorf("fetching %s: %w", name, ctx.Err())
	case errors.As(err, &ne) && ne.Timeout():
		if timeout > 0 {
			return fmt.Errorf("fetching %s took longer than %s: %w", name, timeout, context.DeadlineExceeded)
		}
		return fmt.Errorf("fetching %s took too long: %w", name, context.DeadlineExceeded)
	}
	return fmt.Errorf("fetching %s: %w", name, err)
}
