package cli

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/earshot-app/earshot/store"
)

// recoveryLine says in one line what was done to open the history
// (store.OpenOrRecover), for a command that carries on.
func recoveryLine(r *store.Recovery) string {
	const notKept = "; this run is not kept"
	switch {
	case r.Damage != nil && !r.InMemory():
		return "the history file " + r.Path + " could not be read (it is damaged); it was moved to " + r.MovedTo + ", and a new history was started"
	case r.Damage != nil && r.MovedTo != "":
		return "the history file " + r.Path + " could not be read (it is damaged) and was moved to " + r.MovedTo + "; history is off (" + offReason(r) + ")" + notKept
	case r.Damage != nil:
		return "the history file " + r.Path + " could not be read (it is damaged) and was not moved aside (" + offReason(r) + "); history is off" + notKept
	}
	return "history is off: " + offReason(r) + notKept
}

// offReason says why history is in memory.
func offReason(r *store.Recovery) string {
	if errors.Is(r.Off, store.ErrNewerSchema) {
		return r.Path + " was written by a newer version of Earshot, which this one leaves as it is"
	}
	if errors.Is(r.Off, store.ErrDiskFull) {
		return "the disk that holds " + filepath.Dir(r.Path) + " is full (free some space)"
	}
	var pe *fs.PathError
	if dir := r.Folder(); dir != "" && errors.As(r.Off, &pe) {
		return "cannot write in " + dir + ": " + pe.Err.Error()
	}
	return r.Off.Error()
}

// historyOff is the failure of a command that reads the history (history,
// notes, rerun) when history is in memory for this run: there is nothing
// to read.
func historyOff(r *store.Recovery, verb string) error {
	return reword(r, "cannot %s: history is off (%s)", verb, offReason(r))
}

// historyWorkspace opens the app's workspace for a command that reads the
// history, and fails with historyOff when there is none to read.
func (env Env) historyWorkspace(ctx context.Context, verb string) (*Workspace, error) {
	return env.openWorkspace(ctx, verb, true)
}
