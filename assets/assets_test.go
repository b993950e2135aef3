package assets

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestIconPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(IconPNG()))
	if err != nil {
		t.Fatalf("decode embedded icon: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(512, 512) {
		t.Errorf("embedded icon is %v, want 512x512", got)
	}
	// Corners are transparent (the tile is rounded) and the centre is not,
	// which tells a real icon from an empty or opaque placeholder.
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Errorf("top-left corner alpha = %d, want transparent", a)
	}
	if _, _, _, a := img.At(256, 256).RGBA(); a != 0xffff {
		t.Errorf("centre alpha = %d, want opaque", a)
	}
}

func TestSmallIconPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(SmallIconPNG()))
	if err != nil {
		t.Fatalf("decode embedded small icon: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(128, 128) {
		t.Errorf("embedded small icon is %v, want 128x128", got)
	}
	if _, _, _, a := img.At(64, 64).RGBA(); a != 0xffff {
		t.Errorf("centre alpha = %d, want opaque", a)
	}
}

func TestIconPNGReturnsCopy(t *testing.T) {
	b := IconPNG()
	b[0] ^= 0xff
	if bytes.Equal(b, IconPNG()) {
		t.Fatal("changing the returned bytes changed the icon")
	}
}

// TestRenderedSizes checks that every size the packagers and the desktop
// entry use was rendered, at the size its name says.
func TestRenderedSizes(t *testing.T) {
	for _, size := range []int{512, 256, 128, 96, 64, 48, 32, 24, 22, 16} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			f, err := os.Open(filepath.Join("icon", fmt.Sprintf("earshot-%d.png", size)))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cfg, err := png.DecodeConfig(f)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if cfg.Width != size || cfg.Height != size {
				t.Errorf("size = %dx%d, want %dx%d", cfg.Width, cfg.Height, size, size)
			}
		})
	}
}

// TestNoToolkit fences the package: ui is the only package that imports
// Fyne, so assets must not, directly or through a dependency.
func TestNoToolkit(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "fyne.io/") {
			t.Errorf("assets depends on %s", dep)
		}
	}
}
