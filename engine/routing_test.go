package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
)

// routingEngine starts an engine that loads no decoder up front: routing,
// authentication and refusals before recognition need none.
func routingEngine(t *testing.T, cfg Config) *Local {
	t.Helper()
	cfg.Recognizer.Warm = -1
	return startEngine(t, cfg)
}

func TestAuthorizationSchemes(t *testing.T) {
	t.Parallel()
	l := shared
	key := l.Key.Reveal()
	for _, tc := range []struct {
		name  string
		authz string
		ok    bool
	}{
		{"Token", "Token " + key, true},
		{"lower-case token as the Go SDK sends it", "token " + key, true},
		{"upper-case scheme", "TOKEN " + key, true},
		{"extra spaces", "  Token   " + key + "  ", true},
		{"missing", "", false},
		{"wrong key", "Token not-the-key", false},
		{"key as Bearer", "Bearer " + key, false},
		{"unknown scheme", "Basic " + key, false},
		{"scheme only", "Token", false},
		{"key without scheme", key, false},
		{"garbage JWT", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, l, http.MethodGet, api.PathModels, tc.authz, nil, nil)
			if tc.ok {
				if a.status != http.StatusOK {
					t.Fatalf("status %d, want 200; body %s", a.status, a.body)
				}
				return
			}
			a.wantError(t, http.StatusUnauthorized, api.CodeInvalidAuth, "Invalid credentials.")
		})
	}
}

// TestAuthorizationOnEveryTransport checks that a refused credential is
// refused the same way on REST and on the WebSocket handshake.
func TestAuthorizationOnEveryTransport(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	for _, authz := range []string{"Token wrong", "Bearer wrong"} {
		conn, a := dialRaw(t, ctx, shared, "encoding=linear16&sample_rate=16000", http.Header{"Authorization": {authz}})
		if conn != nil {
			t.Fatalf("%s: handshake accepted", authz)
		}
		a.wantError(t, http.StatusUnauthorized, api.CodeInvalidAuth, "Invalid credentials.")
	}
	// No Authorization at all.
	u := "ws://" + shared.URL.Host + api.PathListen
	_, resp, err := websocket.Dial(ctx, u, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("handshake without credentials: %v, %+v; want 401", err, resp)
	}
}

func TestGrant(t *testing.T) {
	t.Parallel()
	l := shared
	key := tokenAuth(l)
	type grant struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
	}
	for _, tc := range []struct {
		name    string
		body    string
		ctype   string
		wantTTL float64 // 0: refused
		code    string
	}{
		{"no body: default 30 s", "", "", 30, ""},
		{"empty object: default 30 s", "{}", "application/json", 30, ""},
		{"ttl_seconds 60", `{"ttl_seconds": 60}`, "application/json", 60, ""},
		{"ttl_seconds 1", `{"ttl_seconds": 1}`, "application/json", 1, ""},
		{"ttl_seconds 3600", `{"ttl_seconds": 3600}`, "application/json", 3600, ""},
		{"ttl_seconds 0", `{"ttl_seconds": 0}`, "application/json", 0, api.CodeBadRequest},
		{"ttl_seconds 0.5", `{"ttl_seconds": 0.5}`, "application/json", 0, api.CodeBadRequest},
		{"ttl_seconds -5", `{"ttl_seconds": -5}`, "application/json", 0, api.CodeBadRequest},
		{"ttl_seconds 3601", `{"ttl_seconds": 3601}`, "application/json", 0, api.CodeBadRequest},
		{"ttl_seconds 1e300", `{"ttl_seconds": 1e300}`, "application/json", 0, api.CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			h := http.Header{}
			if tc.ctype != "" {
				h.Set("Content-Type", tc.ctype)
			}
			a := do(t, l, http.MethodPost, api.PathAuthGrant, key, body, h)
			if tc.wantTTL == 0 {
				a.wantError(t, http.StatusBadRequest, tc.code, "ttl_seconds must be between 1 and 3600.")
				return
			}
			if a.status != http.StatusOK {
				t.Fatalf("status %d; body %s", a.status, a.body)
			}
			var g grant
			if err := json.Unmarshal(a.body, &g); err != nil {
				t.Fatal(err)
			}
			if g.ExpiresIn != tc.wantTTL {
				t.Errorf("expires_in %v, want %v", g.ExpiresIn, tc.wantTTL)
			}
			// The token is a JWT that lives at least the time granted: its
			// times are whole seconds, the issue rounded down and the
			// expiry up.
			var claims jwt.RegisteredClaims
			if _, _, err := jwt.NewParser().ParseUnverified(g.AccessToken, &claims); err != nil {
				t.Fatalf("access_token %q is not a JWT: %v", g.AccessToken, err)
			}
			if got := claims.ExpiresAt.Sub(claims.IssuedAt.Time).Seconds(); got < tc.wantTTL || got > tc.wantTTL+1 {
				t.Errorf("token lifetime %v s, want %v s", got, tc.wantTTL)
			}
			// It authorizes REST requests as Bearer.
			if a := do(t, l, http.MethodGet, api.PathModels, "Bearer "+g.AccessToken, nil, nil); a.status != http.StatusOK {
				t.Errorf("the granted token is refused: %d %s", a.status, a.body)
			}
		})
	}
	t.Run("invalid JSON", func(t *testing.T) {
		a := do(t, l, http.MethodPost, api.PathAuthGrant, key, []byte(`{"ttl_seconds": "ten"}`), http.Header{"Content-Type": {"application/json"}})
		if a.status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400; body %s", a.status, a.body)
		}
		var b api.ModernErrorBody
		if err := json.Unmarshal(a.body, &b); err != nil || b.Category != "INVALID_JSON" || b.Message != "Invalid JSON submitted." || b.RequestID == "" {
			t.Errorf("body %s: want the modern INVALID_JSON error body", a.body)
		}
	})
	t.Run("a token cannot mint another", func(t *testing.T) {
		g, err := newClient(t, l).Grant(testContext(t, time.Minute), 0)
		if err != nil {
			t.Fatal(err)
		}
		a := do(t, l, http.MethodPost, api.PathAuthGrant, "Bearer "+g.AccessToken.Reveal(), nil, nil)
		a.wantError(t, http.StatusForbidden, "INSUFFICIENT_PERMISSIONS", "")
	})
	t.Run("the client's Grant", func(t *testing.T) {
		g, err := newClient(t, l).Grant(testContext(t, time.Minute), 45*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if g.ExpiresIn != 45 || g.AccessToken == "" {
			t.Errorf("grant %+v, want a token for 45 s", g)
		}
	})
}

