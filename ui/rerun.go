package ui

import (
	"fyne.io/fyne/v2/dialog"

	"github.com/earshot-app/earshot/store"
)

// showRerun opens the dialog that runs the audio of the history entry s
// again, with another model or backend, and compares the two results.
// Call it on the UI goroutine.
func (a *App) showRerun(s store.Session) {
	dialog.ShowInformation("Re-run", "Re-running "+s.Title+" is not ready yet.", a.window)
}
