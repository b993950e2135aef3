package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestInspectorWindow opens the inspector with its shortcut, shows the
// live messages and a past session's read back from history, filters
// them with the search, and exports what it shows as JSON lines.
func TestInspectorWindow(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	h.waitShown(t)
	ctx := t.Context()
	id, err := h.db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "Standup"})
	if err != nil {
		t.Fatal(err)
	}
	label := api.WireLabel(sessions.WireContext(ctx, id))
	ins := h.ws.Inspector()
	t0 := time.Now()
	observe := func(i int, dir api.WireDirection, kind api.WireKind, text string, size int64) {
		ins.ObserveWire(api.WireEvent{Time: t0.Add(time.Duration(i) * 10 * time.Millisecond), Stream: 5, Label: label,
			Direction: dir, Kind: kind, Path: api.PathListen, Text: text, Size: size})
	}
	observe(0, api.WireReceived, api.WireOpen, "", 0)
	observe(1, api.WireSent, api.WireBinary, "", 3200)
	observe(2, api.WireReceived, api.WireText, `{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"quarterly"}]}}`, 90)
	observe(3, api.WireReceived, api.WireText, `{"type":"Results","is_final":true,"channel":{"alternatives":[{"transcript":"quarterly budget"}]}}`, 95)
	observe(4, api.WireSent, api.WireText, `{"type":"CloseStream"}`, 22)
	observe(5, api.WireSent, api.WireClose, "", 0)
	const all = 6

	h.press(inspectorShortcut)
	var w fyne.Window
	h.waitFor(t, "the inspector's window", func() bool { w = h.wire.window; return w != nil })
	h.waitFor(t, "the live messages", func() bool { return len(h.wire.shown) == all })
	h.ui(func() {
		markup := test.RenderToMarkup(w.Canvas())
		for _, want := range []string{"Results", "CloseStream", "3.2 kB", sessions.MarkFirstInterim + " 10 ms", sessions.MarkFirstFinal + " 20 ms"} {
			if !strings.Contains(markup, want) {
				t.Errorf("the inspector does not show %q", want)
			}
		}
		h.wire.list.Select(3)
		if d := h.wire.details.Text; !strings.Contains(d, `"transcript": "quarterly budget"`) || !strings.Contains(d, "first final after 20 ms") {
			t.Errorf("details of the final:\n%s", d)
		}
	})

	// The past session, read back from history.
	choice := fmt.Sprintf("#%d Captions: Standup", id)
	h.waitFor(t, "the session in the picker", func() bool { return h.wire.sessions[choice] == id })
	h.ui(func() {
		h.wire.events = nil
		h.wire.picker.SetSelected(choice)
	})
	h.waitFor(t, "the saved messages", func() bool { return h.wire.session == id && len(h.wire.events) == all && len(h.wire.shown) == all })
	h.ui(func() {
		for i, e := range h.wire.events {
			if e.Session != id || e.Seq != uint64(i) {
				t.Errorf("saved message %d: session %d, seq %d", i, e.Session, e.Seq)
			}
		}
		h.wire.search.SetText("budget")
		if len(h.wire.shown) != 1 || h.wire.count.Text != "1 of 6" {
			t.Errorf("search kept %d (%q)", len(h.wire.shown), h.wire.count.Text)
		}
		h.wire.search.SetText("results")
	})

	path := filepath.Join(t.TempDir(), "wire.jsonl")
	h.ui(h.wire.onExport)
	h.typePath(t, path)
	h.waitFor(t, "the export", func() bool { return strings.HasPrefix(h.wire.count.Text, "Saved 2 messages") })
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e sessions.WireEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Message != "Results" || e.Session != id {
			t.Errorf("line %d: %v: %s", lines+1, err, sc.Text())
		}
		lines++
	}
	if lines != 2 {
		t.Errorf("%d lines exported, want 2", lines)
	}

	// The shortcut closes it again, and its live watcher stops.
	h.press(inspectorShortcut)
	h.ui(func() {
		if h.wire.visible || h.wire.stopWatch != nil {
			t.Error("the inspector stays open after its shortcut")
		}
	})
}

// TestInspectorManyEvents shows 100,000 live messages, the inspector's
// capacity, and searches them, timing both.
func TestInspectorManyEvents(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	h.waitShown(t)
	ins := h.ws.Inspector()
	const n = sessions.DefaultInspectorCapacity
	t0 := time.Now()
	for i := range n {
		ev := api.WireEvent{Time: t0.Add(time.Duration(i) * time.Millisecond), Stream: 9, Direction: api.WireSent, Kind: api.WireBinary, Path: api.PathListen, Size: 3200}
		if i%100 == 0 {
			ev.Direction, ev.Kind, ev.Text = api.WireReceived, api.WireText, fmt.Sprintf(`{"type":"Results","is_final":true,"start":%d}`, i)
		}
		ins.ObserveWire(ev)
	}
	start := time.Now()
	h.press(inspectorShortcut)
	opened := time.Since(start)
	h.waitFor(t, "every message", func() bool { return len(h.wire.shown) == n })
	var searched time.Duration
	h.ui(func() {
		start := time.Now()
		h.wire.search.SetText(`"start":4200}`)
		searched = time.Since(start)
		if len(h.wire.shown) != 1 || h.wire.events[h.wire.shown[0]].Time != t0.Add(4200*time.Millisecond) {
			t.Errorf("the search kept %d messages", len(h.wire.shown))
		}
		h.wire.list.ScrollToBottom()
		h.wire.search.SetText("")
	})
	h.waitFor(t, "every message again", func() bool { return len(h.wire.shown) == n })
	t.Logf("%d messages: opened in %v, searched in %v", n, opened, searched)
	h.press(inspectorShortcut)
}
