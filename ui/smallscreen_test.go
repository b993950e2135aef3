package ui

import (
	"strings"
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
	// The Conversation tab with a turn and events on it, as after a
	// conversation: their lines are long.
	h.ui(func() {
		c := h.converse
		long := "0:15–0:20 · ended by the model · confidence 0.77 · latency 1131 ms · and more words to make it long"
		c.timeline.label.SetText(strings.Repeat("  25.47 s  EndOfTurn · turn 4 · model · 0.83 · 676 ms · and more words to make it long\n", 3))
		card := newTurnCard(0)
		card.detail.SetText(long)
		card.text.SetText("hello study rather cold hearted and rather selfish is to be oldest those")
		c.turns.box.Add(card.card)
	})
	for _, tab := range []string{"Captions", "Conversation", "Voices", "Agent", "Analyze", "History", "Settings", "Service"} {
		h.ui(func() {
			h.SelectTab(tab)
			h.window.Resize(fyne.NewSize(800, 600))
			if m := h.window.Content().MinSize(); m.Width > 800 || m.Height > 600 {
				t.Errorf("%s needs %.0f×%.0f", tab, m.Width, m.Height)
			}
		})
	}
}
