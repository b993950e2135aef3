package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/cli"
)

// TestBuildInfo: the version is FyneApp.toml's, read as the fyne tool
// reads it, and the engines are the engine's.
func TestBuildInfo(t *testing.T) {
	if v, b := appVersion(fyneApp); v == "" || b <= 0 {
		t.Fatalf("FyneApp.toml gives version %q, build %d", v, b)
	}
	toml := "# comment\n[Details]\n  Name = \"Earshot\"\n  Version = \"2.3.4\"\n  Build = 17\n\n[LinuxAndBSD]\n  Version = \"9.9.9\"\n"
	if v, b := appVersion(toml); v != "2.3.4" || b != 17 {
		t.Errorf("appVersion = %q, %d; want 2.3.4, 17 (only [Details] counts)", v, b)
	}
	bi := buildInfo()
	if bi.GoVersion != runtime.Version() || (len(bi.Engines) > 0) != hasEngine ||
		hasEngine && !strings.Contains(strings.Join(bi.Engines, ";"), "pocketsphinx") {
		t.Errorf("build info %+v (this build holds the engine: %v)", bi, hasEngine)
	}
}

// TestServeWithoutEngine: a build without the local engine says so when
// asked to serve it, and serves nothing.
func TestServeWithoutEngine(t *testing.T) {
	if hasEngine {
		t.Skip("this build holds the engine; the noengine build runs this test (scripts/package-check)")
	}
	var out, errOut strings.Builder
	env := cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, NewEngine: newEngine, Build: buildInfo()}
	if code := cli.Run(t.Context(), env, []string{"serve", "--addr", "127.0.0.1:0", "--key", "a-local-key"}); code == 0 {
		t.Fatalf("serve succeeded without an engine: %q", out.String())
	}
	if !strings.Contains(errOut.String(), "no local engine") {
		t.Errorf("serve said %q; want that the build has no local engine", errOut.String())
	}
	out.Reset()
	if code := cli.Run(t.Context(), env, []string{"version"}); code != 0 || !strings.Contains(out.String(), "engines: none") {
		t.Errorf("version: %d, %q", code, out.String())
	}
}
