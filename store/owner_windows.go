package store

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// haveFileLocks: LockFileEx locks belong to an open handle, and end with
// the process that holds it.
const haveFileLocks = true

var lockFileEx = syscall.NewLazyDLL("kernel32.dll").NewProc("LockFileEx")

// errLockViolation is ERROR_LOCK_VIOLATION: another handle holds the lock.
const errLockViolation = syscall.Errno(33)

// lockNew creates the file at path and locks it. Windows does not remove
// a file that another process has open, so no other process can take it
// for the file of an ended process between the two steps.
func lockNew(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	locked, err := tryLock(f)
	if err == nil && !locked {
		err = errors.New("the new lock file is locked already")
	}
	if err != nil {
		return nil, errors.Join(err, f.Close(), os.Remove(path))
	}
	return f, nil
}

// tryLock takes f's lock if it is free, and reports whether it did; the
// lock ends when f is closed.
func tryLock(f *os.File) (bool, error) {
	const exclusive, failImmediately = 0x2, 0x1 // LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY
	var ol syscall.Overlapped
	ok, _, err := lockFileEx.Call(f.Fd(), exclusive|failImmediately, 0, 1, 0, uintptr(unsafe.Pointer(&ol)))
	if ok != 0 {
		return true, nil
	}
	if errors.Is(err, errLockViolation) {
		return false, nil
	}
	return false, err
}
