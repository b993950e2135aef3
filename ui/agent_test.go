package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestAgentTab: a typed conversation with the local engine's agent shows
// the chat, where the reply's time went and every message in the
// inspector; a prompt applied live is acknowledged; Stop saves it.
func TestAgentTab(t *testing.T) {
	h := readyLocalHarness(t)
	h.ui(func() { h.SelectTab("Agent") })
	a := h.agent
	h.waitFor(t, "the agent's models", func() bool { return len(a.models) > 0 && !a.start.Disabled() })
	h.ui(func() {
		if !strings.Contains(a.think.Selected, "earshot-assistant") {
			t.Errorf("the model picker shows %q", a.think.Selected)
		}
		if a.voice.Selected == "" {
			t.Error("no voice chosen")
		}
		a.typeOnly.SetChecked(true)
		a.prompt.SetText("Be brief.")
		test.Tap(a.start)
	})
	h.waitFor(t, "the conversation", func() bool { return a.live != nil && !a.input.Disabled() })
	h.ui(func() {
		a.input.SetText("what is two plus two")
		a.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
	h.waitFor(t, "the reply and its messages", func() bool {
		if a.live == nil || a.live.reply == nil || a.live.reply.Text != "Two plus two is four." || a.live.latency == nil ||
			!strings.HasPrefix(a.live.latency.Text, "Sent to the agent's voice ") {
			return false
		}
		// The inspector's record of a message follows what it shows.
		return slices.ContainsFunc(a.wire, func(w sessions.AgentWireEvent) bool { return w.Type == "AgentStartedSpeaking" })
	})
	h.ui(func() {
		if a.input.Text != "" {
			t.Errorf("the input keeps %q after sending", a.input.Text)
		}
		if l := a.live.latency.Text; !strings.Contains(l, " · service: thinking ") {
			t.Errorf("latency strip %q", l)
		}
		var types []string
		for _, w := range a.wire {
			types = append(types, w.Type)
		}
		joined := strings.Join(types, " ")
		for _, want := range []string{"Settings", "Welcome", "SettingsApplied", "InjectUserMessage", "ConversationText", "AgentStartedSpeaking"} {
			if !strings.Contains(joined, want) {
				t.Errorf("the inspector lacks %s: %s", want, joined)
			}
		}
	})
	// The person's bubble and the agent's are on screen.
	h.assertShows(t, "what is two plus two", "Two plus two is four.")

	h.ui(func() {
		a.prompt.SetText("Be a pirate.")
		test.Tap(a.apply)
	})
	h.waitFor(t, "the acknowledgement", func() bool { return a.status.Text == "The agent took the new prompt." })

	h.ui(func() { test.Tap(a.start) })
	h.waitFor(t, "the end", func() bool { return a.live == nil && strings.HasPrefix(a.status.Text, "Stopped.") })
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindAgent})
	if err != nil || len(list) != 1 {
		t.Fatalf("history %+v, %v", list, err)
	}

	// The conversation is listed with the past ones, and reopens.
	h.waitFor(t, "the past conversations", func() bool { return len(a.past) == 1 })
	h.ui(func() {
		a.chat.Objects = nil
		a.chat.Refresh()
		a.pastList.Select(0)
	})
	h.waitFor(t, "the reopened conversation", func() bool { return strings.HasPrefix(a.status.Text, "The conversation of ") })
	h.assertShows(t, "what is two plus two", "Two plus two is four.", "Play the conversation", "Save the sound…")
	var strip string
	h.ui(func() {
		for _, o := range a.chat.Objects {
			if l, ok := o.(*widget.Label); ok && strings.HasPrefix(l.Text, "Sent to the agent's voice ") {
				strip = l.Text
			}
		}
	})
	if strip == "" {
		t.Error("the reopened conversation lacks the reply's latency strip")
	}
	// Its sound plays on the speaker (miniaudio's null device here).
	h.ui(func() {
		walk(a.chat, func(o fyne.CanvasObject) {
			if b, ok := o.(*widget.Button); ok && b.Text == "Play the conversation" {
				test.Tap(b)
			}
		})
	})
	h.waitFor(t, "the conversation played", func() bool { return a.status.Text == "Played the conversation." })

	// Saved, its sound is the Ogg Opus file history keeps, named so.
	h.ui(func() {
		walk(a.chat, func(o fyne.CanvasObject) {
			if b, ok := o.(*widget.Button); ok && b.Text == "Save the sound…" {
				test.Tap(b)
			}
		})
	})
	var suggested string
	field := h.pathField(t)
	h.ui(func() { suggested = field.Text })
	if filepath.Ext(suggested) != ".ogg" {
		t.Errorf("the file suggested is %q, want a .ogg file", suggested)
	}
	path := filepath.Join(t.TempDir(), "talk.ogg")
	h.typePath(t, path)
	h.waitFor(t, "the sound saved", func() bool { return strings.HasPrefix(a.status.Text, "Saved talk.ogg") })
	if data, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(data, []byte("OggS")) {
		t.Errorf("the saved sound: %d bytes starting %.4q, %v", len(data), data, err)
	}
}

