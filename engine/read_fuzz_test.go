package engine

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseReadBody feeds /v1/read bodies of every kind to the parser: it
// never panics, returns exactly one of a document, a URL and an error, and
// every error is of a class the handler answers with its own code.
func FuzzParseReadBody(f *testing.F) {
	for _, seed := range []struct{ body, ctype string }{
		{`{"text":"Hello there. I love it."}`, "application/json"},
		{`{"url":"https://example.com/doc.txt"}`, "application/json; charset=utf-8"},
		{`{"text":"a","url":"https://example.com"}`, "application/json"},
		{`{}`, ""},
		{`{"text":null}`, ""},
		{`{"text":""}`, "application/json"},
		{`{"url":"file:///etc/passwd"}`, "application/json"},
		{`{"url":"http://[::1"}`, "application/json"},
		{`{"text":"\ud800"}`, "application/json"},
		{`[1,2]`, "application/json"},
		{`{"text":`, "application/json"},
		{"Plain text, as the docs allow.", "text/plain"},
		{"caf\xe9", "text/plain; charset=latin1"},
		{"RIFF....WAVEfmt ", "audio/wav"},
		{"x", "text/plain; ===="},
	} {
		f.Add(seed.body, seed.ctype)
	}
	f.Fuzz(func(t *testing.T, body, ctype string) {
		text, docURL, err := parseReadBody(strings.NewReader(body), ctype)
		if err != nil {
			if text != "" || docURL != "" {
				t.Fatalf("error %v with text %q and url %q", err, text, docURL)
			}
			if !errors.Is(err, errPayload) && !errors.Is(err, errUnsupportedMedia) {
				t.Fatalf("error %v of no class the handler answers", err)
			}
			return
		}
		if (text == "") == (docURL == "") {
			t.Fatalf("text %q and url %q: want exactly one", text, docURL)
		}
		if text != "" && (!utf8.ValidString(text) || strings.TrimSpace(text) == "") {
			t.Fatalf("accepted text %q", text)
		}
		if docURL != "" {
			u, err := url.Parse(docURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("accepted url %q", docURL)
			}
		}
	})
}
