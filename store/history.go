package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of session. A kind is any short lower-case word, so a feature
// that arrives later stores its sessions without a migration; these are
// the ones Earshot knows.
const (
	KindCaptions  = "captions"  // live captions from a microphone
	KindFile      = "file"      // transcription of a file
	KindSynthesis = "synthesis" // text to speech
	KindAgent     = "agent"     // a conversation with the voice agent
	KindAnalysis  = "analysis"  // text intelligence
	// KindConversation is a turn-aware session (/v2/listen): each segment
	// is one turn, saved when it ends.
	KindConversation = "conversation"
)

// States of a session.
const (
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	// StatusPartial is a session that ended with part of its work not
	// done, though nobody asked for less (a synthesis whose text was not
	// all spoken, live captions whose last audio the service never
	// transcribed); Error says what is missing.
	StatusPartial = "partial"
	// StatusInterrupted is a session whose process ended while it ran (a
	// crash, a kill, a power cut): what it saved up to then is kept.
	StatusInterrupted = "interrupted"
)

// Session is one caption session, one file transcription or, later, one
// session of another kind.
type Session struct {
	ID      int64
	Kind    string // KindCaptions, KindFile, ...
	Title   string
	Source  string // the device or the file's name
	Backend string // "Local engine", "Hosted service" or a custom URL's host
	Model   string
	// Options is the JSON of the request's options. It never holds a
	// credential: CreateSession refuses options with a member named like
	// one (key, token, authorization, ...).
	Options string
	// Details is JSON that only this session's kind needs (a voice, an
	// agent's settings). Empty for captions and files. Like Options, it
	// never holds a credential.
	Details  string
	Started  time.Time
	Ended    time.Time // zero while the session runs
	Duration float64   // seconds of audio
	Status   string    // StatusRunning, StatusDone, StatusFailed, StatusCancelled, StatusPartial or StatusInterrupted
	Error    string    // why it failed, in words
	Segments int       // caption segments saved; read only
}

// Segment is one final result of a live session, saved the moment it
// arrives.
type Segment struct {
	ID        int64
	SessionID int64
	Seq       int
	Start     float64 // seconds from the session's start
	End       float64
	Speaker   *int // nil without diarization
	Text      string
	// Words is the JSON of the words with their timings and speakers, as
	// the service sent them.
	Words      string
	Confidence float64
	Channel    int
	// Details is JSON of what only one kind of segment has (a turn's
	// trigger, end-of-turn confidence and latency), or "".
	Details string
}

// Filter selects sessions.
type Filter struct {
	Kind   string   // "" for every kind
	Kinds  []string // also any of these; with Kind, both count
	Limit  int      // at most this many; 0 for all
	Offset int      // skip this many of the newest
	// Since and Until keep the sessions started at or after Since and
	// before Until; a zero time does not bound.
	Since, Until time.Time
	// Before, when not zero, keeps the sessions listed after it (older,
	// or as old with a smaller id): the next page of a list that ended
	// with it. Unlike Offset it costs the same on every page.
	Before Cursor
}

// Cursor is a place in the list of sessions, newest first: the session
// last shown. CursorOf gives it.
type Cursor struct {
	Started time.Time
	ID      int64
}

// CursorOf returns the place of s in the list of sessions.
func CursorOf(s Session) Cursor { return Cursor{Started: s.Started, ID: s.ID} }

// IsZero reports whether c is no place at all.
func (c Cursor) IsZero() bool { return c.ID == 0 && c.Started.IsZero() }

// kinds returns the kinds the filter keeps, none for every kind.
func (f Filter) kinds() []string {
	if f.Kind == "" {
		return f.Kinds
	}
	return append([]string{f.Kind}, f.Kinds...)
}

