package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

// BuildInfo is what `earshot version` reports: filled by main from the
// app's metadata, the binary's build information and the engine.
type BuildInfo struct {
	// Version is the app's version (FyneApp.toml), Build its build number.
	Version string
	Build   int
	// Commit is the revision the binary was built from, with "+changes"
	// when the tree had uncommitted changes; "" when unknown.
	Commit string
	// GoVersion is the Go release that built it.
	GoVersion string
	// Engines names the engines of the local engine this build holds;
	// none in a build without it.
	Engines []string
}

const versionSummary = "print the version, the commit, the Go release and the engines of this build"

// version prints b.
func version(_ context.Context, env Env, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: earshot version (or earshot --version)\n\nPrints the version, the commit, the Go release and the engines of this build.")
	}
	if err := fs.Parse(args); err != nil {
		return errUsage // the flag package has said what was wrong, and the usage
	}
	if fs.NArg() > 0 {
		return usageError(env, "version")("takes no arguments")
	}
	b := env.Build
	v := b.Version
	if v == "" {
		v = "unknown"
	}
	if b.Build > 0 {
		v += fmt.Sprintf(" (build %d)", b.Build)
	}
	commit := b.Commit
	if commit == "" {
		commit = "unknown (built outside a git checkout)"
	}
	engines := "none: this build has no local engine and needs a key for the hosted service"
	if len(b.Engines) > 0 {
		engines = strings.Join(b.Engines, "; ")
	}
	_, err := fmt.Fprintf(env.Stdout, "Earshot %s\ncommit:  %s\ngo:      %s\nengines: %s\n", v, commit, b.GoVersion, engines)
	return err
}
