package ui

import (
	"testing"

	"fyne.io/fyne/v2"
)

// TestFitsSmallScreen: every tab fits a window of 800 by 600 pixels, as
// on a small laptop screen: the Settings tab took 992 pixels (its right
// column cut off), the Voices tab 1071 and the Analyze toolbar ran over
// itself.
func TestFitsSmallScreen(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	h.waitShown(t)
	for _, tab := range []string{"Captions", "Conversation", "Voices", "Analyze", "Settings", "Service"} {
		h.ui(func() {
			h.SelectTab(tab)
			h.window.Resize(fyne.NewSize(800, 600))
			if m := h.window.Content().MinSize(); m.Width > 800 || m.Height > 600 {
				t.Errorf("%s needs %.0f×%.0f", tab, m.Width, m.Height)
			}
		})
	}
}
