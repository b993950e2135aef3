package sessions

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes the file at path through write, whole or not at all:
// the bytes go to a new file beside it, which replaces path only once
// they are all written and on disk. A failure leaves what was at path
// untouched, and no partial file behind.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+name+".part-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	// CreateTemp makes a file only its owner may read; a file replaced
	// keeps its mode, a new one is readable by all, as most programs save.
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	return nil
}