// TestAgentTabNoMicrophone: with no microphone, Start says so plainly and
// points to typing.
func TestAgentTabNoMicrophone(t *testing.T) {
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	h := newHarnessWith(t, harnessConfig{engine: true, settings: &s, mics: noMics{}}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	h.ui(func() { h.SelectTab("Agent") })
	a := h.agent
	h.waitFor(t, "the agent's models", func() bool { return len(a.models) > 0 && !a.start.Disabled() })
	h.ui(func() { test.Tap(a.start) })
	h.waitFor(t, "the refusal", func() bool { return a.live == nil && !a.starting && a.status.Text != "Connecting to the agent…" })
	h.ui(func() {
		if !strings.Contains(a.status.Text, "Type only") {
			t.Errorf("status %q, want a pointer to Type only", a.status.Text)
		}
	})
}

// TestAgentTabNothingSaid: a conversation started and stopped with
// nothing said is not kept, and the tab says so rather than "saved".
func TestAgentTabNothingSaid(t *testing.T) {
	h := readyLocalHarness(t)
	h.ui(func() { h.SelectTab("Agent") })
	a := h.agent
	h.waitFor(t, "the agent's models", func() bool { return len(a.models) > 0 && !a.start.Disabled() })
	h.ui(func() {
		a.typeOnly.SetChecked(true)
		test.Tap(a.start)
	})
	h.waitFor(t, "the conversation", func() bool { return a.live != nil && !a.input.Disabled() })
	h.ui(func() { test.Tap(a.start) })
	h.waitFor(t, "the end", func() bool { return a.live == nil && strings.HasPrefix(a.status.Text, "Stopped.") })
	h.ui(func() {
		if want := "Stopped. Nothing was said, so nothing was kept in history."; a.status.Text != want {
			t.Errorf("status %q, want %q", a.status.Text, want)
		}
	})
	if list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindAgent}); err != nil || len(list) != 0 {
		t.Errorf("history %+v, %v; want nothing", list, err)
	}
}

// TestAgentBargeInSaysWhatWasHeard: a barge-in says how long the agent's
// voice went on once the person's began (not the last internal step),
// and the words go at the agent's next reply.
func TestAgentBargeInSaysWhatWasHeard(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t)
	a := h.agent
	l := &agentLive{cards: map[string]*widget.Card{}, idle: "Speak to the agent; speaking while it talks interrupts it."}
	h.ui(func() {
		a.setStatus(l.idle, widget.SuccessImportance)
		a.applyEvents(l, []sessions.Event{
			&sessions.AgentSpeakingEvent{Total: 1},
			&sessions.AgentBargeInEvent{Cut: true, StoppedIn: 3 * time.Microsecond, Silenced: 1500 * time.Millisecond},
			&sessions.AgentTextEvent{Role: "user", Content: "stop please"},
		})
		if want := "You interrupted the agent: its voice stopped 1500 ms after you began to speak."; a.status.Text != want {
			t.Errorf("status %q, want %q", a.status.Text, want)
		}
		a.applyEvents(l, []sessions.Event{&sessions.AgentSpeakingEvent{Total: 1}})
		if a.status.Text != l.idle {
			t.Errorf("at the agent's next reply the status says %q, want %q", a.status.Text, l.idle)
		}
	})
}
