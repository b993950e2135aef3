package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestMigrationsNumbered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.name == "" || m.up == nil {
			t.Errorf("migration at index %d: version %d, name %q", i, m.version, m.name)
		}
	}
}

// openRaw opens path with the store's settings but no migration.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestMigrateFromVersion1 opens a database as the first version left it,
// with history in it, and checks that Open brings it to the latest
// version with that history searchable.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "history.db")
	old := openRaw(t, path)
	if err := migrate(ctx, old, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, kind, title, started, status) VALUES (7, 'captions', 'standup', 1700000000000000000, 'done')`,
		`INSERT INTO segments (session_id, seq, start_sec, end_sec, text) VALUES (7, 0, 1.5, 3, 'the quarterly budget review')`,
		`INSERT INTO sessions (id, kind, title, started, status) VALUES (8, 'file', 'memo.wav', 1700000001000000000, 'done')`,
		`INSERT INTO responses (session_id, body, transcript, saved) VALUES (8, CAST('{}' AS BLOB), 'a budget for the garden', 0)`,
		`INSERT INTO settings (key, value) VALUES ('diarize', 'true')`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := d.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) {
		t.Fatalf("schema version %d after Open, want %d", v, len(migrations))
	}
	hits, err := d.Search(ctx, "budget", 10)
	if err != nil {
		t.Fatal(err)
	}
	found := map[[2]int64]bool{}
	for _, h := range hits {
		found[[2]int64{h.SessionID, h.SegmentID}] = true
	}
	if len(hits) != 2 || !found[[2]int64{8, 0}] {
		t.Fatalf("search after migration: %+v, want the old segment and the old transcript", hits)
	}
	s, err := d.Session(ctx, 7)
	if err != nil || s.Title != "standup" || s.Segments != 1 {
		t.Fatalf("old session: %+v, %v", s, err)
	}
	st, err := d.LoadSettings(ctx)
	if err != nil || !st.Diarize {
		t.Fatalf("old settings: %+v, %v", st, err)
	}
	// New rows reach the index through the triggers migration 2 added.
	if _, err := d.AddSegment(ctx, Segment{SessionID: 7, Seq: 1, Start: 4, End: 5, Text: "budget approved"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := d.Search(ctx, "approved", 10); len(hits) != 1 {
		t.Errorf("a segment added after migration: %d hits, want 1", len(hits))
	}
	// The index made again by migration 7 indexes the starts of words,
	// and the triggers keep it as they kept the first.
	var ddl string
	if err := d.r.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'history_fts'`).Scan(&ddl); err != nil || !strings.Contains(ddl, "prefix = '4'") {
		t.Errorf("the index is %q, %v; want one with a prefix index", ddl, err)
	}
	if hits, _ := d.Search(ctx, "budg", 10); len(hits) != 3 {
		t.Errorf("the start of a word: %d hits, want the old segment, the old transcript and the new segment", len(hits))
	}
	// The kind is a column of the index: searched by kind, never by words.
	if hits, _ := d.Search(ctx, "budg", 10, KindFile); len(hits) != 1 || hits[0].SessionID != 8 {
		t.Errorf("the start of a word in files: %+v, want the old transcript", hits)
	}
	if hits, _ := d.Search(ctx, "captions ", 10); len(hits) != 0 {
		t.Errorf("the name of a kind matched as a word: %+v", hits)
	}
	if err := d.DeleteSession(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if hits, _ := d.Search(ctx, "garden ", 10); len(hits) != 0 {
		t.Errorf("a deleted transcript is still found: %+v", hits)
	}
}

func TestMigrationsAppliedOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "history.db")
	for range 3 {
		d, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db := openRaw(t, path)
	rows, err := db.QueryContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		if name != migrations[v-1].name {
			t.Errorf("version %d recorded as %q, want %q", v, name, migrations[v-1].name)
		}
		got = append(got, v)
	}
	if len(got) != len(migrations) {
		t.Errorf("versions recorded %v, want 1..%d once each", got, len(migrations))
	}
}

// TestMigrationFailureRollsBack checks that a failing step leaves nothing
// of itself behind and the version where it was.
func TestMigrationFailureRollsBack(t *testing.T) {
	ctx := t.Context()
	db := openRaw(t, filepath.Join(t.TempDir(), "history.db"))
	boom := errors.New("boom")
	steps := append(migrations[:len(migrations):len(migrations)], migration{len(migrations) + 1, "fails halfway",
		func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE half_done (x)`); err != nil {
				return err
			}
			return boom
		}})
	if err := migrate(ctx, db, steps); !errors.Is(err, boom) {
		t.Fatalf("migrate = %v, want the step's error", err)
	}
	v, err := schemaVersion(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) {
		t.Errorf("version %d after a failed step, want %d", v, len(migrations))
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the failed step's table survived")
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "history.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, 'from the future', 0)`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := Open(ctx, path); !errors.Is(err, ErrNewerSchema) {
		if err == nil {
			d.Close()
		}
		t.Fatalf("Open of a newer schema = %v, want ErrNewerSchema", err)
	}
}

func TestMigrateRejectsMisnumbered(t *testing.T) {
	db := openRaw(t, filepath.Join(t.TempDir(), "history.db"))
	steps := []migration{{2, "skips one", execAll()}}
	if err := migrate(t.Context(), db, steps); err == nil {
		t.Fatal("migrate accepted a list that starts at version 2")
	}
}
