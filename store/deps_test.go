package store

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/fence"
)

// TestDependencies holds the architecture: storage depends on nothing
// above it and on no network client. It may import api, for api.Secret,
// the type that never prints a key.
func TestDependencies(t *testing.T) {
	m := fence.Module
	fence.Check(t, ".", fence.Fyne, "github.com/gen2brain/malgo",
		m+"/ui", m+"/sessions", m+"/cli", m+"/engine", m+"/audio")

	// api itself imports the WebSocket client. Linking it through api is
	// the price of api.Secret; reaching it any other way is not allowed.
	out, err := exec.Command("go", "list", "-deps", "-test=false", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	self := ""
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		imports[f[0]] = f[1:]
		self = f[0] // go list -deps prints the package itself last
	}
	forbidden := []string{"github.com/coder/websocket", fence.Fyne, "github.com/gen2brain/malgo"}
	seen := map[string]bool{m + "/api": true} // do not walk through api
	var walk func(pkg, via string)
	walk = func(pkg, via string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("store reaches %s through %s, not through api", pkg, via)
			}
		}
		for _, imp := range imports[pkg] {
			walk(imp, pkg)
		}
	}
	walk(self, self)
	if len(seen) < 3 {
		t.Fatalf("walked %d packages from %q: the import graph was not read", len(seen), self)
	}
}