func TestTokenDetails(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	keyClient := newClient(t, shared)
	g, err := keyClient.Grant(ctx, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tokClient := newClientWith(t, api.Config{Endpoint: shared.Endpoint(), AccessToken: g.AccessToken})

	kd, err := keyClient.TokenDetails(ctx)
	if err != nil {
		t.Fatal(err)
	}
	td, err := tokClient.TokenDetails(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kd.String("kind") != "api_key" || td.String("kind") != "access_token" {
		t.Errorf("kind %q and %q, want api_key and access_token", kd.String("kind"), td.String("kind"))
	}
	acc := kd.String("accessor")
	if acc == "" || acc != td.String("accessor") || strings.Contains(acc, shared.Key.Reveal()) {
		t.Errorf("accessors %q and %q: want the same, non-empty, without the key", acc, td.String("accessor"))
	}
	if _, ok := kd.Fields["expires"]; ok {
		t.Errorf("an API key has no expiry, got %s", kd.Fields["expires"])
	}
	exp, err := time.Parse(time.RFC3339, td.String("expires"))
	if err != nil {
		t.Fatalf("token expires %q: %v", td.String("expires"), err)
	}
	if d := time.Until(exp); d < 100*time.Second || d > 121*time.Second {
		t.Errorf("token expires in %v, want about 120 s", d)
	}
	var scopes []string
	if err := json.Unmarshal(td.Fields["scopes"], &scopes); err != nil || len(scopes) == 0 {
		t.Errorf("scopes %s: want a list", td.Fields["scopes"])
	}
	if a := do(t, shared, http.MethodGet, api.PathAuthToken, "", nil, nil); a.status != http.StatusUnauthorized {
		t.Errorf("token details without credentials: %d", a.status)
	}
}

// TestTokenLifetime checks section 5 rule 2: a JWT's lifetime applies to
// requests and WebSocket handshakes; an open stream outlives it.
func TestTokenLifetime(t *testing.T) {
	t.Parallel()
	// 960 ms past a whole second: a 1 s token whose expiry were truncated
	// to the second would be dead 40 ms after it was minted.
	// The clock stands still until the test moves it: a lifetime the
	// test measures does not shrink while a loaded machine runs the
	// requests. The streams' idle window outlasts the hour it moves.
	clk := clock.NewFake(time.Now().Truncate(time.Second).Add(960 * time.Millisecond))
	l := startEngine(t, Config{Clock: clk, IdleTimeout: 2 * time.Hour, Recognizer: RecognizerConfig{Warm: -1}})
	ctx := testContext(t, time.Minute)
	g, err := newClient(t, l).Grant(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + g.AccessToken.Reveal()
	tokClient := newClientWith(t, api.Config{Endpoint: l.Endpoint(), AccessToken: g.AccessToken})

	// Within its lifetime, even near its end, the token works on REST and
	// on the handshake.
	clk.Advance(990 * time.Millisecond)
	if a := do(t, l, http.MethodGet, api.PathModels, bearer, nil, nil); a.status != http.StatusOK {
		t.Fatalf("fresh token refused on REST: %d %s", a.status, a.body)
	}
	s, err := tokClient.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		t.Fatalf("fresh token refused at the handshake: %v", err)
	}
	defer s.Close()

	clk.Advance(time.Hour)

	// Expired: refused on REST and at a new handshake...
	do(t, l, http.MethodGet, api.PathModels, bearer, nil, nil).wantError(t, http.StatusUnauthorized, api.CodeInvalidAuth, "Invalid credentials.")
	if _, err := tokClient.Listen(ctx, linear16(api.ListenOptions{})); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("expired token at the handshake: %v, want a 401", err)
	}
	// ...while the stream opened with it keeps working to its end.
	if err := streamAudio(ctx, s, pcmBytes(clipSamples(t, "0880")), 3200, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := drain(ctx, s)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("stream ended with %v after %v", err, types(msgs))
	}
	if len(finals(msgs)) == 0 || msgs[len(msgs)-1].MessageType() != api.TypeMetadata {
		t.Errorf("messages %v: want finals, then Metadata", types(msgs))
	}
}

func TestShortLivedTokensClient(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newClientWith(t, api.Config{Endpoint: shared.Endpoint(), APIKey: shared.Key, ShortLivedTokens: true, TokenTTL: 5 * time.Second})
	s, err := c.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		t.Fatalf("handshake with a minted JWT: %v", err)
	}
	defer s.Close()
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs, err := drain(ctx, s); !errors.Is(err, io.EOF) || len(msgs) != 1 || msgs[0].MessageType() != api.TypeMetadata {
		t.Errorf("messages %v, end %v: want Metadata, then a normal close", types(msgs), err)
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	l := shared
	key := tokenAuth(l)
	for _, tc := range []struct {
		name, method, path, authz string
		header                    http.Header
		status                    int
		code, msg                 string
		allow                     string
	}{
		{name: "unknown path", method: "GET", path: "/v1/nothing", status: 404, code: api.CodeNotFound, msg: "No such path: /v1/nothing"},
		{name: "unknown path needs no key", method: "GET", path: "/v1/nothing", authz: "-", status: 404, code: api.CodeNotFound},
		{name: "root", method: "GET", path: "/", status: 404, code: api.CodeNotFound},
		{name: "GET /v1/listen without upgrade", method: "GET", path: api.PathListen, status: 405, code: api.CodeMethodNotAllowed,
			msg: "GET is not allowed on /v1/listen.", allow: "POST, GET"},
		{name: "PUT /v1/listen", method: "PUT", path: api.PathListen, status: 405, code: api.CodeMethodNotAllowed, allow: "POST, GET"},
		{name: "POST /v1/models", method: "POST", path: api.PathModels, status: 405, code: api.CodeMethodNotAllowed, allow: "GET"},
		{name: "GET /v1/auth/grant", method: "GET", path: api.PathAuthGrant, status: 405, code: api.CodeMethodNotAllowed, allow: "POST"},
		{name: "POST /v1/auth/token", method: "POST", path: api.PathAuthToken, status: 405, code: api.CodeMethodNotAllowed, allow: "GET"},
		{name: "GET /v2/listen without upgrade", method: "GET", path: api.PathListenV2, status: 405, code: api.CodeMethodNotAllowed,
			msg: "GET is not allowed on /v2/listen.", allow: "GET"},
		{name: "GET /v1/speak without upgrade", method: "GET", path: api.PathSpeak, status: 405, code: api.CodeMethodNotAllowed,
			msg: "GET is not allowed on /v1/speak.", allow: "POST, GET"},
		{name: "/v2/speak needs a key", method: "POST", path: api.PathSpeakV2, authz: "-", status: 401, code: api.CodeInvalidAuth},
		{name: "GET /v1/read", method: "GET", path: api.PathRead, status: 405, code: api.CodeMethodNotAllowed,
			msg: "GET is not allowed on /v1/read.", allow: "POST"},
		{name: "/v1/read needs a key", method: "POST", path: api.PathRead, authz: "-", status: 401, code: api.CodeInvalidAuth},
		{name: "projects, global", method: "GET", path: "/v1/projects", status: 200},
		{name: "another project's keys, global", method: "GET", path: "/v1/projects/p1/keys", status: 404, code: "PROJECT_NOT_FOUND",
			msg: "Project not found."},
		{name: "agent on the main host, global", method: "GET", path: api.PathAgentModels, status: 404, code: api.CodeNotFound,
			msg: "The voice agent is served on the agent host, not on the main host."},
		{name: "agent WebSocket on the main host, global", method: "GET", path: api.PathAgent, status: 404, code: api.CodeNotFound,
			msg: "The voice agent is served on the agent host, not on the main host."},
		{name: "trailing slash", method: "GET", path: api.PathModels + "/", status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz := key
			switch tc.authz {
			case "-":
				authz = ""
			case "":
			default:
				authz = tc.authz
			}
			a := do(t, l, tc.method, tc.path, authz, nil, tc.header)
			if tc.status == 200 {
				if a.status != 200 {
					t.Fatalf("status %d; body %s", a.status, a.body)
				}
				return
			}
			a.wantError(t, tc.status, tc.code, tc.msg)
			if got := a.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if tc.status == 501 {
				if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
					t.Errorf("Content-Type %q", a.header.Get("Content-Type"))
				}
			}
		})
	}
}

