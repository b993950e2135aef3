package format

import (
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports fences the package: it imports package api and the standard
// library only, so formatting never grows a dependency.
func TestImports(t *testing.T) {
	checkImports(t, ".", map[string]bool{"github.com/earshot-app/earshot/api": true})
}

// checkImports fails for any non-test import of dir that is neither in the
// standard library nor allowed.
func checkImports(t *testing.T, dir string, allowed map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(gotoken.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first := strings.SplitN(path, "/", 2)[0]
			if !allowed[path] && strings.Contains(first, ".") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
