package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
)

const converseSummary = "show the turns of a conversation (turn-aware transcription) as they end"

// converseFlags are the command line of converse.
type converseFlags struct {
	live      bool
	device    string
	threshold float64
	eager     float64
	timeoutMS int
	keyterms  stringList
	speed     float64
	args      []string
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func newConverseFlags(env Env) (*flag.FlagSet, *converseFlags) {
	f := &converseFlags{}
	fs := flag.NewFlagSet("converse", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.BoolVar(&f.live, "live", false, "listen to the microphone until Ctrl+C instead of a file")
	fs.StringVar(&f.device, "device", "", "with --live: the microphone `ID` (see 'earshot transcribe --list-devices'; default: the one in Settings)")
	fs.Float64Var(&f.threshold, "eot-threshold", 0, "end-of-turn confidence `T` at which a turn ends, 0.5 to 1.0 (default: the service's, 0.7)")
	fs.Float64Var(&f.eager, "eager-eot-threshold", 0, "`T` for eager end-of-turn events, 0.3 to 0.9 (default: off)")
	fs.IntVar(&f.timeoutMS, "eot-timeout-ms", 0, "end a turn after `MS` milliseconds of silence whatever the confidence, 500 to 60000 (default: the service's, 5000)")
	fs.Var(&f.keyterms, "keyterm", "a `TERM` to boost; repeat for more")
	fs.Float64Var(&f.speed, "speed", 1, "play the file `X` times faster than real time (latencies are then measured at that pace)")
	fs.Usage = func() {
		w := env.Stderr
		fmt.Fprint(w, `Usage: earshot converse FILE [--eot-threshold T] [--eot-timeout-ms MS] [--eager-eot-threshold T] [--keyterm TERM]... [--speed X]
       earshot converse --live [--device ID] [flags]

Transcribes a conversation turn by turn (/v2/listen) and prints each turn
as it ends: its number, its times in the audio, what ended it (model,
timeout or manual), the end-of-turn confidence, the latency from the end
of speech to the end of turn, and its words. A file is played at real
time, as if it were spoken now. It uses the service chosen in the app's
Settings, and every run is saved to the app's history.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, f
}

// parse reads args, allowing flags after the file.
func (f *converseFlags) parse(fs *flag.FlagSet, args []string) error {
	var err error
	f.args, err = parseInterleaved(fs, args)
	return err
}

// check reports a mistake in the combination of flags and arguments.
func (f *converseFlags) check() error {
	switch {
	case f.live && len(f.args) > 0:
		return fmt.Errorf("--live listens to the microphone: it takes no file (got %q)", f.args[0])
	case f.device != "" && !f.live:
		return errors.New("--device needs --live")
	case !f.live && len(f.args) == 0:
		return errors.New("which file? give the recording, or --live for the microphone")
	case len(f.args) > 1:
		return fmt.Errorf("one file at a time (got %d: %s)", len(f.args), strings.Join(f.args, ", "))
	case !(f.speed > 0) || math.IsInf(f.speed, 0):
		return fmt.Errorf("--speed must be above 0, not %v", f.speed)
	case f.live && f.speed != 1:
		return errors.New("--speed plays a file faster: the microphone runs at its own pace")
	}
	return nil
}

func converse(ctx context.Context, env Env, args []string) error {
	fs, f := newConverseFlags(env)
	if err := f.parse(fs, args); err != nil {
		return errUsage
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(env.Stderr, "earshot converse: %v\n\nRun 'earshot converse -h' for help.\n", err)
		return errUsage
	}
	if !f.live {
		if err := checkInputFile(f.args[0]); err != nil {
			return err
		}
	}
	ws, err := env.workspace(ctx, "transcribe")
	if err != nil {
		return err
	}
	defer ws.Close()

	s, err := ws.Settings(ctx)
	if err != nil {
		return fmt.Errorf("read the settings: %w", err)
	}
	opts := sessions.TurnOptionsFor(s)
	opts.EOTThreshold, opts.EagerEOTThreshold, opts.EOTTimeoutMS = f.threshold, f.eager, f.timeoutMS
	opts.Keyterms = f.keyterms
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(env.Stderr, "earshot converse: %v\n", err)
		return errUsage
	}
	req := sessions.ConversationRequest{DeviceID: f.device, Options: &opts}
	if !f.live {
		src, err := sessions.OpenPacedFile(ctx, f.args[0], f.speed)
		if err != nil {
			return err
		}
		defer src.Close() // the session closes it too; Close is idempotent
		req.Source = src
		req.SourceName = filepath.Base(f.args[0])
	}
	return runConversation(ctx, env, ws, req)
}

// runConversation runs a conversation and prints each turn as it ends,
// until the source ends or ctx is cancelled (Ctrl+C), which stops it
// cleanly: the turn in progress is saved as it stands.
func runConversation(ctx context.Context, env Env, ws *Workspace, req sessions.ConversationRequest) error {
	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	conn, err := ws.Connection(ctx)
	if err != nil {
		return err
	}
	c, err := ws.StartConversation(context.WithoutCancel(ctx), req)
	if err != nil {
		return err
	}
	began := time.Now()
	stopNow, stopped := stopper(ctx, c.Done(), c.Stop)

	source := req.SourceName
	if source == "" {
		source = "the microphone"
	}
	var (
		turns    int
		writeErr error
		hist     historyWatch
	)
	for ev := range c.Events() {
		if line := hist.take(ev); line != "" {
			status.clear()
			fmt.Fprintln(env.Stderr, line)
		}
		switch e := ev.(type) {
		case *sessions.TurnInfoEvent:
			if e.Event != api.EventEndOfTurn {
				status.set(fmt.Sprintf("Turn %d: %s", e.Turn.Index+1, e.Turn.Transcript))
				continue
			}
			turns++
			if writeErr != nil {
				continue
			}
			status.clear()
			if err := writeTurn(env.Stdout, e.Turn); err != nil {
				writeErr = fmt.Errorf("write the turns: %w", err)
				close(stopNow)
			}
		case *sessions.TurnWarningEvent:
			status.clear()
			fmt.Fprintf(env.Stderr, "Warning from the service: %s (%s)\n", e.Description, e.Code)
		case *sessions.StateEvent:
			switch e.State {
			case sessions.StateLive:
				status.set(fmt.Sprintf("Listening to %s with %s. Press Ctrl+C to stop.", source, conn.Name))
			case sessions.StateStopping:
				status.set("Stopping...")
			}
		}
	}
	runErr := <-stopped
	status.clear()
	if writeErr != nil {
		return writeErr
	}
	saved, unsaved := hist.end()
	fmt.Fprintf(env.Stderr, "Stopped after %.1f s: %s ended; %s.\n", time.Since(began).Seconds(), count.Of(turns, "turn"), saved)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return unsaved
}

// writeTurn prints a turn that ended, on one line: its number, its times,
// what ended it, the end-of-turn confidence, the latency and its words.
func writeTurn(w io.Writer, t sessions.Turn) error {
	trigger := string(t.Trigger)
	if trigger == "" {
		trigger = "-"
	}
	latency := "-"
	if t.HasLatency {
		latency = fmt.Sprintf("%d ms", t.Latency.Round(time.Millisecond).Milliseconds())
	}
	_, err := fmt.Fprintf(w, "Turn %d  %s-%s  %-7s  confidence %.2f  latency %-7s  %s\n",
		t.Index+1, timecode.Fine(t.Start, 2), timecode.Fine(t.End, 2), trigger, t.EndOfTurnConfidence, latency, t.Transcript)
	return err
}
