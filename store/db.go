package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Errors of the database. Each is wrapped with context; test with errors.Is.
var (
	// ErrNotFound reports that the session, or its saved response, does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid reports a value the store refuses to save: an unknown
	// status, malformed JSON, options that carry a credential.
	ErrInvalid = errors.New("invalid value")
	// ErrNewerSchema reports a database written by a newer Earshot: this
	// version does not know its schema and will not touch it.
	ErrNewerSchema = errors.New("the database was written by a newer version of Earshot")
)

// busyTimeout is how long a statement waits for another process (a second
// Earshot, a backup tool) to release the database before it fails.
const busyTimeoutMillis = 5000

// readers bounds the connections that serve reads. WAL lets them run
// beside the single writer.
const readers = 4

// DB is Earshot's history and settings database. It is safe for concurrent
// use by multiple goroutines: writes go through a single connection, so
// they never contend with each other for SQLite's one write lock, and
// reads go through a small pool of read-only connections that WAL lets run
// beside the writer.
type DB struct {
	path string
	w    *sql.DB // exactly one connection: every write
	r    *sql.DB // read-only connections

	addSegment *sql.Stmt // prepared on w: AddSegment runs for every final

	closeOnce sync.Once
	closeErr  error
}

// DefaultPath returns where the history database lives by default:
// $XDG_DATA_HOME/earshot/history.db, or ~/.local/share/earshot/history.db
// when XDG_DATA_HOME is unset or not absolute (as the XDG Base Directory
// specification asks). On macOS and Windows it follows their conventions.
// The directory may not exist yet; Open creates it.
func DefaultPath() (string, error) {
	const app, file = "earshot", "history.db"
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, app, file), nil
	}
	switch runtime.GOOS {
	case "windows":
		if dir := os.Getenv("LocalAppData"); dir != "" {
			return filepath.Join(dir, app, file), nil
		}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("store: default path: %w", err)
		}
		return filepath.Join(home, "Library", "Application Support", app, file), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store: default path: %w", err)
	}
	return filepath.Join(home, ".local", "share", app, file), nil
}

// Open opens the database at path, creating it and its parent directories
// (readable by the user only) when missing, and brings its schema up to
// date. The connections run in WAL mode with foreign keys enforced and a
// busy timeout. Close releases it.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Create the file ourselves so that it, and the -wal and -shm files
	// SQLite gives the same mode, are private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}

	// Switching a new file to WAL takes a lock that SQLite does not wait
	// for with its busy timeout: two processes opening the same new file
	// at once (the app and `earshot transcribe`) can be told "busy". Such
	// an open is tried again, for as long as the busy timeout.
	deadline := time.Now().Add(busyTimeoutMillis * time.Millisecond)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		d, err := openFile(ctx, abs)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("store: open %s: %w", path, err)
			}
			return d, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("store: open %s: %w", path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// openFile opens the connections to the database file at abs and brings
// its schema up to date.
func openFile(ctx context.Context, abs string) (_ *DB, err error) {
	d := &DB{path: abs}
	if d.w, err = sql.Open("sqlite", dsn(abs, false)); err != nil {
		return nil, err
	}
	d.w.SetMaxOpenConns(1)
	d.w.SetMaxIdleConns(1)
	d.w.SetConnMaxLifetime(0)
	d.w.SetConnMaxIdleTime(0)
	if err := d.setUp(ctx); err != nil {
		_ = d.w.Close()
		return nil, err
	}
	if d.r, err = sql.Open("sqlite", dsn(abs, true)); err != nil {
		_ = d.w.Close()
		return nil, err
	}
	d.r.SetMaxOpenConns(readers)
	d.r.SetMaxIdleConns(readers)
	d.r.SetConnMaxLifetime(0)
	d.r.SetConnMaxIdleTime(0)
	if err := d.r.PingContext(ctx); err != nil {
		_ = d.Close()
		return nil, err
	}
	if d.addSegment, err = d.w.PrepareContext(ctx, insertSegmentSQL); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

// setUp checks that the writer really runs in WAL mode and migrates.
func (d *DB) setUp(ctx context.Context) error {
	var mode string
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not WAL (is the file system local?)", mode)
	}
	return migrate(ctx, d.w, migrations)
}

// dsn builds the driver's name for path. The pragmas run on every new
// connection, which matters for foreign_keys and busy_timeout: SQLite
// keeps them per connection. synchronous=NORMAL is SQLite's advice for
// WAL: a commit survives a crash of the application; a power cut can lose
// the last commits but never corrupts the file.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// A deleted session's text is overwritten, not left in free pages.
	q.Add("_pragma", "secure_delete(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// 32 MiB of pages per reader, from 2 MiB: a search checks the
		// session of each match it scans, pages spread over the whole
		// file; kept in memory, a kind-filtered search of a middling word
		// over a million captions went from 15 ms to 3 ms. Pages are
		// allocated as used, so a small history costs nothing.
		q.Add("_pragma", "cache_size(-32768)")
	} else {
		// Transactions write: taking the write lock at BEGIN lets the
		// busy timeout apply instead of failing on a lock upgrade.
		q.Set("_txlock", "immediate")
	}
	// A file: URI, with the path escaped, so that '?', '#' or '%' in a
	// directory name cannot be read as parameters.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") { // Windows: C:/...
		u.Path = "/" + u.Path
	}
	return u.String()
}

// Path returns the absolute path of the database file.
func (d *DB) Path() string { return d.path }

// Close closes the database. SQLite folds the write-ahead log back into
// the file when the last connection closes. Close is idempotent; calls
// after it fail.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.addSegment != nil {
			errs = append(errs, d.addSegment.Close())
		}
		if d.r != nil {
			errs = append(errs, d.r.Close())
		}
		errs = append(errs, d.w.Close())
		if err := errors.Join(errs...); err != nil {
			d.closeErr = fmt.Errorf("store: close: %w", err)
		}
	})
	return d.closeErr
}

// isBusy reports whether err is SQLite saying another connection holds
// the lock it needs.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// isForeignKeyViolation reports whether err is SQLite refusing a row whose
// parent (the session) does not exist.
func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// execOne runs a write that must touch exactly one row, and reports
// ErrNotFound when it touched none.
func (d *DB) execOne(ctx context.Context, query string, args ...any) error {
	res, err := d.w.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
