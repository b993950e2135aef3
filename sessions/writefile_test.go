package sessions

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
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
