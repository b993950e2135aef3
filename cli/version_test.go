package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	b := BuildInfo{Version: "0.1.0", Build: 3, Commit: "abc123", GoVersion: "go1.26.8", Engines: []string{"pocketsphinx", "flite 2.2"}}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := Run(t.Context(), Env{Stdout: &out, Stderr: &errOut, Build: b}, args); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		want := "Earshot 0.1.0 (build 3)\ncommit:  abc123\ngo:      go1.26.8\nengines: pocketsphinx; flite 2.2\n"
		if out.String() != want {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
	var out, errOut bytes.Buffer
	if code := Run(t.Context(), Env{Stdout: &out, Stderr: &errOut}, []string{"version"}); code != 0 ||
		!strings.Contains(out.String(), "commit:  unknown") || !strings.Contains(out.String(), "engines: none: this build has no local engine") {
		t.Errorf("a build with nothing known: exit %d, %q", code, out.String())
	}
	errOut.Reset()
	if code := Run(t.Context(), Env{Stdout: &out, Stderr: &errOut}, []string{"version", "extra"}); code != 2 || !strings.Contains(errOut.String(), "takes no arguments") {
		t.Errorf("version extra: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	Run(t.Context(), Env{Stdout: &out, Stderr: &errOut}, []string{"help"})
	if !strings.Contains(out.String(), "version") {
		t.Errorf("help does not list version: %q", out.String())
	}
}
