package audio

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyFence keeps the audio layer at the bottom of the
// architecture: no UI toolkit, no network, no other Earshot package but
// the shared clock (internal/clock, which imports nothing of Earshot's),
// and no device library (capture lives in audio/device, so that what only
// decodes audio, such as the local engine, does not link miniaudio).
func TestDependencyFence(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(dep, "fyne.io/"),
			dep == "net" || strings.HasPrefix(dep, "net/"),
			strings.HasPrefix(dep, "github.com/gen2brain/malgo"),
			strings.HasPrefix(dep, "github.com/earshot-app/earshot/") && dep != "github.com/earshot-app/earshot/audio" && dep != "github.com/earshot-app/earshot/internal/clock":
			t.Errorf("audio must not depend on %s", dep)
		}
	}
}
