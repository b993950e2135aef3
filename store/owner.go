package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// An owner is one open DB's claim on the history file: a lock file in the
// folder ownersDir names, locked for as long as the DB is open. Sessions
// are created with the owner's id, so that a later Open can tell a
// session whose process still runs it (its owner's file is locked) from
// one left running by a process that ended without finishing it (a crash,
// a kill): the operating system drops a lock when its process ends,
// however it ends.
//
// The app and `earshot transcribe` may share one history at the same
// time: each has its own owner, and neither closes the other's sessions.
type owner struct {
	id   string
	dir  string
	path string   // the lock file
	f    *os.File // holds the lock; nil where the platform has no file locks
}

// ownerSuffix ends the name of every owner's lock file.
const ownerSuffix = ".lock"

// ownersDir is the folder of the owners of the database at path.
func ownersDir(path string) string { return path + "-owners" }

// claimOwner takes a new owner's lock beside the database at path. Where
// the platform has no file locks, the owner has no file (f is nil) and no
// other process's sessions are ever taken for interrupted.
func claimOwner(path string) (*owner, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	o := &owner{id: id, dir: ownersDir(path)}
	o.path = filepath.Join(o.dir, o.id+ownerSuffix)
	if !haveFileLocks {
		return o, nil
	}
	// A closing process removes the folder when it is left empty; the
	// claim then makes it again.
	for range 3 {
		if err = os.MkdirAll(o.dir, 0o700); err != nil {
			return nil, err
		}
		o.f, err = lockNew(o.path)
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("claim the history: %w", err)
	}
	return o, nil
}

// newID returns 16 random hexadecimal digits: an id no other process
// draws.
func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// release drops the owner's lock and removes its file, and the folder
// when no other owner is left in it.
func (o *owner) release() error {
	if o == nil || o.f == nil {
		return nil
	}
	// Closed first: Windows does not remove a file that is open.
	err := errors.Join(o.f.Close(), os.Remove(o.path))
	o.f = nil
	_ = os.Remove(o.dir) // fails while another owner's file is in it
	return err
}

// ownerState is what a look at another owner's lock found.
type ownerState int

const (
	ownerGone    ownerState = iota // its process ended: its running sessions were interrupted
	ownerAlive                     // its process holds its lock
	ownerUnknown                   // this platform cannot tell
)

// stateOf looks at the lock of the owner id, and removes the file of one
// whose process has ended. An owner with no file (one of a version that
// had no owners, whose id is "") has ended: any process of such a version
// still running was refused the database when this one migrated it.
func stateOf(dir, id string) (ownerState, error) {
	if !haveFileLocks {
		return ownerUnknown, nil
	}
	if id == "" || strings.ContainsAny(id, `/\`) {
		return ownerGone, nil
	}
	path := filepath.Join(dir, id+ownerSuffix)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return ownerGone, nil
	}
	if err != nil {
		return ownerUnknown, err
	}
	locked, err := tryLock(f)
	_ = f.Close()
	if err != nil {
		return ownerUnknown, err
	}
	if !locked {
		return ownerAlive, nil
	}
	// The lock was free: the process is gone, and so is its file.
	_ = os.Remove(path)
	return ownerGone, nil
}

// othersAlive reports whether an owner other than self holds a lock in
// dir: another process has the database open. Lock files of ended
// processes are removed on the way. Where the platform cannot tell, it
// reports true.
func othersAlive(dir string, self *owner) (bool, error) {
	if !haveFileLocks {
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	alive := false
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ownerSuffix)
		if !ok || (self != nil && id == self.id) {
			continue
		}
		st, err := stateOf(dir, id)
		if err != nil {
			return true, err
		}
		alive = alive || st != ownerGone
	}
	return alive, nil
}
