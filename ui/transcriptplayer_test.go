package ui

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// playedCaptions are the captions of the session the player tests open:
// three lines of three words, with pauses between.
var playedCaptions = []struct {
	start, end float64
	words      []string
}{
	{0.5, 2.0, []string{"one", "two", "three"}},
	{3.0, 4.5, []string{"four", "five", "six"}},
	{6.0, 8.0, []string{"seven", "eight", "nine"}},
}

// savePlayedSession saves a captions session of playedCaptions with 12 s
// of kept Ogg Opus audio, and returns it.
func savePlayedSession(t *testing.T, db *store.DB, withAudio bool) store.Session {
	t.Helper()
	ctx := t.Context()
	s := store.Session{Kind: store.KindCaptions, Title: "Played back", Source: "Microphone", Started: clockTime, Status: store.StatusRunning}
	id, err := db.CreateSession(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range playedCaptions {
		var words []api.Word
		step := (c.end - c.start) / float64(len(c.words))
		for j, w := range c.words {
			at := c.start + float64(j)*step
			words = append(words, api.Word{Word: w, Start: at, End: at + step, Confidence: 0.9})
		}
		b, _ := json.Marshal(words)
		text := words[0].Word + " " + words[1].Word + " " + words[2].Word
		if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: i, Start: c.start, End: c.end, Text: text, Words: string(b), Confidence: 0.9}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishSession(ctx, id, clockTime.Add(12*time.Second), 12, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if withAudio {
		var buf bytes.Buffer
		enc, err := audio.NewEncoder(ctx, &buf, audio.EncodeSpec{Encoding: "opus", BitRate: 24000})
		if err != nil {
			t.Fatal(err)
		}
		pcm := make([]int16, 12*48000)
		for i := range pcm {
			pcm[i] = int16(4000 * math.Sin(2*math.Pi*330*float64(i)/48000))
		}
		if err := enc.Write(pcm); err != nil {
			t.Fatal(err)
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveAudio(ctx, id, store.Audio{ContentType: "audio/ogg", Encoding: "opus", Data: buf.Bytes()}); err != nil {
			t.Fatal(err)
		}
	}
	s, err = db.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newPlayerHarness is an App whose speaker is miniaudio's null backend:
// it plays in real time into nothing.
func newPlayerHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, harnessConfig{speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}}, Options{})
}

// TestTranscriptPlayer (must show): a past session with kept audio opens
// with the player; playing moves the highlight to the caption at the
// playhead and marks its word; a tap on a word seeks to its start and
// plays; space pauses.
func TestTranscriptPlayer(t *testing.T) {
	h := newPlayerHarness(t)
	s := savePlayedSession(t, h.db, true)
	h.ui(func() {
		h.SelectTab("Captions")
		h.window.Resize(fyne.NewSize(1000, 700))
		h.captions.openSession(s)
	})
	p := h.captions.player
	h.waitFor(t, "the player", func() bool { return p.bar.Visible() && p.kept != nil })
	h.ui(func() {
		if got := p.pos.Text; got != "0:00 / 0:12" {
			t.Errorf("the player shows %q before playing, want 0:00 / 0:12", got)
		}
		if row, word := p.heard(); row != -1 || word != "" {
			t.Errorf("before playing, caption %d and word %q are marked", row, word)
		}
		if len(p.marks) != len(playedCaptions) {
			t.Fatalf("%d captions take taps, want %d", len(p.marks), len(playedCaptions))
		}
	})
	// The bar leaves the tab within a small screen.
	h.ui(func() {
		if m := h.window.Content().MinSize(); m.Width > 800 || m.Height > 600 {
			t.Errorf("with the player, the Captions tab needs %.0f×%.0f", m.Width, m.Height)
		}
	})

	// Tapping "five" puts the playhead at its start, and plays from there.
	h.ui(func() {
		p.marks[1].tapToken(1)
		if got, want := p.at, 3.5; math.Abs(got.Seconds()-want) > 0.001 {
			t.Errorf("tapping “five” put the playhead at %.3f s, want %.3f", got.Seconds(), want)
		}
		if row, word := p.heard(); row != 1 || word != "five" {
			t.Errorf("after tapping “five”, caption %d and word %q are marked", row, word)
		}
		for i, o := range h.captions.view.list.Objects {
			l := o.(*fyne.Container).Objects[2].(*widget.Label)
			if lit := l.Importance == widget.HighImportance; lit != (i == 1) {
				t.Errorf("caption %d highlighted %v, with the playhead in caption 1", i, lit)
			}
		}
	})
	h.waitFor(t, "the speaker playing", func() bool { return p.playing != nil })
	h.waitFor(t, "the playhead moving past the tap", func() bool { return p.position() > 3600*time.Millisecond })

	// Played on, the highlight follows the playhead to the next caption
	// and its words.
	h.waitFor(t, "the third caption heard", func() bool {
		row, _ := p.heard()
		return row == 2
	})
	h.waitFor(t, "a later word of it marked", func() bool {
		row, word := p.heard()
		return row == 2 && (word == "eight" || word == "nine")
	})

	// Space pauses where it is, and plays on from there.
	var pausedAt time.Duration
	h.ui(func() {
		h.window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeySpace})
		if p.playing != nil || p.play.Text != "Play" {
			t.Errorf("space did not pause: playing %v, button %q", p.playing != nil, p.play.Text)
		}
		pausedAt = p.at
	})
	if pausedAt < 6600*time.Millisecond || pausedAt >= 12*time.Second {
		t.Errorf("paused at %v, before the third caption's second word", pausedAt)
	}
	h.ui(func() {
		h.window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeySpace})
		if p.play.Text != "Pause" {
			t.Errorf("space did not play again: button %q", p.play.Text)
		}
	})
	h.waitFor(t, "playing again from the pause", func() bool { return p.playing != nil && p.from == pausedAt })

	// A click where "nine" is drawn in the window reaches the word, over
	// the caption's selectable text.
	h.ui(func() {
		m := p.marks[2]
		at := fyne.CurrentApp().Driver().AbsolutePositionForObject(m).Add(m.boxes(m.Size().Width)[2]).Add(fyne.NewPos(3, 5))
		test.TapCanvas(h.window.Canvas(), at)
		if got := p.at.Seconds(); math.Abs(got-(6+2*2.0/3)) > 0.001 {
			t.Errorf("clicking “nine” put the playhead at %.3f s, want %.3f", got, 6+2*2.0/3)
		}
		if row, word := p.heard(); row != 2 || word != "nine" {
			t.Errorf("after clicking “nine”, caption %d and word %q are marked", row, word)
		}
	})

	// Tapping a caption's row away from its words plays from its start.
	h.ui(func() {
		m := p.marks[0]
		m.Tapped(&fyne.PointEvent{Position: fyne.NewPos(m.Size().Width-2, 4)})
		if got := p.at.Seconds(); math.Abs(got-0.5) > 0.001 {
			t.Errorf("tapping the first caption put the playhead at %.3f s, want 0.5", got)
		}
		if row, word := p.heard(); row != 0 || word != "one" {
			t.Errorf("after tapping the first caption, caption %d and word %q are marked", row, word)
		}
	})

	// The slider seeks; let go, it plays from there when playing.
	h.ui(func() {
		p.slider.SetValue(8.5)
		p.slider.OnChangeEnded(8.5)
		if row, _ := p.heard(); row != 2 {
			t.Errorf("the slider at 8.5 s marks caption %d, want the third", row)
		}
	})
	h.waitFor(t, "the end played", func() bool {
		return p.playing == nil && p.play.Text == "Play" && p.at >= 11900*time.Millisecond
	})

	// Showing something else stops the player and hides it.
	h.ui(func() {
		h.captions.view.reset(captionsHint)
		if p.bar.Visible() || p.kept != nil || p.playing != nil {
			t.Error("the player outlived the transcript it played")
		}
	})
}

