//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/fulldisk"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestFullDisk: with the history on a full disk, `earshot speak -o` and
// `earshot transcribe -o` still write what was asked for, say plainly
// that the disk is full and history did not keep it, and exit non-zero;
// never "saved to history". Output to the full disk itself leaves no
// half a file behind.
func TestFullDisk(t *testing.T) {
	needClip(t)
	disk := fulldisk.Mount(t, 2<<20)
	db, err := store.Open(t.Context(), disk.Path("history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := newHarness(t, nil, func(cfg *sessions.WorkspaceConfig) { cfg.History = db })
	h.ws.History, h.db = db, db
	h.tty = true
	disk.Fill()

	for _, tc := range []struct {
		name, out, what string
		args            []string
	}{
		{"speak", "hello.wav", "the synthesis", []string{"speak", "Hello from a full disk.", "--model", "aura-asteria-en"}},
		{"transcribe", "talk.txt", "the transcript", []string{"transcribe", clip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.stderr.String())
			out := filepath.Join(t.TempDir(), tc.out)
			code := h.run(t, t.Context(), append(tc.args, "-o", out)...)
			stderr := h.stderr.String()[before:]
			if code != 1 {
				t.Errorf("exit status %d; stderr %q", code, stderr)
			}
			if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
				t.Errorf("%s not written: %v", tc.out, err)
			}
			want := "the disk is full: " + tc.what + " was not saved to history (free some space)"
			if !strings.Contains(stderr, want) || strings.Contains(stderr, "; saved to history") {
				t.Errorf("stderr %q; want it to say %q, and nothing saved", stderr, want)
			}
		})
	}

	t.Run("output on the full disk", func(t *testing.T) {
		before := len(h.stderr.String())
		out := disk.Path("hello.wav")
		code := h.run(t, t.Context(), "speak", "Hello from a full disk.", "-o", out)
		stderr := h.stderr.String()[before:]
		if code != 1 || !strings.Contains(stderr, "the disk is full, so nothing was written") {
			t.Errorf("exit status %d; stderr %q", code, stderr)
		}
		left, err := filepath.Glob(disk.Path("*hello.wav*"))
		if err != nil || len(left) != 0 {
			t.Errorf("left on the full disk: %q, %v", left, err)
		}
	})
}

// TestFullDiskAtOpen: with the disk full when a command opens the
// history, history is off for the run: the command says so in one line,
// naming the full disk in plain words, does what it was asked, exits 0,
// and says what it made is not kept; never "saved to history".
func TestFullDiskAtOpen(t *testing.T) {
	needClip(t)
	disk := fulldisk.Mount(t, 2<<20)
	disk.Fill()
	h := recoveredHarness(t, disk.Path("history.db"))
	h.tty = true
	off := "earshot: history is off: the disk that holds " + disk.Dir + " is full (free some space); this run is not kept\n"
	for _, tc := range []struct {
		name, out, said string
		args            []string
	}{
		{"speak", "hello.wav", "Spoke ", []string{"speak", "Hello from a full disk.", "--model", "aura-asteria-en"}},
		{"transcribe", "talk.txt", "Transcribed ", []string{"transcribe", clip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.stderr = testkit.Buffer{}
			out := filepath.Join(t.TempDir(), tc.out)
			if code := h.run(t, t.Context(), append(tc.args, "-o", out)...); code != 0 {
				t.Errorf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
				t.Errorf("%s not written: %v", tc.out, err)
			}
			stderr := h.stderr.String()
			if !strings.HasPrefix(stderr, off) || !strings.Contains(stderr, tc.said) ||
				!strings.Contains(stderr, "; not kept (history is off).") || strings.Contains(stderr, "saved to history") {
				t.Errorf("stderr %q; want first %q, then what was done, not kept", stderr, off)
			}
		})
	}
}
