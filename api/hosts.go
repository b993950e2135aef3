package api

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Region selects where requests are processed. Only the host changes with
// the region: keys, paths and request shapes stay the same.
type Region string

// The regions of the service. The zero value is the global host.
const (
	RegionGlobal Region = ""
	RegionEU     Region = "eu"
	RegionAU     Region = "au"
	RegionIN     Region = "in"
)

// Regions lists every region, global first.
var Regions = []Region{RegionGlobal, RegionEU, RegionAU, RegionIN}

// ParseRegion accepts "", "global", "eu", "au" and "in" in any case.
func ParseRegion(s string) (Region, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "global":
		return RegionGlobal, nil
	case "eu":
		return RegionEU, nil
	case "au":
		return RegionAU, nil
	case "in":
		return RegionIN, nil
	}
	return "", fmt.Errorf("unknown region %q: choose global, eu, au or in", s)
}

// String names the region for people.
func (r Region) String() string {
	switch r {
	case RegionGlobal:
		return "Global"
	case RegionEU:
		return "European Union"
	case RegionAU:
		return "Australia"
	case RegionIN:
		return "India"
	}
	return string(r)
}

// Regional reports whether r is one of the regional hosts.
func (r Region) Regional() bool { return r != RegionGlobal }

const (
	globalHost = "api.deepgram.com"
	agentHost  = "agent.deepgram.com"
)

// Paths of the interface.
const (
	PathListen       = "/v1/listen"
	PathListenV2     = "/v2/listen"
	PathSpeak        = "/v1/speak"
	PathSpeakV2      = "/v2/speak"
	PathRead         = "/v1/read"
	PathModels       = "/v1/models"
	PathAuthGrant    = "/v1/auth/grant"
	PathAuthToken    = "/v1/auth/token"
	PathAgent        = "/v1/agent/converse"
	PathAgentModels  = "/v1/agent/settings/think/models"
	PathProjects     = "/v1/projects"
	pathAgentPrefix  = "/v1/agent/"
	pathProjectsRoot = "/v1/projects"
)

// Endpoint says where the service is: the hosted service in a region, or
// a custom base URL (a self-hosted deployment or Earshot's local engine).
// The zero value is the hosted service's global host.
type Endpoint struct {
	// Region selects the regional rules and, without Base, the host.
	Region Region
	// Base, when set, replaces the main host, for example
	// http://127.0.0.1:8080. Scheme http or https; ws and wss are derived.
	Base *url.URL
	// Agent, when set, replaces the voice-agent host. Without it the agent
	// is on the main host (custom or regional) or on the global agent host.
	Agent *url.URL
}

// ParseBaseURL parses a custom base URL such as "http://127.0.0.1:8080".
// A bare host:port is taken as http for loopback and https otherwise.
func ParseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty base URL")
	}
	if !strings.Contains(s, "://") {
		scheme := "https://"
		if probe, err := url.Parse("//" + s); err == nil && isLoopback(probe.Hostname()) {
			scheme = "http://"
		}
		s = scheme + s
	}
	u, err := url.Parse(s)
	if err != nil {
		// A *url.Error names the URL again; the message names it once.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("base URL %q: %w", s, err)
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("base URL %q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("base URL %q has no host", s)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q must not carry a query or fragment", s)
	}
	// Every trailing slash goes, in the path as written (which may spell
	// a slash %2F) and as decoded alike, so that the URL shown reads the
	// same when parsed again.
	p := strings.TrimRight(u.EscapedPath(), "/")
	if u.Path, err = url.PathUnescape(p); err != nil {
		return nil, fmt.Errorf("base URL %q: %w", s, err)
	}
	u.RawPath = p
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MainBase returns the base URL of the main host (REST and the speech
// WebSockets).
func (e Endpoint) MainBase() *url.URL {
	if e.Base != nil {
		u := *e.Base
		return &u
	}
	host := globalHost
	if e.Region.Regional() {
		host = "api." + string(e.Region) + ".deepgram.com"
	}
	return &url.URL{Scheme: "https", Host: host}
}

// AgentBase returns the base URL of the voice agent. Globally it is its
// own host; in a region there is no agent host and the agent is served on
// the regional main host.
func (e Endpoint) AgentBase() *url.URL {
	if e.Agent != nil {
		u := *e.Agent
		return &u
	}
	if e.Base != nil || e.Region.Regional() {
		return e.MainBase()
	}
	return &url.URL{Scheme: "https", Host: agentHost}
}

// URL returns the https (or http) address of path with query q, on the host
// that serves it. Management paths are refused in a region, where the
// service answers 404.
func (e Endpoint) URL(path string, q url.Values) (*url.URL, error) {
	if err := e.CheckPath(path); err != nil {
		return nil, err
	}
	base := e.MainBase()
	if strings.HasPrefix(path, pathAgentPrefix) {
		base = e.AgentBase()
	}
	u := *base
	u.Path = base.Path + path
	if base.RawPath != "" {
		u.RawPath = base.RawPath + path // keeps a base that spells a slash %2F as it is
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return &u, nil
}

// WebSocketURL is URL with the ws or wss scheme.
func (e Endpoint) WebSocketURL(path string, q url.Values) (*url.URL, error) {
	u, err := e.URL(path, q)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" {
		u.Scheme = "ws"
	} else {
		u.Scheme = "wss"
	}
	return u, nil
}

// CheckPath reports the rules of hosting that a path breaks on this
// endpoint: /v1/projects is global only.
func (e Endpoint) CheckPath(path string) error {
	if e.Region.Regional() && (path == pathProjectsRoot || strings.HasPrefix(path, pathProjectsRoot+"/")) {
		return &OptionError{Param: "region", Reason: fmt.Sprintf("project management is served only on the global host, not in the %s region", e.Region),
			Status: 404, Code: CodeNotFound}
	}
	return nil
}

// CheckModel reports whether model may be requested on this endpoint:
// whisper models are not served in any region.
func (e Endpoint) CheckModel(model string) error {
	if e.Region.Regional() && IsWhisperModel(model) {
		return badParam("model", fmt.Sprintf("whisper models are not served in the %s region; use a nova-* or flux-general-* model", e.Region))
	}
	return nil
}

// IsWhisperModel reports whether model names a whisper model.
func IsWhisperModel(model string) bool {
	m := strings.ToLower(model)
	return m == "whisper" || strings.HasPrefix(m, "whisper-")
}

// String describes the endpoint for people, never with credentials.
func (e Endpoint) String() string {
	b := e.MainBase()
	b.User = nil
	if e.Base != nil {
		return "custom host " + b.String()
	}
	return b.Host + " (" + e.Region.String() + ")"
}
