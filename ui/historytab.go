package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// historyPage is how many sessions the History tab reads at a time: the
// list asks for the next page as it scrolls near the end of those read,
// so a history of any size is never read whole.
const historyPage = 100

// historyPageMargin is how close to the end of the rows read the list
// must be shown before the next page is read.
const historyPageMargin = 20

// historySearchHits bounds the sessions one search of the History tab lists.
const historySearchHits = store.DefaultHits

// undoDelay is how long a deleted entry can be put back.
const undoDelay = 5 * time.Second

// historyKindChoices are the kind filter's options, "" for every kind.
var historyKindChoices = []struct{ kind, name string }{
	{"", "All kinds"},
	{store.KindCaptions, "Captions"},
	{store.KindFile, "Files"},
	{store.KindConversation, "Conversations"},
	{store.KindSynthesis, "Syntheses"},
	{store.KindAgent, "Agent"},
	{store.KindAnalysis, "Analyses"},
}

// The date filter's options.
const (
	dateAny   = "Any time"
	dateToday = "Today"
	date7     = "Last 7 days"
	date30    = "Last 30 days"
	dateSince = "Since a date…"
)

// historyTab is the History tab: every kind of session in one list,
// newest first, read a page at a time, filtered by kind and date and
// searched by words; an entry opens in the tab of its kind, and is
// renamed, exported or deleted (with a few seconds to undo) here.
//
// Its fields are touched only on the UI goroutine, but for clock, which
// tests set before they act.
type historyTab struct {
	app *App
	ui  lazyTab

	search  *boundedEntry
	kind    *widget.Select
	date    *widget.Select
	since   *boundedEntry // the date typed for dateSince
	heading *widget.Label
	list    *widget.List
	empty   *widget.Label
	open    *widget.Button
	rename  *widget.Button
	del     *widget.Button
	export  *widget.Button
	rerun   *widget.Button
	status  *widget.Label
	undoBar *fyne.Container
	undoMsg *widget.Label

	rows     []historyEntry
	selected int64 // the selected session's id, 0 for none
	hasAudio bool  // the selected session has its audio kept
	audioOf  int64 // the session hasAudio was last found out for
	off      *offWhy
	quiet    bool // selecting in code

	gen     int          // counts loads and searches: only the latest one's answer is shown
	more    bool         // another page may follow the rows read
	paging  bool         // a page is being read
	cursor  store.Cursor // the last session read
	query   string
	cancelQ context.CancelFunc
	self    bool // historyChanged was called by this tab

	hidden  map[int64]bool // deleted, waiting for the undo to pass
	pending *pendingDelete

	// clock paces the undo; nil is the system's.
	clock esclock.Clock
	// readyQuery is the search ShowHistorySearch asked for, whose hits
	// OnReady waits for; "" once they are shown.
	readyQuery string
	// pageShown, when not nil, is called after every page or search is
	// on screen, with how many rows the list holds. The benchmark uses it.
	pageShown func(rows int)
}

// historyEntry is one row of a history list: a session and, in a
// search, what matched.
type historyEntry struct {
	s       store.Session
	snippet string
	at      float64 // where the match is in the recording
	hasAt   bool    // the match is a caption, at at
}

func newHistoryTab(a *App) *historyTab {
	return &historyTab{app: a, hidden: map[int64]bool{}, off: newOffWhy()}
}

