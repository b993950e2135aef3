package api_test

import (
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// FuzzParseAuthorization holds what the local engine relies on when it
// reads a client's header: a header is taken as Token or Bearer only when
// its first word is that scheme in ASCII letters of any case, the
// credential is the header's own text, and what is accepted reads the same
// once written back as "Scheme credential".
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{
		"Token abc", "token abc", "Bearer eyJ.x.y", "  BEARER   eyJ  ", "Basic dXNlcg==",
		"Token", "Token ", "", " ", "Token\tabc", "Token  a b ", "Token: abc", "Tokens abc",
		"To\u212aen abc",        // KELVIN SIGN folds to k
		"Bearer\u00a0abc",       // no-break space between scheme and credential
		"\u0085Token abc\u0085", // NEL around the header
		"Token \u3000abc\u3000",
		"Bearer \xff\xfe", "Token \x00", "\x00Token abc",
		"TOKEN " + strings.Repeat("k", 4096),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		scheme, cred, ok := api.ParseAuthorization(h)
		if !ok {
			if scheme != "" || cred != "" {
				t.Fatalf("refused, yet gave %q %q", scheme, cred)
			}
			return
		}
		if scheme != api.SchemeToken && scheme != api.SchemeBearer {
			t.Fatalf("scheme %q", scheme)
		}
		if cred == "" || cred != strings.TrimSpace(cred) || !strings.Contains(h, cred) {
			t.Fatalf("credential %q of %q", cred, h)
		}
		name, _, _ := strings.Cut(strings.TrimSpace(h), " ")
		// Equal length keeps out the non-ASCII runes that fold to k or s.
		if len(name) != len(scheme) || !strings.EqualFold(name, scheme) {
			t.Fatalf("%q was taken for the scheme %s", name, scheme)
		}
		s2, c2, ok2 := api.ParseAuthorization(scheme + " " + cred)
		if !ok2 || s2 != scheme || c2 != cred {
			t.Fatalf("written back, %s %q reads as %q %q %v", scheme, cred, s2, c2, ok2)
		}
	})
}
