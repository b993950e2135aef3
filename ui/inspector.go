package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// inspectorShortcut opens the wire inspector from any tab.
var inspectorShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyI, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}

const (
	inspectorTitle = "Earshot wire inspector"
	// inspectorLive is the picker's choice of what goes over the wire now.
	inspectorLive = "Live: every message"
	// inspectorRepaint is the least time between two repaints of the live
	// list: a stream sends dozens of frames a second.
	inspectorRepaint = 250 * time.Millisecond
	// inspectorSessions is how many past sessions the picker offers.
	inspectorSessions = 50
)

// inspector is the wire inspector: a window, opened from any tab, listing
// every request and message of the live connections or of one past
// session, with a search, the details of the selected message and an
// export as JSON lines. What it shows is already redacted by api: never
// the key or a token.
//
// Its fields are touched only on the UI goroutine, except that the
// watcher goroutine only reads ins and the channels it was given.
type inspector struct {
	app *App
	ins *sessions.Inspector

	window   fyne.Window
	picker   *widget.Select
	search   *widget.Entry
	list     *widget.List
	wantMark string // the marker InspectMarked asked for, until a message has it
	details  *widget.Label
	count    *widget.Label
	export   *widget.Button

	// sessions are the past sessions the picker offers, by its option.
	sessions map[string]int64
	// session is the past session shown, 0 for the live events.
	session int64
	// events are the events of the choice, oldest first; shown are
	// those the search keeps.
	events   []sessions.WireEvent
	shown    []int  // indexes in events
	lastSeq  uint64 // the last live event read
	selected int    // index in shown, -1 for none
	// load counts the loads of a past session, so that one answered late
	// is dropped.
	load int
	// stopWatch ends the live watcher; nil while none runs.
	stopWatch context.CancelFunc
	visible   bool
}

func newInspector(a *App) *inspector {
	return &inspector{app: a, ins: a.ws.Inspector(), selected: -1, sessions: map[string]int64{}}
}

// ShowInspector opens the wire inspector, as its button does. It is safe
// to call from any goroutine, and before ShowAndRun: the window opens on
// the UI goroutine, after the main window. Tools that screenshot the
// inspector use it.
func (a *App) ShowInspector() { a.onUI(a.wire.show) }

// InspectMarked selects, in the inspector, the first message that
// carries the latency marker (sessions.MarkFirstFinal, ...), as soon as
// there is one, and shows its details. The screenshots use it.
func (a *App) InspectMarked(marker string) {
	a.onUI(func() {
		a.wire.wantMark = marker
		a.wire.selectWanted()
	})
}

// selectWanted selects the first message shown with the marker asked for
// by InspectMarked, once.
func (in *inspector) selectWanted() {
	if in.wantMark == "" || in.list == nil {
		return
	}
	for i, ev := range in.shown {
		if in.events[ev].Marker == in.wantMark {
			in.wantMark = ""
			in.list.ScrollTo(max(i-3, 0))
			in.list.Select(i)
			return
		}
	}
}

// toggle shows the inspector, or hides it when it is shown (its
// shortcut). Call it on the UI goroutine.
func (in *inspector) toggle() {
	if in.visible {
		in.hide()
		return
	}
	in.show()
}

// show shows the inspector, or brings it forward. Call it on the UI
// goroutine.
func (in *inspector) show() {
	if in.window == nil {
		in.build()
	}
	in.visible = true
	in.window.Show()
	in.window.RequestFocus()
	if in.stopWatch == nil {
		in.watch()
	}
	in.loadSessions()
}

func (in *inspector) build() {
	w := in.app.app.NewWindow(inspectorTitle)
	in.window = w
	w.SetIcon(icon)
	w.SetCloseIntercept(in.hide)

	in.picker = widget.NewSelect([]string{inspectorLive}, nil)
	in.picker.SetSelected(inspectorLive)
	in.search = widget.NewEntry()
	in.search.SetPlaceHolder("Search messages")
	in.search.OnChanged = func(string) { in.filter() }
	in.count = widget.NewLabel("")
	in.export = widget.NewButtonWithIcon("Export…", theme.DownloadIcon(), in.onExport)

	in.list = widget.NewList(func() int { return len(in.shown) }, newInspectorRow, func(i widget.ListItemID, o fyne.CanvasObject) {
		if i < len(in.shown) {
			fillInspectorRow(o, in.events[in.shown[i]])
		}
	})
	in.list.OnSelected = func(i widget.ListItemID) {
		in.selected = i
		if i < len(in.shown) {
			in.details.SetText(describeWire(in.events[in.shown[i]]))
		}
	}
	in.details = widget.NewLabel("Select a message to see it whole.")
	in.details.Wrapping = fyne.TextWrapBreak
	in.details.TextStyle.Monospace = true

	top := container.NewBorder(nil, nil, in.picker, container.NewHBox(in.count, in.export), in.search)
	split := container.NewVSplit(in.list, container.NewVScroll(in.details))
	split.Offset = 0.6
	w.SetContent(container.NewBorder(container.NewPadded(top), nil, nil, nil, split))
	in.picker.OnChanged = in.onPick
	w.Canvas().AddShortcut(inspectorShortcut, func(fyne.Shortcut) { in.hide() })
	w.Resize(fyne.NewSize(900, 600))
}

