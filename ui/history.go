package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// historyLimit bounds the sessions listed, newest first.
const historyLimit = 1000

// searchHits bounds the hits one search asks for.
const searchHits = 200

// historyPanel lists past sessions, captions and files, newest first, and
// finds them by their words. Selecting a session shows it in the caption
// view; Export, Rename and Delete act on the selected one.
//
// Its fields are touched only on the UI goroutine.
type historyPanel struct {
	tab *captionsTab

	search  *boundedEntry
	list    *widget.List
	empty   *widget.Label
	open    *widget.Button
	export  *widget.Button
	rename  *widget.Button
	del     *widget.Button
	notesB  *widget.Button // Meeting notes
	rerunB  *widget.Button // Re-run…, for an entry with audio (rerun.go)
	heading *widget.Label
	notes   *notesView // built on first use

	all      []store.Session // as last loaded
	rows     []historyEntry  // what the list shows: all, or the search's hits
	selected int64           // the selected session's id, 0 for none
	canRerun int64           // the selected session's id once it is known to have audio
	rerunAsk int64           // the selected session's id once it is known whether it has
	off      *offWhy         // why buttons are off, under them
	quiet    bool            // selecting in code: do not open

	loadGen      int // counts loads; only the latest one's answer is shown
	query        string
	searchGen    int // counts searches; only the latest one's answer is shown
	cancelSearch context.CancelFunc
}

func newHistoryPanel(tab *captionsTab) *historyPanel {
	return &historyPanel{tab: tab, off: newOffWhy()}
}

// buildUI creates the panel's widgets.
func (h *historyPanel) buildUI() fyne.CanvasObject {
	h.heading = widget.NewLabelWithStyle("History", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	h.search = newBoundedEntry(shortLimit, func(p string) {
		h.tab.setStatus(tooLongWords("Search", len(p), shortLimit), widget.WarningImportance)
	})
	h.search.SetPlaceHolder("Search the words of past sessions")
	h.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	h.search.OnChanged = h.onSearchChanged

	h.list = newHistoryList(func() []historyEntry { return h.rows }, h.tab.app.now, nil)
	h.list.OnSelected = h.onSelected
	h.list.OnUnselected = func(widget.ListItemID) {
		if !h.quiet {
			h.selected = 0
			h.updateControls()
		}
	}
	h.empty = newHistoryEmpty()

	h.open = widget.NewButtonWithIcon("Open", theme.FileIcon(), h.onOpen)
	h.export = widget.NewButtonWithIcon("Export", theme.DownloadIcon(), h.onExport)
	h.rename = widget.NewButtonWithIcon("Rename", theme.DocumentCreateIcon(), h.onRename)
	h.del = widget.NewButtonWithIcon("Delete", theme.DeleteIcon(), h.onDelete)
	h.notesB = h.tab.app.newMeetingNotesButton(h.selectedMeeting)
	h.rerunB = widget.NewButtonWithIcon("Re-run…", theme.ViewRefreshIcon(), h.onRerun)
	h.updateControls()
	// The list shows every kind: any change to history is read again.
	h.tab.app.watchHistory(func(string) { h.reload() })

	top := container.NewVBox(h.heading, h.search)
	// Three a row: the list keeps the height of the tab beside the
	// intelligence of a file.
	buttons := container.NewVBox(container.NewGridWithColumns(3, h.open, h.export, h.notesB, h.rename, h.del, h.rerunB), h.off.line)
	body := container.NewStack(h.list, container.NewVBox(h.empty))
	return container.NewPadded(container.NewBorder(top, buttons, nil, nil, body))
}

// newHistoryList makes a list of the history rows rows returns, filled
// by fillHistoryRow at the time now says; shown, when not nil, is told
// of each row the list shows.
func newHistoryList(rows func() []historyEntry, now func() time.Time, shown func(id widget.ListItemID)) *widget.List {
	return widget.NewList(
		func() int { return len(rows()) },
		newHistoryItem,
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if rs := rows(); id < len(rs) {
				fillHistoryRow(rs[id], o.(*fyne.Container), now())
			}
			if shown != nil {
				shown(id)
			}
		},
	)
}

