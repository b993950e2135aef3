package cli

import "github.com/earshot-app/earshot/sessions"

// historyWatch follows what history holds of a session, from its
// HistoryEvents: the line to print while writes wait for room on a full
// disk, and the words and error that close the command. Nothing is
// called saved that history did not say it holds.
type historyWatch struct{ last *sessions.HistoryEvent }

// take reads ev; for a HistoryEvent that starts or ends a wait for room,
// it returns the line to print, else "".
func (w *historyWatch) take(ev sessions.Event) string {
	h, ok := ev.(*sessions.HistoryEvent)
	if !ok {
		return ""
	}
	waited := w.last != nil && w.last.Waiting > 0
	w.last = h
	switch {
	case h.Waiting > 0 && !waited:
		return "The disk is full: what follows waits in memory, and is written to history once there is room."
	case waited && h.Waiting == 0 && h.Err == nil:
		return "The disk has room again: what waited is in history now."
	}
	return ""
}

// end says what history holds of the session that ended ("saved to
// history", or not), and returns the error the command ends with when it
// lost some of it.
func (w *historyWatch) end() (string, error) {
	if w.last == nil {
		return "not saved to history", nil
	}
	return keptWords(w.last.Keeping)
}

// keptWords says what history holds of a session that ended, as its
// final HistoryEvent says, and returns the error the command ends with
// when history lost some of it: "saved to history" only when all of it
// is kept for good; with history off (in memory), not kept, and no error.
func keptWords(k sessions.Keeping) (string, error) {
	switch {
	case k.Kept():
		return "saved to history", nil
	case k.Written():
		return "not kept (history is off)", nil
	}
	return "not saved to history", k.Err
}
