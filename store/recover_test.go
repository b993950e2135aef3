package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/testkit"
)

// writeHistory makes a history at path with n finished sessions of
// captions, each with a few segments, closes it, and returns its bytes.
func writeHistory(t *testing.T, path string, n int) []byte {
	t.Helper()
	d, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := newSession(t, d, fmt.Sprintf("meeting %d", i))
		for j := range 5 {
			if _, err := d.AddSegment(t.Context(), Segment{SessionID: id, Seq: j, Start: float64(j), End: float64(j) + 0.9,
				Text: "the quarterly budget is due at the end of the month"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.FinishSession(t.Context(), id, time.Time{}, 5, StatusDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pageOf returns the byte range of the root page of table in the
// database file b.
func pageOf(t *testing.T, path, table string) (from, to int) {
	t.Helper()
	d, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var root, size int
	if err := d.r.QueryRowContext(t.Context(), `SELECT rootpage FROM sqlite_schema WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := d.r.QueryRowContext(t.Context(), `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return (root - 1) * size, root * size
}

func scribble(b []byte, from, to int) []byte {
	b = bytes.Clone(b)
	for i := from; i < to && i < len(b); i++ {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// movedName is the name a damaged history is moved to.
var movedName = regexp.MustCompile(`^history-damaged-\d{8}-\d{6}(-\d+)?\.db$`)

// TestOpenOrRecoverDamaged damages a history in the ways a disk or a
// program can, and checks that Open refuses it as ErrDamaged, and that
// OpenOrRecover moves it aside whole, with its -wal and -shm, and starts
// a new history in its place. Before, Open failed with "file is not a
// database (26)" and the app did not open.
func TestOpenOrRecoverDamaged(t *testing.T) {
	good := writeHistory(t, filepath.Join(t.TempDir(), "history.db"), 40)
	goodPath := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(goodPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	from, to := pageOf(t, goodPath, "sessions")
	garbage := make([]byte, len(good))
	_, _ = rand.Read(garbage)
	cases := []struct {
		name string
		file []byte
	}{
		{"garbage", garbage},
		{"first page", scribble(good, 100, 4096)},
		{"cut in half", good[:len(good)/2]},
		{"a page of sessions", scribble(good, from, to)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "history.db")
			wal := []byte("a log that belongs to the damaged file")
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(t.Context(), path); !errors.Is(err, ErrDamaged) {
				t.Fatalf("Open = %v, want ErrDamaged", err)
			}
			// Open left the files as they were.
			if b, _ := os.ReadFile(path); !bytes.Equal(b, c.file) {
				t.Fatal("Open changed the damaged file")
			}

			d, err := OpenOrRecover(t.Context(), path)
			if err != nil {
				t.Fatalf("OpenOrRecover: %v", err)
			}
			defer d.Close()
			rec := d.Recovery()
			if rec == nil || !errors.Is(rec.Damage, ErrDamaged) || rec.InMemory() || d.InMemory() {
				t.Fatalf("Recovery = %+v, want a damaged file moved aside and a new history on disk", rec)
			}
			if filepath.Dir(rec.MovedTo) != dir || !movedName.MatchString(filepath.Base(rec.MovedTo)) {
				t.Fatalf("moved to %q, want history-damaged-DATE-TIME.db beside it", rec.MovedTo)
			}
			if b, err := os.ReadFile(rec.MovedTo); err != nil || !bytes.Equal(b, c.file) {
				t.Fatalf("the damaged file was not kept as it was: %v", err)
			}
			if b, err := os.ReadFile(rec.MovedTo + "-wal"); err != nil || !bytes.Equal(b, wal) {
				t.Fatalf("its -wal did not follow it as it was: %q, %v", b, err)
			}
			if _, err := os.Stat(path + foundLogSuffix); err == nil {
				t.Error("the second name of the log was left behind")
			}
			if d.Path() != path {
				t.Fatalf("the new history is at %q, want %q", d.Path(), path)
			}
			id := newSession(t, d, "after")
			if s, err := d.Session(t.Context(), id); err != nil || s.Title != "after" {
				t.Fatalf("the new history does not keep a session: %+v, %v", s, err)
			}
		})
	}
}

// TestOpenChecksOnlyWhatItReads: damage in the captions (a table the
// window does not read as it opens) is not looked for at every open,
// which would read the whole file; Check, which does, finds it.
func TestOpenChecksOnlyWhatItReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	good := writeHistory(t, path, 40)
	from, to := pageOf(t, path, "segments")
	if err := os.WriteFile(path, scribble(good, from, to), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer d.Close()
	if err := d.Check(t.Context()); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Check = %v, want ErrDamaged", err)
	}
}

// TestOpenOrRecoverNewerSchema: a history written by a newer Earshot is
// not damaged: it is left exactly as it is, and history is kept in
// memory for the session.
func TestOpenOrRecoverNewerSchema(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	d, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	newSession(t, d, "kept")
	if _, err := d.w.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, applied) VALUES (99, 'from the future', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	m, err := OpenOrRecover(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Recovery()
	if !m.InMemory() || rec == nil || !errors.Is(rec.Off, ErrNewerSchema) || rec.Damage != nil || rec.MovedTo != "" {
		t.Fatalf("Recovery = %+v, in memory %v; want history in memory because of ErrNewerSchema", rec, m.InMemory())
	}
	if got, err := m.Sessions(t.Context(), Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("the history in memory holds %v, %v; want nothing", got, err)
	}
	newSession(t, m, "in memory")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the newer history was changed")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "history.db" {
			t.Errorf("%s was left beside the newer history", e.Name())
		}
	}
}

// TestOpenOrRecoverNowhereToWrite: with no folder it can write, Open
// fails, and OpenOrRecover keeps history in memory and says why. Before,
// the app did not open: "mkdir .../.local: read-only file system".
func TestOpenOrRecoverNowhereToWrite(t *testing.T) {
	notAFolder := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notAFolder, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path func(t *testing.T) string
		want error
	}{
		{"read-only disk", func(t *testing.T) string {
			return filepath.Join(testkit.ReadOnlyDir(t), ".local", "share", "earshot", "history.db")
		}, syscall.EROFS},
		{"under a file", func(*testing.T) string { return filepath.Join(notAFolder, "earshot", "history.db") }, syscall.ENOTDIR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			if _, err := Open(t.Context(), path); !errors.Is(err, c.want) {
				t.Fatalf("Open = %v, want %v", err, c.want)
			}
			d, err := OpenOrRecover(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			rec := d.Recovery()
			if !d.InMemory() || rec == nil || !errors.Is(rec.Off, c.want) || rec.Damage != nil {
				t.Fatalf("Recovery = %+v; want history in memory because of %v", rec, c.want)
			}
			if dir := rec.Folder(); dir == "" || !strings.HasPrefix(path, dir+string(filepath.Separator)) {
				t.Errorf("Folder = %q, want a folder on the way to %s", dir, path)
			}
			id := newSession(t, d, "kept for the session")
			if _, err := d.AddSegment(t.Context(), Segment{SessionID: id, Text: "hello"}); err != nil {
				t.Fatal(err)
			}
			s := DefaultSettings()
			s.Model = "nova-2"
			if err := d.SaveSettings(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			if got, err := d.LoadSettings(t.Context()); err != nil || got.Model != "nova-2" {
				t.Fatalf("settings in memory: %+v, %v", got, err)
			}
			if hits, err := d.Search(t.Context(), "hello", 10); err != nil || len(hits) != 1 {
				t.Fatalf("search in memory: %v, %v", hits, err)
			}
		})
	}
}

// TestMoveAsideRefusedWhileInUse: a damaged history that another process
// has open is not moved from under it; history is in memory instead.
func TestMoveAsideRefusedWhileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, []byte("not a database, but somebody's"), 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := claimOwner(path) // as another process's open does
	if err != nil {
		t.Fatal(err)
	}
	defer other.release()
	d, err := OpenOrRecover(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if rec := d.Recovery(); !d.InMemory() || rec == nil || !errors.Is(rec.Off, ErrInUse) || rec.MovedTo != "" {
		t.Fatalf("Recovery = %+v; want in memory, ErrInUse, nothing moved", rec)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file in use was moved: %v", err)
	}
}

// TestMoveAsideNames: damaged files moved in the same second keep names
// of their own, each with its -wal and -shm.
func TestMoveAsideNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	at := time.Date(2026, 12, 7, 14, 30, 5, 0, time.Local)
	var got []string
	for i := range 3 {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.WriteFile(path+suffix, []byte{byte(i)}, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		to, err := moveAside(path, at)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(to))
	}
	want := []string{"history-damaged-20261207-143005.db", "history-damaged-20261207-143005-2.db", "history-damaged-20261207-143005-3.db"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("moved to %v, want %v", got, want)
	}
	for i, name := range got {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if b, _ := os.ReadFile(filepath.Join(dir, name+suffix)); !bytes.Equal(b, []byte{byte(i)}) {
				t.Errorf("%s holds %v, want file %d's", name+suffix, b, i)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 9 {
		t.Errorf("the folder holds %d files, want the 9 moved", len(entries))
	}
}

// TestOpenMemory: each history in memory is its own, and is gone when
// closed.
func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	a, err := OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	newSession(t, a, "in a")
	if got, _ := b.Sessions(ctx, Filter{}); len(got) != 0 {
		t.Fatalf("b sees a's sessions: %v", got)
	}
	if !a.InMemory() || a.Path() != "" || a.Recovery() != nil {
		t.Fatalf("InMemory %v, Path %q, Recovery %v", a.InMemory(), a.Path(), a.Recovery())
	}
	if sp, err := a.Space(ctx); err != nil || sp.File == 0 || sp.Sessions[KindCaptions] != 1 {
		t.Fatalf("Space = %+v, %v", sp, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}
