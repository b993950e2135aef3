package ui

// Notice returns the history's notice in the header as it is on screen,
// and whether it is shown ("" and false when there is none). Tools that
// check the window (main's tests) read it; call it on the UI goroutine.
func (a *App) Notice() (string, bool) {
	h := a.header
	return h.notice.Text, h.noticeRow.Visible() && h.notice.Text != ""
}

// PastSessions returns the rows of the Captions tab's history list as it
// shows them, newest first: each session's title and its line of details
// (when, how long, how it ended, where from). Tools that check the window
// (main's tests) read it; call it on the UI goroutine.
func (a *App) PastSessions() []string {
	h := a.captions.history
	out := make([]string, 0, len(h.rows))
	for _, r := range h.rows {
		out = append(out, joinDot(r.s.Title, sessionDetails(r.s, a.now())))
	}
	return out
}
