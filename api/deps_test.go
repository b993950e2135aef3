package api

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: api knows nothing of audio
// devices, sessions, storage, the engine or the UI.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, "github.com/gen2brain/malgo",
		m+"/audio", m+"/sessions", m+"/store", m+"/engine", m+"/ui", m+"/cli")
}
