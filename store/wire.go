package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxWireEvents bounds the wire events kept for one session; those past
// it are counted as dropped.
const MaxWireEvents = 200_000

// WireEvent is one message of a session as the inspector shows it. It
// mirrors api.WireEvent (the store does not import api) plus the latency
// marker the inspector gives it. Its text is already redacted.
type WireEvent struct {
	// Seq orders a session's events from 0; AddWireEvents assigns it.
	Seq       int64
	Time      time.Time
	Stream    uint64
	Direction string
	Kind      string
	Method    string
	Path      string
	Query     string
	Status    int
	RequestID string
	Size      int64
	Text      string
	Truncated bool
	// Marker names the step this event marks ("first interim", "final",
	// "end of turn", "first audio"), or "".
	Marker string
	// Latency is the time from the stream's first audio or request to
	// this marked event.
	Latency time.Duration
	Elapsed time.Duration
}

// WireCounts says how many events a session kept and how many were
// dropped past MaxWireEvents.
type WireCounts struct {
	Stored, Dropped int64
}

// AddWireEvents appends events to a session's, in one transaction, up to
// MaxWireEvents in all; the rest are counted as dropped. It returns how
// many it kept. A session that does not exist is ErrNotFound.
func (d *DB) AddWireEvents(ctx context.Context, sessionID int64, events []WireEvent) (int, error) {
	return d.addWireEvents(ctx, sessionID, events, MaxWireEvents)
}

func (d *DB) addWireEvents(ctx context.Context, sessionID int64, events []WireEvent, limit int64) (kept int, err error) {
	if len(events) == 0 {
		return 0, nil
	}
	fail := func(err error) (int, error) {
		if isForeignKeyViolation(err) {
			err = ErrNotFound
		}
		return 0, fmt.Errorf("store: add wire events of session %d: %w", sessionID, MarkDiskFull(err))
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	var c WireCounts
	err = tx.QueryRowContext(ctx, `SELECT stored, dropped FROM wire_counts WHERE session_id = ?`, sessionID).Scan(&c.Stored, &c.Dropped)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fail(err)
	}
	n := int64(len(events))
	if room := limit - c.Stored; n > room {
		n = max(room, 0)
	}
	if n > 0 {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO wire_events (session_id, seq, time, stream, direction, kind, method,
			path, query, status, request_id, size, text, truncated, marker, latency, elapsed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fail(err)
		}
		defer stmt.Close()
		for i, e := range events[:n] {
			if _, err := stmt.ExecContext(ctx, sessionID, c.Stored+int64(i), e.Time.UnixNano(), int64(e.Stream), e.Direction, e.Kind,
				e.Method, e.Path, e.Query, e.Status, e.RequestID, e.Size, e.Text, e.Truncated, e.Marker,
				int64(e.Latency), int64(e.Elapsed)); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO wire_counts (session_id, stored, dropped) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET stored = excluded.stored, dropped = excluded.dropped`,
		sessionID, c.Stored+n, c.Dropped+int64(len(events))-n); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return int(n), nil
}

// WireCounts returns how many events a session kept and dropped; a session
// with none has zero counts.
func (d *DB) WireCounts(ctx context.Context, sessionID int64) (WireCounts, error) {
	var c WireCounts
	err := d.r.QueryRowContext(ctx, `SELECT stored, dropped FROM wire_counts WHERE session_id = ?`, sessionID).Scan(&c.Stored, &c.Dropped)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return WireCounts{}, fmt.Errorf("store: wire counts of session %d: %w", sessionID, err)
	}
	return c, nil
}

// WireEvents returns a session's events in order. A non-empty search keeps
// those whose text, path, kind or request id contains it (without regard
// to the case of ASCII letters); limit > 0 bounds how many.
func (d *DB) WireEvents(ctx context.Context, sessionID int64, search string, limit int) ([]WireEvent, error) {
	q := `SELECT seq, time, stream, direction, kind, method, path, query, status, request_id, size, text, truncated,
		marker, latency, elapsed FROM wire_events WHERE session_id = ?`
	args := []any{sessionID}
	if search != "" {
		q += ` AND (text LIKE ? ESCAPE '\' OR path LIKE ? ESCAPE '\' OR kind LIKE ? ESCAPE '\' OR request_id LIKE ? ESCAPE '\')`
		p := "%" + escapeLike(search) + "%"
		args = append(args, p, p, p, p)
	}
	q += ` ORDER BY seq`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: wire events of session %d: %w", sessionID, err)
	}
	defer rows.Close()
	var out []WireEvent
	for rows.Next() {
		var e WireEvent
		var t, stream, latency, elapsed int64
		if err := rows.Scan(&e.Seq, &t, &stream, &e.Direction, &e.Kind, &e.Method, &e.Path, &e.Query, &e.Status,
			&e.RequestID, &e.Size, &e.Text, &e.Truncated, &e.Marker, &latency, &elapsed); err != nil {
			return nil, fmt.Errorf("store: wire events of session %d: %w", sessionID, err)
		}
		e.Time, e.Stream, e.Latency, e.Elapsed = time.Unix(0, t), uint64(stream), time.Duration(latency), time.Duration(elapsed)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: wire events of session %d: %w", sessionID, err)
	}
	return out, nil
}

// escapeLike escapes the wildcards of a LIKE pattern with a backslash.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
