package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

func TestOpenCreatesPrivateFiles(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"plain", "with space", "odd?name#and%percent"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, name, "nested", "history.db")
			d, err := Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			newSession(t, d, "x") // write something, so the file is real
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatalf("the database is not where it was asked to be: %v", err)
			}
			if fi.Size() == 0 {
				t.Error("the database file is empty after a write and a close")
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("database file mode %v, want 0600", perm)
			}
			di, err := os.Stat(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			if perm := di.Mode().Perm(); perm != 0o700 {
				t.Errorf("directory mode %v, want 0700", perm)
			}
			entries, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "history.db" {
					t.Errorf("after Close the directory still holds %s", e.Name())
				}
			}
		})
	}
}

func TestOpenRejectsEmptyPath(t *testing.T) {
	if _, err := Open(t.Context(), ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

// TestConnectionSettings checks every connection of both pools, since
// SQLite keeps foreign_keys and busy_timeout per connection.
func TestConnectionSettings(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	for name, pool := range map[string]*sql.DB{"writer": d.w, "reader": d.r} {
		t.Run(name, func(t *testing.T) {
			// Hold several connections at once, so the pool opens more than one.
			var conns []*sql.Conn
			n := 1
			if pool == d.r {
				n = readers
			}
			for range n {
				c, err := pool.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
			}
			for i, c := range conns {
				var mode string
				var fk, busy, sync, secure int
				if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
					t.Fatal(err)
				}
				for _, p := range []struct {
					pragma string
					dst    *int
				}{{"foreign_keys", &fk}, {"busy_timeout", &busy}, {"synchronous", &sync}, {"secure_delete", &secure}} {
					if err := c.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.dst); err != nil {
						t.Fatal(err)
					}
				}
				if mode != "wal" || fk != 1 || busy != busyTimeoutMillis || sync != 1 || secure != 1 {
					t.Errorf("connection %d: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d secure_delete=%d",
						i, mode, fk, busy, sync, secure)
				}
			}
			for _, c := range conns {
				_ = c.Close()
			}
		})
	}
	if _, err := d.r.ExecContext(ctx, `DELETE FROM settings`); err == nil {
		t.Error("a reader connection accepted a write")
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	d := openTest(t)
	_, err := d.w.ExecContext(t.Context(), `INSERT INTO segments (session_id, seq, start_sec, end_sec, text) VALUES (12345, 0, 0, 1, 'x')`)
	if !isForeignKeyViolation(err) {
		t.Fatalf("a segment of no session: err = %v, want a foreign key violation", err)
	}
}

func TestDefaultPath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG paths are the Linux convention")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		name, xdg, want string
	}{
		{"XDG_DATA_HOME set", "/data/home", "/data/home/earshot/history.db"},
		{"XDG_DATA_HOME unset", "", filepath.Join(home, ".local/share/earshot/history.db")},
		{"XDG_DATA_HOME relative is ignored", "relative/dir", filepath.Join(home, ".local/share/earshot/history.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			got, err := DefaultPath()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClose(t *testing.T) {
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := d.CreateSession(t.Context(), Session{Kind: KindFile}); err == nil {
		t.Error("CreateSession after Close succeeded")
	}
	if _, err := d.AddSegment(t.Context(), Segment{SessionID: 1}); err == nil {
		t.Error("AddSegment after Close succeeded")
	}
}

func TestContextCancelled(t *testing.T) {
	d := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.CreateSession(ctx, Session{Kind: KindFile}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateSession with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := d.Sessions(ctx, Filter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Sessions with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestOpenSameFileConcurrently stands for two Earshot processes starting
// at once on a new file: both open it, and the migrations run once.
func TestOpenSameFileConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	var wg sync.WaitGroup
	dbs := make([]*DB, 4)
	errs := make([]error, len(dbs))
	for i := range dbs {
		wg.Go(func() { dbs[i], errs[i] = Open(t.Context(), path) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	var n int
	if err := dbs[0].r.QueryRowContext(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(migrations) {
		t.Errorf("schema_migrations holds %d rows, want %d", n, len(migrations))
	}
	// Each writes; each sees the others' writes.
	for i, d := range dbs {
		newSession(t, d, "from "+string(rune('a'+i)))
	}
	got, err := dbs[3].Sessions(t.Context(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(dbs) {
		t.Errorf("%d sessions, want %d", len(got), len(dbs))
	}
}

func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	content := bytes.Repeat([]byte("not a database, just some text. "), 200)
	if err := os.WriteFile(garbage, content, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{
		{"a text file", garbage},
		{"a directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Open(t.Context(), tt.path)
			if err == nil {
				d.Close()
				t.Fatalf("Open(%s) succeeded", tt.path)
			}
		})
	}
	if b, _ := os.ReadFile(garbage); !bytes.Equal(b, content) {
		t.Error("Open changed a file that is not a database")
	}
}
