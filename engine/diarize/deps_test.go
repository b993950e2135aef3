package diarize

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies fences the package: the engine sits below the UI and
// the sessions (architecture.md), so of Earshot's own packages it may
// import only api, and it must never pull in Fyne.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const own = "github.com/earshot-app/earshot/"
	for _, p := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(p, "fyne.io/"):
			t.Errorf("imports %s", p)
		case strings.HasPrefix(p, own) && p != own+"api" && p != own+"engine/diarize":
			t.Errorf("imports %s", p)
		}
	}
}
