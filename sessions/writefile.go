package sessions

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/earshot-app/earshot/store"
)

// SaveError is a failure to save the file a person chose, named by the
// path they chose: never by the temporary file WriteFile writes first.
// Err is why, as the system said it (such as syscall.EROFS), so that it
// matches fs.ErrPermission and the others with errors.Is.
type SaveError struct {
	Path string
	Err  error
}

func (e *SaveError) Error() string { return "save " + e.Path + ": " + e.Err.Error() }

func (e *SaveError) Unwrap() error { return e.Err }

// WriteFile writes the file at path through write, whole or not at all:
// the bytes go to a new file beside it, which replaces path only once
// they are all written and on disk. A failure leaves what was at path
// untouched, and no partial file behind. A failure of the disk or the
// folder is a *SaveError naming path; write's own errors are returned
// as they are, but for those of writing to the file, which name path.
// A full disk is store.ErrDiskFull.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	defer func() { err = store.MarkDiskFull(err) }()
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+name+".part-*")
	if err != nil {
		return saveError(path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(savingWriter{f: tmp, path: path}); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return saveError(path, err)
	}
	// CreateTemp makes a file only its owner may read; a file replaced
	// keeps its mode, a new one is readable by all, as most programs save.
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		return saveError(path, err)
	}
	if err := tmp.Close(); err != nil {
		return saveError(path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return saveError(path, err)
	}
	return nil
}

// saveError names path as what could not be saved, with the system's
// reason alone: the paths in err are the temporary file's.
func saveError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &SaveError{Path: path, Err: err}
}

// savingWriter is the temporary file as write sees it: its failures name
// the file being saved.
type savingWriter struct {
	f    *os.File
	path string
}

func (w savingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = saveError(w.path, err)
	}
	return n, err
}
