//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// haveFileLocks: flock(2) locks belong to an open file, and end with the
// process that holds it.
const haveFileLocks = true

// lockNew creates the file at path already locked: it is made under a
// temporary name, locked, then renamed, so that no other process ever
// sees it unlocked and takes it for the file of an ended process.
func lockNew(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".claim-*")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, errors.Join(err, f.Close(), os.Remove(f.Name()))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, errors.Join(err, f.Close(), os.Remove(f.Name()))
	}
	return f, nil
}

// tryLock takes f's lock if it is free, and reports whether it did; the
// lock ends when f is closed.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
