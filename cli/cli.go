// Package cli holds Earshot's headless sub-commands. Each reads its flags,
// does its work through the lower layers and writes plain text; main
// wires in the concrete parts (such as the local engine) so that this
// package depends only on what it drives.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Env is what a sub-command may use: its output streams, the
// environment, and the constructors main wires in.
type Env struct {
	Stdout, Stderr io.Writer
	// Stdin is read by speak -; nil means os.Stdin.
	Stdin io.Reader
	// Getenv reads an environment variable.
	Getenv func(string) string
	// NewEngine builds the local engine for serve.
	NewEngine EngineFactory
	// OpenWorkspace opens the workspace the app itself works on, for
	// transcribe: so that a run from the command line finds the same key,
	// service and history as the app.
	OpenWorkspace func(ctx context.Context) (*Workspace, error)
	// IsTerminal reports whether w is a terminal, which earns it progress
	// and interim lines; nil checks whether w is an *os.File on a
	// terminal.
	IsTerminal func(w io.Writer) bool
	// Build is what version reports.
	Build BuildInfo
}

// Workspace is the app's workspace as a sub-command gets it from main.
type Workspace struct {
	// Workspace reads the settings and the key and chooses the service as
	// the app does: the local engine, started on first use, when no key
	// is set.
	*sessions.Workspace
	// History is the database behind Workspace. transcribe saves to it
	// directly the runs whose flags override the settings, since
	// Workspace only runs the saved ones.
	History *store.DB
	// Close releases what was opened: the local engine if it was started,
	// then History.
	Close func() error
}

func (e Env) isTerminal(w io.Writer) bool {
	if e.IsTerminal != nil {
		return e.IsTerminal(w)
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// command is one sub-command.
type command struct {
	summary string
	run     func(ctx context.Context, env Env, args []string) error
}

var commands = map[string]command{
	"agent":      {summary: agentSummary, run: plainErrors(agent)},
	"converse":   {summary: converseSummary, run: plainErrors(converse)},
	"history":    {summary: historySummary, run: plainErrors(history)},
	"notes":      {summary: notesSummary, run: plainErrors(notes)},
	"read":       {summary: readSummary, run: plainErrors(read)},
	"rerun":      {summary: rerunSummary, run: plainErrors(rerun)},
	"serve":      {summary: "run the local engine as a headless server", run: runServe},
	"speak":      {summary: speakSummary, run: plainErrors(speak)},
	"transcribe": {summary: transcribeSummary, run: plainErrors(transcribe)},
	"version":    {summary: versionSummary, run: version},
}

// workspace opens the app's workspace for a command that would verb.
// When the history could not be opened as it was (a damaged file moved
// aside, or history in memory for this run), it says so in one line on
// stderr, and the command carries on.
func (env Env) workspace(ctx context.Context, verb string) (*Workspace, error) {
	return env.openWorkspace(ctx, verb, false)
}

func (env Env) openWorkspace(ctx context.Context, verb string, readsHistory bool) (*Workspace, error) {
	if env.OpenWorkspace == nil {
		return nil, fmt.Errorf("this build cannot %s: it has no workspace", verb)
	}
	ws, err := env.OpenWorkspace(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	if rec := ws.History.Recovery(); rec != nil {
		if readsHistory && rec.InMemory() {
			return nil, errors.Join(historyOff(rec, verb), ws.Close())
		}
		fmt.Fprintln(env.Stderr, "earshot: "+recoveryLine(rec))
	}
	// History keeps why a run failed in the words this command prints.
	ws.SetErrorWords(func(err error) string { return plainError(err).Error() })
	return ws, nil
}

// plainErrors runs run and rewords its failures, other than a usage
// mistake already printed, with plainError.
func plainErrors(run func(ctx context.Context, env Env, args []string) error) func(ctx context.Context, env Env, args []string) error {
	return func(ctx context.Context, env Env, args []string) error {
		err := run(ctx, env, args)
		if err != nil && !errors.Is(err, errUsage) {
			return plainError(err)
		}
		return err
	}
}

// errUsage marks a mistake in the command line; its text has been printed.
var errUsage = errors.New("usage")

// Run runs the sub-command named by args[0] and returns the process exit
// status: 0 on success, 2 for a usage mistake, 1 for any other failure.
func Run(ctx context.Context, env Env, args []string) int {
	if len(args) == 2 && args[0] == "help" && args[1] == "--man" {
		// The manual page, for packagers (scripts/package).
		if err := manPage(ctx, env, env.Stdout); err != nil {
			fmt.Fprintf(env.Stderr, "earshot help: %v\n", err)
			return 1
		}
		return 0
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		return 0
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "earshot: unknown command %q\n\n", args[0])
		usage(env.Stderr)
		return 2
	}
	err := cmd.run(ctx, env, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		return 2
	default:
		fmt.Fprintf(env.Stderr, "earshot %s: %v\n", args[0], err)
		return 1
	}
}

// IsCommand reports whether name is a sub-command (main starts the app
// otherwise).
func IsCommand(name string) bool {
	_, ok := commands[name]
	return ok || name == "help" || name == "-h" || name == "--help" || name == "--version"
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: earshot [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Without a command, earshot opens the desktop app.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'earshot COMMAND -h' for the flags of a command.")
}

// newFlagSet returns a flag set that prints its usage to env.Stderr.
func newFlagSet(env Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: earshot %s %s\n\nFlags:\n", name, strings.TrimSpace(synopsis))
		fs.PrintDefaults()
	}
	return fs
}