// CreateSession saves a new session and returns its id. A zero Started is
// the current time; an empty Status is StatusRunning. Segments is ignored.
func (d *DB) CreateSession(ctx context.Context, s Session) (int64, error) {
	if s.Started.IsZero() {
		s.Started = time.Now()
	}
	if s.Status == "" {
		s.Status = StatusRunning
	}
	if err := s.validate(); err != nil {
		return 0, fmt.Errorf("store: create session: %w", err)
	}
	res, err := d.w.ExecContext(ctx, `INSERT INTO sessions
		(kind, title, source, backend, model, options, details, started, ended, duration, status, error, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.Kind, s.Title, s.Source, s.Backend, s.Model, s.Options, s.Details,
		s.Started.UnixNano(), nullTime(s.Ended), s.Duration, s.Status, s.Error, d.ownerID())
	if err != nil {
		return 0, fmt.Errorf("store: create session: %w", MarkDiskFull(err))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: create session: %w", err)
	}
	return id, nil
}

func (s *Session) validate() error {
	if !isWord(s.Kind) {
		return fmt.Errorf("%w: kind %q is not a lower-case word", ErrInvalid, s.Kind)
	}
	if err := checkStatus(s.Status); err != nil {
		return err
	}
	if err := checkJSON("options", s.Options); err != nil {
		return err
	}
	return checkJSON("details", s.Details)
}

// FinishSession records the end of a session: when it ended (a zero ended
// is now), the seconds of audio it handled, its final status and, when it
// failed, why.
func (d *DB) FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error {
	if err := checkStatus(status); err != nil {
		return fmt.Errorf("store: finish session %d: %w", id, err)
	}
	if ended.IsZero() {
		ended = time.Now()
	}
	if err := d.execOne(ctx, `UPDATE sessions SET ended = ?, duration = ?, status = ?, error = ? WHERE id = ?`,
		ended.UnixNano(), duration, status, errText, id); err != nil {
		return fmt.Errorf("store: finish session %d: %w", id, MarkDiskFull(err))
	}
	return nil
}

// RenameSession sets a session's title.
func (d *DB) RenameSession(ctx context.Context, id int64, title string) error {
	if err := d.execOne(ctx, `UPDATE sessions SET title = ? WHERE id = ?`, title, id); err != nil {
		return fmt.Errorf("store: rename session %d: %w", id, MarkDiskFull(err))
	}
	return nil
}

// DeleteSession deletes a session with its segments, its response and
// their entries in the search index. The deleted text is overwritten in
// the file (secure_delete), not merely unlinked.
func (d *DB) DeleteSession(ctx context.Context, id int64) error {
	if err := d.execOne(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete session %d: %w", id, MarkDiskFull(err))
	}
	return nil
}

const sessionColumns = `s.id, s.kind, s.title, s.source, s.backend, s.model, s.options, s.details,
	s.started, s.ended, s.duration, s.status, s.error,
	(SELECT count(*) FROM segments g WHERE g.session_id = s.id)`

// Session returns one session, or ErrNotFound.
func (d *DB) Session(ctx context.Context, id int64) (Session, error) {
	row := d.r.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions s WHERE s.id = ?`, id)
	s, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: session %d: %w", id, err)
	}
	return s, nil
}