// newHistoryEmpty makes the line a history list shows while it has no
// rows: why.
func newHistoryEmpty() *widget.Label {
	l := widget.NewLabel("Loading…")
	l.Alignment = fyne.TextAlignCenter
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

// newHistoryItem makes the template of a row: an icon for the kind, the
// title, and a line of details or, in a search, what matched.
func newHistoryItem() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.Truncation = fyne.TextTruncateEllipsis
	detail := widget.NewRichText()
	detail.Truncation = fyne.TextTruncateEllipsis
	return container.NewBorder(nil, nil, widget.NewIcon(micIcon), nil,
		container.New(stackedLayout{}, title, detail))
}

// sessionDetails describes a session in one line: when, how long, how it
// ended, and where the audio came from (last: it is the longest), or for
// a failure, last, why it failed.
func sessionDetails(s store.Session, now time.Time) string {
	source := s.Source
	if s.Kind == store.KindFile {
		source = "File"
	}
	duration := ""
	if s.Duration > 0 {
		duration = timecode.Of(s.Duration)
	}
	if s.Status == store.StatusFailed {
		return joinDot(when(s.Started, now), duration, source, sessionOutcome(s))
	}
	return joinDot(when(s.Started, now), duration, sessionOutcome(s), source)
}

// interruptedWords says that s was interrupted (its process ended while
// it ran), and what it saved up to then.
func interruptedWords(s store.Session) string {
	noun := "caption"
	switch s.Kind {
	case store.KindAgent:
		noun = "line"
	case store.KindConversation:
		noun = "turn"
	case store.KindFile, store.KindSynthesis, store.KindAnalysis:
		return "Interrupted: Earshot stopped before it ended"
	}
	return "Interrupted: " + plural(s.Segments, noun) + " saved"
}

// sessionOutcome says how a session ended, as history keeps it: when it
// failed, why; when it was interrupted, what it saved.
func sessionOutcome(s store.Session) string {
	switch {
	case s.Status == store.StatusInterrupted:
		return interruptedWords(s)
	case s.Status == store.StatusFailed && strings.TrimSpace(s.Error) != "":
		return sessionStatus(s.Status) + ": " + strings.TrimSpace(s.Error)
	}
	return sessionStatus(s.Status)
}

// sessionStatus names a session's status for people.
func sessionStatus(status string) string {
	switch status {
	case store.StatusRunning:
		return "In progress"
	case store.StatusDone:
		return "Done"
	case store.StatusFailed:
		return "Failed"
	case store.StatusCancelled:
		return "Cancelled"
	case store.StatusPartial:
		return "Partial"
	case store.StatusInterrupted:
		return "Interrupted"
	}
	return status
}

// snippetSegments turns a search snippet into text with the matched
// words in bold.
func snippetSegments(snippet string) []widget.RichTextSegment {
	style := widget.RichTextStyle{Inline: true, ColorName: theme.ColorNamePlaceHolder, SizeName: theme.SizeNameCaptionText}
	bold := style
	bold.ColorName = theme.ColorNameForeground
	bold.TextStyle = fyne.TextStyle{Bold: true}
	var segs []widget.RichTextSegment
	rest := strings.ReplaceAll(snippet, "\n", " ")
	for rest != "" {
		i := strings.Index(rest, store.HighlightStart)
		if i < 0 {
			segs = append(segs, &widget.TextSegment{Text: rest, Style: style})
			break
		}
		if i > 0 {
			segs = append(segs, &widget.TextSegment{Text: rest[:i], Style: style})
		}
		rest = rest[i+len(store.HighlightStart):]
		j := strings.Index(rest, store.HighlightEnd)
		if j < 0 {
			j = len(rest)
		}
		segs = append(segs, &widget.TextSegment{Text: rest[:j], Style: bold})
		rest = strings.TrimPrefix(rest[j:], store.HighlightEnd)
	}
	return segs
}

// updateControls enables the buttons that apply to the selection.
func (h *historyPanel) updateControls() {
	if h.open == nil {
		return
	}
	on := h.selected != 0
	live := on && h.isLive(h.selected)
	o := h.off
	// With nothing selected, that is why: no need to say it.
	why := func(off bool, words string) string {
		if !on || !off {
			return ""
		}
		return words
	}
	o.set(h.open, on && h.tab.live == nil && !h.tab.starting, why(!live, "While live captions run, a past session opens in a window of its own as you select it."))
	enable(h.export, on)
	enable(h.rename, on)
	o.set(h.del, on && !live, why(live, "The live session cannot be deleted while it records."))
	s, _ := h.selectedSession()
	notesWhy := why(!sessions.IsMeeting(s.Kind), "Meeting notes are for live captions and conversations, not a file.")
	if live {
		notesWhy = "Meeting notes are written once the session ends."
	}
	o.set(h.notesB, h.selectedMeeting() != 0, notesWhy)
	o.set(h.rerunB, on && h.canRerun == h.selected && !live,
		why(!live && h.rerunAsk == h.selected && h.canRerun != h.selected, "Re-run needs the entry's audio, which was not kept (Settings, Keep audio, keeps it)."))
	o.show()
}