// TestRegions checks the hosting rules of section 1: in a region the
// agent is on the main host, there is no agent host, /v1/projects answers
// 404 and whisper models are refused.
func TestRegions(t *testing.T) {
	t.Parallel()
	regional := routingEngine(t, Config{Region: api.RegionEU})
	global := routingEngine(t, Config{})
	agent := func(l *Local, path string) answer {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "127.0.0.1"
		req.Header.Set("Authorization", tokenAuth(l))
		rec := httptest.NewRecorder()
		l.Engine.AgentHandler().ServeHTTP(rec, req)
		return answer{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	t.Run("regional main host serves the agent paths", func(t *testing.T) {
		if a := do(t, regional, http.MethodGet, api.PathAgentModels, tokenAuth(regional), nil, nil); a.status != http.StatusOK || !strings.Contains(string(a.body), `"models"`) {
			t.Errorf("think models on the regional main host: %d %s", a.status, a.body)
		}
		// The agent's socket is there: a plain GET is not an upgrade.
		do(t, regional, http.MethodGet, api.PathAgent, tokenAuth(regional), nil, nil).wantError(t, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed,
			"GET is not allowed on /v1/agent/converse.")
	})
	t.Run("regional agent host answers 404", func(t *testing.T) {
		for _, p := range []string{api.PathAgent, api.PathAgentModels, api.PathListen} {
			agent(regional, p).wantError(t, http.StatusNotFound, api.CodeNotFound,
				"There is no agent host in a region; the voice agent is served on the regional main host.")
		}
	})
	t.Run("global agent host serves the agent paths only", func(t *testing.T) {
		if a := agent(global, api.PathAgentModels); a.status != http.StatusOK || !strings.Contains(string(a.body), `"earshot-assistant"`) {
			t.Errorf("think models on the agent host: %d %s", a.status, a.body)
		}
		agent(global, api.PathListen).wantError(t, http.StatusNotFound, api.CodeNotFound, "The agent host serves only the voice agent.")
	})
	t.Run("regional unknown agent path", func(t *testing.T) {
		do(t, regional, http.MethodGet, "/v1/agent/unknown", tokenAuth(regional), nil, nil).wantError(t, http.StatusNotFound, api.CodeNotFound,
			"No such path: /v1/agent/unknown")
	})
	t.Run("projects", func(t *testing.T) {
		do(t, regional, http.MethodGet, "/v1/projects", tokenAuth(regional), nil, nil).wantError(t, http.StatusNotFound, api.CodeNotFound,
			"Project management is not served on regional hosts; use the global host.")
		if a := do(t, global, http.MethodGet, "/v1/projects", tokenAuth(global), nil, nil); a.status != http.StatusOK {
			t.Errorf("global /v1/projects: status %d, want 200; body %s", a.status, a.body)
		}
	})
	t.Run("whisper", func(t *testing.T) {
		wav := wavBytes(t, silence(t, 1600), 16000, 1)
		do(t, regional, http.MethodPost, api.PathListen+"?model=whisper-large", tokenAuth(regional), wav, nil).wantError(t,
			http.StatusBadRequest, api.CodeBadRequest, "whisper models are not served in the European Union region; use a nova-* or flux-general-* model")
		// Globally whisper is a model of the interface the engine does not serve.
		a := do(t, global, http.MethodPost, api.PathListen+"?model=whisper-large", tokenAuth(global), wav, nil)
		a.wantError(t, http.StatusBadRequest, api.CodeBadRequest, "")
		if msg := a.legacy(t).ErrMsg; !strings.HasPrefix(msg, msgNoSuchModel) {
			t.Errorf("err_msg %q, want it to start with %q", msg, msgNoSuchModel)
		}
		ctx := testContext(t, time.Minute)
		conn, ans := dialRaw(t, ctx, regional, "model=whisper&encoding=linear16&sample_rate=16000", nil)
		if conn != nil {
			t.Fatal("whisper stream accepted in a region")
		}
		ans.wantError(t, http.StatusBadRequest, api.CodeBadRequest, "")
	})
	t.Run("the same key works in every region", func(t *testing.T) {
		if a := do(t, regional, http.MethodGet, api.PathModels, tokenAuth(regional), nil, nil); a.status != http.StatusOK {
			t.Errorf("status %d", a.status)
		}
	})
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tc := range []struct{ method, path, authz string }{
		{"GET", api.PathModels, tokenAuth(shared)},
		{"GET", api.PathModels, ""},
		{"GET", "/nowhere", ""},
		{"GET", api.PathListen, tokenAuth(shared)},
		{"POST", api.PathListen, tokenAuth(shared)},
		{"POST", api.PathAuthGrant, tokenAuth(shared)},
	} {
		a := do(t, shared, tc.method, tc.path, tc.authz, nil, nil)
		rid := a.header.Get(api.HeaderRequestID)
		if seen[rid] {
			t.Errorf("%s %s: request id %q repeated", tc.method, tc.path, rid)
		}
		seen[rid] = true
		if a.status >= 400 {
			if b := a.legacy(t); b.RequestID != rid {
				t.Errorf("%s %s: body request_id %q, header %q", tc.method, tc.path, b.RequestID, rid)
			}
		}
	}
	// The handshake's answer carries one too, which the client keeps.
	ctx := testContext(t, time.Minute)
	s := openStream(t, ctx, shared, linear16(api.ListenOptions{}))
	if s.RequestID() == "" || seen[s.RequestID()] {
		t.Errorf("stream request id %q", s.RequestID())
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, _ := drain(ctx, s)
	if len(msgs) == 0 {
		t.Fatal("no Metadata")
	}
	if md, ok := msgs[len(msgs)-1].(*api.Metadata); !ok || md.RequestID != s.RequestID() {
		t.Errorf("Metadata %+v: want request_id %q", msgs[len(msgs)-1], s.RequestID())
	}
}

// TestLoopbackOnly checks the defence against DNS rebinding: a request
// whose Host names another machine is refused, on REST and WebSocket.
func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	for _, host := range []string{"evil.example", "evil.example:80", "192.168.1.10", "localhost.evil.example"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, shared.URL.String()+api.PathModels, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", tokenAuth(shared))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		answer{status: resp.StatusCode, header: resp.Header, body: b.Bytes()}.wantError(t, http.StatusForbidden, "FORBIDDEN_HOST",
			"The local engine answers only requests addressed to a loopback host.")
	}
	for _, host := range []string{"localhost", "LOCALHOST:1234", "127.0.0.1", "127.1.2.3:9", "[::1]:80"} {
		if !loopbackHost(host) {
			t.Errorf("loopbackHost(%q) = false", host)
		}
	}
	// The WebSocket handshake is refused the same way.
	u := "ws://" + shared.URL.Host + api.PathListen + "?encoding=linear16&sample_rate=16000"
	_, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {tokenAuth(shared)}},
		Host:       "evil.example",
	})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("WebSocket with a foreign Host: %v, %v; want 403", err, resp)
	}
}

// TestOrigin checks that a web page of another origin cannot open a
// stream, while clients that send no Origin (every non-browser) can.
func TestOrigin(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	q := "encoding=linear16&sample_rate=16000"
	for _, origin := range []string{"https://evil.example", "null", "http://127.0.0.1:1"} {
		conn, a := dialRaw(t, ctx, shared, q, http.Header{"Origin": {origin}})
		if conn != nil {
			t.Fatalf("Origin %q accepted", origin)
		}
		a.wantError(t, http.StatusForbidden, "FORBIDDEN_ORIGIN", "")
	}
	for _, origin := range []string{"", "http://" + shared.URL.Host} {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, a := dialRaw(t, ctx, shared, q, h)
		if conn == nil {
			t.Fatalf("Origin %q refused: %d %s", origin, a.status, a.body)
		}
		conn.Close(websocket.StatusNormalClosure, "")
	}
}
