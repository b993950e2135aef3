package engine

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

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
