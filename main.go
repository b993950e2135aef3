// Command earshot is a desktop app for a speech and text intelligence
// service, with an offline engine of the same interface built in. Without
// arguments it opens the app; with a command (earshot help) it runs
// headless.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"fyne.io/fyne/v2/app"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/cli"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
	"github.com/earshot-app/earshot/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		env := cli.Env{
			Stdout:        os.Stdout,
			Stderr:        os.Stderr,
			Stdin:         os.Stdin,
			Getenv:        os.Getenv,
			NewEngine:     newEngine,
			OpenWorkspace: openWorkspace,
		}
		return cli.Run(ctx, env, args)
	}
	if err := runApp(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "earshot:", err)
		return 1
	}
	return 0
}

// newEngine builds the local engine for `earshot serve`.
func newEngine(c cli.ServeConfig) (cli.Server, error) {
	return engine.New(engine.Config{
		Key:            c.Key,
		Region:         c.Region,
		MaxConnections: c.MaxConnections,
		LoopbackOnly:   c.LoopbackOnly,
		Logger:         c.Logger,
	})
}

// runApp opens the window. A build with the screenshots tag may set it
// up for a screenshot first (main_screenshots.go).
func runApp(ctx context.Context) error {
	log := newLogger()
	data, err := openAppData(ctx, log)
	if err != nil {
		return err
	}
	defer data.close()
	cfg, opts := data.cfg, ui.Options{Logger: log}
	shot, err := prepareScreenshot(ctx, &cfg, &opts)
	if err != nil {
		return err
	}
	ws, err := sessions.NewWorkspace(cfg)
	if err != nil {
		return err
	}
	w := ui.New(app.NewWithID(ui.AppID), ws, opts)
	if err := shot.show(w); err != nil {
		return err
	}
	shown := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			w.Quit()
		case <-shown:
		}
	}()
	w.ShowAndRun()
	close(shown)
	return nil
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// appData is what the app and `earshot transcribe` share: the history in
// EARSHOT_DATA_DIR when it is set, else where store.DefaultPath says; the
// key in the keyring or DEEPGRAM_API_KEY; the local engine, started on a
// loopback port the first time it is needed.
type appData struct {
	cfg   sessions.WorkspaceConfig
	db    *store.DB
	local *localEngine
}

func openAppData(ctx context.Context, log *slog.Logger) (*appData, error) {
	path, err := store.DefaultPath()
	if dir := os.Getenv("EARSHOT_DATA_DIR"); dir != "" {
		path, err = filepath.Join(dir, "history.db"), nil
	}
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	local := &localEngine{cfg: engine.Config{Logger: log}}
	return &appData{
		cfg: sessions.WorkspaceConfig{
			History:     db,
			Keys:        sessions.NewKeys(store.NewFallback(store.Keyring{}), os.Getenv),
			Local:       local.start,
			Recognizer:  local,
			Microphones: sessions.DeviceMicrophones{},
			Speakers:    sessions.DeviceSpeakers{},
			Logger:      log,
		},
		db:    db,
		local: local,
	}, nil
}

// close stops the local engine if it was started, then closes the
// history.
func (d *appData) close() error {
	d.local.close()
	return d.db.Close()
}

// openWorkspace gives `earshot transcribe` the app's own workspace.
func openWorkspace(ctx context.Context) (*cli.Workspace, error) {
	data, err := openAppData(ctx, newLogger())
	if err != nil {
		return nil, err
	}
	ws, err := sessions.NewWorkspace(data.cfg)
	if err != nil {
		data.close()
		return nil, err
	}
	return &cli.Workspace{Workspace: ws, History: data.db, Close: data.close}, nil
}

// localEngine starts the built-in engine the first time it is asked for,
// and closes it at exit. It is safe for concurrent use.
type localEngine struct {
	cfg  engine.Config
	once sync.Once
	l    *engine.Local
	err  error
}

// start implements sessions.LocalEngine.
func (e *localEngine) start() (api.Endpoint, api.Secret, error) {
	e.once.Do(func() { e.l, e.err = engine.StartLocal(e.cfg) })
	if e.err != nil {
		return api.Endpoint{}, "", e.err
	}
	return e.l.Endpoint(), e.l.Key, nil
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
