package store

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: storage depends on nothing
// above it and on no network client.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, "github.com/coder/websocket", "github.com/gen2brain/malgo",
		m+"/ui", m+"/sessions", m+"/cli", m+"/engine", m+"/api", m+"/audio")
}
