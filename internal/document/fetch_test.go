package document

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

func TestFetch(t *testing.T) {
	s := loadSource(t)
	read := func(kind string) []byte {
		data, err := os.ReadFile(makeDoc(t, kind))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	page := read("html")
	pdf := read("pdf")
	scanned := read("scanned.pdf")
	plain := read("txt")
	latin, err := charmap.Windows1252.NewEncoder().String(`<html><head><title>Café</title></head><body><p>Un café très naïve, s’il vous plaît.</p></body></html>`)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	serve := func(path, contentType string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			_, _ = w.Write(body)
		})
	}
	serve("/story.html", "text/html; charset=utf-8", page)
	serve("/latin", "text/html; charset=windows-1252", []byte(latin))
	serve("/ledger.pdf", "application/pdf", pdf)
	serve("/download", "application/octet-stream", pdf)
	serve("/scan.pdf", "application/pdf", scanned)
	serve("/ledger.txt", "text/plain; charset=utf-8", plain)
	serve("/notes.md", "text/plain; charset=utf-8", []byte("# Notes\n\nA line."))
	serve("/page.php", "text/html", []byte("<div><p>Served by a script.</p></div>"))
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ledger.pdf", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/toftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/file.pdf", http.StatusFound)
	})
	mux.HandleFunc("/huge-declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(MaxBytes+1))
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/huge-streamed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := []byte(strings.Repeat("<p>filler text </p>", 1<<12))
		for sent := 0; sent <= MaxBytes; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finishes: only the client gives up
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	t.Run("web page", func(t *testing.T) {
		f, err := Fetch(ctx, nil, srv.URL+"/story.html")
		if err != nil {
			t.Fatal(err)
		}
		if f.PlainURL || f.ContentType != "text/html" || f.Doc.Format != HTML {
			t.Errorf("fetched %+v", f)
		}
		if o := overlap(s.text, f.Doc.Text()); o < 0.95 {
			t.Errorf("word overlap %.3f", o)
		}
		for _, w := range words(f.Doc.Text()) {
			for _, bad := range furnitureOnly {
				if w == bad {
					t.Fatalf("furniture %q in the page's text", w)
				}
			}
		}
	})
	t.Run("charset from the header", func(t *testing.T) {
		f, err := Fetch(ctx, nil, srv.URL+"/latin")
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Doc.Text(); got != "Un café très naïve, s’il vous plaît." || f.Doc.Title != "Café" {
			t.Errorf("text %q title %q", got, f.Doc.Title)
		}
	})
	for _, path := range []string{"/ledger.pdf", "/download", "/moved"} {
		t.Run("pdf "+path, func(t *testing.T) {
			f, err := Fetch(ctx, srv.Client(), srv.URL+path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc.Format != PDF || f.Doc.Pages() < 2 || f.PlainURL {
				t.Errorf("format %s, %d pages, plain %v", f.Doc.Format, f.Doc.Pages(), f.PlainURL)
			}
			if o := overlap(s.text, f.Doc.Text()); o < 0.95 {
				t.Errorf("word overlap %.3f", o)
			}
		})
	}
	t.Run("plain text", func(t *testing.T) {
		f, err := Fetch(ctx, nil, srv.URL+"/ledger.txt")
		if err != nil {
			t.Fatal(err)
		}
		if !f.PlainURL || f.ContentType != "text/plain" || f.Doc == nil || f.Doc.Format != Text {
			t.Errorf("fetched %+v", f)
		}
		// Plain is the text as it stands; Doc holds its words.
		if want, _ := decodeText(plain); f.Plain != want || !slices.Equal(strings.Fields(f.Plain), strings.Fields(f.Doc.Text())) {
			t.Errorf("Plain %q", f.Plain)
		}
	})

	t.Run("markdown as plain text", func(t *testing.T) {
		f, err := Fetch(ctx, nil, srv.URL+"/notes.md")
		if err != nil {
			t.Fatal(err)
		}
		if !f.PlainURL || f.Doc.Format != Markdown || f.Doc.Title != "Notes" {
			t.Errorf("plain %v format %s title %q", f.PlainURL, f.Doc.Format, f.Doc.Title)
		}
	})
	t.Run("the server's type over the name", func(t *testing.T) {
		f, err := Fetch(ctx, nil, srv.URL+"/page.php")
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc.Format != HTML || f.Doc.Text() != "Served by a script." {
			t.Errorf("format %s text %q", f.Doc.Format, f.Doc.Text())
		}
	})

	type check func(t *testing.T, err error)
	is := func(target error) check {
		return func(t *testing.T, err error) {
			if !errors.Is(err, target) {
				t.Errorf("err = %v, want %v", err, target)
			}
		}
	}
	says := func(words ...string) check {
		return func(t *testing.T, err error) {
			for _, w := range words {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
		}
	}
	for _, c := range []struct {
		name, url string
		timeout   time.Duration
		checks    []check
	}{
		{"not found", srv.URL + "/missing", 0, []check{func(t *testing.T, err error) {
			var h *HTTPError
			if !errors.As(err, &h) || h.StatusCode != 404 {
				t.Errorf("err = %v, want an HTTPError 404", err)
			}
		}, says("404 Not Found")}},
		{"redirect loop", srv.URL + "/loop", 0, []check{says("redirects")}},
		{"redirect to ftp", srv.URL + "/toftp", 0, []check{says("not http or https")}},
		{"declared too large", srv.URL + "/huge-declared", 0, []check{is(ErrTooLarge), says("at most 50.0 MiB")}},
		{"streamed too large", srv.URL + "/huge-streamed", 0, []check{is(ErrTooLarge)}},
		{"slow", srv.URL + "/slow", 200 * time.Millisecond, []check{is(context.DeadlineExceeded), says("too long")}},
		{"scanned", srv.URL + "/scan.pdf", 0, []check{func(t *testing.T, err error) {
			var s *ScannedPDFError
			if !errors.As(err, &s) || !strings.HasPrefix(s.Name, srv.URL) {
				t.Errorf("err = %v, want a ScannedPDFError naming the URL", err)
			}
		}}},
		{"ftp", "ftp://example.com/a.pdf", 0, []check{says("only http and https")}},
		{"file", "file:///etc/passwd", 0, []check{says("only http and https")}},
		{"no host", "http:///a.pdf", 0, []check{says("no host")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cctx := ctx
			if c.timeout > 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, c.timeout)
				defer cancel()
			}
			f, err := Fetch(cctx, nil, c.url)
			if err == nil {
				t.Fatalf("fetched %+v, want an error", f)
			}
			for _, ch := range c.checks {
				ch(t, err)
			}
		})
	}
}

// TestFetchClientTimeout: a caller's client keeps its own timeout, and
// its error says so.
func TestFetchClientTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<html><body><p>start")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	_, err := Fetch(context.Background(), client, srv.URL)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "200ms") {
		t.Errorf("err = %v, want a timeout naming 200ms", err)
	}
}
