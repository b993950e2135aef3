package api_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// FuzzParseBaseURL holds what the settings and the client rely on: a base
// URL that is accepted is http or https with a host and nothing after its
// path, reads the same when parsed again (the settings store what they
// show), and puts every path of the interface under itself, on its host.
func FuzzParseBaseURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:8080", "127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.1",
		"example.com:8443", "10.0.0.5:8080", "  https://example.com/  ", "https://example.com/base/",
		"ws://127.0.0.1:8080", "wss://example.com", "HTTP://Example.com", "", "   ", "ftp://example.com",
		"http://", "http:///path", "http://127.0.0.1:8080?model=nova-3", "127.0.0.1:8080?x=1",
		"http://127.0.0.1:8080#frag", "http://[::1",
		"http://h//", "http://h/base//", "http://h/%2F/", "http://h/a%2Fb/", "http://h?", "http://h#",
		"http://h/?", "localhost", "[::1]", "::1", "http://user:pw@h:1/", "http://h:99999", "http://h:",
		"//h", "h/path/", "ws://", "http://%41", "http://h/a%20", "\x00", "http://h/\xff",
		"http://例え.jp/", "127.0.0.1:8080/v1/", "http://h/..", "https://h/./", "http:h",
		"http://[fe80::1%25en0]:8080", "localhost:8080/x?y://z", "http://h/%", "http://h/;x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := api.ParseBaseURL(s)
		if err != nil {
			if u != nil || err.Error() == "" {
				t.Fatalf("refused with %v, yet gave %v", err, u)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("%q gave scheme %q", s, u.Scheme)
		}
		if u.Host == "" || u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			t.Fatalf("%q gave %#v", s, u)
		}
		if strings.HasSuffix(u.EscapedPath(), "/") {
			t.Fatalf("%q gave a path ending in a slash: %q", s, u.EscapedPath())
		}
		again, err := api.ParseBaseURL(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("%q gave %s, which parses as %v, %v", s, u, again, err)
		}
		ep := api.Endpoint{Base: u}
		for _, path := range []string{api.PathListen, api.PathAgent} {
			w, err := ep.WebSocketURL(path, url.Values{"model": {"nova-3"}})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			back, err := url.Parse(w.String())
			if err != nil {
				t.Fatalf("%s: %s does not parse: %v", path, w, err)
			}
			if back.Host != u.Host || back.EscapedPath() != u.EscapedPath()+path || back.Query().Get("model") != "nova-3" {
				t.Fatalf("%s on %s became %s", path, u, w)
			}
		}
		if u.User != nil && strings.Contains(ep.String(), u.User.String()+"@") {
			t.Fatalf("%s shows its credentials", ep)
		}
	})
}