// isLive reports whether id is the live session, which cannot be deleted
// while it records.
func (h *historyPanel) isLive(id int64) bool {
	return h.tab.live != nil && h.tab.live.id == id
}

// captionsHistoryKinds are the kinds of session the Captions tab's history
// lists and searches: what was transcribed (live, from a file, or as a
// conversation). Syntheses and analyses have their own tabs' histories.
var captionsHistoryKinds = []string{store.KindCaptions, store.KindFile, store.KindConversation}

// reload lists the sessions again, off the UI goroutine.
func (h *historyPanel) reload() {
	h.loadGen++
	gen := h.loadGen
	started := h.tab.app.goAsync(func(ctx context.Context) {
		list, err := h.tab.app.ws.Sessions(ctx, store.Filter{Kinds: captionsHistoryKinds, Limit: historyLimit})
		h.tab.app.onUI(func() {
			if gen == h.loadGen {
				h.setSessions(list, err)
			}
			h.tab.app.loaded(partHistory, err)
		})
	})
	if !started {
		h.tab.app.loaded(partHistory, nil)
	}
}

func (h *historyPanel) setSessions(list []store.Session, err error) {
	if err != nil {
		h.tab.app.log.Warn("list the history", "err", err)
		h.empty.SetText(plainError(err))
		h.empty.Show()
		return
	}
	h.all = list
	h.tab.historyLoaded(list)
	if h.query != "" {
		h.runSearch(h.query, 0) // the hits may have changed
		return
	}
	h.setRows(rowsOf(list), "Sessions you record or transcribe are kept here.")
}

func rowsOf(list []store.Session) []historyEntry {
	rows := make([]historyEntry, len(list))
	for i, s := range list {
		rows[i] = historyEntry{s: s}
	}
	return rows
}

// setRows shows rows, keeping the selection when its session is among
// them; emptyText says why the list is empty.
func (h *historyPanel) setRows(rows []historyEntry, emptyText string) {
	h.rows = rows
	h.list.Refresh()
	if len(rows) == 0 {
		h.empty.SetText(emptyText)
		h.empty.Show()
	} else {
		h.empty.Hide()
	}
	h.quiet = true
	defer func() { h.quiet = false }()
	for i, r := range rows {
		if r.s.ID == h.selected && h.selected != 0 {
			h.list.Select(i)
			h.updateControls()
			return
		}
	}
	h.list.UnselectAll()
	h.selected = 0
	h.updateControls()
}

// onFocusSearch puts the cursor in the search box (Ctrl+F).
func (h *historyPanel) onFocusSearch() {
	if c := h.tab.app.window.Canvas(); c != nil {
		c.Focus(h.search)
	}
}

// onSearchChanged searches the history as the user types: the previous
// search is cancelled, and this one waits for the typing to pause.
func (h *historyPanel) onSearchChanged(q string) {
	h.query = strings.TrimSpace(q)
	delay := searchDelay
	if h.tab.app.opts.searchDelay > 0 {
		delay = h.tab.app.opts.searchDelay
	}
	h.runSearch(h.query, delay)
}

// runSearch searches for q after delay, cancelling the search before.
// An empty q lists every session again.
func (h *historyPanel) runSearch(q string, delay time.Duration) {
	if h.cancelSearch != nil {
		h.cancelSearch()
		h.cancelSearch = nil
	}
	h.searchGen++
	gen := h.searchGen
	if q == "" {
		h.heading.SetText("History")
		h.setRows(rowsOf(h.all), "Sessions you record or transcribe are kept here.")
		return
	}
	h.cancelSearch = h.tab.app.debounced(delay, func(ctx context.Context) func() {
		hits, err := h.tab.app.ws.Search(ctx, q, searchHits, captionsHistoryKinds...)
		return func() {
			if gen == h.searchGen {
				h.showHits(q, hits, err)
			}
		}
	})
}

