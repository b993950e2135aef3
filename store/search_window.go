package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// rankWindow is how many matching caption segments a search ranks at most.
// FTS5 computes bm25 for every row that matches before it can return the
// best, and bm25 first counts the rows holding each word over the whole
// index: a word in most captions ("the") took 3 s over a million
// segments, and 0.2 s even when the rows ranked were bounded by rowid. A
// query matching more segments than this is ranked among the newest
// rankWindow of them (rowids grow with time), found first in rowid order,
// which needs no rank, by windowScore instead of bm25; file transcripts
// are ranked apart by the same score and merged.
const rankWindow = 1000

// windowScore is bm25 without its inverse document frequency (the words
// of a query matching that many captions are common ones, their weight
// near nil and nearly equal): tf, the matched words counted from
// highlight() (one mark each), k1 = 1.2, b = 0.75, the length of the text
// in characters against an average of 100. Lower is better, as FTS5's rank.
const (
	windowScore = `(-(2.2 * tf) / (tf + 1.2 * (0.25 + 0.75 * length(text) / 100.0)))`
	windowTF    = `(length(highlight(history_fts, 0, char(2), '')) - length(text))`
)

// searchRows runs a search for the FTS5 query match: rowid, session_id,
// start, snippet and the session's title of the best limit hits, best
// first. Snippets are made for those rows only, and the sessions table
// is joined to them only.
func (d *DB) searchRows(ctx context.Context, match string, limit int) (*sql.Rows, error) {
	// The rowid of the rankWindow-th newest matching segment, if there
	// are that many.
	var cutoff int64
	err := d.r.QueryRowContext(ctx, `SELECT rowid FROM history_fts
		WHERE history_fts MATCH ? AND rowid > 0
		ORDER BY rowid DESC LIMIT 1 OFFSET ?`,
		match, rankWindow-1).Scan(&cutoff)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		cutoff = 0 // segments and transcripts ranked together, all of them
	case err != nil:
		return nil, err
	}
	ranked := func(bounds string) (string, []any) {
		args := []any{snippetTokens, match}
		return `SELECT * FROM (SELECT rowid AS id, session_id, start,
				snippet(history_fts, 0, char(2), char(3), '…', ?) AS snip, rank
			FROM history_fts WHERE history_fts MATCH ?` + bounds + `
			ORDER BY rank LIMIT ?)`, append(args, limit)
	}
	// A query of several words is ranked by windowScore too, window or
	// not: bm25 would count the rows of each of its words, and one of
	// them may be in most captions ("the budget": 0.17 s). Every hit holds
	// every word, so what idf would add is the weight of one word's
	// repeats against another's.
	if cutoff != 0 || strings.Contains(match, `" "`) { // quoted words joined by spaces
		// rank is FTS5's bm25 unless the query orders by it; here it is
		// windowScore, newest first among equals.
		ranked = func(bounds string) (string, []any) {
			args := []any{snippetTokens, match}
			return `SELECT w.id AS id, session_id, start, snippet(history_fts, 0, char(2), char(3), '…', ?) AS snip, w.rank AS rank
				FROM (SELECT rowid AS id, ` + strings.ReplaceAll(windowScore, "tf", windowTF) + ` AS rank
					FROM history_fts WHERE history_fts MATCH ?` + bounds + `
					ORDER BY rank, rowid DESC LIMIT ?) AS w
				CROSS JOIN history_fts ON history_fts.rowid = w.id AND history_fts MATCH ?`, append(args, limit, match)
		}
	}
	var (
		inner string
		args  []any
	)
	if cutoff == 0 {
		inner, args = ranked("")
	} else {
		seg, segArgs := ranked(` AND rowid >= ` + "?")
		// The bound's argument goes after match, before the limit.
		segArgs = append(segArgs[:2:2], append([]any{cutoff}, segArgs[2:]...)...)
		files, fileArgs := ranked(` AND rowid < 0`)
		inner, args = seg+` UNION ALL `+files, append(segArgs, fileArgs...)
	}
	return d.r.QueryContext(ctx, `SELECT h.id, h.session_id, h.start, h.snip, coalesce(s.title, '')
		FROM (`+inner+`) AS h LEFT JOIN sessions AS s ON s.id = h.session_id
		ORDER BY h.rank, h.id DESC LIMIT ?`, append(args, limit)...)
}
