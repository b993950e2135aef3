package sessions

import "github.com/earshot-app/earshot/store"

// HistoryRecovery says what was done to open the history when it could
// not be opened as it was (store.OpenOrRecover): a damaged file moved
// aside, or history kept in memory, and why. It is nil when nothing was
// wrong.
func (w *Workspace) HistoryRecovery() *store.Recovery { return w.cfg.History.Recovery() }

// HistoryKept reports whether what is saved to history, settings
// included, outlives the process: false when history is kept in memory
// for the session.
func (w *Workspace) HistoryKept() bool { return !w.cfg.History.InMemory() }
