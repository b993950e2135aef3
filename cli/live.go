package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// listDevices prints the microphones, one a line: its ID (for --device),
// its name, and which one the system uses by default; then the sources of
// the computer's sound (for --source system).
func listDevices(ctx context.Context, env Env, ws *Workspace) error {
	devs, err := ws.Microphones(ctx)
	if err != nil {
		return fmt.Errorf("list the microphones: %w", err)
	}
	if len(devs) == 0 {
		fmt.Fprintln(env.Stderr, "No microphones were found.")
	} else if err := printDevices(env.Stdout, "ID", devs, " (default)"); err != nil {
		return err
	}
	sys, err := ws.SystemSources(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "The computer's sound cannot be heard: %s\n", plainError(err))
		return nil
	}
	if len(devs) > 0 {
		fmt.Fprintln(env.Stdout)
	}
	return printDevices(env.Stdout, "ID (--source system)", sys, " (the output in use)")
}

// printDevices prints a table of devices under a heading of its ID
// column, the default one marked with def.
func printDevices(w io.Writer, idHeading string, devs []device.Device, def string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tNAME\n", idHeading)
	for _, d := range devs {
		mark := ""
		if d.Default {
			mark = def
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", d.ID, d.Name, mark)
	}
	return tw.Flush()
}

// runLive captures the microphone (or replays a recording) into a
// captions session saved to history, and prints each final caption as it
// arrives until ctx is cancelled (Ctrl+C) or the source ends. Stopping
// lets the service finish what it was sent, so the last words are kept.
// Formats other than text are written whole at the end.
func runLive(ctx context.Context, env Env, ws *Workspace, f *transcribeFlags, s store.Settings, format sessions.ExportFormat) error {
	status := newStatusLine(env, env.Stderr)
	defer status.clear()

	req := sessions.CaptionsRequest{DeviceID: f.device}
	source := f.source
	if source == "" && f.replay == "" {
		source = s.CaptureSource
	}
	switch source {
	case "system":
		req.Capture, req.DeviceID, req.SystemDeviceID = sessions.CaptureSystem, "", f.device
		if f.device == "" {
			req.SystemDeviceID = s.SystemDevice
		}
	case "both":
		req.Capture, req.SystemDeviceID = sessions.CaptureBoth, s.SystemDevice
	}
	if f.replay != "" {
		// At real time, as a microphone would deliver it, so that the
		// captions come as they would live.
		src, err := sessions.OpenPacedFile(ctx, f.replay, 1)
		if err != nil {
			return err
		}
		defer src.Close() // the session closes it too; Close is idempotent
		req.Source = src
		req.SourceName = "Replay of " + filepath.Base(f.replay)
	}
	// Interim text is shown only on a terminal: elsewhere it is not asked for.
	s.InterimResults = s.InterimResults && status.on
	opts := sessions.ListenOptions(s, api.Streaming)
	req.Options = &opts

	conn, err := ws.Connection(ctx)
	if err != nil {
		return err
	}
	out := env.Stdout
	var file *os.File
	if format == sessions.ExportText && f.output != "" && f.output != "-" {
		// Text goes to the file line by line, as it comes.
		if file, err = os.Create(f.output); err != nil {
			return fmt.Errorf("write the transcript: %w", err)
		}
		defer file.Close() // for the early returns; closed and checked below
		out = file
	}
	// The session outlives ctx: Ctrl+C cancels ctx, and then Stop lets the
	// service finish rather than cutting it off.
	c, err := ws.StartCaptions(context.WithoutCancel(ctx), req)
	if err != nil {
		return err
	}
	began := time.Now()

	// The stopper ends the session on Ctrl+C, on a failed write, or
	// when the session ends by itself; the loop below reads the events
	// until the session closes them.
	stopNow, stopped := stopper(ctx, c.Done(), c.Stop)

	heard := c.SourceName()
	if heard == "" {
		heard = "the microphone"
	}
	var (
		caps        []sessions.Caption
		writeErr    error
		lastAttempt int
		hist        historyWatch
	)
	for ev := range c.Events() {
		if line := hist.take(ev); line != "" {
			status.clear()
			fmt.Fprintln(env.Stderr, line)
		}
		switch e := ev.(type) {
		case *sessions.FinalEvent:
			caps = append(caps, e.Caption)
			if format != sessions.ExportText {
				status.set(captionLine(e.Caption))
				continue
			}
			if writeErr != nil {
				continue
			}
			status.clear()
			if _, err := fmt.Fprintln(out, captionLine(e.Caption)); err != nil {
				writeErr = fmt.Errorf("write the transcript: %w", err)
				close(stopNow)
			}
		case *sessions.InterimEvent:
			status.set(e.Text)
		case *sessions.StateEvent:
			switch e.State {
			case sessions.StateLive:
				status.set(fmt.Sprintf("Listening to %s with %s. Press Ctrl+C to stop.", heard, conn.Name))
			case sessions.StateReconnecting:
				if e.Attempt != lastAttempt && e.Attempt > 0 {
					lastAttempt = e.Attempt
					status.clear()
					fmt.Fprintf(env.Stderr, "Connection lost (%v); reconnecting (attempt %d, %.0f s of audio kept).\n",
						plainError(e.Err), e.Attempt, e.Buffered.Seconds())
				}
			case sessions.StateStopping:
				status.set("Stopping: waiting for the last words...")
			}
		}
	}
	runErr := <-stopped
	status.clear()
	if file != nil && writeErr == nil {
		if err := file.Close(); err != nil {
			writeErr = fmt.Errorf("write the transcript: %w", err)
		}
	}
	if writeErr != nil {
		return writeErr
	}
	if format != sessions.ExportText {
		t := sessions.Transcript{Title: "Live captions", Captions: caps, Created: began}
		var buf bytes.Buffer
		if err := sessions.Export(&buf, format, t); err != nil {
			return fmt.Errorf("write the transcript: %w", err)
		}
		if err := writeOutput(env, f.output, buf.Bytes()); err != nil {
			return err
		}
	}
	saved, unsaved := hist.end()
	fmt.Fprintf(env.Stderr, "Stopped after %.1f s: %s; %s.\n", time.Since(began).Seconds(), count.Of(len(caps), "caption"), saved)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return unsaved
}

// captionLine is a final caption as a line of text, led by its speaker
// when the session tells speakers apart (numbered from 1, as the exports
// do).
func captionLine(c sessions.Caption) string {
	switch {
	case c.Side != "" && c.Speaker != nil && c.Side == sessions.SideOthers:
		return fmt.Sprintf("%s (speaker %d): %s", c.Side, *c.Speaker+1, c.Text)
	case c.Side != "":
		return c.Side + ": " + c.Text
	case c.Speaker != nil:
		return fmt.Sprintf("Speaker %d: %s", *c.Speaker+1, c.Text)
	}
	return c.Text
}

// stopper ends a session on Ctrl+C (ctx), when stopNow is closed (a failed
// write), or when the session ends by itself (done), and sends what stop
// returns on stopped. The session's events keep flowing meanwhile, so the
// caller reads them until the session closes them, then receives from
// stopped; that receive is what waits for the stopper goroutine.
func stopper(ctx context.Context, done <-chan struct{}, stop func() error) (stopNow chan struct{}, stopped <-chan error) {
	now := make(chan struct{})
	out := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
		case <-now:
		case <-done:
		}
		out <- stop()
	}()
	return now, out
}
