package main

import (
	"runtime"
	"strings"
	"testing"
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
	if bi.GoVersion != runtime.Version() || len(bi.Engines) == 0 || !strings.Contains(strings.Join(bi.Engines, ";"), "pocketsphinx") {
		t.Errorf("build info %+v", bi)
	}
}
