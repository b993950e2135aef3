package store

import (
	"errors"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrDiskFull reports a write that failed because the disk, or the
// user's share of it, is full: SQLite's SQLITE_FULL, or ENOSPC (EDQUOT,
// or Windows' ERROR_DISK_FULL) from writing a file. The store marks its
// own writes' errors with it; sessions mark the files they write (exports,
// saved audio) through MarkDiskFull. Test with errors.Is: a write that
// failed so may succeed once there is room again.
var ErrDiskFull = errors.New("the disk is full")

// MarkDiskFull returns err marked with ErrDiskFull when it says the disk
// is full, else err as it is. The mark keeps err's text and everything it
// wraps.
func MarkDiskFull(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) || !diskFull(err) {
		return err
	}
	return diskFullError{err}
}

// diskFullError is an error that says the disk is full.
type diskFullError struct{ err error }

func (e diskFullError) Error() string        { return e.err.Error() }
func (e diskFullError) Unwrap() error        { return e.err }
func (e diskFullError) Is(target error) bool { return target == ErrDiskFull }

// markOpenFull marks err, why the history in dir could not be opened,
// with ErrDiskFull when it says the disk is full, and when it is one of
// SQLite's I/O errors while the disk that holds dir has no byte left for
// the user: SQLite names a shared-memory or log file that could not grow
// "disk I/O error", without the system's ENOSPC.
func markOpenFull(err error, dir string) error {
	err = MarkDiskFull(err)
	var se *sqlite.Error
	if err == nil || errors.Is(err, ErrDiskFull) || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_IOERR || !noRoom(dir) {
		return err
	}
	return diskFullError{err}
}

// diskFull reports whether err is SQLite's or the system's "no space".
func diskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		for _, full := range diskFullErrnos {
			if errno == full {
				return true
			}
		}
	}
	return false
}
