package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Space is the room the history takes on disk.
type Space struct {
	File int64 // the database file, in bytes (in memory: the pages it holds)
	WAL  int64 // its write-ahead log, not yet copied into the file
	// Sessions counts the sessions of each kind.
	Sessions map[string]int
}

// Bytes is the whole room the history takes.
func (s Space) Bytes() int64 { return s.File + s.WAL }

// Space measures the database file and its write-ahead log and counts the
// sessions of each kind (one pass over an index).
func (d *DB) Space(ctx context.Context) (Space, error) {
	var sp Space
	var err error
	if d.memory {
		err = d.r.QueryRowContext(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&sp.File)
	} else if sp.File, err = fileSize(d.path); err == nil {
		sp.WAL, err = fileSize(d.path + "-wal")
	}
	if err != nil {
		return Space{}, fmt.Errorf("store: space: %w", err)
	}
	rows, err := d.r.QueryContext(ctx, `SELECT kind, count(*) FROM sessions GROUP BY kind`)
	if err != nil {
		return Space{}, fmt.Errorf("store: space: %w", err)
	}
	defer rows.Close()
	sp.Sessions = map[string]int{}
	for rows.Next() {
		var (
			kind string
			n    int
		)
		if err := rows.Scan(&kind, &n); err != nil {
			return Space{}, fmt.Errorf("store: space: %w", err)
		}
		sp.Sessions[kind] = n
	}
	if err := rows.Err(); err != nil {
		return Space{}, fmt.Errorf("store: space: %w", err)
	}
	return sp, nil
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
