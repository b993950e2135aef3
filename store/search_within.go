package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A search among some sessions (kinds, dates) first scans the newest
// scanWindow matches of the query, keeping those of the sessions it
// wants. When they are enough, or are all the matches, that is the
// window ranked. When they are few, the sessions wanted hold little of
// what matches (a common word among file transcriptions: 7 s over a
// million captions when every match was checked), so their own
// stretches of the index are searched instead, newest session first,
// if they are at most bySessionMax sessions: each stretch costs a seek
// (about 65 µs), each match checked in a scan about 2.5 µs.
const (
	scanWindow   = 4 * rankWindow
	bySessionMax = 2000
)

// windowed is a matching caption segment or transcript in the window,
// with its windowScore.
type windowed struct {
	id    int64
	score float64
}

// scoreOf is windowScore for the index read under alias a.
func scoreOf(a string) string {
	tf := `(length(highlight(` + a + `.history_fts, 0, char(2), '')) - length(` + a + `.text))`
	return strings.ReplaceAll(strings.ReplaceAll(windowScore, "length(text)", "length("+a+".text)"), "tf", tf)
}

// sessionsWhere is the condition on sessions (alias k) that f keeps: its
// kinds and dates.
func (f Filter) sessionsWhere() (string, []any) {
	var (
		conds []string
		args  []any
	)
	if kinds := f.kinds(); len(kinds) > 0 {
		conds = append(conds, `k.kind IN (?`+strings.Repeat(`, ?`, len(kinds)-1)+`)`)
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, `k.started >= ?`)
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, `k.started < ?`)
		args = append(args, f.Until.UnixNano())
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

// searchWithin searches for the FTS5 query match among the sessions f
// keeps (kinds and dates). Like searchRows it ranks by windowScore the
// newest rankWindow matching caption segments (or all, when fewer) and,
// apart, the file transcripts, and returns the best limit of both.
func (d *DB) searchWithin(ctx context.Context, match string, limit int, f Filter) ([]Hit, error) {
	where, wargs := f.sessionsWhere()
	segs, err := d.windowWithin(ctx, match, where, wargs)
	if err != nil {
		return nil, err
	}
	// Transcripts are few (one a file); their rowid is minus the session's.
	files, err := collectWindowed(ctx, d.r, `SELECT h.rowid, `+scoreOf("h")+` FROM history_fts AS h
		WHERE h.history_fts MATCH ? AND h.rowid < 0 AND -h.rowid IN (SELECT k.id FROM sessions AS k WHERE `+where+`)
		ORDER BY 2, h.rowid DESC LIMIT ?`, 0, append(append([]any{match}, wargs...), limit)...)
	if err != nil {
		return nil, err
	}
	best := append(segs, files...)
	slices.SortFunc(best, func(a, b windowed) int {
		return cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(b.id, a.id))
	})
	best = best[:min(len(best), limit)]
	return d.hitsOf(ctx, match, best)
}

