package ui

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// offWhy is a line beside a group of controls that says why those of
// them that are off are off: Fyne has no tooltips, and a greyed-out
// control with no word of why leaves a person guessing. A tab's
// updateControls enables its controls through enable, then calls show.
// Touched only on the UI goroutine.
type offWhy struct {
	line    *widget.Label
	reasons []string
}

func newOffWhy() *offWhy {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	l.Hide()
	return &offWhy{line: l}
}

// set turns w on or off; off, why (when not "") is kept to show.
func (o *offWhy) set(w disabler, on bool, why string) {
	enable(w, on)
	if !on && why != "" && !slices.Contains(o.reasons, why) {
		o.reasons = append(o.reasons, why)
	}
}

// show puts the reasons given since the last show in the line, which is
// hidden when there are none.
func (o *offWhy) show() {
	text := strings.Join(o.reasons, " ")
	o.reasons = o.reasons[:0]
	if text == o.line.Text && o.line.Visible() == (text != "") {
		return
	}
	o.line.SetText(text)
	o.line.Hidden = text == ""
	o.line.Refresh()
}
