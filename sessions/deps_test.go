package sessions

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: sessions never reach the UI
// toolkit, the UI, the sub-commands or the engine.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, m+"/ui", m+"/cli", m+"/engine")
}
