package engine

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: the engine builds on api and
// audio only, never on the app's upper layers or the UI toolkit.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, "github.com/gen2brain/malgo",
		m+"/sessions", m+"/store", m+"/ui", m+"/cli")
}
