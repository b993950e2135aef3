package cli

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: the sub-commands drive the
// lower layers and never the UI toolkit or, directly, the engine (main
// wires it in).
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, m+"/ui", m+"/engine")
}