// TestTranscriptPlayerNoAudio: a session kept without audio shows no
// player.
func TestTranscriptPlayerNoAudio(t *testing.T) {
	h := newPlayerHarness(t)
	with := savePlayedSession(t, h.db, true)
	without := savePlayedSession(t, h.db, false)
	p := h.captions.player
	h.ui(func() { h.captions.openSession(with) })
	h.waitFor(t, "the player", func() bool { return p.bar.Visible() })
	h.ui(func() { h.captions.openSession(without) })
	h.waitFor(t, "the captions of the session without audio", func() bool {
		return h.captions.shown.id == without.ID
	})
	// The audio's absence is known once the workspace has answered; the
	// view shows the transcript either way.
	h.waitFor(t, "the player hidden", func() bool { return !p.bar.Visible() && p.kept == nil })
	h.assertShows(t, "four five six")
}

// TestSettingsKeepAudio: the Settings tab shows that audio is kept, and
// saves it turned off.
func TestSettingsKeepAudio(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	st := h.settings
	h.waitFor(t, "the settings", func() bool { return st.loaded })
	h.ui(func() {
		if !st.keepAudio.Checked {
			t.Error("Keep audio is off in a new installation")
		}
		test.Tap(st.keepAudio)
		test.Tap(st.save)
	})
	h.waitFor(t, "Keep audio saved off", func() bool {
		s, err := h.db.LoadSettings(t.Context())
		return err == nil && !s.KeepAudio
	})
	h.assertShows(t, "Keep the audio of transcriptions")
}

// TestPlayerAfterLiveCaptions: live captions of a recording, on the local
// engine, end with the recording; the session's audio, kept as the
// settings ask by default, is ready to play under its captions at once,
// as long as the session.
func TestPlayerAfterLiveCaptions(t *testing.T) {
	mics := &fakeMics{samples: recording(t, reader1, cards1), speed: 4}
	h := newHarnessWith(t, harnessConfig{engine: true, mics: mics, settings: diarizing(),
		speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	h.selectTestMic(t)
	c, p := h.captions, h.captions.player
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the session to be live", func() bool { return c.live != nil })
	var id int64
	h.ui(func() { id = c.live.id })
	h.waitFor(t, "the session to end with its recording", func() bool { return c.live == nil })
	h.waitFor(t, "the player", func() bool { return p.bar.Visible() && p.kept != nil })
	sess, err := h.db.Session(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	h.ui(func() {
		if got := p.kept.Duration().Seconds(); math.Abs(got-sess.Duration) > 0.1 {
			t.Errorf("the player holds %.2f s of a %.2f s session", got, sess.Duration)
		}
		if len(p.marks) == 0 || len(p.marks) != len(c.view.captions) {
			t.Fatalf("%d of %d captions take taps", len(p.marks), len(c.view.captions))
		}
		first := c.view.captions[0]
		if len(first.Words) == 0 {
			t.Fatal("the first caption has no words")
		}
		p.marks[0].tapToken(0)
		if got := p.at.Seconds(); math.Abs(got-first.Words[0].Start) > 0.001 {
			t.Errorf("tapping the first word put the playhead at %.3f s, want %.3f", got, first.Words[0].Start)
		}
	})
	h.waitFor(t, "the speaker playing", func() bool { return p.playing != nil })
}
