package engine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
)

// Each middleware of the engine's HTTP surface, alone, around a handler
// that notes it was reached. The end-to-end tests (TestRouting,
// TestRequestIDs, TestLoopbackOnly, TestOrigin, TestConnectionLimit,
// TestProjectUsageEndToEnd) hold the composition.

// bareEngine is an engine with nothing loaded: what the middlewares use.
func bareEngine(cfg Config) *Engine {
	clk := newTestClock()
	cfg.Clock = clk
	return &Engine{
		cfg:   cfg,
		clock: clk,
		auth:  newAuthenticator("middleware-key", []byte("signing-key-of-32-bytes-exactly!"), clk.Now),
		limit: newLimiter(max(cfg.MaxConnections, 1)),
	}
}

// reached is a handler that records the requests that got to it.
type reached struct{ reqs []*http.Request }

func (h *reached) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.reqs = append(h.reqs, r)
	w.WriteHeader(http.StatusNoContent)
}

// serve runs one request through h and returns the answer.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// wantRefusal checks an answer in the legacy error shape.
func wantRefusal(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	var body api.LegacyErrorBody
	if w.Code != status || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.ErrCode != code {
		t.Errorf("answer %d %s, want %d %s", w.Code, w.Body, status, code)
	}
}

func TestRequestIDsMiddleware(t *testing.T) {
	t.Parallel()
	var ids []string
	h := requestIDs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids = append(ids, requestID(r.Context()))
		// An error answered below carries the same id in its body.
		writeError(w, r, http.StatusTeapot, "X", "x")
	}))
	seen := map[string]bool{}
	for range 3 {
		w := serve(h, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
		var body api.LegacyErrorBody
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		id := w.Header().Get(api.HeaderRequestID)
		if id == "" || id != ids[len(ids)-1] || body.RequestID != id || seen[id] {
			t.Errorf("header %q, context %q, body %q: want one new id in all three", id, ids[len(ids)-1], body.RequestID)
		}
		seen[id] = true
	}
}

func TestLoopbackHostsMiddleware(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		loopbackOnly bool
		host         string
		pass         bool
	}{
		{true, "127.0.0.1:8080", true},
		{true, "[::1]:8080", true},
		{true, "localhost", true},
		{true, "rebound.example:8080", false},
		{false, "rebound.example:8080", true},
	} {
		next := &reached{}
		r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		r.Host = tc.host
		w := serve(bareEngine(Config{LoopbackOnly: tc.loopbackOnly}).loopbackHosts(next), r)
		if tc.pass != (len(next.reqs) == 1) {
			t.Errorf("LoopbackOnly %v, Host %s: passed %v, want %v", tc.loopbackOnly, tc.host, len(next.reqs) == 1, tc.pass)
		}
		if !tc.pass {
			wantRefusal(t, w, http.StatusForbidden, "FORBIDDEN_HOST")
		}
	}
}

func TestAuthenticateMiddleware(t *testing.T) {
	t.Parallel()
	e := bareEngine(Config{})
	tok, err := e.auth.mint(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		header string
		scheme string // "": refused
	}{
		{"Token middleware-key", api.SchemeToken},
		{"Bearer " + tok, api.SchemeBearer},
		{"", ""},
		{"Token wrong", ""},
		{"Bearer not-a-jwt", ""},
	} {
		next := &reached{}
		r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		w := serve(e.authenticate(next), r)
		if tc.scheme == "" {
			wantRefusal(t, w, http.StatusUnauthorized, api.CodeInvalidAuth)
			if len(next.reqs) != 0 {
				t.Errorf("%q reached the handler", tc.header)
			}
			continue
		}
		if len(next.reqs) != 1 || credentialFrom(next.reqs[0].Context()).scheme != tc.scheme {
			t.Errorf("%q: reached %d times, want once with a %s credential", tc.header, len(next.reqs), tc.scheme)
		}
	}
}

func TestAllowanceMiddleware(t *testing.T) {
	t.Parallel()
	e := bareEngine(Config{MaxConnections: 2})
	heavy := e.allowance(2)(&reached{})
	var during *httptest.ResponseRecorder
	var inUse int
	light := e.allowance(1)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inUse = e.limit.inUse()
		// A heavy request while this one is served does not fit.
		during = serve(heavy, httptest.NewRequest(http.MethodGet, "/", nil))
	}))
	serve(light, httptest.NewRequest(http.MethodGet, "/", nil))
	if inUse != 1 {
		t.Errorf("weight in use while served: %d, want 1", inUse)
	}
	wantRefusal(t, during, http.StatusTooManyRequests, api.CodeTooManyRequests)
	// Alone, it fits; and nothing is kept after either.
	if w := serve(heavy, httptest.NewRequest(http.MethodGet, "/", nil)); w.Code != http.StatusNoContent {
		t.Errorf("heavy alone: %d, want it served", w.Code)
	}
	if n := e.limit.inUse(); n != 0 {
		t.Errorf("weight %d in use after the requests, want 0", n)
	}
}

func TestSameOriginMiddleware(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		origin string
		pass   bool
	}{
		{"", true},
		{"http://127.0.0.1:8080", true},
		{"https://pages.example", false},
		{"http://127.0.0.1:9999", false},
		{"::not a url", false},
	} {
		next := &reached{}
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/v1/listen", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		w := serve(sameOrigin(next), r)
		if tc.pass != (len(next.reqs) == 1) {
			t.Errorf("Origin %q: passed %v, want %v", tc.origin, len(next.reqs) == 1, tc.pass)
		}
		if !tc.pass {
			wantRefusal(t, w, http.StatusForbidden, "FORBIDDEN_ORIGIN")
		}
	}
}

func TestRecordUsageMiddleware(t *testing.T) {
	t.Parallel()
	e := bareEngine(Config{})
	clk := e.clock.(*clock.Fake)
	// A batch synthesis: its answer's headers say what it spoke.
	speak := e.recordUsage(api.PathSpeak)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clk.Advance(1500 * time.Millisecond)
		w.Header().Set(headerCharCount, strconv.Itoa(42))
		w.Header().Set(headerModelName, "aura-asteria-en")
		w.WriteHeader(http.StatusOK)
	}))
	serve(requestIDs(speak), httptest.NewRequest(http.MethodPost, api.PathSpeak, nil))
	// A path that is not usage is served as it is, unrecorded.
	serve(e.recordUsage(api.PathModels)(&reached{}), httptest.NewRequest(http.MethodGet, api.PathModels, nil))
	recs := e.served.snapshot(func(*servedRecord) bool { return true })
	if len(recs) != 1 {
		t.Fatalf("%d records, want the speak request's alone", len(recs))
	}
	rec := recs[0]
	if rec.id == "" || rec.endpoint != "speak" || rec.method != "sync" || rec.code != http.StatusOK ||
		rec.chars != 42 || rec.model != "aura-asteria-en" || rec.completed.Sub(rec.created) != 1500*time.Millisecond {
		t.Errorf("record %+v", rec)
	}
}
