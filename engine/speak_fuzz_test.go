package engine

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

// FuzzSentenceCut: the cut of text still arriving is within it, on a
// rune boundary, after white space, and never inside a word.
func FuzzSentenceCut(f *testing.F) {
	for _, s := range []string{"", "Hello. World", "Dr. Who? Yes! No.", `"Stop." he said. `, "a.b. c", "Ça va? Oui. ", "\xff. x", ".  ", "?\u00a0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cut := sentenceCut(text)
		if cut < 0 || cut > len(text) {
			t.Fatalf("cut %d outside %q", cut, text)
		}
		if cut == 0 {
			return
		}
		onBoundary := cut == len(text)
		for i := range text {
			onBoundary = onBoundary || i == cut
		}
		if !onBoundary {
			t.Fatalf("cut %d inside a rune of %q", cut, text)
		}
		r, _ := utf8.DecodeLastRuneInString(text[:cut])
		if !unicode.IsSpace(r) {
			t.Fatalf("cut %d of %q not after white space", cut, text)
		}
		if cut < len(text) {
			if r, _ := utf8.DecodeRuneInString(text[cut:]); unicode.IsSpace(r) {
				t.Fatalf("cut %d of %q leaves white space behind", cut, text)
			}
		}
	})
}

// FuzzReadSpeakText: any body is read as {"text"} or refused with an
// *api.OptionError, never a panic.
func FuzzReadSpeakText(f *testing.F) {
	for _, s := range []string{`{"text":"Hello."}`, `{"text":""}`, `{}`, `{"text":1}`, `[]`, `{"text":"a\u0000b"}`, "", "{", `{"text":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, api.PathSpeak, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		text, err := readSpeakText(r)
		if err != nil {
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Status == 0 || oe.Reason == "" {
				t.Fatalf("error %v is not an answer", err)
			}
			return
		}
		if !utf8.ValidString(text) {
			t.Fatalf("text %q is not UTF-8", text)
		}
	})
}
