package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MaxAudioBytes bounds the audio kept for one session: an hour of 48 kHz
// 16-bit mono is 345 MB, far more than any synthesis; a bound keeps a
// runaway stream from filling the disk through history.
const MaxAudioBytes = 256 << 20

// Audio is the audio a session produced, as the service returned it.
type Audio struct {
	ContentType string // e.g. audio/wav, audio/mpeg
	Encoding    string // the service's encoding name: linear16, mp3, ...
	SampleRate  int    // Hz; 0 when the container says
	Data        []byte
}

// SaveAudio keeps the audio of a session; saving again replaces it. A
// session that does not exist is ErrNotFound; empty or oversized audio is
// ErrInvalid.
func (d *DB) SaveAudio(ctx context.Context, sessionID int64, a Audio) error {
	switch {
	case len(a.Data) == 0:
		return fmt.Errorf("store: save audio of session %d: %w: no audio", sessionID, ErrInvalid)
	case len(a.Data) > MaxAudioBytes:
		return fmt.Errorf("store: save audio of session %d: %w: %d bytes is more than %d", sessionID, ErrInvalid, len(a.Data), MaxAudioBytes)
	case a.Encoding == "" || a.ContentType == "":
		return fmt.Errorf("store: save audio of session %d: %w: encoding and content type are required", sessionID, ErrInvalid)
	case a.SampleRate < 0:
		return fmt.Errorf("store: save audio of session %d: %w: sample rate %d", sessionID, ErrInvalid, a.SampleRate)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO audio (session_id, content_type, encoding, sample_rate, data, saved) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET content_type = excluded.content_type, encoding = excluded.encoding,
			sample_rate = excluded.sample_rate, data = excluded.data, saved = excluded.saved`,
		sessionID, a.ContentType, a.Encoding, a.SampleRate, a.Data, time.Now().UnixNano())
	if isForeignKeyViolation(err) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: save audio of session %d: %w", sessionID, MarkDiskFull(err))
	}
	return nil
}

// Audio returns the audio saved for a session, or ErrNotFound.
func (d *DB) Audio(ctx context.Context, sessionID int64) (Audio, error) {
	var a Audio
	err := d.r.QueryRowContext(ctx, `SELECT content_type, encoding, sample_rate, data FROM audio WHERE session_id = ?`, sessionID).
		Scan(&a.ContentType, &a.Encoding, &a.SampleRate, &a.Data)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Audio{}, fmt.Errorf("store: audio of session %d: %w", sessionID, err)
	}
	return a, nil
}
