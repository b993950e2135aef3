package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/earshot-app/earshot/api"
)

// Local is an engine serving on a loopback port of its own: what the app
// uses when no key is set, and what tests talk to.
type Local struct {
	// Engine is the engine being served.
	Engine *Engine
	// URL is the base URL of the main host, e.g. http://127.0.0.1:41234.
	URL *url.URL
	// Key is the key the engine accepts.
	Key api.Secret

	srv  *http.Server
	done chan struct{}
	err  error // why Serve ended; read after done is closed
}

// StartLocal starts an engine on 127.0.0.1 at a free port. When cfg.Key is
// empty a random key is made for it. The engine only answers requests
// addressed to a loopback host.
func StartLocal(cfg Config) (*Local, error) {
	if cfg.Key == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("engine key: %w", err)
		}
		cfg.Key = api.Secret("local-" + hex.EncodeToString(b))
	}
	cfg.LoopbackOnly = true
	eng, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("engine: listen on loopback: %w", err)
	}
	l := &Local{
		Engine: eng,
		URL:    &url.URL{Scheme: "http", Host: ln.Addr().String()},
		Key:    cfg.Key,
		srv:    &http.Server{Handler: eng.Handler(), ReadHeaderTimeout: 10 * time.Second},
		done:   make(chan struct{}),
	}
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			l.err = err
		}
	}()
	return l, nil
}

// RecognizerReady reports whether the engine's recogniser is loaded; see
// Engine.RecognizerReady. The app asks it to say "Loading the
// recogniser…" rather than wait in silence.
func (l *Local) RecognizerReady() bool { return l.Engine.RecognizerReady() }

// WarmRecognizer loads the engine's recogniser and waits for it; see
// Engine.WarmRecognizer.
func (l *Local) WarmRecognizer(ctx context.Context) error { return l.Engine.WarmRecognizer(ctx) }

// Endpoint returns the endpoint a client uses to reach the engine.
func (l *Local) Endpoint() api.Endpoint { return api.Endpoint{Base: l.URL} }

// Close ends open streams, stops serving and frees the engine.
func (l *Local) Close() error {
	l.Engine.Close()
	if err := l.srv.Close(); err != nil {
		return err
	}
	<-l.done
	return l.err
}