// windowWithin returns the caption segments in the window of a search
// among the sessions where keeps, with their scores.
func (d *DB) windowWithin(ctx context.Context, match, where string, wargs []any) ([]windowed, error) {
	// The rowid of the scanWindow-th newest match of every session.
	var floor int64
	err := d.r.QueryRowContext(ctx, `SELECT rowid FROM history_fts WHERE history_fts MATCH ? AND rowid > 0
		ORDER BY rowid DESC LIMIT 1 OFFSET ?`, match, scanWindow-1).Scan(&floor)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		floor = 1 // fewer matches than that: the scan sees them all
	case err != nil:
		return nil, err
	}
	// scan reads the matches from hi down to lo of the sessions wanted,
	// newest first, at most limit of them.
	scan := func(lo, hi int64, limit int) ([]windowed, error) {
		return collectWindowed(ctx, d.r, `SELECT h.rowid, `+scoreOf("h")+`
			FROM history_fts AS h
			CROSS JOIN segments AS g ON g.id = h.rowid
			CROSS JOIN sessions AS k ON k.id = g.session_id
			WHERE h.history_fts MATCH ? AND h.rowid BETWEEN ? AND ? AND `+where+`
			ORDER BY h.rowid DESC`, limit, append([]any{match, lo, hi}, wargs...)...)
	}
	const top = math.MaxInt64
	got, err := scan(floor, top, rankWindow)
	if err != nil || len(got) == rankWindow || floor == 1 {
		return got, err
	}
	// Few of the newest matches are of these sessions: where are theirs?
	rows, err := d.r.QueryContext(ctx, `SELECT lo, hi FROM (
			SELECT (SELECT min(id) FROM segments WHERE session_id = k.id) AS lo,
				(SELECT max(id) FROM segments WHERE session_id = k.id) AS hi
			FROM sessions AS k WHERE `+where+`)
		WHERE lo < ? LIMIT ?`, append(wargs, floor, bySessionMax+1)...)
	if err != nil {
		return nil, err
	}
	spans, err := collectSpans(rows, bySessionMax+1)
	if err != nil {
		return nil, err
	}
	if len(spans) > bySessionMax {
		// Many sessions: scanning on below the floor costs less than
		// a seek in each.
		return scan(1, top, rankWindow)
	}
	// Their stretches of the index, newest first; stretches nearer than
	// about a hundred matches apart are read as one (a seek costs as much
	// as checking that many), the density of matches taken from the scan.
	var newest int64
	if err := d.r.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM segments`).Scan(&newest); err != nil {
		return nil, err
	}
	gap := 100 * max(1, (newest-floor)/scanWindow)
	for _, r := range mergeSpans(spans, gap) {
		more, err := scan(r.lo, min(r.hi, floor-1), rankWindow-len(got))
		if err != nil {
			return nil, err
		}
		if got = append(got, more...); len(got) == rankWindow {
			break
		}
	}
	return got, nil
}

// span is a stretch of rowids, lo to hi.
type span struct{ lo, hi int64 }

// collectSpans reads lo, hi rows (a NULL lo: a session without captions,
// left out), at most limit of them.
func collectSpans(rows *sql.Rows, limit int) ([]span, error) {
	defer rows.Close()
	var out []span
	for rows.Next() {
		var lo, hi sql.NullInt64
		if err := rows.Scan(&lo, &hi); err != nil {
			return nil, err
		}
		if lo.Valid && hi.Valid {
			if out = append(out, span{lo.Int64, hi.Int64}); len(out) == limit {
				break
			}
		}
	}
	return out, rows.Err()
}

// mergeSpans returns spans joined where they overlap or are at most gap
// apart, newest (highest) first.
func mergeSpans(spans []span, gap int64) []span {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(b.hi, a.hi) })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.hi >= out[n-1].lo-gap {
			out[n-1].lo = min(out[n-1].lo, s.lo)
			continue
		}
		out = append(out, s)
	}
	return out
}

// collectWindowed reads rowid and score rows of query, at most limit of
// them when limit > 0.
func collectWindowed(ctx context.Context, db *sql.DB, query string, limit int, args ...any) ([]windowed, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []windowed
	for rows.Next() {
		var w windowed
		if err := rows.Scan(&w.id, &w.score); err != nil {
			return nil, err
		}
		if out = append(out, w); len(out) == limit {
			break
		}
	}
	return out, rows.Err()
}

// hitsOf makes the hits of the rows best, in their order: snippet, start
// and the session's title.
func (d *DB) hitsOf(ctx context.Context, match string, best []windowed) ([]Hit, error) {
	if len(best) == 0 {
		return nil, nil
	}
	args := []any{snippetTokens, match}
	for _, w := range best {
		args = append(args, w.id)
	}
	rows, err := d.r.QueryContext(ctx, `SELECT h.rowid, h.session_id, h.start,
			snippet(h.history_fts, 0, char(2), char(3), '…', ?), coalesce(s.title, '')
		FROM history_fts AS h LEFT JOIN sessions AS s ON s.id = h.session_id
		WHERE h.history_fts MATCH ? AND h.rowid IN (?`+strings.Repeat(`, ?`, len(best)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]Hit, len(best))
	for rows.Next() {
		var (
			h     Hit
			rowid int64
		)
		if err := rows.Scan(&rowid, &h.SessionID, &h.Start, &h.Snippet, &h.Title); err != nil {
			return nil, err
		}
		if rowid > 0 { // see migration 2: negative rowids are transcripts
			h.SegmentID = rowid
		}
		byID[rowid] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hits: %w", err)
	}
	hits := make([]Hit, 0, len(best))
	for _, w := range best {
		if h, ok := byID[w.id]; ok { // deleted meanwhile otherwise
			hits = append(hits, h)
		}
	}
	return hits, nil
}
