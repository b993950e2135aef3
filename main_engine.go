//go:build !noengine

// The local engine's wiring: `earshot serve`, the app's engine when no
// key is set, and what `earshot version` names. A build with the
// noengine tag (for Windows, where the engine's C libraries do not
// exist) has main_noengine.go instead.

package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	// The agent's built-in assistant tells the time in the zones of the
	// time-zone database; built in, they do not depend on the machine
	// having the tzdata package.
	_ "time/tzdata"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/cli"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
)

// hasEngine: this build holds the local engine.
const hasEngine = true

// newEngine builds the local engine for `earshot serve`.
func newEngine(c cli.ServeConfig) (cli.Server, error) {
	return engine.New(engine.Config{
		Key:            c.Key,
		Region:         c.Region,
		MaxConnections: c.MaxConnections,
		LoopbackOnly:   c.LoopbackOnly,
		Logger:         c.Logger,
		LLM:            engine.LLMEndpoint{URL: c.LLM},
	})
}

// engineComponents names the engines this build holds, for `earshot
// version`.
func engineComponents() []string { return engine.Components() }

// newLocalEngine is the engine of the app and the commands, in their own
// process: a file transcription's decoder is let go when it is done, so
// that the app does not carry the model while it saves and shows the
// transcript (engine.RecognizerConfig.ReleaseBatch).
func newLocalEngine(log *slog.Logger) *localEngine {
	return &localEngine{cfg: engine.Config{Logger: log, Recognizer: engine.RecognizerConfig{ReleaseBatch: true}}}
}

// wire makes e the workspace's local engine.
func (e *localEngine) wire(cfg *sessions.WorkspaceConfig) {
	cfg.Local, cfg.LocalLLM, cfg.Recognizer = e.start, e.setLLM, e
}

// localEngine starts the built-in engine the first time it is asked for,
// and closes it at exit. It is safe for concurrent use.
type localEngine struct {
	mu   sync.Mutex // guards cfg.LLM
	cfg  engine.Config
	once sync.Once
	l    *engine.Local
	err  error
}

// start implements sessions.LocalEngine.
func (e *localEngine) start() (api.Endpoint, api.Secret, error) {
	e.once.Do(func() {
		e.mu.Lock()
		cfg := e.cfg
		e.mu.Unlock()
		e.l, e.err = engine.StartLocal(cfg)
	})
	if e.err != nil {
		return api.Endpoint{}, "", e.err
	}
	return e.l.Endpoint(), e.l.Key, nil
}

// setLLM names the language model server of the engine's voice agent,
// now if it runs, else when it starts.
func (e *localEngine) setLLM(url string) {
	e.mu.Lock()
	e.cfg.LLM = engine.LLMEndpoint{URL: url}
	e.mu.Unlock()
	if _, _, err := e.start(); err == nil {
		e.l.Engine.SetLLM(engine.LLMEndpoint{URL: url})
	}
}

// RecognizerReady implements sessions.Recognizer: false until the engine
// has started and loaded its recogniser.
func (e *localEngine) RecognizerReady() bool {
	if _, _, err := e.start(); err != nil {
		return false
	}
	return e.l.RecognizerReady()
}

// WarmRecognizer implements sessions.Recognizer: it starts the engine if
// needed and loads its recogniser.
func (e *localEngine) WarmRecognizer(ctx context.Context) error {
	if _, _, err := e.start(); err != nil {
		return err
	}
	return e.l.WarmRecognizer(ctx)
}

// close stops the engine if it was started; it is not started after.
func (e *localEngine) close() {
	e.once.Do(func() { e.err = fmt.Errorf("the app is closing") })
	if e.l != nil {
		e.l.Close()
	}
}
