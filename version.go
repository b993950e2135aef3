package main

import (
	_ "embed"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/earshot-app/earshot/cli"
)

// fyneApp is the app's metadata, which the fyne tool packages with: its
// version is the one the app reports.
//
//go:embed FyneApp.toml
var fyneApp string

// buildInfo is what `earshot version` says of this binary.
func buildInfo() cli.BuildInfo {
	b := cli.BuildInfo{GoVersion: runtime.Version(), Engines: engineComponents()}
	b.Version, b.Build = appVersion(fyneApp)
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		b.Commit = rev
		if rev != "" && modified == "true" {
			b.Commit += "+changes"
		}
	}
	return b
}

// appVersion reads Version and Build from the [Details] of FyneApp.toml.
func appVersion(toml string) (version string, build int) {
	section := ""
	for line := range strings.Lines(toml) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section != "Details" {
			continue
		}
		value = strings.Trim(strings.TrimSpace(value), `"`)
		switch strings.TrimSpace(key) {
		case "Version":
			version = value
		case "Build":
			build, _ = strconv.Atoi(value)
		}
	}
	return version, build
}
