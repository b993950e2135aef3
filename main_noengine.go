//go:build noengine

// A build without the local engine (made for Windows, where the engine's
// C libraries do not exist): the app and the commands work with the
// hosted service or a custom server, and with no key they say that one is
// needed (sessions.ErrNoLocalEngine) instead of starting an engine.

package main

import (
	"log/slog"

	"github.com/earshot-app/earshot/cli"
	"github.com/earshot-app/earshot/sessions"
)

// hasEngine: this build does not hold the local engine.
const hasEngine = false

// newEngine is nil: there is no engine for `earshot serve` to run, which
// it says.
var newEngine cli.EngineFactory

// engineComponents is empty: `earshot version` says this build has no
// local engine.
func engineComponents() []string { return nil }

// localEngine is the local engine this build does not have.
type localEngine struct{}

func newLocalEngine(*slog.Logger) *localEngine { return &localEngine{} }

// wire leaves the workspace without a local engine.
func (*localEngine) wire(*sessions.WorkspaceConfig) {}

// close has nothing to stop.
func (*localEngine) close() {}
