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
	"syscall"

	"fyne.io/fyne/v2/app"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/cli"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
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
		env := cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, NewEngine: newEngine}
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

// runApp opens the window on the local engine, served in-process on a
// loopback port with a key made for this run.
func runApp(ctx context.Context) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	local, err := engine.StartLocal(engine.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("start the local engine: %w", err)
	}
	defer local.Close()
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key, Logger: log})
	if err != nil {
		return err
	}

	opts := ui.Options{Logger: log}
	shot := os.Getenv("EARSHOT_SCREENSHOT")
	if shot != "" {
		opts.OnReady = func(err error) {
			if err != nil {
				fmt.Println("error:", err)
				return
			}
			fmt.Println("ready")
		}
	}
	w := ui.New(app.NewWithID(ui.AppID), sessions.NewService(client, "Local engine"), opts)
	if shot != "" && !w.SelectTab(shot) {
		return fmt.Errorf("no view named %q to capture", shot)
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
