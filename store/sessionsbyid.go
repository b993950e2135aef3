package store

import (
	"context"
	"fmt"
	"strings"
)

// SessionsByID returns the sessions of ids that exist, by id: the sessions
// of a search's hits, read in one query. At most MaxHits ids are read.
func (d *DB) SessionsByID(ctx context.Context, ids []int64) (map[int64]Session, error) {
	out := make(map[int64]Session, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > MaxHits {
		return nil, fmt.Errorf("store: sessions by id: %w: %d ids, at most %d", ErrInvalid, len(ids), MaxHits)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := d.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions s WHERE s.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: sessions by id: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sessions by id: %w", err)
		}
		out[s.ID] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sessions by id: %w", err)
	}
	return out, nil
}

// HasAudio reports whether session id has its audio kept.
func (d *DB) HasAudio(ctx context.Context, id int64) (bool, error) {
	var ok bool
	if err := d.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM audio WHERE session_id = ?)`, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("store: has audio %d: %w", id, err)
	}
	return ok, nil
}
