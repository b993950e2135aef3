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

	// memory is set for a history kept in memory (OpenMemory); hold keeps
	// one connection to it open, which keeps it.
	memory bool
	hold   *sql.Conn
	// owner is this DB's claim on its file (owner.go); nil in memory.
	owner *owner
	// recovery is what OpenOrRecover did to open a history; nil when
	// nothing was wrong.
	recovery *Recovery

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
// (readable by the user only) when missing, has SQLite check the tables
// read first (checkedAtOpen), and brings its schema up to date. The
// connections run in WAL mode with foreign keys enforced and a busy
// timeout. Sessions left running by a process that has ended are closed
// as StatusInterrupted. A file SQLite cannot read is ErrDamaged; one
// written by a newer Earshot is ErrNewerSchema. Close releases it.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, MarkDiskFull(err))
	}
	// Create the file ourselves so that it, and the -wal and -shm files
	// SQLite gives the same mode, are private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, MarkDiskFull(err))
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, MarkDiskFull(err))
	}

	drop := keepFoundLog(abs)
	d, err := openRetrying(ctx, abs)
	if isDamage(err) && !errors.Is(err, ErrDamaged) {
		err = fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	if !errors.Is(err, ErrDamaged) {
		drop() // the log as found goes aside with a damaged file only
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, markOpenFull(err, filepath.Dir(abs)))
	}
	return d, nil
}

// openRetrying opens the file at abs with openFile. Switching a new file
// to WAL takes a lock that SQLite does not wait for with its busy
// timeout: two processes opening the same new file at once (the app and
// `earshot transcribe`) can be told "busy". Such an open is tried again,
// for as long as the busy timeout.
func openRetrying(ctx context.Context, abs string) (*DB, error) {
	deadline := time.Now().Add(busyTimeoutMillis * time.Millisecond)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		d, err := openFile(ctx, abs)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return d, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// openFile opens the connections to the database file at abs, brings its
// schema up to date, claims it for this process and closes the sessions
// that ended processes left running.
func openFile(ctx context.Context, abs string) (*DB, error) {
	d := &DB{path: abs}
	if err := d.connect(ctx, func(readOnly bool) string { return dsn(abs, readOnly) }); err != nil {
		return nil, err
	}
	var err error
	if d.owner, err = claimOwner(abs); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	if _, err := d.closeInterrupted(ctx); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return d, nil
}

// connect opens the writer and the readers on the database dsnFor names,
// checks it and migrates it.
func (d *DB) connect(ctx context.Context, dsnFor func(readOnly bool) string) (err error) {
	if d.w, err = sql.Open("sqlite", dsnFor(false)); err != nil {
		return err
	}
	d.w.SetMaxOpenConns(1)
	d.w.SetMaxIdleConns(1)
	d.w.SetConnMaxLifetime(0)
	d.w.SetConnMaxIdleTime(0)
	if err := d.setUp(ctx); err != nil {
		_ = d.w.Close()
		return err
	}
	if d.r, err = sql.Open("sqlite", dsnFor(true)); err != nil {
		_ = d.w.Close()
		return err
	}
	d.r.SetMaxOpenConns(readers)
	d.r.SetMaxIdleConns(readers)
	d.r.SetConnMaxLifetime(0)
	d.r.SetConnMaxIdleTime(0)
	if err := d.r.PingContext(ctx); err != nil {
		return errors.Join(err, d.Close())
	}
	if d.addSegment, err = d.w.PrepareContext(ctx, insertSegmentSQL); err != nil {
		return errors.Join(err, d.Close())
	}
	return nil
}

// setUp checks that the writer really runs in WAL mode (a file), has
// SQLite check the tables read first, and migrates.
func (d *DB) setUp(ctx context.Context) error {
	var mode string
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !d.memory && !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, not WAL (is the file system local?)", mode)
	}
	if err := quickCheck(ctx, d.w, checkedAtOpen); err != nil {
		return err
	}
	return migrate(ctx, d.w, migrations)
}

// dsn builds the driver's name for path. The pragmas run on every new
// connection, which matters for foreign_keys and busy_timeout: SQLite
// keeps them per connection. synchronous=NORMAL is SQLite's advice for
// WAL: a commit survives a crash of the application; a power cut can lose
// the last commits but never corrupts the file.
func dsn(path string, readOnly bool) string {
	q := pragmas(readOnly)
	// A file: URI, with the path escaped, so that '?', '#' or '%' in a
	// directory name cannot be read as parameters.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") { // Windows: C:/...
		u.Path = "/" + u.Path
	}
	return u.String()
}

// pragmas are the parameters of every connection: see dsn.
func pragmas(readOnly bool) url.Values {
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
	return q
}

// Path returns the absolute path of the database file; "" for a history
// kept in memory.
func (d *DB) Path() string { return d.path }

// InMemory reports whether the history is kept in memory (OpenMemory):
// nothing saved to it outlives the process.
func (d *DB) InMemory() bool { return d.memory }

// Recovery says what OpenOrRecover did to open the history (moved a
// damaged file aside, or kept history in memory, and why); nil when the
// history opened as it was.
func (d *DB) Recovery() *Recovery { return d.recovery }

// Close closes the database. SQLite folds the write-ahead log back into
// the file when the last connection closes. Close is idempotent; calls
// after it fail.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.addSegment != nil {
			errs = append(errs, d.addSegment.Close())
		}
		if d.hold != nil {
			errs = append(errs, d.hold.Close())
		}
		if d.r != nil {
			errs = append(errs, d.r.Close())
		}
		errs = append(errs, d.w.Close(), d.owner.release())
		if err := errors.Join(errs...); err != nil {
			d.closeErr = fmt.Errorf("store: close: %w", err)
		}
	})
	return d.closeErr
}

// isDamage reports whether err is SQLite saying the file is not a
// database, or a damaged one.
func isDamage(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
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
