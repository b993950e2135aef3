package intel

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports fences the package to the standard library and textseg
// (whose own test fences it to the standard library): it is pure text
// processing and must stay cheap to import from the engine and the CLI.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && p != "github.com/earshot-app/earshot/internal/textseg" {
				t.Errorf("%s imports %s; only the standard library is allowed", f, p)
			}
		}
	}
}
