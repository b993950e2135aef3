package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Helpers that drive Fyne's own dialogs (confirmations, the file
// dialogs) as a person would, through the test driver.

// startFileDialogsIn makes the next file dialog (Earshot's and the
// toolkit's chooser) open in dir.
func (h *harness) startFileDialogsIn(dir string) {
	h.fyneApp.Preferences().SetString(fileDialogFolderKey, storage.NewFileURI(dir).String())
}

// tapDialogButton waits for a dialog's button labelled text and taps it.
func (h *harness) tapDialogButton(t *testing.T, text string) {
	t.Helper()
	var b *widget.Button
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b = h.findButton(text); b != nil && !b.Disabled() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no enabled %q button in a dialog; window:\n%s", text, h.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.ui(func() { test.Tap(b) })
}

// inOverlays returns the first object of the top dialog that match
// accepts.
func (h *harness) inOverlays(match func(fyne.CanvasObject) bool) fyne.CanvasObject {
	var found fyne.CanvasObject
	h.ui(func() {
		overlays := h.window.Canvas().Overlays().List()
		for i := len(overlays) - 1; i >= 0 && found == nil; i-- {
			walk(overlays[i], func(o fyne.CanvasObject) {
				if found == nil && match(o) {
					found = o
				}
			})
		}
	})
	return found
}

// dialogOpen reports whether a dialog is on screen.
func (h *harness) dialogOpen() bool {
	n := 0
	h.ui(func() {
		for _, o := range h.window.Canvas().Overlays().List() {
			if o.Visible() {
				n++
			}
		}
	})
	return n > 0
}

// chooseFile presses Browse… in Earshot's file dialog, picks the one file
// the toolkit's chooser lists, and presses Open.
func (h *harness) chooseFile(t *testing.T) {
	t.Helper()
	h.tapDialogButton(t, "Browse…")
	o := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.GridWrap); return ok })
	grid, ok := o.(*widget.GridWrap)
	if !ok {
		t.Fatalf("the file dialog shows no files; window:\n%s", h.screen())
	}
	// The parent folder comes first, then the folder's one file.
	h.ui(func() { grid.Select(grid.Length() - 1) })
	h.tapDialogButton(t, "Open")
}
