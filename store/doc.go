// Package store keeps what Earshot must not lose: the history of every
// session in SQLite (WAL, FTS5 search, numbered migrations), the user's
// settings, and the API key in the operating system's keyring, never in
// the database. It knows nothing of the UI, the network or audio devices.
//
// The package fills as the features that persist arrive; captions and
// file transcripts are the first.
package store