// Sessions lists sessions, newest first.
func (d *DB) Sessions(ctx context.Context, f Filter) ([]Session, error) {
	if f.Limit < 0 || f.Offset < 0 {
		return nil, fmt.Errorf("store: sessions: %w: limit %d, offset %d", ErrInvalid, f.Limit, f.Offset)
	}
	limit := int64(f.Limit)
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	query, args := `SELECT `+sessionColumns+` FROM sessions s`, []any{}
	var where []string
	if kinds := f.kinds(); len(kinds) > 0 {
		where = append(where, `s.kind IN (?`+strings.Repeat(`, ?`, len(kinds)-1)+`)`)
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, `s.started >= ?`), append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where, args = append(where, `s.started < ?`), append(args, f.Until.UnixNano())
	}
	if !f.Before.IsZero() {
		at := f.Before.Started.UnixNano()
		where, args = append(where, `(s.started < ? OR (s.started = ? AND s.id < ?))`), append(args, at, at, f.Before.ID)
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY s.started DESC, s.id DESC LIMIT ? OFFSET ?`
	rows, err := d.r.QueryContext(ctx, query, append(args, limit, f.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (Session, error) {
	var (
		s       Session
		started int64
		ended   sql.NullInt64
	)
	err := r.Scan(&s.ID, &s.Kind, &s.Title, &s.Source, &s.Backend, &s.Model, &s.Options, &s.Details,
		&started, &ended, &s.Duration, &s.Status, &s.Error, &s.Segments)
	if err != nil {
		return Session{}, err
	}
	s.Started = time.Unix(0, started)
	if ended.Valid {
		s.Ended = time.Unix(0, ended.Int64)
	}
	return s, nil
}

const insertSegmentSQL = `INSERT INTO segments
	(session_id, seq, start_sec, end_sec, speaker, text, words, confidence, channel, details)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// AddSegment saves one final result and returns its id. It is one insert
// of a prepared statement, with the search index kept by a trigger in the
// same transaction, cheap enough to run for every final while captions
// run. A session that does not exist is ErrNotFound.
func (d *DB) AddSegment(ctx context.Context, g Segment) (int64, error) {
	if g.Words != "" && !json.Valid([]byte(g.Words)) {
		return 0, fmt.Errorf("store: add segment: %w: words are not JSON", ErrInvalid)
	}
	if err := checkJSON("details", g.Details); err != nil {
		return 0, fmt.Errorf("store: add segment: %w", err)
	}
	var speaker sql.NullInt64
	if g.Speaker != nil {
		speaker = sql.NullInt64{Int64: int64(*g.Speaker), Valid: true}
	}
	res, err := d.addSegment.ExecContext(ctx, g.SessionID, g.Seq, g.Start, g.End, speaker, g.Text, g.Words, g.Confidence, g.Channel, g.Details)
	if isForeignKeyViolation(err) {
		err = fmt.Errorf("session %d: %w", g.SessionID, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: add segment: %w", MarkDiskFull(err))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: add segment: %w", err)
	}
	return id, nil
}

// Segments returns a session's segments in order of their start, then of
// their sequence number. A session that does not exist is ErrNotFound.
func (d *DB) Segments(ctx context.Context, sessionID int64) ([]Segment, error) {
	out, err := d.segments(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: segments of session %d: %w", sessionID, err)
	}
	return out, nil
}

func (d *DB) segments(ctx context.Context, sessionID int64) ([]Segment, error) {
	// The existence check and the rows come from one read transaction, so
	// a concurrent delete cannot turn "not found" into an empty list.
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?)`, sessionID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, ErrNotFound
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, session_id, seq, start_sec, end_sec, speaker, text, words, confidence, channel, details
		FROM segments WHERE session_id = ? ORDER BY start_sec, seq, id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Segment{}
	for rows.Next() {
		var (
			g       Segment
			speaker sql.NullInt64
		)
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Seq, &g.Start, &g.End, &speaker, &g.Text, &g.Words, &g.Confidence, &g.Channel, &g.Details); err != nil {
			return nil, err
		}
		if speaker.Valid {
			sp := int(speaker.Int64)
			g.Speaker = &sp
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// SaveResponse keeps the service's JSON answer to a file transcription and
// its transcript, which the search index covers. Saving again replaces
// both. A session that does not exist is ErrNotFound.
func (d *DB) SaveResponse(ctx context.Context, sessionID int64, body []byte, transcript string) error {
	if !json.Valid(body) {
		return fmt.Errorf("store: save response of session %d: %w: the body is not JSON", sessionID, ErrInvalid)
	}
	_, err := d.w.ExecContext(ctx, `INSERT INTO responses (session_id, body, transcript, saved) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET body = excluded.body, transcript = excluded.transcript, saved = excluded.saved`,
		sessionID, body, transcript, time.Now().UnixNano())
	if isForeignKeyViolation(err) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: save response of session %d: %w", sessionID, MarkDiskFull(err))
	}
	return nil
}

// Response returns the JSON answer saved for a session, or ErrNotFound.
func (d *DB) Response(ctx context.Context, sessionID int64) ([]byte, error) {
	var body []byte
	err := d.r.QueryRowContext(ctx, `SELECT body FROM responses WHERE session_id = ?`, sessionID).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: response of session %d: %w", sessionID, err)
	}
	return body, nil
}

// ResponseText returns the text saved with a session's answer (the
// transcript of a file, the document of an analysis), or ErrNotFound.
func (d *DB) ResponseText(ctx context.Context, sessionID int64) (string, error) {
	var text string
	err := d.r.QueryRowContext(ctx, `SELECT transcript FROM responses WHERE session_id = ?`, sessionID).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store: text of session %d: %w", sessionID, err)
	}
	return text, nil
}

func nullTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func checkStatus(s string) error {
	switch s {
	case StatusRunning, StatusDone, StatusFailed, StatusCancelled, StatusPartial, StatusInterrupted:
		return nil
	}
	return fmt.Errorf("%w: unknown status %q", ErrInvalid, s)
}

// isWord reports whether s is a short lower-case word (a-z, digits, '-').
func isWord(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// credentialNames are the member names, lower-cased without '-' and '_',
// that options and details must not contain: history must never hold a
// key, even by accident.
var credentialNames = map[string]bool{
	"key": true, "apikey": true, "token": true, "accesstoken": true,
	"authorization": true, "auth": true, "password": true, "secret": true,
	"bearer": true, "credential": true, "credentials": true,
}

// checkJSON accepts "" or a JSON value with no member named like a credential.
func checkJSON(field, s string) error {
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return fmt.Errorf("%w: %s are not JSON: %w", ErrInvalid, field, err)
	}
	if name, ok := credentialMember(v); ok {
		return fmt.Errorf("%w: %s carry a credential (%q); it belongs in the keyring", ErrInvalid, field, name)
	}
	return nil
}

func credentialMember(v any) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			norm := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
			if credentialNames[norm] {
				return k, true
			}
			if name, ok := credentialMember(e); ok {
				return name, true
			}
		}
	case []any:
		for _, e := range v {
			if name, ok := credentialMember(e); ok {
				return name, true
			}
		}
	}
	return "", false
}
