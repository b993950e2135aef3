package store

import (
	"context"
	"fmt"
)

// ownerID is the id sessions created through d are saved with; "" in
// memory, where no other process can see them.
func (d *DB) ownerID() string {
	if d.owner == nil {
		return ""
	}
	return d.owner.id
}

// interruptSQL closes the running sessions of one owner as interrupted,
// with what they saved: a session that had not recorded its length yet
// lasted to the end of its last caption (or line, or turn), and ended
// that long after it started. SQLite reads every value of the right-hand
// sides before it sets any.
const interruptSQL = `UPDATE sessions SET status = ?,
	duration = max(duration, coalesce((SELECT max(g.end_sec) FROM segments g WHERE g.session_id = sessions.id), 0)),
	ended = started + CAST(1e9 * max(duration, coalesce((SELECT max(g.end_sec) FROM segments g WHERE g.session_id = sessions.id), 0)) AS INTEGER)
	WHERE status = ? AND owner = ?`

// closeInterrupted closes as StatusInterrupted the sessions left running
// by owners whose process has ended, and returns how many it closed. A
// session whose process still runs (the app while `earshot transcribe`
// opens the history, or the other way round) is left as it is, and so is
// every session where this platform cannot tell.
func (d *DB) closeInterrupted(ctx context.Context) (int, error) {
	rows, err := d.w.QueryContext(ctx, `SELECT DISTINCT owner FROM sessions WHERE status = ? AND owner != ?`,
		StatusRunning, d.ownerID())
	if err != nil {
		return 0, fmt.Errorf("interrupted sessions: %w", err)
	}
	var owners []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return 0, fmt.Errorf("interrupted sessions: %w", err)
		}
		owners = append(owners, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("interrupted sessions: %w", err)
	}
	closed := 0
	for _, o := range owners {
		st, err := stateOf(d.owner.dir, o)
		if err != nil || st != ownerGone {
			continue // alive, or no way to know: left running
		}
		res, err := d.w.ExecContext(ctx, interruptSQL, StatusInterrupted, StatusRunning, o)
		if err != nil {
			return closed, fmt.Errorf("interrupted sessions: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return closed, fmt.Errorf("interrupted sessions: %w", err)
		}
		closed += int(n)
	}
	// The lock files of ended processes that left nothing running.
	_, _ = othersAlive(d.owner.dir, d.owner)
	return closed, nil
}
