package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// A migration moves the schema from version-1 to version. Migrations are
// applied in order, each once, each in its own transaction together with
// its row in schema_migrations, so a crash leaves the database at one
// version or the next, never between. Never edit a released migration:
// append a new one.
type migration struct {
	version int
	name    string
	up      func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema's whole history, oldest first. Version i+1 is
// at index i.
var migrations = []migration{
	{1, "sessions, segments, responses and settings", execAll(
		// kind tells captions from file transcriptions and from the kinds to
		// come (synthesis, agent, analysis); details holds what only one kind
		// needs, as JSON, so a new kind needs no new table. Times are Unix
		// nanoseconds; ended is NULL while the session runs.
		`CREATE TABLE sessions (
			id       INTEGER PRIMARY KEY,
			kind     TEXT    NOT NULL,
			title    TEXT    NOT NULL DEFAULT '',
			source   TEXT    NOT NULL DEFAULT '',
			backend  TEXT    NOT NULL DEFAULT '',
			model    TEXT    NOT NULL DEFAULT '',
			options  TEXT    NOT NULL DEFAULT '',
			details  TEXT    NOT NULL DEFAULT '',
			started  INTEGER NOT NULL,
			ended    INTEGER,
			duration REAL    NOT NULL DEFAULT 0,
			status   TEXT    NOT NULL,
			error    TEXT    NOT NULL DEFAULT ''
		) STRICT`,
		`CREATE INDEX sessions_by_started ON sessions (started DESC, id DESC)`,
		`CREATE INDEX sessions_by_kind ON sessions (kind, started DESC, id DESC)`,
		// One row per final result of a live session; times are seconds
		// from the session's start; words is the service's JSON.
		`CREATE TABLE segments (
			id         INTEGER PRIMARY KEY,
			session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			seq        INTEGER NOT NULL,
			start_sec  REAL    NOT NULL,
			end_sec    REAL    NOT NULL,
			speaker    INTEGER,
			text       TEXT    NOT NULL,
			words      TEXT    NOT NULL DEFAULT '',
			confidence REAL    NOT NULL DEFAULT 0,
			channel    INTEGER NOT NULL DEFAULT 0
		) STRICT`,
		`CREATE INDEX segments_by_session ON segments (session_id, start_sec, seq)`,
		// The service's answer to a file transcription, kept whole.
		`CREATE TABLE responses (
			session_id INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
			body       BLOB    NOT NULL,
			transcript TEXT    NOT NULL,
			saved      INTEGER NOT NULL
		) STRICT`,
		// Values are JSON. Keys this version does not know are kept.
		`CREATE TABLE settings (
			key   TEXT PRIMARY KEY,
			value TEXT NOT NULL
		) STRICT, WITHOUT ROWID`,
	)},
	{2, "full-text search over segments and transcripts", execAll(
		// One index for both sources, so that their ranks compare. Its rowid
		// is the segment's id for a segment and minus the session's id for a
		// file transcript, so triggers find their row without a scan.
		`CREATE VIRTUAL TABLE history_fts USING fts5 (
			text,
			session_id UNINDEXED,
			start      UNINDEXED,
			tokenize = 'unicode61 remove_diacritics 2'
		)`,
		`CREATE TRIGGER segments_fts_insert AFTER INSERT ON segments BEGIN
			INSERT INTO history_fts (rowid, text, session_id, start)
			VALUES (new.id, new.text, new.session_id, new.start_sec);
		END`,
		`CREATE TRIGGER segments_fts_delete AFTER DELETE ON segments BEGIN
			DELETE FROM history_fts WHERE rowid = old.id;
		END`,
		`CREATE TRIGGER segments_fts_update AFTER UPDATE OF id, session_id, start_sec, text ON segments BEGIN
			DELETE FROM history_fts WHERE rowid = old.id;
			INSERT INTO history_fts (rowid, text, session_id, start)
			VALUES (new.id, new.text, new.session_id, new.start_sec);
		END`,
		`CREATE TRIGGER responses_fts_insert AFTER INSERT ON responses BEGIN
			INSERT INTO history_fts (rowid, text, session_id, start)
			VALUES (-new.session_id, new.transcript, new.session_id, 0);
		END`,
		`CREATE TRIGGER responses_fts_delete AFTER DELETE ON responses BEGIN
			DELETE FROM history_fts WHERE rowid = -old.session_id;
		END`,
		`CREATE TRIGGER responses_fts_update AFTER UPDATE OF session_id, transcript ON responses BEGIN
			DELETE FROM history_fts WHERE rowid = -old.session_id;
			INSERT INTO history_fts (rowid, text, session_id, start)
			VALUES (-new.session_id, new.transcript, new.session_id, 0);
		END`,
		// What version 1 already holds.
		`INSERT INTO history_fts (rowid, text, session_id, start)
			SELECT id, text, session_id, start_sec FROM segments`,
		`INSERT INTO history_fts (rowid, text, session_id, start)
			SELECT -session_id, transcript, session_id, 0 FROM responses`,
	)},
	{3, "details of a segment", execAll(
		// What only one kind of segment has, as JSON: a conversation's turn
		// keeps its end-of-turn trigger, confidence and latency here.
		`ALTER TABLE segments ADD COLUMN details TEXT NOT NULL DEFAULT ''`,
	)},
	{4, "audio of a session", execAll(
		// The audio a session produced (a synthesis), kept whole in the
		// encoding the service returned, so history can play it again and
		// save it as a file without asking the service twice.
		`CREATE TABLE audio (
			session_id   INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
			content_type TEXT    NOT NULL,
			encoding     TEXT    NOT NULL,
			sample_rate  INTEGER NOT NULL,
			data         BLOB    NOT NULL,
			saved        INTEGER NOT NULL
		) STRICT`,
	)},
	{5, "meeting notes", execAll(
		// The notes written of a meeting (summary, topics, action items,
		// each placed in the meeting), as JSON, one row per meeting: they
		// go with it when it is deleted.
		`CREATE TABLE notes (
			session_id INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
			body       BLOB    NOT NULL,
			saved      INTEGER NOT NULL
		) STRICT`,
	)},
	{6, "wire events", execAll(
		// What went over the wire for a session, as the inspector shows it
		// (redacted: never a key or a token), in order by seq. Times and
		// durations are nanoseconds; latency is set on the events that mark
		// a step (first interim, final, end of turn, first audio).
		`CREATE TABLE wire_events (
			session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			seq        INTEGER NOT NULL,
			time       INTEGER NOT NULL,
			stream     INTEGER NOT NULL,
			direction  TEXT    NOT NULL,
			kind       TEXT    NOT NULL,
			method     TEXT    NOT NULL DEFAULT '',
			path       TEXT    NOT NULL DEFAULT '',
			query      TEXT    NOT NULL DEFAULT '',
			status     INTEGER NOT NULL DEFAULT 0,
			request_id TEXT    NOT NULL DEFAULT '',
			size       INTEGER NOT NULL DEFAULT 0,
			text       TEXT    NOT NULL DEFAULT '',
			truncated  INTEGER NOT NULL DEFAULT 0,
			marker     TEXT    NOT NULL DEFAULT '',
			latency    INTEGER NOT NULL DEFAULT 0,
			elapsed    INTEGER NOT NULL DEFAULT 0,
			PRIMARY KEY (session_id, seq)
		) STRICT, WITHOUT ROWID`,
		// How many events a session kept and how many it dropped past the
		// bound.
		`CREATE TABLE wire_counts (
			session_id INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
			stored     INTEGER NOT NULL,
			dropped    INTEGER NOT NULL
		) STRICT`,
	)},
	{7, "an index of word starts for search", execAll(
		// The index again, with the first four characters of every word
		// indexed too (prefix='4'): a search for the start of a word, as
		// it is typed, read the rows of every word that starts with it
		// (40 ms over a million captions) where it now reads one list.
		// Shorter starts are searched as whole words (Search). The
		// triggers of migration 2 write to the table by its name, so they
		// serve the new one; its rows are made again from their sources.
		`DROP TABLE history_fts`,
		`CREATE VIRTUAL TABLE history_fts USING fts5 (
			text,
			session_id UNINDEXED,
			start      UNINDEXED,
			tokenize = 'unicode61 remove_diacritics 2',
			prefix = '4'
		)`,
		`INSERT INTO history_fts (rowid, text, session_id, start)
			SELECT id, text, session_id, start_sec FROM segments`,
		`INSERT INTO history_fts (rowid, text, session_id, start)
			SELECT -session_id, transcript, session_id, 0 FROM responses`,
	)},
	{8, "where each session's captions start and end", execAll(
		// The first and last segment of a session in two seeks: a search
		// among a few sessions (one kind, some dates) searches their
		// stretches of the index instead of every match (searchWithin).
		`CREATE INDEX segments_by_session_id ON segments (session_id, id)`,
	)},
	{9, "the process that runs a session", execAll(
		// owner is the id of the open history (one process) that created
		// the session (owner.go): a session still running whose owner's
		// process has ended was interrupted, and the next Open closes it
		// so. The index holds the running sessions only.
		`ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX sessions_running ON sessions (owner) WHERE status = 'running'`,
	)},
}

// execAll returns a migration step that runs statements in order.
func execAll(statements ...string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range statements {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// SchemaVersion returns the version of the database's schema: the number
// of migrations applied.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	v, err := schemaVersion(ctx, d.r)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// migrate applies the migrations of steps the database lacks. Each runs in
// an immediate transaction that first reads the version again, so two
// processes opening the same new file do not both migrate it.
func migrate(ctx context.Context, db *sql.DB, steps []migration) error {
	for i, m := range steps {
		if m.version != i+1 {
			return fmt.Errorf("migration %q is numbered %d, expected %d", m.name, m.version, i+1)
		}
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name    TEXT    NOT NULL,
		applied INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	v, err := schemaVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if v > len(steps) {
		return fmt.Errorf("migrate: schema version %d, this version knows %d: %w", v, len(steps), ErrNewerSchema)
	}
	for _, m := range steps[v:] {
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m migration) (err error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see dsn
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	v, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if v >= m.version {
		return tx.Rollback() // another process got here first
	}
	if err := m.up(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}

// ignoreDone drops the error of a rollback after the transaction already ended.
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
