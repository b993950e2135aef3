package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// timelineLen is how many events the timeline shows, newest first.
const timelineLen = 30

// convTimeline is the Conversation tab's list of what was sent and
// received, newest first, with the time since the conversation started.
type convTimeline struct {
	label   *widget.Label
	entries []timelineEntry // newest first
}

// timelineEntry is a line of the timeline. Updates of a turn in a row
// share one line, counted, so that they do not push everything else out.
type timelineEntry struct {
	line    string
	updates int // Updates folded into the line; 0 for other events
	turn    int
}

// build creates the timeline's column.
func (tl *convTimeline) build() fyne.CanvasObject {
	tl.label = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	tl.label.SizeName = theme.SizeNameCaptionText
	return container.NewBorder(
		widget.NewLabelWithStyle("Events", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil,
		// Scrolls both ways: its long lines must not widen the window.
		container.NewScroll(tl.label))
}

// reset empties the timeline for a new conversation.
func (tl *convTimeline) reset() {
	tl.entries = nil
	tl.label.SetText("")
}

// refresh shows the entries.
func (tl *convTimeline) refresh() {
	lines := make([]string, len(tl.entries))
	for i, e := range tl.entries {
		lines[i] = e.line
	}
	tl.label.SetText(strings.Join(lines, "\n"))
}

// add puts an event at the top of the timeline, folding an Update into
// the line of the Updates of its turn just before it. t0 is when the
// conversation started. It shows nothing until refresh.
func (tl *convTimeline) add(t0 time.Time, ev sessions.Event) {
	line := timelineLine(t0, ev)
	if line == "" {
		return
	}
	entry := timelineEntry{line: line}
	if e, ok := ev.(*sessions.TurnInfoEvent); ok && e.Event == api.EventUpdate {
		entry.updates, entry.turn = 1, e.Turn.Index
		if len(tl.entries) > 0 && tl.entries[0].updates > 0 && tl.entries[0].turn == e.Turn.Index {
			entry.updates = tl.entries[0].updates + 1
			entry.line = strings.Replace(line, "Update ·", fmt.Sprintf("Update ×%d ·", entry.updates), 1)
			tl.entries[0] = entry
			return
		}
	}
	tl.entries = append(tl.entries, timelineEntry{})
	copy(tl.entries[1:], tl.entries)
	tl.entries[0] = entry
	if len(tl.entries) > timelineLen {
		tl.entries = tl.entries[:timelineLen]
	}
}

// timelineLine is one line of the event timeline: seconds since the start
// and what happened; "" for what it does not list.
func timelineLine(t0 time.Time, ev sessions.Event) string {
	var at time.Time
	var what string
	switch e := ev.(type) {
	case *sessions.TurnInfoEvent:
		at = e.At
		what = fmt.Sprintf("%s · turn %d", e.Event, e.Turn.Index+1)
		switch {
		case e.Event == api.EventEndOfTurn:
			what += " · " + string(e.Turn.Trigger) + fmt.Sprintf(" · %.2f", e.Turn.EndOfTurnConfidence)
			if e.Turn.HasLatency {
				what += " · " + latencyWords(e.Turn.Latency)
			}
		default:
			what += fmt.Sprintf(" · %.2f", e.Turn.EndOfTurnConfidence)
		}
	case *sessions.SentEvent:
		at, what = e.At, "→ "+e.Type
	case *sessions.ConfigureEvent:
		at, what = e.At, "ConfigureSuccess"
		if !e.OK {
			what = "ConfigureFailure"
		}
	case *sessions.TurnWarningEvent:
		at, what = e.At, "Warning · "+e.Code
	case *sessions.ConnectedEvent:
		at, what = e.At, "Connected"
	case *sessions.UnknownTurnMessageEvent:
		at, what = e.At, "Unknown message · "+e.Type
	default:
		return ""
	}
	return fmt.Sprintf("%7.2f s  %s", at.Sub(t0).Seconds(), what)
}
