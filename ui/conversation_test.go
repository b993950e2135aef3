package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// conversationLine is a LibriVox line placed in a recording, in seconds.
type conversationLine struct{ start, end float64 }

// pausedRecording joins clips with pause seconds of silence after each,
// then trailing seconds more, at 16 kHz, and says where each clip lies.
func pausedRecording(t *testing.T, pause, trailing float64, clips ...string) ([]int16, []conversationLine) {
	t.Helper()
	var all []float32
	var lines []conversationLine
	for _, c := range clips {
		f, err := os.Open(speechData + c)
		if err != nil {
			t.Fatalf("test speech (pocketsphinx-testdata): %v", err)
		}
		b, err := audio.Decode(t.Context(), f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		start := float64(len(all)) / 16000
		all = append(all, b.Samples...)
		lines = append(lines, conversationLine{start: start, end: float64(len(all)) / 16000})
		all = append(all, make([]float32, int(pause*16000))...)
	}
	all = append(all, make([]float32, int(trailing*16000))...)
	return audio.Float32ToInt16(nil, all), lines
}

// cardsOf reads the turn cards: for each, its title, badge, detail and
// text, and the turn behind it.
type cardView struct {
	title, badge, detail, text string
	turn                       sessions.Turn
}

func (h *harness) turnCards() []cardView {
	var out []cardView
	h.ui(func() {
		for _, c := range h.converse.turns.cards {
			out = append(out, cardView{c.title.Text, c.badge.Text, c.detail.Text, c.text.Text, c.turn})
		}
	})
	return out
}

// TestConversationTab drives the Conversation tab on the local engine
// with a recording of three lines and pauses for a microphone: turn
// cards appear, update and close with what ended them; the threshold
// slider is applied live and confirmed; a refused change is shown; End
// turn closes a turn by hand, and says so plainly when there is none; the
// conversation is saved to history.
func TestConversationTab(t *testing.T) {
	pcm, lines := pausedRecording(t, 1.6, 7, reader1, "librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
		"librivox/sense_and_sensibility_01_austen_64kb-0930.wav")
	// The recording holds inside the first line until End turn has ended
	// its turn, and at its end until End turn outside a turn has been
	// answered: the engine, however late it answers on a busy machine,
	// answers these while the speech still flows. Its idle timeout is
	// long enough for the holds.
	inFirst := hold{at: int((lines[0].start + 1.5) * 16000), release: make(chan struct{})}
	atEnd := hold{at: len(pcm), release: make(chan struct{})}
	mics := &fakeMics{samples: pcm, speed: 3, holds: []hold{inFirst, atEnd}}
	l, err := engine.StartLocal(engine.Config{IdleTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("the local engine: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	local := func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil }
	h := newHarnessWith(t, harnessConfig{local: local, mics: mics}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	c := h.converse
	h.ui(func() {
		if !h.SelectTab("conversation") {
			t.Fatal("no Conversation tab")
		}
	})
	h.waitFor(t, "the microphones to be listed", func() bool { return len(c.source.picker.Options) == 2 })
	h.ui(func() { c.source.picker.SetSelected("Test recording") })

	// Ctrl+T starts a conversation from any tab, and brings its tab.
	h.ui(func() { h.SelectTab("Settings") })
	h.press(converseShortcut)
	h.waitFor(t, "the conversation to be live", func() bool { return c.live != nil && c.start.Text == "Stop" })
	h.ui(func() {
		if got := h.tabs.Selected().Text; got != "Conversation" {
			t.Errorf("after Ctrl+T the %s tab is open, want Conversation", got)
		}
		if !c.source.picker.Disabled() || !c.source.openFile.Disabled() || c.endTurn.Disabled() {
			t.Errorf("while live: source disabled %v, Open file disabled %v, End turn disabled %v; want true, true, false",
				c.source.picker.Disabled(), c.source.openFile.Disabled(), c.endTurn.Disabled())
		}
	})

	// A card appears with the words as they are spoken, and updates.
	var first string
	h.waitFor(t, "the first turn's card", func() bool {
		cards := h.converse.turns.cards
		if len(cards) == 0 || cards[0].badge.Text != "Speaking" || cards[0].text.Text == "…" {
			return false
		}
		first = cards[0].text.Text
		return true
	})
	h.assertShows(t, "Turn 1", "Speaking")
	h.waitFor(t, "the card to update", func() bool { return c.turns.cards[0].text.Text != first })

	// The threshold slider is applied live, and the service's answer shown.
	h.ui(func() { c.tuning.threshold.SetValue(0.85) })
	h.waitFor(t, "the confirmation", func() bool { return strings.HasPrefix(c.tuning.confirm.Text, "Applied: threshold 0.85, timeout 5 s") })
	h.ui(func() {
		if c.tuning.thresholdV.Text != "0.85" {
			t.Errorf("the threshold reads %q, want 0.85", c.tuning.thresholdV.Text)
		}
	})

	// End turn (Ctrl+D) ends the turn in progress, by hand.
	h.press(endTurnShortcut)
	h.waitFor(t, "the first turn to end by hand", func() bool {
		return c.turns.cards[0].badge.Text == "Ended" && strings.Contains(c.turns.cards[0].detail.Text, "ended by hand")
	})

	// A change the service refuses is shown in plain words (the local
	// engine offers no key terms); the settings in force stay.
	h.ui(func() {
		c.tuning.keyterms.SetText("Dashwood")
		test.Tap(c.tuning.applyTerms)
	})
	h.waitFor(t, "the refusal", func() bool {
		return strings.HasPrefix(c.tuning.confirm.Text, "The service refused the change, so nothing changed: threshold 0.85")
	})
	close(inFirst.release)

	// Later turns end at the pauses, by the model, with their latency.
	h.waitFor(t, "the last line's turn to end", func() bool {
		for _, card := range c.turns.cards {
			if card.turn.State == sessions.TurnEnded && card.turn.End > lines[2].start+0.5 {
				return true
			}
		}
		return false
	})
	var byModel int
	for _, card := range h.turnCards() {
		if card.turn.Trigger == api.TriggerModel {
			byModel++
			if card.badge != "Ended" || !strings.Contains(card.detail, "ended by the model") || !strings.Contains(card.detail, "latency ") {
				t.Errorf("a turn ended by the model shows %q / %q", card.badge, card.detail)
			}
		}
	}
	if byModel < 2 {
		t.Errorf("%d turns ended by the model, want the pauses after the second and third lines to end theirs; cards %+v", byModel, h.turnCards())
	}

	// With no turn in progress, End turn is answered by a warning, shown
	// plainly.
	h.ui(func() { test.Tap(c.endTurn) })
	h.waitFor(t, "the warning", func() bool { return c.status.Text == "No turn was in progress, so there was no turn to end." })
	close(atEnd.release)

	// The timeline lists the events with their times, newest first.
	h.ui(func() {
		tl := c.timeline.label.Text
		for _, want := range []string{"Warning · FORCE_END_TURN_NO_ACTIVE_TURN", "→ ForceEndTurn", "ConfigureSuccess", "ConfigureFailure", "→ Configure"} {
			if !strings.Contains(tl, want) {
				t.Errorf("the timeline lacks %q:\n%s", want, tl)
			}
		}
		if n := strings.Count(tl, "\n") + 1; n > timelineLen {
			t.Errorf("the timeline shows %d events, want at most %d", n, timelineLen)
		}
		if !strings.HasSuffix(strings.Fields(strings.Split(tl, "\n")[0])[1], "s") {
			t.Errorf("the newest timeline line %q has no time", strings.Split(tl, "\n")[0])
		}
	})

	// The recording ends; the conversation stops by itself and is saved.
	h.waitFor(t, "the conversation to end", func() bool { return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ") })
	var status string
	h.ui(func() { status = c.status.Text })
	if s := status; !strings.Contains(s, " saved to history. Median end-of-turn latency ") {
		t.Errorf("status %q does not give the median latency", s)
	}
	ended := 0
	for _, card := range h.turnCards() {
		if card.turn.State == sessions.TurnEnded {
			ended++
		}
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindConversation})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
		t.Fatalf("history holds %+v (%v), want one finished conversation", list, err)
	}
	segs, err := h.db.Segments(t.Context(), list[0].ID)
	if err != nil || len(segs) != ended {
		t.Errorf("%d turns saved (%v), %d ended on screen", len(segs), err, ended)
	}
	h.ui(func() {
		if c.start.Text != "Start" || c.start.Disabled() || !c.endTurn.Disabled() {
			t.Errorf("after the end: Start reads %q (disabled %v), End turn disabled %v", c.start.Text, c.start.Disabled(), c.endTurn.Disabled())
		}
	})
}

// TestConversationSettingsBeforeStart: tuning before a conversation is
// kept for its start, and a value out of range is refused in plain words.
func TestConversationSettingsBeforeStart(t *testing.T) {
	h := newHarness(t, nil, Options{})
	h.waitReady(t)
	c := h.converse
	h.ui(func() {
		c.tuning.threshold.SetValue(0.9)
		if c.tuning.confirm.Text != "These settings apply when the conversation starts." {
			t.Errorf("confirmation %q", c.tuning.confirm.Text)
		}
		c.tuning.timeout.SetValue(sliderFromTimeout(1500))
		c.tuning.keyterms.SetText(" Earshot, , Flux ")
		o := c.startOptions()
		if o.EOTThreshold != 0.9 || o.EOTTimeoutMS != 1500 || strings.Join(o.Keyterms, "|") != "Earshot|Flux" || o.Model != api.ModelFluxGeneralEN {
			t.Errorf("start options %+v", o)
		}
		c.tuning.keyterms.SetText("Earshot:2")
		c.onApplyKeyterms()
		if c.tuning.confirm.Importance != widget.DangerImportance || !strings.Contains(c.tuning.confirm.Text, "weight") {
			t.Errorf("a weighted key term is shown as %q", c.tuning.confirm.Text)
		}
		// End turn and the shortcut do nothing with no conversation.
		if !c.endTurn.Disabled() {
			t.Error("End turn is enabled with no conversation")
		}
	})
	h.press(endTurnShortcut)
	h.ui(func() {
		if got := h.tabs.Selected().Text; got != "Conversation" {
			t.Errorf("Ctrl+D opened the %s tab, want Conversation", got)
		}
		if c.status.Text != "Ready." {
			t.Errorf("Ctrl+D with no conversation set the status to %q", c.status.Text)
		}
	})
	h.press(raiseThresholdShortcut)
	h.ui(func() {
		if c.tuning.thresholdV.Text != "0.95" {
			t.Errorf("Ctrl+] moved the threshold to %s, want 0.95", c.tuning.thresholdV.Text)
		}
	})
}

func TestTimeoutSlider(t *testing.T) {
	for _, ms := range []int{500, 1000, 1500, 5000, 20000, 60000} {
		if got := timeoutFromSlider(sliderFromTimeout(ms)); got != ms {
			t.Errorf("%d ms round-trips to %d", ms, got)
		}
	}
	if timeoutFromSlider(0) != api.MinEOTTimeoutMS || timeoutFromSlider(1) != api.MaxEOTTimeoutMS {
		t.Error("the slider's ends are not the timeout's range")
	}
	if p := sliderFromTimeout(api.DefaultEOTTimeoutMS); p < 0.4 || p > 0.6 {
		t.Errorf("the default timeout sits at %.2f of the slider, want near the middle", p)
	}
}

func TestTurnWords(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"model", turnDetail(sessions.Turn{State: sessions.TurnEnded, Trigger: api.TriggerModel, Start: 1, End: 4.2, EndOfTurnConfidence: 0.874, Latency: 420 * time.Millisecond, HasLatency: true}),
			"0:01–0:04 · ended by the model · confidence 0.87 · latency 420 ms"},
		{"unknown trigger kept", turnDetail(sessions.Turn{State: sessions.TurnEnded, Trigger: "vibes"}), `0:00–0:00 · ended by "vibes" · confidence 0.00`},
		{"open", turnDetail(sessions.Turn{State: sessions.TurnOpen, End: 65, EndOfTurnConfidence: 0.1}), "0:00–1:05 · confidence 0.10"},
		{"timeout", triggerWords(api.TriggerTimeout), "ended by the timeout"},
		{"manual", triggerWords(api.TriggerManual), "ended by hand"},
		{"end of turn line", timelineLine(t0, &sessions.TurnInfoEvent{Event: api.EventEndOfTurn, At: t0.Add(3250 * time.Millisecond),
			Turn: sessions.Turn{Index: 1, Trigger: api.TriggerTimeout, EndOfTurnConfidence: 0.5}}), "   3.25 s  EndOfTurn · turn 2 · timeout · 0.50"},
		{"unknown event line", timelineLine(t0, &sessions.TurnInfoEvent{Event: "Pondering", At: t0}), "   0.00 s  Pondering · turn 1 · 0.00"},
		{"unknown message line", timelineLine(t0, &sessions.UnknownTurnMessageEvent{Type: "Telemetry", At: t0}), "   0.00 s  Unknown message · Telemetry"},
		{"level not listed", timelineLine(t0, &sessions.LevelEvent{}), ""},
		{"other warning", warningWords(&sessions.TurnWarningEvent{Code: "SLOW_AUDIO", Description: "audio is arriving slowly"}), "The service warns: Audio is arriving slowly."},
		{"ms", msWords(850), "850 ms"},
		{"s", msWords(1500), "1.5 s"},
		{"whole s", msWords(5000), "5 s"},
		{"long", msWords(60000), "60 s"},
		{"settings", settingsWords(sessions.TurnSettings{EOTThreshold: 0.7, EOTTimeoutMS: 5000, EagerEOTThreshold: 0.4, Keyterms: []string{"a", "b"}}),
			"threshold 0.70, timeout 5 s, eager threshold 0.40, key terms a, b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	for _, s := range []sessions.TurnState{sessions.TurnOpen, sessions.TurnEager, sessions.TurnResumed, sessions.TurnEnded, "pondering"} {
		if text, _ := badgeOf(s); text == "" {
			t.Errorf("state %q has no badge", s)
		}
	}
}

// TestTimelineFoldsUpdates: Updates of a turn in a row share one counted
// line; anything else gets its own, newest first, at most timelineLen.
func TestTimelineFoldsUpdates(t *testing.T) {
	t0 := time.Now()
	c := &conversationTab{}
	up := func(turn int, conf float64) sessions.Event {
		return &sessions.TurnInfoEvent{Event: api.EventUpdate, At: t0, Turn: sessions.Turn{Index: turn, EndOfTurnConfidence: conf}}
	}
	c.timeline.add(t0, &sessions.TurnInfoEvent{Event: api.EventStartOfTurn, At: t0})
	c.timeline.add(t0, up(0, 0.1))
	c.timeline.add(t0, up(0, 0.2))
	c.timeline.add(t0, up(0, 0.3))
	c.timeline.add(t0, &sessions.SentEvent{Type: api.TypeForceEndTurn, At: t0})
	c.timeline.add(t0, up(0, 0.4))
	var got []string
	for _, e := range c.timeline.entries {
		got = append(got, strings.TrimSpace(e.line))
	}
	want := []string{"0.00 s  Update · turn 1 · 0.40", "0.00 s  → ForceEndTurn", "0.00 s  Update ×3 · turn 1 · 0.30", "0.00 s  StartOfTurn · turn 1 · 0.00"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for range 2 * timelineLen {
		c.timeline.add(t0, &sessions.ConnectedEvent{At: t0})
	}
	if len(c.timeline.entries) != timelineLen {
		t.Errorf("the timeline keeps %d lines, want %d", len(c.timeline.entries), timelineLen)
	}
}

// TestConversationFromFile: a recording chosen as the source is played
// at real time into a conversation that ends with it.
func TestConversationFromFile(t *testing.T) {
	pcm, _ := pausedRecording(t, 1.6, 0, "librivox/sense_and_sensibility_01_austen_64kb-0880.wav")
	path := writeWAV(t, "pause.wav", pcm)
	h := newHarnessWith(t, harnessConfig{engine: true}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	c := h.converse
	h.ui(func() {
		h.SelectTab("Conversation")
		c.chooseFile(path)
	})
	h.waitFor(t, "the recording to be chosen", func() bool { return c.source.picker.Selected == "Recording: pause.wav" })
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the conversation to end", func() bool { return c.live == nil && strings.HasPrefix(c.status.Text, "Stopped. ") })
	cards := h.turnCards()
	if len(cards) != 1 || cards[0].turn.Trigger != api.TriggerModel || !strings.Contains(cards[0].text, "young man") {
		t.Errorf("cards %+v, want one turn ended by the model", cards)
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindConversation})
	if err != nil || len(list) != 1 || list[0].Source != "pause.wav" {
		t.Errorf("history %+v (%v), want the conversation from pause.wav", list, err)
	}
}

// TestConversationRefusesCorruptFile: a file that is not audio is refused
// when it is chosen, in plain words that keep its name as it is, and the
// source stays what it was; it does not wait for Start to fail.
func TestConversationRefusesCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corrupt.wav")
	if err := os.WriteFile(path, []byte("RIFF\x24\x00\x00\x00WAVEdata\x00\x00\x00\x00 not audio at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	c := h.converse
	var before string
	h.ui(func() {
		h.SelectTab("Conversation")
		before = c.source.picker.Selected
		c.chooseFile(path)
	})
	want := "“corrupt.wav”: this is not audio Earshot can read"
	h.waitFor(t, "the file to be refused", func() bool { return strings.HasPrefix(c.status.Text, want) })
	h.ui(func() {
		if c.source.picker.Selected != before || c.source.file != "" {
			t.Errorf("the corrupt file became the source (%q, %q)", c.source.picker.Selected, c.source.file)
		}
	})
}
