package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrInUse reports a damaged history that another Earshot process has
// open: it is not moved aside under it.
var ErrInUse = errors.New("another Earshot process has it open")

// Recovery says what OpenOrRecover did to open a history it could not
// open as it was. As an error it reads for a log; the app and the
// commands tell people in their own words.
type Recovery struct {
	// Path is the history file asked for.
	Path string
	// Damage is why the file could not be read (errors.Is ErrDamaged); nil
	// when it was not damaged.
	Damage error
	// MovedTo is where the damaged file was moved, with its -wal and -shm
	// beside it under the same new name; "" when it was not moved.
	MovedTo string
	// Off is why history is kept in memory for the session (InMemory): a
	// history written by a newer Earshot (ErrNewerSchema), a folder that
	// cannot be written (fs.ErrPermission, a read-only file system, a full
	// disk), a damaged file that could not be moved aside (ErrInUse, or
	// the file system's refusal); nil when history is on disk.
	Off error
}

// InMemory reports whether history is kept in memory for the session.
func (r *Recovery) InMemory() bool { return r.Off != nil }

// Folder returns the folder that could not be written in, when that is
// why history is off; "" otherwise. Where a file stands in the way of a
// folder, or a folder in the way of the history file, it is that path.
func (r *Recovery) Folder() string {
	var pe *fs.PathError
	if r.Off == nil || errors.Is(r.Off, ErrNewerSchema) || !errors.As(r.Off, &pe) {
		return ""
	}
	if errors.Is(pe.Err, syscall.ENOTDIR) || errors.Is(pe.Err, syscall.EISDIR) {
		return pe.Path
	}
	return filepath.Dir(pe.Path)
}

func (r *Recovery) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store: history %s", r.Path)
	if r.Damage != nil {
		fmt.Fprintf(&b, " could not be read (%v)", r.Damage)
		if r.MovedTo != "" {
			fmt.Fprintf(&b, "; moved aside to %s", r.MovedTo)
		}
	}
	if r.Off != nil {
		fmt.Fprintf(&b, "; history is kept in memory: %v", r.Off)
	} else {
		b.WriteString("; a new history was started")
	}
	return b.String()
}

// Unwrap returns why the file was not used: the damage, and why history
// is in memory.
func (r *Recovery) Unwrap() []error {
	var errs []error
	for _, err := range []error{r.Damage, r.Off} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// OpenOrRecover opens the history at path as Open does, and opens one
// whatever the file holds. A damaged file (ErrDamaged) is moved aside,
// kept, never deleted, with its -wal and -shm, under a name that says
// damaged and when (history-damaged-20261207-143005.db), and a new
// history is started in its place. When there is no history it can write
// (a folder it cannot write in, a history written by a newer Earshot,
// which it leaves untouched, a damaged file it cannot move), it keeps one
// in memory for the session (OpenMemory). DB.Recovery then says what it
// did and why. It fails only when ctx ends or memory cannot be had.
func OpenOrRecover(ctx context.Context, path string) (*DB, error) {
	d, err := Open(ctx, path)
	if err == nil || ctx.Err() != nil {
		return d, err
	}
	rec := &Recovery{Path: path}
	if abs, aerr := filepath.Abs(path); aerr == nil {
		rec.Path = abs
	}
	if errors.Is(err, ErrDamaged) {
		rec.Damage = err
		rec.MovedTo, err = moveAside(rec.Path, time.Now())
		if errors.Is(err, fs.ErrNotExist) {
			// Another process moved it first, and says so: this one
			// opens what is there now as it would have.
			return OpenOrRecover(ctx, rec.Path)
		}
		if err == nil {
			if d, err = Open(ctx, rec.Path); err == nil {
				d.recovery = rec
				return d, nil
			}
		}
	}
	return OpenMemoryFor(ctx, rec, err)
}

// OpenMemoryFor opens a history in memory (OpenMemory) because of why,
// which DB.Recovery reports as rec's Off (rec may be nil: a Recovery is
// made).
func OpenMemoryFor(ctx context.Context, rec *Recovery, why error) (*DB, error) {
	if rec == nil {
		rec = &Recovery{}
	}
	rec.Off = why
	d, err := OpenMemory(ctx)
	if err != nil {
		return nil, errors.Join(why, err)
	}
	d.recovery = rec
	return d, nil
}

// moveAside renames the damaged database at path, and its -wal, -shm and
// -journal, to a name beside it that says damaged and when, and returns
// the new path. It refuses while another process has the database open.
// When a companion file cannot follow, what was moved is put back: a
// database and its log stay together, and a new database never meets
// the old one's log.
func moveAside(path string, now time.Time) (string, error) {
	if alive, err := othersAlive(ownersDir(path), nil); err != nil || alive {
		if err == nil {
			err = ErrInUse
		}
		return "", fmt.Errorf("move the damaged history aside: %w", err)
	}
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext) + "-damaged-" + now.Format("20060102-150405")
	to := filepath.Join(dir, stem+ext)
	for i := 2; exists(to) || exists(to+"-wal"); i++ {
		to = filepath.Join(dir, fmt.Sprintf("%s-%d%s", stem, i, ext))
	}
	// The log as Open found it goes with the file; one SQLite made since
	// follows as -wal-2, or, when it is the same file under another
	// name, loses that name only.
	moves := [][2]string{{path, to}}
	if found := path + foundLogSuffix; exists(found) {
		moves = append(moves, [2]string{found, to + "-wal"})
		if a, b := stat(found), stat(path+"-wal"); a != nil && b != nil && os.SameFile(a, b) {
			defer os.Remove(path + "-wal")
		} else {
			moves = append(moves, [2]string{path + "-wal", to + "-wal-2"})
		}
	} else {
		moves = append(moves, [2]string{path + "-wal", to + "-wal"})
	}
	moves = append(moves, [2]string{path + "-shm", to + "-shm"}, [2]string{path + "-journal", to + "-journal"})
	var moved [][2]string
	for i, m := range moves {
		err := os.Rename(m[0], m[1])
		if i > 0 && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			for _, back := range moved {
				_ = os.Rename(back[1], back[0])
			}
			return "", fmt.Errorf("move the damaged history aside: %w", err)
		}
		moved = append(moved, m)
	}
	return to, nil
}

// foundLogSuffix names the second name Open gives a history's
// write-ahead log before SQLite reads it (keepFoundLog).
const foundLogSuffix = "-wal-found"

// keepFoundLog gives the write-ahead log of the database at path, when
// there is one, a second name (a hard link: no copy), so that the log as
// found is kept if the file proves damaged: SQLite deletes a log it
// cannot use, or one beside a file too short to hold a page. A second
// name there already was left by an open that found the file damaged,
// and is kept. It returns what drops that name, once the file opened.
func keepFoundLog(path string) (drop func()) {
	found := path + foundLogSuffix
	if !exists(found) {
		_ = os.Link(path+"-wal", found)
	}
	return func() { _ = os.Remove(found) }
}

func stat(path string) fs.FileInfo {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	return fi
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
