package device

import (
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies keeps device capture beside the audio layer: no UI
// toolkit, no network, nothing above it.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, "net/http", "github.com/coder/websocket",
		m+"/api", m+"/sessions", m+"/store", m+"/engine", m+"/ui", m+"/cli")
}