// buildUI creates the tab's widgets.
func (t *historyTab) buildUI() fyne.CanvasObject {
	t.search = newBoundedEntry(shortLimit, func(p string) {
		t.setStatus(tooLongWords("Search", len(p), shortLimit), widget.WarningImportance)
	})
	t.search.SetPlaceHolder("Search every word kept")
	t.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	t.search.OnChanged = t.onSearchChanged

	kinds := make([]string, len(historyKindChoices))
	for i, k := range historyKindChoices {
		kinds[i] = k.name
	}
	t.kind = widget.NewSelect(kinds, func(string) { t.reload() })
	setSelected(t.kind, kinds[0])
	t.date = widget.NewSelect([]string{dateAny, dateToday, date7, date30, dateSince}, func(string) { t.onDateChanged() })
	setSelected(t.date, dateAny)
	t.since = newBoundedEntry(len("2006-01-02")+4, nil)
	t.since.SetPlaceHolder("YYYY-MM-DD")
	t.since.OnChanged = func(string) { t.onDateChanged() }
	t.since.Hide()

	t.heading = widget.NewLabelWithStyle("Every session, newest first", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.heading.Truncation = fyne.TextTruncateEllipsis
	t.list = newHistoryList(func() []historyEntry { return t.rows }, t.app.now, func(id widget.ListItemID) {
		if id >= len(t.rows)-historyPageMargin {
			t.nextPage()
		}
	})
	t.list.OnSelected = func(id widget.ListItemID) {
		if !t.quiet && id < len(t.rows) {
			t.selected = t.rows[id].s.ID
			t.checkAudio(t.rows[id].s)
			t.updateControls()
		}
	}
	t.list.OnUnselected = func(widget.ListItemID) {
		if !t.quiet {
			t.selected = 0
			t.updateControls()
		}
	}
	t.empty = newHistoryEmpty()

	t.open = widget.NewButtonWithIcon("Open", theme.FileIcon(), t.onOpen)
	t.open.Importance = widget.HighImportance
	t.rename = widget.NewButtonWithIcon("Rename", theme.DocumentCreateIcon(), t.onRename)
	t.export = widget.NewButtonWithIcon("Export", theme.DownloadIcon(), t.onExport)
	t.del = widget.NewButtonWithIcon("Delete", theme.DeleteIcon(), t.onDelete)
	t.rerun = widget.NewButtonWithIcon("Re-run…", theme.MediaReplayIcon(), t.onRerun)
	t.status = widget.NewLabel("")
	t.status.Truncation = fyne.TextTruncateEllipsis
	t.undoMsg = widget.NewLabel("")
	t.undoMsg.Truncation = fyne.TextTruncateEllipsis
	t.undoBar = container.NewBorder(nil, nil, nil, widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), t.onUndo), t.undoMsg)
	t.undoBar.Hide()
	t.updateControls()

	t.app.watchHistory(func(string) {
		if !t.self {
			t.reload()
		}
	})

	filters := container.NewHBox(t.kind, t.date, container.New(widthLayout{width: 130}, t.since))
	top := container.NewVBox(container.NewBorder(nil, nil, nil, filters, t.search), t.heading)
	buttons := container.NewHBox(t.open, t.rename, t.export, t.del, t.rerun)
	bottom := container.NewVBox(t.undoBar, container.NewBorder(nil, nil, buttons, nil, t.status), t.off.line)
	body := container.NewStack(t.list, container.NewVBox(t.empty))
	defer t.reload()
	return container.NewPadded(container.NewBorder(top, bottom, nil, nil, body))
}

// setStatus shows what happened, in the tab's status line.
func (t *historyTab) setStatus(text string, imp widget.Importance) {
	t.status.Importance = imp
	t.status.SetText(text)
}

// showError tells what could not be done, in plain words.
func (t *historyTab) showError(what string, err error) {
	t.app.log.Warn(what, "err", err)
	t.setStatus("Could not "+what+": "+plainError(err), widget.DangerImportance)
	t.app.noteStatus(t.status, err, "")
}

// fillHistoryRow fills a row of a history list (newHistoryItem): the
// kind's icon, the title, and a line of details or, in a search, the
// words that matched and where. The History tab and the Captions tab's
// history panel show their rows so.
func fillHistoryRow(r historyEntry, row *fyne.Container, now time.Time) {
	var icon *widget.Icon
	var lines *fyne.Container
	for _, o := range row.Objects {
		switch o := o.(type) {
		case *widget.Icon:
			icon = o
		case *fyne.Container:
			lines = o
		}
	}
	icon.SetResource(kindIcon(r.s.Kind))
	lines.Objects[0].(*widget.Label).SetText(r.s.Title)
	detail := lines.Objects[1].(*widget.RichText)
	style := widget.RichTextStyle{Inline: true, ColorName: theme.ColorNamePlaceHolder, SizeName: theme.SizeNameCaptionText}
	if r.snippet != "" {
		prefix := kindName(r.s.Kind)
		if r.hasAt {
			prefix += " at " + timecode.Of(r.at)
		}
		detail.Segments = append([]widget.RichTextSegment{&widget.TextSegment{Text: prefix + ": ", Style: style}}, snippetSegments(r.snippet)...)
	} else {
		detail.Segments = []widget.RichTextSegment{&widget.TextSegment{
			Text:  joinDot(kindName(r.s.Kind), sessionDetails(r.s, now)),
			Style: style,
		}}
	}
	detail.Refresh()
}

// kindIcon is the icon of a kind of session: its tab's.
func kindIcon(kind string) fyne.Resource {
	switch kind {
	case store.KindFile:
		return theme.FileAudioIcon()
	case store.KindConversation:
		return theme.AccountIcon()
	case store.KindSynthesis:
		return theme.VolumeUpIcon()
	case store.KindAgent:
		return theme.MediaRecordIcon()
	case store.KindAnalysis:
		return theme.DocumentIcon()
	}
	return micIcon
}

