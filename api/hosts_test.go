package api_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestEndpointHosts(t *testing.T) {
	custom := mustURL(t, "http://127.0.0.1:8080")
	customAgent := mustURL(t, "https://agent.example.net:8443/prefix")
	tests := []struct {
		name      string
		ep        api.Endpoint
		main      string
		agent     string
		listenWS  string
		agentWS   string
		models    string
		thinkREST string
	}{
		{
			name: "global", ep: api.Endpoint{},
			main: "https://api.deepgram.com", agent: "https://agent.deepgram.com",
			listenWS: "wss://api.deepgram.com/v1/listen", agentWS: "wss://agent.deepgram.com/v1/agent/converse",
			models: "https://api.deepgram.com/v1/models", thinkREST: "https://agent.deepgram.com/v1/agent/settings/think/models",
		},
		{
			name: "eu", ep: api.Endpoint{Region: api.RegionEU},
			main: "https://api.eu.deepgram.com", agent: "https://api.eu.deepgram.com",
			listenWS: "wss://api.eu.deepgram.com/v1/listen", agentWS: "wss://api.eu.deepgram.com/v1/agent/converse",
			models: "https://api.eu.deepgram.com/v1/models", thinkREST: "https://api.eu.deepgram.com/v1/agent/settings/think/models",
		},
		{
			name: "au", ep: api.Endpoint{Region: api.RegionAU},
			main: "https://api.au.deepgram.com", agent: "https://api.au.deepgram.com",
			listenWS: "wss://api.au.deepgram.com/v1/listen", agentWS: "wss://api.au.deepgram.com/v1/agent/converse",
			models: "https://api.au.deepgram.com/v1/models", thinkREST: "https://api.au.deepgram.com/v1/agent/settings/think/models",
		},
		{
			name: "in", ep: api.Endpoint{Region: api.RegionIN},
			main: "https://api.in.deepgram.com", agent: "https://api.in.deepgram.com",
			listenWS: "wss://api.in.deepgram.com/v1/listen", agentWS: "wss://api.in.deepgram.com/v1/agent/converse",
			models: "https://api.in.deepgram.com/v1/models", thinkREST: "https://api.in.deepgram.com/v1/agent/settings/think/models",
		},
		{
			name: "custom base", ep: api.Endpoint{Base: custom},
			main: "http://127.0.0.1:8080", agent: "http://127.0.0.1:8080",
			listenWS: "ws://127.0.0.1:8080/v1/listen", agentWS: "ws://127.0.0.1:8080/v1/agent/converse",
			models: "http://127.0.0.1:8080/v1/models", thinkREST: "http://127.0.0.1:8080/v1/agent/settings/think/models",
		},
		{
			name: "custom base and agent", ep: api.Endpoint{Base: custom, Agent: customAgent},
			main: "http://127.0.0.1:8080", agent: "https://agent.example.net:8443/prefix",
			listenWS: "ws://127.0.0.1:8080/v1/listen", agentWS: "wss://agent.example.net:8443/prefix/v1/agent/converse",
			models: "http://127.0.0.1:8080/v1/models", thinkREST: "https://agent.example.net:8443/prefix/v1/agent/settings/think/models",
		},
		{
			name: "custom agent globally", ep: api.Endpoint{Agent: customAgent},
			main: "https://api.deepgram.com", agent: "https://agent.example.net:8443/prefix",
			listenWS: "wss://api.deepgram.com/v1/listen", agentWS: "wss://agent.example.net:8443/prefix/v1/agent/converse",
			models: "https://api.deepgram.com/v1/models", thinkREST: "https://agent.example.net:8443/prefix/v1/agent/settings/think/models",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ep.MainBase().String(); got != tt.main {
				t.Errorf("MainBase = %s, want %s", got, tt.main)
			}
			if got := tt.ep.AgentBase().String(); got != tt.agent {
				t.Errorf("AgentBase = %s, want %s", got, tt.agent)
			}
			check := func(what string, u *url.URL, err error, want string) {
				t.Helper()
				if err != nil {
					t.Errorf("%s: %v", what, err)
					return
				}
				if u.String() != want {
					t.Errorf("%s = %s, want %s", what, u, want)
				}
			}
			u, err := tt.ep.WebSocketURL(api.PathListen, nil)
			check("listen WebSocket", u, err, tt.listenWS)
			u, err = tt.ep.WebSocketURL(api.PathAgent, nil)
			check("agent WebSocket", u, err, tt.agentWS)
			u, err = tt.ep.URL(api.PathModels, nil)
			check("models", u, err, tt.models)
			u, err = tt.ep.URL(api.PathAgentModels, nil)
			check("think models", u, err, tt.thinkREST)
		})
	}
}

func TestEndpointBasesAreCopies(t *testing.T) {
	base := mustURL(t, "http://127.0.0.1:8080")
	ep := api.Endpoint{Base: base}
	ep.MainBase().Host = "changed"
	ep.AgentBase().Host = "changed"
	if base.Host != "127.0.0.1:8080" {
		t.Errorf("a returned base aliases the configured one: %s", base)
	}
}

