// Package store keeps what Earshot must not lose: the history of every
// session in SQLite, the user's settings, and the API key in the operating
// system's keyring, never in the database. It knows nothing of the UI, the
// network or audio devices.
//
// A DB holds the history (sessions of every kind, caption segments saved
// as they arrive, the service's answers to file transcriptions, full-text
// search over all of them) and the settings, in one SQLite file in WAL
// mode whose schema moves forward by numbered migrations. A DB is safe
// for concurrent use; every call that touches the file takes a context.
// OpenOrRecover always opens one: a damaged file is moved aside and a new
// one started, and where none can be written history is kept in memory
// (OpenMemory). Sessions left running by a process that ended are closed
// as interrupted at the next open (owner.go).
//
// A SecretStore holds the key: Keyring in the operating system's keyring,
// Memory for the life of the process, and Fallback, which uses the keyring
// and falls back to memory when there is no Secret Service. Nothing in
// this package writes a key to the database; options and settings that
// look like they carry one are refused.
package store