// kindName names a kind of session for people, in the singular.
func kindName(kind string) string {
	switch kind {
	case store.KindCaptions:
		return "Captions"
	case store.KindFile:
		return "File"
	case store.KindConversation:
		return "Conversation"
	case store.KindSynthesis:
		return "Synthesis"
	case store.KindAgent:
		return "Agent"
	case store.KindAnalysis:
		return "Analysis"
	}
	return kind
}

// filter is what the kind and date filters keep; ok is false while the
// date typed is not a date.
func (t *historyTab) filter() (f store.Filter, ok bool) {
	for _, k := range historyKindChoices {
		if k.name == t.kind.Selected {
			f.Kind = k.kind
		}
	}
	now := t.app.now()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	switch t.date.Selected {
	case dateToday:
		f.Since = today
	case date7:
		f.Since = today.AddDate(0, 0, -6)
	case date30:
		f.Since = today.AddDate(0, 0, -29)
	case dateSince:
		day, err := time.ParseInLocation(time.DateOnly, strings.TrimSpace(t.since.Text), now.Location())
		if err != nil {
			return f, false
		}
		f.Since = day
	}
	return f, true
}

// onDateChanged shows the date field for dateSince and lists again.
func (t *historyTab) onDateChanged() {
	if t.date.Selected == dateSince {
		t.since.Show()
		if t.app.window != nil && t.app.window.Canvas() != nil && t.since.Text == "" {
			t.app.window.Canvas().Focus(t.since)
		}
	} else {
		t.since.Hide()
	}
	t.reload()
}

// reload lists the history again from its newest entry, or searches
// again.
func (t *historyTab) reload() {
	if t.list == nil {
		return
	}
	t.gen++
	t.paging, t.more, t.cursor = false, false, store.Cursor{}
	if t.cancelQ != nil {
		t.cancelQ()
		t.cancelQ = nil
	}
	f, ok := t.filter()
	if !ok {
		t.setRows(nil, "Type a date as YYYY-MM-DD, such as "+t.app.now().AddDate(0, 0, -7).Format(time.DateOnly)+".")
		return
	}
	if t.query != "" {
		t.runSearch(t.query, f, 0)
		return
	}
	t.heading.SetText("Every session, newest first")
	t.rows = nil
	t.more = true
	t.nextPage()
}

// nextPage reads the page of sessions after those listed, when there may
// be one and none is being read.
func (t *historyTab) nextPage() {
	if !t.more || t.paging || t.query != "" {
		return
	}
	f, ok := t.filter()
	if !ok {
		return
	}
	f.Limit, f.Before = historyPage, t.cursor
	t.paging = true
	gen := t.gen
	started := t.app.goAsync(func(ctx context.Context) {
		list, err := t.app.ws.Sessions(ctx, f)
		t.app.onUI(func() {
			if gen != t.gen {
				return
			}
			t.paging = false
			if err != nil {
				t.more = false
				t.showError("list the history", err)
				t.setRows(t.rows, plainError(err))
				return
			}
			t.more = len(list) == historyPage
			if len(list) > 0 {
				t.cursor = store.CursorOf(list[len(list)-1])
			}
			rows := t.rows
			for _, s := range list {
				if !t.hidden[s.ID] {
					rows = append(rows, historyEntry{s: s})
				}
			}
			t.setRows(rows, "Nothing kept yet: what you transcribe, speak, ask or analyse is listed here.")
			if f.Kind != "" || !f.Since.IsZero() {
				t.empty.SetText("Nothing kept matches these filters.")
			}
		})
	})
	if !started {
		t.paging = false
	}
}

// setRows shows rows, keeping the selection when it is among them;
// emptyText says why the list is empty.
func (t *historyTab) setRows(rows []historyEntry, emptyText string) {
	t.rows = rows
	t.list.Refresh()
	if len(rows) == 0 {
		t.empty.SetText(emptyText)
		t.empty.Show()
	} else {
		t.empty.Hide()
	}
	t.quiet = true
	defer func() { t.quiet = false }()
	found := false
	for i, r := range rows {
		if r.s.ID == t.selected && t.selected != 0 {
			t.list.Select(i)
			found = true
			break
		}
	}
	if !found {
		t.list.UnselectAll()
		t.selected = 0
	}
	t.updateControls()
	if t.pageShown != nil {
		t.pageShown(len(rows))
	}
}