func TestEndpointURLQuery(t *testing.T) {
	ep := api.Endpoint{Base: mustURL(t, "http://127.0.0.1:8080/proxy")}
	u, err := ep.URL(api.PathListen, url.Values{"model": {"nova-3"}, "keyterm": {"a b", "c&d"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:8080/proxy/v1/listen?keyterm=a+b&keyterm=c%26d&model=nova-3"; u.String() != want {
		t.Errorf("URL = %s, want %s", u, want)
	}
	u, err = ep.URL(api.PathListen, url.Values{})
	if err != nil || u.RawQuery != "" || u.ForceQuery {
		t.Errorf("empty query gives %s (%v)", u, err)
	}
}

func TestEndpointProjects(t *testing.T) {
	for _, r := range api.Regions {
		for _, path := range []string{"/v1/projects", "/v1/projects/abc/keys"} {
			t.Run(r.String()+path, func(t *testing.T) {
				ep := api.Endpoint{Region: r}
				u, err := ep.URL(path, nil)
				if !r.Regional() {
					if err != nil || u.String() != "https://api.deepgram.com"+path {
						t.Errorf("global: %v %v", u, err)
					}
					return
				}
				if err == nil {
					t.Fatalf("%s allowed in %s: %s", path, r, u)
				}
				var oe *api.OptionError
				if !errors.As(err, &oe) || oe.Status != http.StatusNotFound || !errors.Is(err, api.ErrInvalidOptions) {
					t.Errorf("err %T %v, want an OptionError with status 404", err, err)
				}
				if _, err := ep.WebSocketURL(path, nil); err == nil {
					t.Errorf("WebSocketURL allowed %s in %s", path, r)
				}
			})
		}
	}
	// A path that merely starts with the same letters is not management.
	if _, err := (api.Endpoint{Region: api.RegionEU}).URL("/v1/projectsx", nil); err != nil {
		t.Errorf("/v1/projectsx refused: %v", err)
	}
}

func TestEndpointCheckModel(t *testing.T) {
	tests := []struct {
		model  string
		region api.Region
		ok     bool
	}{
		{"whisper", api.RegionGlobal, true},
		{"whisper-large", api.RegionGlobal, true},
		{"whisper-large", api.RegionEU, false},
		{"Whisper-Medium", api.RegionAU, false},
		{"whisper", api.RegionIN, false},
		{"nova-3", api.RegionEU, true},
		{"flux-general-en", api.RegionEU, true},
		{"", api.RegionIN, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.region)+"/"+tt.model, func(t *testing.T) {
			err := api.Endpoint{Region: tt.region}.CheckModel(tt.model)
			if tt.ok {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			checkOptionErr(t, "CheckModel", err, bad("model"))
		})
	}
}

func TestParseRegion(t *testing.T) {
	tests := []struct {
		in   string
		want api.Region
		ok   bool
	}{
		{"", api.RegionGlobal, true},
		{"global", api.RegionGlobal, true},
		{" EU ", api.RegionEU, true},
		{"au", api.RegionAU, true},
		{"In", api.RegionIN, true},
		{"us", "", false},
		{"europe", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := api.ParseRegion(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseRegion(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
	for _, r := range api.Regions {
		if r.String() == "" || (r.Regional() == (r == api.RegionGlobal)) {
			t.Errorf("region %q: String %q Regional %v", string(r), r.String(), r.Regional())
		}
	}
}

func TestParseBaseURL(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" when refused
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"localhost:8080", "http://localhost:8080"},
		{"[::1]:8080", "http://[::1]:8080"},
		{"127.0.0.1", "http://127.0.0.1"},
		{"example.com:8443", "https://example.com:8443"},
		{"10.0.0.5:8080", "https://10.0.0.5:8080"},
		{"  https://example.com/  ", "https://example.com"},
		{"https://example.com/base/", "https://example.com/base"},
		{"ws://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"wss://example.com", "https://example.com"},
		{"HTTP://Example.com", "http://Example.com"},
		{"", ""},
		{"   ", ""},
		{"ftp://example.com", ""},
		{"http://", ""},
		{"http:///path", ""},
		{"http://127.0.0.1:8080?model=nova-3", ""},
		{"127.0.0.1:8080?x=1", ""},
		{"http://127.0.0.1:8080#frag", ""},
		{"http://[::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := api.ParseBaseURL(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Errorf("accepted as %s", u)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if u.String() != tt.want {
				t.Errorf("= %s, want %s", u, tt.want)
			}
		})
	}
}

func TestEndpointString(t *testing.T) {
	base := mustURL(t, "http://user:hunter2@127.0.0.1:8080")
	tests := []struct {
		ep   api.Endpoint
		want string
	}{
		{api.Endpoint{}, "api.deepgram.com (Global)"},
		{api.Endpoint{Region: api.RegionEU}, "api.eu.deepgram.com (European Union)"},
		{api.Endpoint{Base: base}, "custom host http://127.0.0.1:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := tt.ep.String()
			if got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("String() shows credentials: %q", got)
			}
		})
	}
	if base.User == nil {
		t.Error("String() removed the credentials from the configured URL")
	}
}

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		in     string
		scheme string
		cred   string
		ok     bool
	}{
		{"Token abc", api.SchemeToken, "abc", true},
		{"token abc", api.SchemeToken, "abc", true},
		{"Bearer eyJ.x.y", api.SchemeBearer, "eyJ.x.y", true},
		{"  BEARER   eyJ  ", api.SchemeBearer, "eyJ", true},
		{"Basic dXNlcg==", "", "", false},
		{"Token", "", "", false},
		{"Token ", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, c, ok := api.ParseAuthorization(tt.in)
			if s != tt.scheme || c != tt.cred || ok != tt.ok {
				t.Errorf("= %q %q %v", s, c, ok)
			}
		})
	}
}
