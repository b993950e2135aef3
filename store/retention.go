package store

import (
	"context"
	"fmt"
	"time"
)

// MaxRetentionDays bounds Settings.RetentionDays: a hundred years, which
// is keeping everything in all but name.
const MaxRetentionDays = 36500

// pruneBatch is how many sessions one transaction of Prune deletes, so
// that a first prune of a large history never holds the write lock long
// enough to stall captions being saved.
const pruneBatch = 200

// Prune deletes the sessions that started before olderThan, with
// everything saved with them (segments, responses, audio, notes and their
// search entries), and returns how many it deleted. A running session is
// never deleted, however old. It deletes in small batches, each its own
// transaction, and stops between them when ctx is done.
func (d *DB) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	if olderThan.IsZero() {
		return 0, fmt.Errorf("store: prune: %w: no time given", ErrInvalid)
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("store: prune: %w", err)
		}
		res, err := d.w.ExecContext(ctx, `DELETE FROM sessions WHERE id IN (
			SELECT id FROM sessions WHERE started < ? AND status != ? ORDER BY started LIMIT ?)`,
			olderThan.UnixNano(), StatusRunning, pruneBatch)
		if err != nil {
			return total, fmt.Errorf("store: prune: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("store: prune: %w", err)
		}
		total += int(n)
		if n < pruneBatch {
			return total, nil
		}
	}
}

// CountOlder returns how many sessions Prune(ctx, olderThan) would
// delete, so that a person can be asked before a retention deletes them.
func (d *DB) CountOlder(ctx context.Context, olderThan time.Time) (int, error) {
	var n int
	err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE started < ? AND status != ?`,
		olderThan.UnixNano(), StatusRunning).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count older sessions: %w", err)
	}
	return n, nil
}

// RetentionCutoff returns the time before which sessions are deleted when
// history is kept for days days at now, or the zero time for days <= 0
// (keep everything).
func RetentionCutoff(now time.Time, days int) time.Time {
	if days <= 0 {
		return time.Time{}
	}
	return now.AddDate(0, 0, -days)
}
