package ui

import (
	"bufio"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// The app's identity is written in four places: AppID here, FyneApp.toml
// (read by the fyne tool), the desktop entry and the AppStream metainfo
// (installed by distribution packages). These tests keep them in step.

const repoRoot = ".."

type fyneAppToml struct {
	Details struct {
		Icon, Name, ID, Version string
		Build                   int
	}
	LinuxAndBSD struct {
		GenericName, Comment string
		Categories, Keywords []string
	}
}

func readFyneApp(t *testing.T) fyneAppToml {
	t.Helper()
	var meta fyneAppToml
	md, err := toml.DecodeFile(filepath.Join(repoRoot, "FyneApp.toml"), &meta)
	if err != nil {
		t.Fatalf("FyneApp.toml: %v", err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		t.Errorf("FyneApp.toml has keys this test does not check: %v", undecoded)
	}
	return meta
}

// readDesktopEntry returns the keys of the [Desktop Entry] group.
func readDesktopEntry(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "packaging", AppID+".desktop"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			group = line
		case group == "[Desktop Entry]":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Errorf("desktop entry: malformed line %q", line)
			}
			entry[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entry
}

type metainfo struct {
	ID         string `xml:"id"`
	Name       string `xml:"name"`
	Launchable struct {
		Type string `xml:"type,attr"`
		ID   string `xml:",chardata"`
	} `xml:"launchable"`
	Binaries []string `xml:"provides>binary"`
	Releases []struct {
		Version string `xml:"version,attr"`
		Date    string `xml:"date,attr"`
	} `xml:"releases>release"`
}

func TestFyneAppToml(t *testing.T) {
	meta := readFyneApp(t)
	if meta.Details.ID != AppID {
		t.Errorf("ID = %q, want %q", meta.Details.ID, AppID)
	}
	if meta.Details.Name != "Earshot" {
		t.Errorf("Name = %q, want Earshot", meta.Details.Name)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(meta.Details.Version) {
		t.Errorf("Version = %q, want x.y.z", meta.Details.Version)
	}
	if meta.Details.Build < 1 {
		t.Errorf("Build = %d, want at least 1", meta.Details.Build)
	}
	f, err := os.Open(filepath.Join(repoRoot, meta.Details.Icon))
	if err != nil {
		t.Fatalf("Icon: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("Icon %s: %v", meta.Details.Icon, err)
	}
	if cfg.Width != cfg.Height || cfg.Width < 256 {
		t.Errorf("Icon is %dx%d, want a square of at least 256", cfg.Width, cfg.Height)
	}
}

func TestDesktopEntryAgrees(t *testing.T) {
	meta := readFyneApp(t)
	entry := readDesktopEntry(t)
	list := func(xs []string) string { return strings.Join(xs, ";") + ";" }
	want := map[string]string{
		"Type":           "Application",
		"Name":           meta.Details.Name,
		"GenericName":    meta.LinuxAndBSD.GenericName,
		"Comment":        meta.LinuxAndBSD.Comment,
		"Exec":           "earshot",
		"Icon":           AppID,
		"Terminal":       "false",
		"Categories":     list(meta.LinuxAndBSD.Categories),
		"Keywords":       list(meta.LinuxAndBSD.Keywords),
		"StartupWMClass": "Earshot", // GLFW names the window class after the title New gives it
	}
	for k, v := range want {
		if entry[k] != v {
			t.Errorf("desktop entry %s = %q, want %q", k, entry[k], v)
		}
	}
	for k := range entry {
		if _, ok := want[k]; !ok {
			t.Errorf("desktop entry has %s, which this test does not check", k)
		}
	}
}

func TestMetainfoAgrees(t *testing.T) {
	meta := readFyneApp(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "packaging", AppID+".metainfo.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var mi metainfo
	if err := xml.Unmarshal(b, &mi); err != nil {
		t.Fatalf("metainfo: %v", err)
	}
	if mi.ID != AppID {
		t.Errorf("id = %q, want %q", mi.ID, AppID)
	}
	if mi.Name != meta.Details.Name {
		t.Errorf("name = %q, want %q", mi.Name, meta.Details.Name)
	}
	if mi.Launchable.Type != "desktop-id" || mi.Launchable.ID != AppID+".desktop" {
		t.Errorf("launchable = %+v, want desktop-id %s.desktop", mi.Launchable, AppID)
	}
	if !slices.Equal(mi.Binaries, []string{"earshot"}) {
		t.Errorf("provided binaries = %q, want [earshot]", mi.Binaries)
	}
	if len(mi.Releases) == 0 {
		t.Fatal("metainfo lists no release")
	}
	if newest := mi.Releases[0]; newest.Version != meta.Details.Version || newest.Date == "" {
		t.Errorf("newest release = %+v, want version %s with a date", newest, meta.Details.Version)
	}
}
