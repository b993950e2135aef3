// Package engine is Earshot's local engine: an offline implementation of
// the speech and text intelligence interface, served as an http.Handler on
// the same paths, with the same messages, errors and limits as the hosted
// service, so that every client (Earshot's own, the service's SDKs) can use
// it by changing only the host.
//
// Behind the interface are real engines, and the engine says which: speech
// recognition by pocketsphinx (package engine/sphinx), speaker clustering
// (engine/diarize), rule-based formatting and entities (engine/format,
// engine/entity). What the engine does not offer yet it refuses with a
// plain message rather than pretending.
package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/clock"
)

// Defaults of the engine's limits.
const (
	DefaultMaxConnections = 8
	// DefaultIdleTimeout is how long a /v1/listen stream may go without
	// audio or a text message before the engine closes it.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultMaxAudioDuration bounds a batch request's audio.
	DefaultMaxAudioDuration = 4 * time.Hour
)

// Config configures an Engine.
type Config struct {
	// Key is the API key the engine accepts (Authorization: Token KEY).
	Key api.Secret
	// Region makes the engine behave as a regional host: /v1/projects
	// answers 404, the voice agent is served on the main host, and whisper
	// models are refused. The zero value behaves as the global host.
	Region api.Region
	// MaxConnections is the concurrency allowance; diarization takes more
	// of it. 0 means DefaultMaxConnections.
	MaxConnections int
	// LoopbackOnly refuses requests whose Host header is not a loopback
	// name or address. A server bound to loopback sets it to defeat DNS
	// rebinding: a web page cannot reach the engine through a name that
	// resolves to 127.0.0.1.
	LoopbackOnly bool
	// MaxAudioDuration is the longest audio a batch request may carry;
	// 0 means DefaultMaxAudioDuration. Recognition takes about a fifth of
	// real time, and compressed files can expand to hours from kilobytes.
	MaxAudioDuration time.Duration
	// IdleTimeout overrides DefaultIdleTimeout (tests only).
	IdleTimeout time.Duration
	// LLM is an OpenAI-compatible server the voice agent may think with;
	// its models join the think-model list. Empty: the built-in
	// assistant only (and endpoints named in Settings).
	LLM LLMEndpoint
	// FunctionTimeout bounds the wait for a function call's answer; zero
	// means DefaultFunctionTimeout.
	FunctionTimeout time.Duration
	// Recognizer configures speech recognition.
	Recognizer RecognizerConfig
	// Speech configures speech synthesis (/v1/speak and /v2/speak).
	Speech tts.Config
	// Logger receives the engine's records; nil discards them. Keys and
	// tokens are never logged.
	Logger *slog.Logger
	// Clock tells the time and runs the engine's timers: the idle window
	// of streams, the recogniser's idle release, token lifetimes, the
	// pace of the agent's voice. nil means the system's clock; tests
	// inject a clock.Fake they move by hand.
	Clock clock.Clock
}

// Engine serves the interface. Its handlers are safe for concurrent use.
// The recogniser is loaded the first time something is transcribed (or
// by WarmRecognizer) and released after RecognizerConfig.IdleRelease
// without use; serving the model list never loads it. Close releases the
// recognizers and waits for open streams to end.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	clock clock.Clock
	auth  *authenticator
	limit *limiter
	asr   *recognizer
	tts   *tts.Synthesizer
	// asrFast decodes for the base model with a faster search
	// (fastmodel.go); loaded on its own first use.
	asrFast *recognizer

	// replyEnding, when not nil, runs as an agent's reply ends, after
	// its last message is queued and before its session learns of the
	// end: tests set it to hold that moment (nil in use).
	replyEnding func()
	// messageTaken, when not nil, runs as a stream's loop takes a
	// message from the client: tests set it to make the loop busy (nil
	// in use).
	messageTaken func()
	// frameQueued, when not nil, runs as a stream's reader has handed a
	// frame to the loop: tests wait on it for a frame to be there.
	frameQueued func()

	// ctx is cancelled by Close; every stream's context derives from it.
	ctx     context.Context
	cancel  context.CancelFunc
	streams sync.WaitGroup

	mu      sync.Mutex // guards closing and llm
	closing bool       // Close has begun: no stream may start
	llm     LLMEndpoint

	closeOnce sync.Once

	served servedLog // what the engine served, for /v1/projects (projects.go)
}

