package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
)

// The engine's HTTP surface is composed of these middlewares, each
// doing one job, around the handlers of its paths (see handlerFor):
//
//	requestIDs -> loopbackHosts -> router (404) -> authenticate (401)
//	-> route (501, 405) -> allowance (429) -> recordUsage
//	-> sameOrigin (403, WebSocket upgrades only) -> the endpoint
type middleware func(http.Handler) http.Handler

// requestIDs gives every request an id, in the response's header and in
// the request's context (requestID), before anything can answer it.
func requestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := uuid.NewString()
		w.Header().Set(api.HeaderRequestID, rid)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRequestID, rid)))
	})
}

// loopbackHosts refuses, when the engine is LoopbackOnly, requests whose
// Host header is not a loopback name or address: a web page cannot reach
// the engine through a name that resolves to 127.0.0.1 (DNS rebinding).
func (e *Engine) loopbackHosts(next http.Handler) http.Handler {
	if !e.cfg.LoopbackOnly {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			writeError(w, r, http.StatusForbidden, "FORBIDDEN_HOST", "The local engine answers only requests addressed to a loopback host.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate refuses a request whose Authorization the engine does not
// accept, with 401, and puts the credential of the others in the
// request's context (credentialFrom).
func (e *Engine) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred, err := e.auth.check(r.Header.Get("Authorization"))
		if err != nil {
			writeError(w, r, http.StatusUnauthorized, api.CodeInvalidAuth, "Invalid credentials.")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyCredential, cred)))
	})
}

// allowance serves a request within the concurrency allowance, taking
// weight of it for the request's whole life, or answers 429 when the
// allowance is spent. Endpoints take more for heavy features.
func (e *Engine) allowance(weight int) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !e.limit.acquire(weight) {
				e.tooMany(w, r)
				return
			}
			defer e.limit.release(weight)
			next.ServeHTTP(w, r)
		})
	}
}

// sameOrigin refuses, with 403 and an error body, a WebSocket upgrade
// from a web page of another origin: a page a person happens to visit
// must not reach the engine through their browser. Clients that are not
// browsers send no Origin.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkOrigin(r); err != nil {
			writeError(w, r, http.StatusForbidden, "FORBIDDEN_ORIGIN", "The local engine refuses WebSocket connections from web pages: "+err.Error()+".")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin says why sameOrigin refuses r, or returns nil.
func checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("connections from the web page %q are refused", o)
	}
	return nil
}

// recordUsage records what the handler of path serves, once it has
// finished, for /v1/projects' usage. Paths that are not usage (models,
// grants, management) are served as they are.
func (e *Engine) recordUsage(path string) middleware {
	endpoint, ok := servedEndpoints[path]
	if !ok {
		return func(next http.Handler) http.Handler { return next }
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.serveRecorded(w, r, path, endpoint, next)
		})
	}
}

// serveRecorded serves r with next and records it.
func (e *Engine) serveRecorded(w http.ResponseWriter, r *http.Request, path, endpoint string, next http.Handler) {
	rec := servedRecord{
		id:       requestID(r.Context()),
		created:  e.clock.Now(),
		path:     path,
		endpoint: endpoint,
		method:   "sync",
		accessor: credentialFrom(r.Context()).accessor,
	}
	switch {
	case isWebSocket(r):
		rec.method = "streaming"
	case r.URL.Query().Get("callback") != "":
		rec.method = "async"
	}
	note := &servedNote{}
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), servedNoteKey{}, note)))
	rec.completed = e.clock.Now()
	rec.code = sw.status
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	note.mu.Lock()
	rec.model, rec.seconds, rec.channels, rec.chars = note.model, note.seconds, note.channels, note.chars
	note.mu.Unlock()
	if endpoint == "speak" && rec.method != "streaming" {
		// The batch synthesis says what it spoke in its headers.
		if n, err := strconv.Atoi(sw.Header().Get(headerCharCount)); err == nil && rec.succeeded() {
			rec.chars = n
		}
		if m := sw.Header().Get(headerModelName); m != "" {
			rec.model = m
		}
	}
	e.served.add(rec)
}

// statusWriter remembers the status a handler answered. A WebSocket
// upgrade hijacks the connection and counts as 101.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be hijacked")
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