// onSearchChanged searches as the user types: the search before is
// cancelled, and this one waits for the typing to pause.
func (t *historyTab) onSearchChanged(q string) {
	t.query = strings.TrimSpace(q)
	if t.query == "" {
		t.reload()
		return
	}
	delay := searchDelay
	if t.app.opts.searchDelay > 0 {
		delay = t.app.opts.searchDelay
	}
	f, ok := t.filter()
	if !ok {
		t.reload()
		return
	}
	t.gen++
	t.runSearch(t.query, f, delay)
}

// runSearch searches for q among what f keeps, after delay, cancelling
// the search before.
func (t *historyTab) runSearch(q string, f store.Filter, delay time.Duration) {
	if t.cancelQ != nil {
		t.cancelQ()
	}
	gen := t.gen
	t.cancelQ = t.app.debounced(delay, func(ctx context.Context) func() {
		hits, err := t.app.ws.SearchHistory(ctx, q, historySearchHits, f)
		return func() {
			if gen == t.gen {
				t.showHits(q, hits, err)
			}
		}
	})
}

// showHits lists the sessions a search found, best first, each with its
// best snippet and, for a caption, where it was said.
func (t *historyTab) showHits(q string, hits []sessions.HistoryHit, err error) {
	if err != nil {
		t.showError("search the history", err)
		t.setRows(nil, plainError(err))
		return
	}
	var rows []historyEntry
	for _, h := range hits {
		if t.hidden[h.SessionID] {
			continue
		}
		rows = append(rows, historyEntry{s: h.Session, snippet: h.Snippet, at: h.Start, hasAt: h.Located})
	}
	t.heading.SetText(fmt.Sprintf("%s matching “%s”, best first", plural(len(rows), "session"), q))
	t.setRows(rows, fmt.Sprintf("Nothing kept matches “%s”.", q))
	if t.readyQuery != "" && q == t.readyQuery {
		t.readyQuery = ""
		t.app.loaded(partHistorySearch, err)
	}
}

// partHistorySearch is the search of ShowHistorySearch, which OnReady
// waits for.
const partHistorySearch = "historysearch"

// ShowHistorySearch opens the History tab searching for q; OnReady waits
// for the hits to be on screen. Screenshots use it. Call it before
// ShowAndRun.
func (a *App) ShowHistorySearch(q string) bool {
	if !a.SelectTab("History") {
		return false
	}
	a.waiting[partHistorySearch] = true
	a.history.readyQuery = strings.TrimSpace(q)
	a.history.search.SetText(q)
	return true
}

// selectedEntry returns the selected row.
func (t *historyTab) selectedEntry() (historyEntry, bool) {
	for _, r := range t.rows {
		if r.s.ID == t.selected && t.selected != 0 {
			return r, true
		}
	}
	return historyEntry{}, false
}

// updateControls enables the buttons that apply to the selection.
func (t *historyTab) updateControls() {
	if t.open == nil {
		return
	}
	r, on := t.selectedEntry()
	running := on && r.s.Status == store.StatusRunning
	enable(t.open, on)
	enable(t.rename, on)
	enable(t.export, on)
	why := ""
	if running {
		why = "An entry still in progress cannot be deleted."
	}
	t.off.set(t.del, on && !running, why)
	why = ""
	if on && t.audioOf == r.s.ID && !t.hasAudio {
		why = "Re-run needs the entry's audio, which was not kept (Settings, Keep audio, keeps it)."
	}
	t.off.set(t.rerun, on && t.hasAudio, why)
	t.off.show()
}

// checkAudio finds out, off the UI goroutine, whether s has its audio
// kept, for Re-run and, for a synthesis, Export.
func (t *historyTab) checkAudio(s store.Session) {
	t.hasAudio = false
	t.app.goAsync(func(ctx context.Context) {
		ok, err := t.app.ws.HasAudio(ctx, s.ID)
		if err != nil {
			t.app.log.Warn("look for a session's audio", "session", s.ID, "err", err)
		}
		t.app.onUI(func() {
			if t.selected == s.ID {
				t.hasAudio = ok
				if err == nil {
					t.audioOf = s.ID
				}
				t.updateControls()
			}
		})
	})
}

// onRerun runs the selected entry's audio again (rerun.go).
func (t *historyTab) onRerun() {
	if r, ok := t.selectedEntry(); ok && t.hasAudio {
		t.app.showRerun(r.s)
	}
}

// notifyChanged tells the other history lists that records of kind
// changed, without listing this tab again: it already shows the change.
func (t *historyTab) notifyChanged(kind string) {
	t.self = true
	defer func() { t.self = false }()
	t.app.historyChanged(kind)
}
