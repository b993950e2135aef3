// Command earshot is a desktop app for a speech and text intelligence
// service, with an offline engine of the same interface built in. Without
// arguments it opens the app; with a command (earshot help) it runs
// headless.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"fyne.io/fyne/v2/app"

	"github.com/earshot-app/earshot/cli"
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
			Build:         buildInfo(),
		}
		return cli.Run(ctx, env, args)
	}
	if err := runApp(ctx, screenshotSetup{}); err != nil {
		fmt.Fprintln(os.Stderr, "earshot:", err)
		return 1
	}
	return 0
}

// quitGrace is how long the window has to close once the app is asked
// to end (SIGTERM, Ctrl+C in a terminal) before the process ends anyway.
const quitGrace = 5 * time.Second

// appSetup prepares the window before it opens: screenshotSetup in the
// app people run, which a build with the screenshots tag fills in
// (main_screenshots.go); tests give their own.
type appSetup interface {
	prepare(ctx context.Context, cfg *sessions.WorkspaceConfig, opts *ui.Options) (appShow, error)
}

// appShow is what a setup does with the window before it is shown.
type appShow interface {
	show(w *ui.App) error
}

// runApp opens the window, set up by setup, until it is closed or ctx
// ends. When ctx ends it asks the window to close; a window that cannot
// (its UI goroutine stuck) does not keep the process: after quitGrace
// the process exits with status 1.
func runApp(ctx context.Context, setup appSetup) error {
	log := newLogger()
	data, err := openAppData(ctx, log)
	if err != nil {
		return err
	}
	defer data.close()
	cfg, opts := data.cfg, ui.Options{Logger: log}
	shot, err := setup.prepare(ctx, &cfg, &opts)
	if err != nil {
		return err
	}
	ws, err := sessions.NewWorkspace(cfg)
	if err != nil {
		return err
	}
	defer ws.Close() // the inspector's last events, before the history closes
	prepareDesktop(log)
	w := ui.New(app.NewWithID(ui.AppID), ws, opts)
	if err := shot.show(w); err != nil {
		return err
	}
	closed := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-closed:
			return
		}
		w.Quit()
		select {
		case <-closed:
		case <-time.After(quitGrace):
			log.Error("the window did not close after the signal; ending the process", "waited", quitGrace)
			os.Exit(1)
		}
	}()
	w.ShowAndRun()
	close(closed)
	return nil
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// appData is what the app and `earshot transcribe` share: the history in
// EARSHOT_DATA_DIR when it is set, else where store.DefaultPath says; the
// key in the keyring or DEEPGRAM_API_KEY; the local engine, started on a
// loopback port the first time it is needed, in the builds that hold it
// (main_engine.go).
type appData struct {
	cfg   sessions.WorkspaceConfig
	db    *store.DB
	local *localEngine
}

func openAppData(ctx context.Context, log *slog.Logger) (*appData, error) {
	// What was done to open the history, if anything, the window and the
	// commands say in their own words (db.Recovery).
	db, err := openHistory(ctx)
	if err != nil {
		return nil, err
	}
	cfg := sessions.WorkspaceConfig{
		History:     db,
		Keys:        sessions.NewKeys(store.NewFallback(store.Keyring{}), os.Getenv),
		Microphones: sessions.DeviceMicrophones{},
		Speakers:    sessions.DeviceSpeakers{},
		Logger:      log,
		UserAgent:   "earshot/" + buildInfo().Version,
	}
	local := newLocalEngine(log)
	local.wire(&cfg)
	return &appData{cfg: cfg, db: db, local: local}, nil
}

// openHistory opens the history, whatever its file holds: a damaged one
// is moved aside and a new one started; with nowhere to write, history is
// kept in memory for the session (store.OpenOrRecover). It fails only
// when ctx ends.
func openHistory(ctx context.Context) (*store.DB, error) {
	path, err := store.DefaultPath()
	if dir := os.Getenv("EARSHOT_DATA_DIR"); dir != "" {
		path, err = filepath.Join(dir, "history.db"), nil
	}
	if err != nil {
		return store.OpenMemoryFor(ctx, nil, err)
	}
	return store.OpenOrRecover(ctx, path)
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
	closeAll := func() error { return errors.Join(ws.Close(), data.close()) }
	return &cli.Workspace{Workspace: ws, History: data.db, Close: closeAll}, nil
}

// prepareDesktop readies what the toolkit expects of a desktop session
// that a new account may lack: the user's cache folder (Fyne makes only
// its own folder inside it, and says so on every start when the parent
// is missing), and no D-Bus daemon started when there is no session bus
// (Fyne asks D-Bus for the desktop's colour scheme; without a bus godbus
// launches a daemon that outlives Earshot).
func prepareDesktop(log *slog.Logger) {
	if dir, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			log.Warn("the cache folder", "dir", dir, "err", err)
		}
	}
	if store.NoSessionBusAutolaunch() {
		log.Info("no D-Bus session bus: the keyring and the desktop's settings are not used")
	}
}