// hide closes the window (it is built again only if lost) and stops
// watching.
func (in *inspector) hide() {
	if in.stopWatch != nil {
		in.stopWatch()
		in.stopWatch = nil
	}
	in.visible = false
	in.window.Hide()
}

// watch starts the goroutine that tells the window of new live events, at
// most every inspectorRepaint.
func (in *inspector) watch() {
	ctx, cancel := context.WithCancel(in.app.ctx)
	sig, unsubscribe := in.ins.Subscribe()
	in.stopWatch = func() {
		cancel()
		unsubscribe()
	}
	in.app.goAsync(func(app context.Context) {
		defer unsubscribe()
		tick := in.app.clock.NewTicker(inspectorRepaint)
		defer tick.Stop()
		pending := true // show what came before the window opened
		for {
			select {
			case <-ctx.Done():
				return
			case <-app.Done():
				return
			case <-sig:
				pending = true
			case <-tick.C():
				if pending {
					pending = false
					in.app.onUI(func() {
						if ctx.Err() == nil {
							in.catchUp()
						}
					})
				}
			}
		}
	})
	in.catchUp()
}

// catchUp adds the live events that came since the last look.
func (in *inspector) catchUp() {
	if in.session != 0 {
		return
	}
	fresh := in.ins.Since(in.lastSeq)
	if len(fresh) == 0 {
		return
	}
	in.lastSeq = fresh[len(fresh)-1].Seq
	from := len(in.events)
	if from == 0 {
		in.events = fresh // Since's copy is the window's own
	} else {
		in.events = append(in.events, fresh...)
	}
	if over := len(in.events) - sessions.DefaultInspectorCapacity; over > 0 {
		in.events = append([]sessions.WireEvent(nil), in.events[over:]...)
		in.filter()
		return
	}
	q := in.search.Text
	for i := from; i < len(in.events); i++ {
		if in.events[i].Matches(q) {
			in.shown = append(in.shown, i)
		}
	}
	in.showCount()
	in.list.Refresh()
	in.selectWanted()
}

// filter keeps the events the search finds.
func (in *inspector) filter() {
	q := in.search.Text
	in.shown = in.shown[:0]
	for i := range in.events {
		if in.events[i].Matches(q) {
			in.shown = append(in.shown, i)
		}
	}
	in.list.UnselectAll()
	in.selected = -1
	in.showCount()
	in.list.Refresh()
}

func (in *inspector) showCount() {
	if len(in.shown) == len(in.events) {
		in.count.SetText(strconv.Itoa(len(in.events)) + " messages")
		return
	}
	in.count.SetText(fmt.Sprintf("%d of %d", len(in.shown), len(in.events)))
}

// loadSessions offers the latest sessions in the picker.
func (in *inspector) loadSessions() {
	in.app.goAsync(func(ctx context.Context) {
		list, err := in.app.ws.Sessions(ctx, store.Filter{Limit: inspectorSessions})
		in.app.onUI(func() {
			if err != nil {
				in.count.SetText("History unavailable: " + plainError(err))
				return
			}
			opts := []string{inspectorLive}
			in.sessions = map[string]int64{}
			for _, s := range list {
				name := sessionChoice(s)
				in.sessions[name] = s.ID
				opts = append(opts, name)
			}
			in.picker.SetOptions(opts)
		})
	})
}

// sessionChoice names a past session in the picker.
func sessionChoice(s store.Session) string {
	title := s.Title
	if r := []rune(title); len(r) > 30 {
		title = string(r[:29]) + "…"
	}
	return fmt.Sprintf("#%d %s: %s", s.ID, kindName(s.Kind), title)
}

