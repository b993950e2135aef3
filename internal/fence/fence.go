// Package fence holds the dependency direction of the architecture in
// tests: a package's test calls Check with the import paths it must never
// reach, directly or through another package.
package fence

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is the import path of this module.
const Module = "github.com/earshot-app/earshot"

// Check fails t if pkg (an import path, or "." for the package under
// test) depends on any path in forbidden, or on a path below one of them.
func Check(t testing.TB, pkg string, forbidden ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-test=false", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("%s depends on %s, which the architecture forbids", pkg, dep)
			}
		}
	}
}

// Fyne is the UI toolkit: only package ui may import it.
const Fyne = "fyne.io/fyne/v2"