// New checks cfg and returns an engine. It checks that the speech model's
// files are there but does not load the model: see WarmRecognizer.
func New(cfg Config) (*Engine, error) {
	if cfg.Key == "" {
		return nil, errors.New("engine: an API key is required")
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxConnections < 1 {
		return nil, fmt.Errorf("engine: max connections must be at least 1, not %d", cfg.MaxConnections)
	}
	if cfg.MaxAudioDuration == 0 {
		cfg.MaxAudioDuration = DefaultMaxAudioDuration
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.FunctionTimeout == 0 {
		cfg.FunctionTimeout = DefaultFunctionTimeout
	}
	cfg.Clock = clock.Or(cfg.Clock)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	signing := make([]byte, 32)
	if _, err := rand.Read(signing); err != nil {
		return nil, fmt.Errorf("engine: signing key: %w", err)
	}
	asr, err := newRecognizer(cfg.Recognizer, cfg.MaxConnections, cfg.Clock, log)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	asrFast, err := newFastRecognizer(cfg.Recognizer, cfg.MaxConnections, cfg.Clock, log)
	if err != nil {
		asr.close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	synth, err := tts.New(cfg.Speech)
	if err != nil {
		asr.close()
		asrFast.close()
		return nil, fmt.Errorf("engine: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{
		cfg:     cfg,
		llm:     cfg.LLM,
		log:     log,
		clock:   cfg.Clock,
		auth:    newAuthenticator(cfg.Key, signing, cfg.Clock.Now),
		limit:   newLimiter(cfg.MaxConnections),
		asr:     asr,
		asrFast: asrFast,
		tts:     synth,
		ctx:     ctx,
		cancel:  cancel,
	}, nil
}

// Close ends open streams, waits for them and frees the recognizers.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closing = true
		e.mu.Unlock()
		e.cancel()
		e.streams.Wait()
		_ = e.tts.Close()
		e.asr.close()
		e.asrFast.close()
	})
	return nil
}

// RecognizerReady reports whether the recogniser is loaded, so that a
// transcription starting now does not wait for the model. It loads
// nothing.
func (e *Engine) RecognizerReady() bool { return e.asr.isReady() }

// WarmRecognizer loads the recogniser unless it is loaded, and returns
// once it is, or with ctx's error when ctx ends first (the load goes on,
// for the next caller). Concurrent callers, and transcriptions that
// arrive meanwhile, share one load. A load takes about a second on an
// idle machine (docs/engine.md has the figures). Warming counts as a use:
// the idle release is counted from it.
func (e *Engine) WarmRecognizer(ctx context.Context) error {
	if err := e.asr.warm(ctx); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}

// beginStream counts a stream that is about to start, so that Close waits
// for it; it reports false once Close has begun. Counting under the lock
// keeps every Add before Close's Wait, as sync.WaitGroup requires.
func (e *Engine) beginStream() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return false
	}
	e.streams.Add(1)
	return true
}

// host is which listener a handler serves.
type host int

const (
	mainHost  host = iota // REST and the speech WebSockets
	agentHost             // the voice agent (global only)
)

// Handler returns the handler of the main host.
func (e *Engine) Handler() http.Handler { return e.handlerFor(mainHost) }

// AgentHandler returns the handler of the voice-agent host. In a region
// there is no agent host: it answers 404 to everything.
func (e *Engine) AgentHandler() http.Handler { return e.handlerFor(agentHost) }

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyCredential
)

