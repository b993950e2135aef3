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
	"sort"
	"strings"
)

// Env is what a sub-command may use: its output streams, the
// environment, and the constructors main wires in.
type Env struct {
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable.
	Getenv func(string) string
	// NewEngine builds the local engine for serve.
	NewEngine EngineFactory
}

// command is one sub-command.
type command struct {
	summary string
	run     func(ctx context.Context, env Env, args []string) error
}

var commands = map[string]command{
	"serve": {summary: "run the local engine as a headless server", run: runServe},
}

// errUsage marks a mistake in the command line; its text has been printed.
var errUsage = errors.New("usage")

// Run runs the sub-command named by args[0] and returns the process exit
// status: 0 on success, 2 for a usage mistake, 1 for any other failure.
func Run(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		return 0
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
	return ok || name == "help" || name == "-h" || name == "--help"
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
