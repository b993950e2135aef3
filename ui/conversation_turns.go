package ui

import (
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
)

// maxCards bounds the turn cards kept on screen; older ones are in
// history.
const maxCards = 200

// convTurns is the Conversation tab's column of turn cards, one per turn,
// each updated as the turn goes on and closed when it ends.
type convTurns struct {
	box    *fyne.Container
	scroll *container.Scroll
	hint   *widget.Label
	cards  []*turnCard // on screen, oldest first
}

// turnCard shows one turn.
type turnCard struct {
	index  int
	turn   sessions.Turn
	card   *widget.Card
	title  *widget.Label
	badge  *widget.Label
	detail *widget.Label
	text   *widget.Label
}

// build creates the column, with the tab's hint until a turn starts.
func (t *convTurns) build() fyne.CanvasObject {
	t.hint = widget.NewLabel(conversationHint)
	t.hint.Wrapping = fyne.TextWrapWord
	t.box = container.NewVBox()
	t.scroll = container.NewVScroll(container.NewVBox(t.hint, t.box))
	return container.NewBorder(
		widget.NewLabelWithStyle("Turns", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, t.scroll)
}

// reset clears the cards for a new conversation.
func (t *convTurns) reset() {
	t.cards = nil
	t.box.RemoveAll()
	t.hint.SetText("Listening… each turn appears here as it starts.")
	t.hint.Show()
}

// show puts a turn of ls on its card, making the card on its first event.
func (t *convTurns) show(ls *convSession, turn sessions.Turn) {
	card := ls.byIndex[turn.Index]
	if card == nil || card.turn.State == sessions.TurnEnded && turn.State != sessions.TurnEnded {
		card = newTurnCard(turn.Index)
		ls.byIndex[turn.Index] = card
		t.cards = append(t.cards, card)
		t.box.Add(card.card)
		if len(t.cards) > maxCards {
			old := t.cards[0]
			t.cards = slices.Delete(t.cards, 0, 1)
			t.box.Remove(old.card)
			if ls.byIndex[old.index] == old {
				delete(ls.byIndex, old.index)
			}
		}
		t.hint.Hide()
		defer t.scroll.ScrollToBottom()
	}
	card.show(turn)
}

func newTurnCard(index int) *turnCard {
	tc := &turnCard{index: index}
	tc.title = widget.NewLabelWithStyle(fmt.Sprintf("Turn %d", index+1), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	tc.badge = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	tc.detail = widget.NewLabel("")
	tc.detail.SizeName = theme.SizeNameCaptionText
	tc.detail.Truncation = fyne.TextTruncateEllipsis
	tc.text = widget.NewLabel("")
	tc.text.Wrapping = fyne.TextWrapWord
	tc.card = widget.NewCard("", "", container.NewVBox(
		container.NewBorder(nil, nil, container.NewHBox(tc.title, tc.badge), nil, tc.detail),
		tc.text,
	))
	return tc
}

// show puts t on the card.
func (tc *turnCard) show(t sessions.Turn) {
	tc.turn = t
	text, imp := badgeOf(t.State)
	tc.badge.Importance = imp
	tc.badge.SetText(text)
	tc.detail.SetText(turnDetail(t))
	transcript := t.Transcript
	if transcript == "" {
		transcript = "…"
	}
	tc.text.SetText(transcript)
}

// badgeOf names a turn's state, and colours it.
func badgeOf(s sessions.TurnState) (string, widget.Importance) {
	switch s {
	case sessions.TurnOpen:
		return "Speaking", widget.HighImportance
	case sessions.TurnEager:
		return "Eager end", widget.WarningImportance
	case sessions.TurnResumed:
		return "Resumed", widget.HighImportance
	case sessions.TurnEnded:
		return "Ended", widget.SuccessImportance
	}
	return string(s), widget.MediumImportance
}

// triggerWords says what ended a turn; an unknown trigger is shown as it
// came.
func triggerWords(tr api.TurnTrigger) string {
	switch tr {
	case api.TriggerModel:
		return "ended by the model"
	case api.TriggerManual:
		return "ended by hand"
	case api.TriggerTimeout:
		return "ended by the timeout"
	case "":
		return "ended"
	}
	return fmt.Sprintf("ended by %q", string(tr))
}

// turnDetail is the line under a card's title: the turn's times, what
// ended it, the end-of-turn confidence and the latency.
func turnDetail(t sessions.Turn) string {
	parts := []string{timecode.Of(t.Start) + "–" + timecode.Of(t.End)}
	if t.State == sessions.TurnEnded {
		parts = append(parts, triggerWords(t.Trigger))
	}
	parts = append(parts, fmt.Sprintf("confidence %.2f", t.EndOfTurnConfidence))
	if t.HasLatency {
		parts = append(parts, "latency "+latencyWords(t.Latency))
	}
	return joinDot(parts...)
}

func latencyWords(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}

// medianLatency is the median latency of the turns of ls that ended
// with one measured.
func medianLatency(ls *convSession) (time.Duration, bool) {
	var ds []time.Duration
	for _, card := range ls.byIndex {
		if card.turn.State == sessions.TurnEnded && card.turn.HasLatency {
			ds = append(ds, card.turn.Latency)
		}
	}
	if len(ds) == 0 {
		return 0, false
	}
	slices.Sort(ds)
	if n := len(ds); n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2, true
	}
	return ds[len(ds)/2], true
}