func requestID(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

func credentialFrom(ctx context.Context) credential {
	c, _ := ctx.Value(keyCredential).(credential)
	return c
}

// route is one path of the interface on this engine.
type route struct {
	// methods maps a method to its handler. "WS" is a WebSocket upgrade.
	methods map[string]http.HandlerFunc
	// notOffered, when set, is the interface feature the engine does not
	// implement yet; the path answers 501 saying so.
	notOffered string
}

func (e *Engine) routes(h host) map[string]route {
	agentHere := h == agentHost && !e.cfg.Region.Regional() || h == mainHost && e.cfg.Region.Regional()
	r := map[string]route{}
	if agentHere {
		r[api.PathAgent] = route{methods: map[string]http.HandlerFunc{"WS": e.handleAgent}}
		r[api.PathAgentModels] = route{methods: map[string]http.HandlerFunc{http.MethodGet: e.handleAgentModels}}
	}
	if h == agentHost {
		return r
	}
	r[api.PathListen] = route{methods: map[string]http.HandlerFunc{
		http.MethodPost: e.handleListenBatch,
		"WS":            e.handleListenStream,
	}}
	r[api.PathModels] = route{methods: map[string]http.HandlerFunc{http.MethodGet: e.handleModels}}
	r[api.PathAuthGrant] = route{methods: map[string]http.HandlerFunc{http.MethodPost: e.handleGrant}}
	r[api.PathAuthToken] = route{methods: map[string]http.HandlerFunc{http.MethodGet: e.handleTokenDetails}}
	r[api.PathListenV2] = route{methods: map[string]http.HandlerFunc{"WS": e.handleTurnStream}}
	r[api.PathSpeak] = route{methods: map[string]http.HandlerFunc{http.MethodPost: e.handleSpeak, "WS": e.handleSpeakStream}}
	r[api.PathSpeakV2] = route{methods: map[string]http.HandlerFunc{http.MethodPost: e.handleSpeakV2, "WS": e.handleSpeechStream}}
	r[api.PathRead] = route{methods: map[string]http.HandlerFunc{http.MethodPost: e.handleRead}}
	return r
}

// isWebSocket reports whether r asks for a WebSocket upgrade.
func isWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// handlerFor composes the handler of a host from the middlewares of
// middleware.go: every request gets an id and, on a loopback-only engine,
// its Host is checked; then the router finds its path.
func (e *Engine) handlerFor(h host) http.Handler {
	return requestIDs(e.loopbackHosts(e.router(h)))
}

// router serves each path with its route: an unknown path is answered
// 404 before anything else is checked; a known one is authenticated, then
// served by its route.
func (e *Engine) router(h host) http.Handler {
	routes := map[string]http.Handler{}
	for path, rt := range e.routes(h) {
		routes[path] = e.authenticate(e.serveRoute(path, rt))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimSuffix(r.URL.Path, "/")
		if next, ok := routes[path]; ok {
			next.ServeHTTP(w, r)
			return
		}
		rt, ok := route{}, false
		if h == mainHost && strings.HasPrefix(path, api.PathModels+"/") {
			rt, ok = route{methods: map[string]http.HandlerFunc{http.MethodGet: e.handleModel}}, true
		}
		if !ok && h == mainHost {
			rt, ok = e.projectRoute(path)
		}
		if !ok {
			e.notFound(w, r, h, path)
			return
		}
		e.authenticate(e.serveRoute(path, rt)).ServeHTTP(w, r)
	})
}

// serveRoute serves the methods of rt: what the engine does not offer
// is answered 501, a method the path does not take 405; one it takes is
// served within the concurrency allowance and recorded as usage, and a
// WebSocket upgrade only from the same origin.
func (e *Engine) serveRoute(path string, rt route) http.Handler {
	methods := map[string]http.Handler{}
	for m, handler := range rt.methods {
		var next http.Handler = handler
		if m == "WS" {
			next = sameOrigin(next)
		}
		methods[m] = e.allowance(weightRequest)(e.recordUsage(path)(next))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.notOffered != "" {
			writeError(w, r, http.StatusNotImplemented, "NOT_IMPLEMENTED", "The local engine does not offer "+rt.notOffered+" yet.")
			return
		}
		method := r.Method
		if isWebSocket(r) {
			method = "WS"
		}
		next, ok := methods[method]
		if !ok {
			w.Header().Set("Allow", allowed(rt))
			writeError(w, r, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s.", describeMethod(r), path))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (e *Engine) tooMany(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, http.StatusTooManyRequests, api.CodeTooManyRequests, "Too many requests. Please try again later")
}

func (e *Engine) notFound(w http.ResponseWriter, r *http.Request, h host, path string) {
	switch {
	case path == api.PathProjects || strings.HasPrefix(path, api.PathProjects+"/"):
		if e.cfg.Region.Regional() {
			writeError(w, r, http.StatusNotFound, api.CodeNotFound, "Project management is not served on regional hosts; use the global host.")
			return
		}
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "Project management is served on the main host, not on the voice agent's.")
	case strings.HasPrefix(path, "/v1/agent/") && h == mainHost && !e.cfg.Region.Regional():
		// Globally the agent has a host of its own; in a region its paths
		// are routed on the main host, so an unknown one is just unknown.
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "The voice agent is served on the agent host, not on the main host.")
	case h == agentHost && e.cfg.Region.Regional():
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "There is no agent host in a region; the voice agent is served on the regional main host.")
	case h == agentHost:
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "The agent host serves only the voice agent.")
	default:
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "No such path: "+path)
	}
}

func allowed(rt route) string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if _, ok := rt.methods[m]; ok {
			out = append(out, m)
		}
	}
	if _, ok := rt.methods["WS"]; ok && !strings.Contains(strings.Join(out, ","), http.MethodGet) {
		out = append(out, http.MethodGet)
	}
	return strings.Join(out, ", ")
}

func describeMethod(r *http.Request) string {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return "A WebSocket upgrade"
	}
	return r.Method
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
