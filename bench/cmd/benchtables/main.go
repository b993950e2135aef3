// Command benchtables measures the local engine against the engines it is
// built on, side by side in one run, and prints the results as Markdown
// tables for docs/benchmarks.md. `make bench` runs it.
//
//	go run ./cmd/benchtables [-only wer,stream,turns,app,longfile,intel,speak,agent] [-reps 5] [-long-minutes 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/earshot-app/earshot/engine"
)

// librivox is where Debian's pocketsphinx-testdata keeps real recordings.
const librivox = "/usr/share/pocketsphinx/test/data/librivox"

func main() {
	only := flag.String("only", "wer,stream,turns,app,longfile,intel,speak,agent", "comma-separated measurements to run: wer, stream, turns, app, longfile, intel, speak, agent")
	longMinutes := flag.Int("long-minutes", 10, "the length of the long recording the app transcribes (longfile), in minutes; 120 for the figure of docs/benchmarks.md")
	reps := flag.Int("reps", 5, "repetitions of each timed run")
	runs := flag.Int("stream-runs", 3, "real-time streaming runs")
	probeKind := flag.String("probe-recognizer", "", "internal: measure the recogniser's lazy load in this process (warm or request) and print it as JSON")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *probeKind != "" {
		if err := runProbe(ctx, *probeKind); err != nil {
			fmt.Fprintln(os.Stderr, "benchtables:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, strings.Split(*only, ","), *reps, *runs, time.Duration(*longMinutes)*time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "benchtables:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, only []string, reps, runs int, long time.Duration) error {
	// The engine keeps its recogniser loaded for the whole run, and loads
	// it up front when a table times recognition, so that no figure but
	// the lazy-load table's includes the load.
	local, err := engine.StartLocal(engine.Config{MaxConnections: 4, Recognizer: engine.RecognizerConfig{IdleRelease: -1}})
	if err != nil {
		return err
	}
	defer local.Close()
	if slices.ContainsFunc(only, func(m string) bool {
		return slices.Contains([]string{"wer", "stream", "turns", "agent"}, strings.TrimSpace(m))
	}) {
		if err := local.WarmRecognizer(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("Measured %s on %s/%s, %d CPUs, Go %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	for _, m := range only {
		switch strings.TrimSpace(m) {
		case "wer":
			if err := werTable(ctx, local, reps); err != nil {
				return fmt.Errorf("wer: %w", err)
			}
		case "stream":
			if err := streamTable(ctx, local, runs); err != nil {
				return fmt.Errorf("stream: %w", err)
			}
		case "turns":
			if err := turnsTable(ctx, local, runs); err != nil {
				return fmt.Errorf("turns: %w", err)
			}
		case "app":
			if err := appTable(ctx, reps); err != nil {
				return fmt.Errorf("app: %w", err)
			}
			if err := lazyLoadTable(ctx, reps); err != nil {
				return fmt.Errorf("app, lazy load: %w", err)
			}
		case "longfile":
			if err := longFileTable(ctx, long); err != nil {
				return fmt.Errorf("longfile: %w", err)
			}
		case "intel":
			if err := intelTable(ctx); err != nil {
				return fmt.Errorf("intel: %w", err)
			}
		case "speak":
			if err := speakTable(ctx, local); err != nil {
				return fmt.Errorf("speak: %w", err)
			}
		case "agent":
			if err := agentTable(ctx, local); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
		case "":
		default:
			return fmt.Errorf("unknown measurement %q", m)
		}
	}
	return nil
}
