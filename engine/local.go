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
	// AgentURL is the base URL of the voice agent's host.
	AgentURL *url.URL
	// Key is the key the engine accepts.
	Key api.Secret

	srvs []*http.Server
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
	// The main host, and the voice agent's host (which a region has
	// not: there the main host serves the agent).
	handlers := []http.Handler{eng.Handler()}
	if !cfg.Region.Regional() {
		handlers = append(handlers, eng.AgentHandler())
	}
	var lns []net.Listener
	for range handlers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			eng.Close()
			return nil, fmt.Errorf("engine: listen on loopback: %w", err)
		}
		lns = append(lns, ln)
	}
	l := &Local{
		Engine: eng,
		URL:    &url.URL{Scheme: "http", Host: lns[0].Addr().String()},
		Key:    cfg.Key,
		done:   make(chan struct{}),
	}
	if len(lns) > 1 {
		l.AgentURL = &url.URL{Scheme: "http", Host: lns[1].Addr().String()}
	}
	errs := make(chan error, len(lns))
	for i, ln := range lns {
		srv := &http.Server{Handler: handlers[i], ReadHeaderTimeout: 10 * time.Second}
		l.srvs = append(l.srvs, srv)
		go func() {
			err := srv.Serve(ln)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			errs <- err
		}()
	}
	go func() {
		defer close(l.done)
		var all []error
		for range lns {
			all = append(all, <-errs)
		}
		l.err = errors.Join(all...)
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
func (l *Local) Endpoint() api.Endpoint { return api.Endpoint{Base: l.URL, Agent: l.AgentURL} }

// Close ends open streams, stops serving and frees the engine.
func (l *Local) Close() error {
	l.Engine.Close()
	var errs []error
	for _, srv := range l.srvs {
		errs = append(errs, srv.Close())
	}
	<-l.done
	errs = append(errs, l.err)
	return errors.Join(errs...)
}
