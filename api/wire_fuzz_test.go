package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// FuzzRedactText holds that redaction never panics, never grows a text
// past what the marker adds, and hides the value of a credential member
// in any JSON object, however the value is escaped.
func FuzzRedactText(f *testing.F) {
	f.Add(`{"type":"Results"}`, "eyJhbGciOi")
	f.Add(`"key":"`, `a"b\c`)
	f.Add("", "é\u2028\x00")
	f.Fuzz(func(t *testing.T, text, secret string) {
		_ = api.RedactText(text)
		if secret == "" {
			return
		}
		for _, name := range []string{"access_token", "Authorization", "api_key"} {
			b, err := json.Marshal(map[string]any{"type": "x", name: secret, "n": 1})
			if err != nil {
				return
			}
			out := api.RedactText(string(b))
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("redacted JSON %s is no longer JSON: %v", out, err)
			}
			if got[name] != "[redacted]" {
				t.Fatalf("%s shown as %v in %s", name, got[name], out)
			}
			if strings.Count(out, `"`) > strings.Count(string(b), `"`)+2 {
				t.Fatalf("redaction grew %s into %s", b, out)
			}
		}
	})
}