// debounced runs find off the UI goroutine once delay has passed, then
// what find returns on the UI goroutine, unless the CancelFunc it returns
// is called first (as a newer search does) or the window closes.
func (a *App) debounced(delay time.Duration, find func(ctx context.Context) (show func())) context.CancelFunc {
	ctx, cancel := context.WithCancel(a.ctx)
	started := a.goAsync(func(context.Context) {
		defer cancel()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		show := find(ctx)
		if ctx.Err() != nil {
			return // a newer search replaced this one
		}
		a.onUI(show)
	})
	if !started {
		cancel()
	}
	return cancel
}

// showHits lists the sessions a search found, best match first, each with
// its best snippet.
func (h *historyPanel) showHits(q string, hits []store.Hit, err error) {
	if err != nil {
		h.tab.app.log.Warn("search the history", "err", err)
		h.setRows(nil, plainError(err))
		return
	}
	byID := make(map[int64]store.Session, len(h.all))
	for _, s := range h.all {
		byID[s.ID] = s
	}
	var rows []historyEntry
	seen := map[int64]bool{}
	for _, hit := range hits {
		s, ok := byID[hit.SessionID]
		if !ok || seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		rows = append(rows, historyEntry{s: s, snippet: hit.Snippet})
	}
	h.heading.SetText(fmt.Sprintf("History: %s matching “%s”", plural(len(rows), "session"), q))
	h.setRows(rows, fmt.Sprintf("Nothing in the history matches “%s”.", q))
}

// follow selects the session the caption view now shows (0 for none),
// however it came there: opened from this list, from the History tab, a
// file just transcribed, the live session. The list's buttons act on the
// selection, so it must name what is on screen, not what was clicked
// before. A session not among the rows (a search hides it) leaves nothing
// selected, and the buttons off.
func (h *historyPanel) follow(id int64) {
	if h.list == nil || (id == h.selected && id != 0) {
		return
	}
	h.selected, h.canRerun = id, 0
	h.quiet = true
	defer func() { h.quiet = false }()
	found := false
	for i, r := range h.rows {
		if id != 0 && r.s.ID == id {
			h.list.Select(i)
			found = true
			break
		}
	}
	if !found {
		h.list.UnselectAll()
	}
	h.updateControls()
	if id != 0 {
		h.checkRerun(id)
	}
}

// selectedSession returns the selected session.
func (h *historyPanel) selectedSession() (store.Session, bool) {
	for _, r := range h.rows {
		if r.s.ID == h.selected && h.selected != 0 {
			return r.s, true
		}
	}
	return store.Session{}, false
}

func (h *historyPanel) onSelected(id widget.ListItemID) {
	if h.quiet || id >= len(h.rows) {
		return
	}
	h.selected = h.rows[id].s.ID
	h.updateControls()
	h.checkRerun(h.selected)
	if h.tab.live == nil && !h.tab.starting {
		h.tab.openSession(h.rows[id].s)
	}
}

func (h *historyPanel) onOpen() {
	if s, ok := h.selectedSession(); ok {
		h.tab.openSession(s)
	}
}

// selectedMeeting returns the id of the selected session when it is a
// meeting that is not recording, whose notes Meeting notes shows; else 0.
func (h *historyPanel) selectedMeeting() int64 {
	if s, ok := h.selectedSession(); ok && sessions.IsMeeting(s.Kind) && !h.isLive(s.ID) {
		return s.ID
	}
	return 0
}

func (h *historyPanel) onExport() {
	if s, ok := h.selectedSession(); ok {
		h.tab.exportSession(s.ID, s.Title)
	}
}

// onRename asks for a new title for the selected session.
func (h *historyPanel) onRename() {
	s, ok := h.selectedSession()
	if !ok {
		return
	}
	h.tab.app.askTitle("Rename session", s.Title, h.tab.setStatus, func(title string) { h.renameSession(s, title) })
}

// askTitle asks for a new title of a history entry, starting from old,
// under heading; rename gets it trimmed, never empty. warn says on the
// tab's status line that a title is too long.
func (a *App) askTitle(heading, old string, warn func(string, widget.Importance), rename func(string)) {
	entry := newBoundedEntry(shortLimit, func(p string) {
		warn(tooLongWords("A title", len(p), shortLimit), widget.WarningImportance)
	})
	entry.SetText(old)
	entry.Validator = func(t string) error {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("a title cannot be empty")
		}
		return nil
	}
	// Fyne reports a focused entry's errors only once it loses the
	// focus, and the dialog focuses it: without this, Rename stays
	// enabled for an empty title.
	entry.AlwaysShowValidationError = true
	d := dialog.NewForm(heading, "Rename", "Cancel",
		[]*widget.FormItem{widget.NewFormItem("Title", entry)},
		func(ok bool) {
			if ok {
				rename(strings.TrimSpace(entry.Text))
			}
		}, a.window)
	// Enter renames, as Rename does (and as it, not with an empty title).
	entry.OnSubmitted = func(string) { d.Submit() }
	d.Resize(fyne.NewSize(460, d.MinSize().Height))
	d.Show()
	a.window.Canvas().Focus(entry)
}

