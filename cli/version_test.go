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

// TestUnknownFlagSaidOnce: every command, given a flag it does not
// know, says so once, with its usage, and exits 2 (a usage mistake).
func TestUnknownFlagSaidOnce(t *testing.T) {
	cases := [][]string{{"--version", "--x"}, {"history", "export", "--x"}, {"history", "search", "--x"}}
	for name := range commands {
		cases = append(cases, []string{name, "--x"})
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
			code := Run(t.Context(), env, args)
			if code != 2 {
				t.Errorf("exit %d, want 2 (a usage mistake)", code)
			}
			if n := strings.Count(errOut.String(), "flag provided but not defined"); n != 1 {
				t.Errorf("the mistake is said %d times, want once:\n%s", n, errOut.String())
			}
			if !strings.Contains(errOut.String(), "Usage: earshot") {
				t.Errorf("no usage is printed:\n%s", errOut.String())
			}
			if out.Len() > 0 {
				t.Errorf("standard output: %q, want nothing", out.String())
			}
		})
	}
}
