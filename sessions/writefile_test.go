package sessions

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/earshot-app/earshot/internal/testkit"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.srt")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFile(path, write("first")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("a new file: %v, %v; want mode 0644", info, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	// A write that fails half-way leaves the file as it was, and nothing
	// beside it.
	boom := errors.New("disk full")
	err = WriteFile(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "half"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile = %v, want the writer's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("a failed write changed the file to %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d files in the folder, want 1", len(entries))
	}

	// A replacement keeps the file's mode.
	if err := WriteFile(path, write("second")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Errorf("the file holds %q, want the second write", b)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file has mode %v, want the old 0600", info.Mode().Perm())
	}

	// A folder that does not exist is an error that names it.
	if err := WriteFile(filepath.Join(dir, "none", "x"), write("x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFile into a missing folder = %v, want not-exist", err)
	}
}

// TestWriteFileNamesTheChosenFile: a file that cannot be saved is named
// as the person chose it, never by the temporary file written first.
func TestWriteFileNamesTheChosenFile(t *testing.T) {
	write := func(w io.Writer) error { _, err := w.Write(make([]byte, 1<<20)); return err }
	notDir := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		why        error
	}{
		{"read-only", filepath.Join(testkit.ReadOnlyDir(t), "test.mp3"), syscall.EROFS},
		{"a file for a folder", filepath.Join(notDir, "test.mp3"), syscall.ENOTDIR},
		{"a full disk", filepath.Join(testkit.SmallFolder(t, 256<<10), "test.mp3"), syscall.ENOSPC},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteFile(tt.path, write)
			var se *SaveError
			if !errors.As(err, &se) || se.Path != tt.path || !errors.Is(err, tt.why) {
				t.Fatalf("WriteFile = %v, want a SaveError of %s for %v", err, tt.path, tt.why)
			}
			if strings.Contains(err.Error(), ".part-") {
				t.Errorf("the error names the temporary file: %v", err)
			}
		})
	}
}
