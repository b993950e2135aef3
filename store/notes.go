package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SaveNotes keeps the notes written of a session (a meeting), as JSON;
// saving again replaces them. Deleting the session deletes them. A
// session that does not exist is ErrNotFound.
func (d *DB) SaveNotes(ctx context.Context, sessionID int64, body []byte) error {
	if !json.Valid(body) {
		return fmt.Errorf("store: save notes of session %d: %w: the body is not JSON", sessionID, ErrInvalid)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO notes (session_id, body, saved) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET body = excluded.body, saved = excluded.saved`,
		sessionID, body, time.Now().UnixNano())
	if isForeignKeyViolation(err) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: save notes of session %d: %w", sessionID, MarkDiskFull(err))
	}
	return nil
}

// Notes returns the notes saved for a session, or ErrNotFound.
func (d *DB) Notes(ctx context.Context, sessionID int64) ([]byte, error) {
	var body []byte
	err := d.r.QueryRowContext(ctx, `SELECT body FROM notes WHERE session_id = ?`, sessionID).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: notes of session %d: %w", sessionID, err)
	}
	return body, nil
}