// onPick shows the live events or a past session's.
func (in *inspector) onPick(choice string) {
	in.load++
	in.events, in.shown = nil, nil
	id := in.sessions[choice]
	in.session = id
	if id == 0 {
		in.lastSeq = 0
		in.catchUp()
		in.filter()
		return
	}
	in.filter()
	in.count.SetText("Loading…")
	load := in.load
	in.app.goAsync(func(ctx context.Context) {
		evs, err := in.ins.Session(ctx, id, "")
		in.app.onUI(func() {
			if load != in.load {
				return
			}
			if err != nil {
				in.count.SetText("Could not read: " + plainError(err))
				return
			}
			in.events = evs
			in.filter()
		})
	})
}

// onExport saves the messages shown (those the search keeps) as JSON
// lines.
func (in *inspector) onExport() {
	evs := make([]sessions.WireEvent, len(in.shown))
	for i, j := range in.shown {
		evs[i] = in.events[j]
	}
	name := "earshot-wire.jsonl"
	if in.session != 0 {
		name = fmt.Sprintf("earshot-wire-%d.jsonl", in.session)
	}
	in.app.askPath(pathRequest{title: "Export messages", confirm: "Save", save: true, extensions: []string{".jsonl"}, name: name}, func(path string) {
		in.app.goAsync(func(context.Context) {
			err := sessions.WriteFile(path, func(w io.Writer) error { return sessions.ExportWire(w, evs) })
			in.app.onUI(func() {
				if err != nil {
					in.count.SetText("Not saved: " + plainError(err))
					return
				}
				in.count.SetText(fmt.Sprintf("Saved %s to %s", plural(len(evs), "message"), filepath.Base(path)))
			})
		})
	})
}

// newInspectorRow is one line of the list: what the message is, and its
// latency marker.
func newInspectorRow() fyne.CanvasObject {
	what := widget.NewLabel("")
	what.TextStyle.Monospace = true
	what.Truncation = fyne.TextTruncateEllipsis
	mark := widget.NewLabel("")
	mark.Importance = widget.HighImportance
	return container.NewBorder(nil, nil, nil, mark, what)
}

func fillInspectorRow(o fyne.CanvasObject, e sessions.WireEvent) {
	c := o.(*fyne.Container)
	what, mark := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Label)
	what.SetText(inspectorLine(e))
	if e.Marker != "" {
		mark.SetText(e.Marker + " " + formatLatency(e.Latency))
	} else {
		mark.SetText("")
	}
}

// inspectorLine is a message in one line: time, direction, kind, what, size.
func inspectorLine(e sessions.WireEvent) string {
	arrow := "←"
	if e.Direction == api.WireSent {
		arrow = "→"
	}
	what := e.Path
	switch {
	case e.Message != "":
		what = e.Message
	case e.Kind == api.WireRequest:
		what = e.Method + " " + e.Path
	case e.Status != 0:
		what = e.Path + " " + strconv.Itoa(e.Status)
	}
	size := ""
	if e.Size > 0 {
		size = formatBytes(e.Size)
	}
	return fmt.Sprintf("%s %s %-8s %-28s %s", e.Time.Format("15:04:05.000"), arrow, e.Kind, what, size)
}

// describeWire is everything the inspector knows of a message.
func describeWire(e sessions.WireEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s %s", e.Time.Format("2006-01-02 15:04:05.000"), e.Direction, e.Kind)
	if e.Method != "" {
		fmt.Fprintf(&b, "  %s", e.Method)
	}
	fmt.Fprintf(&b, "  %s", e.Path)
	if e.Query != "" {
		fmt.Fprintf(&b, "?%s", e.Query)
	}
	b.WriteString("\n")
	if e.Status != 0 {
		fmt.Fprintf(&b, "Status %d  ", e.Status)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, "Request %s  ", e.RequestID)
	}
	fmt.Fprintf(&b, "Stream %d  Size %s", e.Stream, formatBytes(max(e.Size, 0)))
	if e.Elapsed > 0 {
		fmt.Fprintf(&b, "  Elapsed %s", formatLatency(e.Elapsed))
	}
	if e.Marker != "" {
		fmt.Fprintf(&b, "\n%s after %s", e.Marker, formatLatency(e.Latency))
	}
	if e.Text != "" {
		b.WriteString("\n\n")
		var pretty bytes.Buffer
		if json.Indent(&pretty, []byte(e.Text), "", "  ") == nil {
			b.Write(pretty.Bytes())
		} else {
			b.WriteString(e.Text)
		}
		if e.Truncated {
			b.WriteString("\n… (cut at 16 KiB)")
		}
	}
	return b.String()
}

func formatLatency(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}
