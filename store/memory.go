package store

import (
	"context"
	"fmt"
	"net/url"
)

// OpenMemory opens a new, empty history kept in memory: the same schema,
// the same calls, the same concurrency as a file, for a session that has
// nowhere to write one (OpenOrRecover). Nothing saved to it outlives the
// process: it is gone when Close returns.
func OpenMemory(ctx context.Context) (*DB, error) {
	id, err := newID()
	if err != nil {
		return nil, fmt.Errorf("store: open in memory: %w", err)
	}
	name := "/earshot-" + id
	d := &DB{memory: true}
	if err := d.connect(ctx, func(readOnly bool) string { return memoryDSN(name, readOnly) }); err != nil {
		return nil, fmt.Errorf("store: open in memory: %w", err)
	}
	// SQLite frees a database in memory when its last connection closes:
	// one is held for as long as the DB is open.
	d.r.SetMaxOpenConns(readers + 1)
	d.r.SetMaxIdleConns(readers + 1)
	if d.hold, err = d.r.Conn(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("store: open in memory: %w", err)
	}
	return d, nil
}

// memoryDSN names the database in memory called name (which starts with
// '/', so that every connection of the process that names it shares it)
// on SQLite's memdb file system. It has no write-ahead log: a writer
// waits for the readers of the moment, within the busy timeout.
func memoryDSN(name string, readOnly bool) string {
	q := pragmas(readOnly)
	q.Set("vfs", "memdb")
	return (&url.URL{Scheme: "file", Path: name, RawQuery: q.Encode()}).String()
}