// renameSession saves a session's new title.
func (h *historyPanel) renameSession(s store.Session, title string) {
	h.tab.app.goAsync(func(ctx context.Context) {
		err := h.tab.app.ws.RenameSession(ctx, s.ID, title)
		h.tab.app.onUI(func() {
			if err != nil {
				h.tab.showError("rename a session", err)
				return
			}
			h.tab.shownRenamed(s.ID, title)
			h.tab.setStatus("Renamed to “"+title+"”.", widget.MediumImportance)
			h.tab.app.historyChanged(s.Kind)
		})
	})
}

// onDelete asks to confirm, then deletes the selected session.
func (h *historyPanel) onDelete() {
	s, ok := h.selectedSession()
	if !ok || h.isLive(s.ID) {
		return
	}
	d := dialog.NewConfirm("Delete session?",
		fmt.Sprintf("“%s” and its transcript will be deleted. This cannot be undone.", s.Title),
		func(ok bool) {
			if ok {
				h.deleteSession(s)
			}
		}, h.tab.app.window)
	d.SetConfirmText("Delete")
	d.SetConfirmImportance(widget.DangerImportance)
	d.SetDismissText("Keep")
	d.Show()
}

// deleteSession removes a session from history.
func (h *historyPanel) deleteSession(s store.Session) {
	h.tab.app.goAsync(func(ctx context.Context) {
		err := h.tab.app.ws.DeleteSession(ctx, s.ID)
		h.tab.app.onUI(func() {
			if err != nil {
				h.tab.showError("delete a session", err)
				return
			}
			if h.selected == s.ID {
				h.selected = 0
			}
			h.tab.shownDeleted(s.ID)
			h.tab.setStatus("Deleted “"+s.Title+"”.", widget.MediumImportance)
			h.tab.app.historyChanged(s.Kind)
		})
	})
}

// openSession shows a past session in the caption view, read off the UI
// goroutine, or in a window of its own while live captions run.
func (c *captionsTab) openSession(s store.Session) {
	if c.live != nil || c.starting {
		// The view is the live session's: the past one opens beside it.
		c.app.openPastWindow(s, 0, false)
		return
	}
	c.opens++
	open := c.opens
	c.app.goAsync(func(ctx context.Context) {
		t, err := c.app.ws.Transcript(ctx, s.ID)
		hasNotes := false
		if err == nil && sessions.IsMeeting(s.Kind) {
			_, nerr := c.app.ws.SavedNotes(ctx, s.ID)
			hasNotes = nerr == nil
		}
		c.app.onUI(func() {
			if c.live != nil || c.starting || open != c.opens {
				return
			}
			if err != nil {
				c.showError("open a session", err)
				return
			}
			info, entities := sessionDetails(s, c.app.now()), ""
			if t.Response != nil {
				info, entities = fileInfo(t.Response, s.Model, requestedDiarization(s.Options))
			} else {
				info = joinDot(info, s.Model, plural(len(t.Captions), "caption"))
			}
			c.showTranscript(s.ID, s.Title, t.Captions, info, entities, s.Status)
			c.app.fileIntel.show(s.Title, t.Response)
			opened := "Opened “" + s.Title + "”."
			if hasNotes {
				opened += " It has meeting notes: Notes shows them."
			}
			c.setStatus(opened, widget.MediumImportance)
		})
	})
}

// stackedLayout puts a title above a line of details, closer than two
// labels in a box would be: their inner paddings overlap.
type stackedLayout struct{}

func (stackedLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	overlap := theme.InnerPadding()
	for i, o := range objects {
		h := o.MinSize().Height
		if i > 0 {
			y -= overlap
		}
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

func (stackedLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for i, o := range objects {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
		if i > 0 {
			s.Height -= theme.InnerPadding()
		}
	}
	return s
}
