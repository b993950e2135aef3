package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// wsServer is a WebSocket server of one path (plus /v1/auth/grant) that
// records grants and handshakes and runs session on every accepted
// connection. The grant endpoint accepts the key "KEY" only. Its cleanup
// stops every session and waits for it.
type wsServer struct {
	*httptest.Server
	ctx context.Context
	wg  sync.WaitGroup

	// refuse, when it returns true, has answered the handshake itself.
	refuse func(w http.ResponseWriter, r *http.Request) bool
	// session runs an accepted connection; the connection is closed when
	// it returns.
	session func(ctx context.Context, c *websocket.Conn)

	mu         sync.Mutex
	handshakes []recordedRequest
	grants     []recordedRequest
}

// newWSServer starts a wsServer of path whose accepted handshakes answer
// with the request id requestID; tune adjusts the http.Server before it
// starts.
func newWSServer(t *testing.T, path, requestID string, session func(ctx context.Context, c *websocket.Conn), tune ...func(*http.Server)) *wsServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &wsServer{ctx: ctx, session: session}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathAuthGrant, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.grants = append(s.grants, recordedRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body})
		n := len(s.grants)
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Token KEY" {
			writeJSON(w, http.StatusUnauthorized, api.LegacyErrorBody{ErrCode: api.CodeInvalidAuth, ErrMsg: "Invalid credentials."})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "jwt-" + strconv.Itoa(n), "expires_in": 30})
	})
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		s.wg.Add(1)
		defer s.wg.Done()
		s.mu.Lock()
		s.handshakes = append(s.handshakes, recordedRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
			UserAgent: r.Header.Get("User-Agent"), Query: r.URL.Query(), RawQuery: r.URL.RawQuery})
		s.mu.Unlock()
		if s.refuse != nil && s.refuse(w, r) {
			return
		}
		w.Header().Set(api.HeaderRequestID, requestID)
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		defer c.CloseNow()
		s.session(s.ctx, c)
	})
	s.Server = httptest.NewUnstartedServer(mux)
	for _, f := range tune {
		f(s.Config)
	}
	s.Start()
	t.Cleanup(func() {
		cancel()
		s.Close()
		s.wg.Wait()
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	})
	return s
}

// newListenServer is a wsServer of /v1/listen.
func newListenServer(t *testing.T, session func(ctx context.Context, c *websocket.Conn), tune ...func(*http.Server)) *wsServer {
	t.Helper()
	return newWSServer(t, api.PathListen, "stream-req-1", session, tune...)
}

// newTurnServer is a wsServer of /v2/listen.
func newTurnServer(t *testing.T, session func(ctx context.Context, c *websocket.Conn)) *wsServer {
	t.Helper()
	return newWSServer(t, api.PathListenV2, "turn-req-1", session)
}

// newSpeakServer is a wsServer of one speak path.
func newSpeakServer(t *testing.T, path string, session func(ctx context.Context, c *websocket.Conn)) *wsServer {
	t.Helper()
	return newWSServer(t, path, "speak-req-1", session)
}

// client is a Client of the server, authorized with the key "KEY" unless
// cfg names a key or token.
func (s *wsServer) client(t *testing.T, cfg api.Config) *api.Client {
	t.Helper()
	base, err := api.ParseBaseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint.Base = base
	if cfg.APIKey == "" && cfg.AccessToken == "" {
		cfg.APIKey = "KEY"
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *wsServer) handshakeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handshakes)
}

func (s *wsServer) handshake(t *testing.T, i int) recordedRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.handshakes) {
		t.Fatalf("%d handshakes, want at least %d", len(s.handshakes), i+1)
	}
	return s.handshakes[i]
}

// checkGrants fails t unless the server granted want tokens, each asked
// for with the key.
func (s *wsServer) checkGrants(t *testing.T, want int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.grants) != want {
		t.Errorf("%d grants, want %d", len(s.grants), want)
	}
	for i, g := range s.grants {
		if g.Auth != "Token KEY" {
			t.Errorf("grant %d authorized with %q", i, g.Auth)
		}
	}
}

// handshakeAuths are the ways a client authorizes a WebSocket handshake:
// the Authorization header the server sees and the grants asked for
// first.
var handshakeAuths = []struct {
	name       string
	cfg        api.Config
	wantAuth   string
	wantGrants int
}{
	{"key", api.Config{APIKey: "KEY"}, "Token KEY", 0},
	{"access token", api.Config{APIKey: "KEY", AccessToken: "JWT"}, "Bearer JWT", 0},
	{"short-lived token", api.Config{APIKey: "KEY", ShortLivedTokens: true}, "Bearer jwt-1", 1},
}
