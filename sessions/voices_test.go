package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

func TestVoicesOf(t *testing.T) {
	list := &api.ModelList{TTS: []api.TTSModel{
		{Name: "thalia", CanonicalName: "aura-2-thalia-en", Metadata: &api.TTSModelDetails{Accent: "American", Tags: []string{"feminine"}}},
		{Name: "celeste", CanonicalName: "aura-2-celeste-es", Metadata: &api.TTSModelDetails{Accent: "Colombian"}},
		{Name: "asteria", CanonicalName: "aura-asteria-en"},
		{Name: "kit", CanonicalName: "flux-kit-en", Metadata: &api.TTSModelDetails{Accent: "American", Tags: []string{"turn-based"}}},
		{Name: "general", CanonicalName: "flux-general-en"}, // a transcription model, never a voice
		{Name: "nonsense", CanonicalName: "whisper-large"},
	}}
	got := sessions.VoicesOf(list)
	want := []struct {
		name, label, lang, accent string
		fam                       sessions.VoiceFamily
	}{
		{"aura-2-thalia-en", "thalia", "en", "American", sessions.FamilyGeneral},
		{"aura-asteria-en", "asteria", "en", "", sessions.FamilyGeneral},
		{"aura-2-celeste-es", "celeste", "es", "Colombian", sessions.FamilyGeneral},
		{"flux-kit-en", "kit", "en", "American", sessions.FamilyTurn},
	}
	if len(got) != len(want) {
		t.Fatalf("VoicesOf gave %d voices, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Label != w.label || g.Language != w.lang || g.Accent != w.accent || g.Family != w.fam {
			t.Errorf("voice %d = %+v, want %+v", i, g, w)
		}
	}
	if f := sessions.Filter(got, "en", "American"); len(f) != 2 || f[0].Name != "aura-2-thalia-en" || f[1].Name != "flux-kit-en" {
		t.Errorf("Filter(en, American) = %+v", f)
	}
	if f := sessions.Filter(got, "es", ""); len(f) != 1 || f[0].Name != "aura-2-celeste-es" {
		t.Errorf("Filter(es) = %+v", f)
	}
}

func TestSpeedRange(t *testing.T) {
	tests := []struct {
		voice      string
		adjustable bool
		min, max   float64
	}{
		{"aura-2-thalia-en", true, 0.7, 1.5},
		{"aura-2-celeste-es", true, 0.7, 1.5},
		{"aura-2-julius-de", false, 1, 1},
		{"aura-asteria-en", false, 1, 1},
		{"flux-kit-en", true, 0.5, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.voice, func(t *testing.T) {
			r := sessions.SpeedRangeOf(tt.voice)
			if r.Adjustable != tt.adjustable || r.Min != tt.min || r.Max != tt.max {
				t.Errorf("SpeedRangeOf = %+v, want adjustable %v, %g to %g", r, tt.adjustable, tt.min, tt.max)
			}
			if !r.Adjustable && r.Why == "" {
				t.Error("a fixed speed gives no reason")
			}
			if sessions.Expressive(tt.voice) != strings.HasPrefix(tt.voice, "flux-") {
				t.Errorf("Expressive = %v", sessions.Expressive(tt.voice))
			}
		})
	}
}

func TestSynthesisRequestCheck(t *testing.T) {
	tests := []struct {
		name string
		req  sessions.SynthesisRequest
		ok   bool
		says string
	}{
		{"plain", sessions.SynthesisRequest{Text: "Hello.", Voice: "aura-asteria-en"}, true, ""},
		{"empty", sessions.SynthesisRequest{Text: "  \n", Voice: "aura-asteria-en"}, false, "no text"},
		{"too long", sessions.SynthesisRequest{Text: strings.Repeat("a", sessions.MaxSynthesisChars+1), Voice: "aura-asteria-en"}, false, "characters long"},
		{"no voice", sessions.SynthesisRequest{Text: "Hi"}, false, "Choose a voice"},
		{"transcription model", sessions.SynthesisRequest{Text: "Hi", Voice: "flux-general-en"}, false, "not a voice"},
		{"aura-2 speed", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-2-thalia-en", Speed: 1.2}, true, ""},
		{"aura-2 too fast", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-2-thalia-en", Speed: 1.6}, false, "0.7 to 1.5"},
		{"aura-2 too slow", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-2-thalia-en", Speed: 0.6}, false, "0.7 to 1.5"},
		{"aura speed", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-asteria-en", Speed: 1.2}, false, "own pace"},
		{"aura-2 german speed", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-2-julius-de", Speed: 1.1}, false, "own pace"},
		{"aura speed 1", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-asteria-en", Speed: 1}, true, ""},
		{"aura expressivity", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-asteria-en", Expressivity: 1}, false, "turn-based"},
		{"aura turn by turn", sessions.SynthesisRequest{Text: "Hi", Voice: "aura-asteria-en", TurnByTurn: true}, false, "turn-based"},
		{"flux slow", sessions.SynthesisRequest{Text: "Hi", Voice: "flux-kit-en", Speed: 0.5, Expressivity: -2}, true, ""},
		{"flux off step", sessions.SynthesisRequest{Text: "Hi", Voice: "flux-kit-en", Speed: 1.12}, false, "steps of 0.05"},
		{"flux expressivity", sessions.SynthesisRequest{Text: "Hi", Voice: "flux-kit-en", Expressivity: 3}, false, "-2 to 2"},
		{"flux turns", sessions.SynthesisRequest{Text: "Hi. There.", Voice: "flux-kit-en", TurnByTurn: true}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Check()
			if (err == nil) != tt.ok {
				t.Fatalf("Check() = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, sessions.ErrInvalidSynthesis) {
					t.Errorf("%v does not match ErrInvalidSynthesis", err)
				}
				if !strings.Contains(err.Error(), tt.says) {
					t.Errorf("Check() = %q, want it to say %q", err, tt.says)
				}
			}
		})
	}
}

func TestSplitTurns(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"First paragraph. Still first.\n\nSecond  one.\r\n\r\nThird", []string{"First paragraph. Still first.", "Second one.", "Third"}},
		{`He said "go." Then left. 3.5 apples`, []string{`He said "go."`, "Then left.", "3.5 apples"}},
		{"   ", nil},
		{"No end", []string{"No end"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := sessions.SplitTurns(tt.text)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("SplitTurns(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// FuzzSplitTurns: splitting never panics, never gives an empty turn and
// loses no word.
func FuzzSplitTurns(f *testing.F) {
	for _, s := range []string{"One. Two! Three?", "a\n\nb", "…”) x", "\xff\xfe.", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		turns := sessions.SplitTurns(s)
		for _, x := range turns {
			if strings.TrimSpace(x) == "" {
				t.Fatalf("empty turn in %q", turns)
			}
		}
		if got, want := strings.Join(strings.Fields(strings.Join(turns, " ")), " "), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("turns %q lose words of %q", turns, s)
		}
	})
}

// newFakeVoices is a playground on the fake service and fake speakers
// (4 times real time), saving to a fresh history.
func newFakeVoices(t *testing.T, f *fakeSpeech, sp *fakeSpeakers) (*sessions.Voices, *store.DB) {
	t.Helper()
	db := openDB(t)
	cfg := sessions.VoicesConfig{Streamer: f, History: db, Backend: "Fake"}
	if sp != nil {
		cfg.Speakers = sp
	}
	return sessions.NewVoices(cfg), db
}

// collected is what a synthesis reported.
type collected struct {
	states   []sessions.State
	first    *sessions.FirstAudioEvent
	started  *sessions.PlaybackStartedEvent
	samples  int
	turns    map[int]sessions.SpeechTurn
	states2  map[int][]sessions.SpeechTurnState
	warnings []string
	done     *sessions.SynthesisDoneEvent
	levels   int
}

func collect(events <-chan sessions.Event, onFirst func()) collected {
	c := collected{turns: map[int]sessions.SpeechTurn{}, states2: map[int][]sessions.SpeechTurnState{}}
	for ev := range events {
		switch e := ev.(type) {
		case *sessions.StateEvent:
			c.states = append(c.states, e.State)
		case *sessions.FirstAudioEvent:
			c.first = e
			if onFirst != nil {
				onFirst()
			}
		case *sessions.PlaybackStartedEvent:
			c.started = e
		case *sessions.SynthesisProgressEvent:
			c.samples += len(e.Samples)
		case *sessions.SpeechTurnEvent:
			c.turns[e.Turn.Index] = e.Turn
			c.states2[e.Turn.Index] = append(c.states2[e.Turn.Index], e.Turn.State)
		case *sessions.SpeakWarningEvent:
			c.warnings = append(c.warnings, e.Code)
		case *sessions.LevelEvent:
			c.levels++
		case *sessions.SynthesisDoneEvent:
			c.done = e
		}
	}
	return c
}

// synthesize runs req on v to its end, and returns what its events
// reported and its result.
func synthesize(ctx context.Context, t *testing.T, v *sessions.Voices, req sessions.SynthesisRequest) (collected, sessions.SynthesisResult) {
	t.Helper()
	s, err := v.Synthesize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	c := collect(s.Events(), nil)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	return c, s.Result()
}

// TestSynthesizeGeneral: a general voice streams on /v1/speak with Speak
// and Flush, its audio is played as it arrives and kept, time to first
// audio and playback latency are measured, and the synthesis is saved
// with its audio.
func TestSynthesizeGeneral(t *testing.T) {
	f := &fakeSpeech{charAudio: 10 * time.Millisecond}
	sp := &fakeSpeakers{factor: 8}
	v, _ := newFakeVoices(t, f, sp)
	ctx := testContext(t, 20*time.Second)
	text := "Hello there. This is a test of the voice playground."
	c, res := synthesize(ctx, t, v, sessions.SynthesisRequest{Text: text, Voice: "aura-2-thalia-en", Speed: 1.2})
	wantSamples := int(time.Duration(len(text))*f.charAudio/fakeFrameDur) * int(fakeFrameDur*fakeRate/time.Second)
	if len(res.PCM) != wantSamples || c.samples != wantSamples {
		t.Errorf("kept %d samples, reported %d, want %d", len(res.PCM), c.samples, wantSamples)
	}
	if c.first == nil || res.TimeToFirstAudio <= 0 || c.first.TimeToFirstAudio != res.TimeToFirstAudio {
		t.Errorf("time to first audio: event %+v, result %v", c.first, res.TimeToFirstAudio)
	}
	if c.started == nil || !res.HasPlaybackLatency || res.PlaybackLatency != time.Millisecond {
		t.Errorf("playback latency: event %+v, result %v %v", c.started, res.HasPlaybackLatency, res.PlaybackLatency)
	}
	if got := c.states; len(got) != 3 || got[0] != sessions.StateConnecting || got[1] != sessions.StateLive || got[2] != sessions.StateStopped {
		t.Errorf("states %v, want connecting, live, stopped", got)
	}
	if tr := c.turns[0]; tr.State != sessions.TurnSpoken || res.Turns[0].State != sessions.TurnSpoken {
		t.Errorf("turn %+v, want spoken", tr)
	}
	if c.levels == 0 {
		t.Error("no level was reported while playing")
	}
	if f.v1[0].Model != "aura-2-thalia-en" || f.v1[0].Speed != 1.2 || f.v1[0].Encoding != "linear16" || f.v1[0].SampleRate != sessions.SynthesisRate {
		t.Errorf("stream opened with %+v", f.v1[0])
	}
	if got := f.stream(0).controls(); strings.Join(got, "|") != "speak:"+text+"|flush|close" {
		t.Errorf("sent %q, want Speak, Flush, Close", got)
	}
	players := sp.opened()
	if len(players) != 1 || len(players[0].pcm) != wantSamples || !players[0].closed {
		t.Fatalf("players %+v", players)
	}

	// History: saved with its audio, and opened back.
	if res.SessionID == 0 {
		t.Fatal("not saved to history")
	}
	saved, err := v.Open(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Text != text || saved.SampleRate != sessions.SynthesisRate || len(saved.PCM) != wantSamples {
		t.Errorf("opened %q at %d Hz with %d samples", saved.Text, saved.SampleRate, len(saved.PCM))
	}
	if !slices.Equal(saved.PCM, res.PCM) {
		t.Error("the saved audio differs from the audio kept")
	}
	if saved.Details.Voice != "aura-2-thalia-en" || saved.Details.Speed != 1.2 || saved.Details.TimeToFirstAudioMS <= 0 || saved.Session.Status != store.StatusDone {
		t.Errorf("details %+v, status %s", saved.Details, saved.Session.Status)
	}
	list, err := v.History(ctx, 10)
	if err != nil || len(list) != 1 || list[0].Kind != store.KindSynthesis {
		t.Fatalf("History = %+v, %v", list, err)
	}
	if err := v.Delete(ctx, res.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Open(ctx, res.SessionID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Open after Delete = %v, want ErrNotFound", err)
	}
}

// TestSynthesizeTurnByTurn: a turn-based voice speaks each paragraph as
// a turn of its own (Speak, Flush), each turn going pending, speaking,
// spoken.
func TestSynthesizeTurnByTurn(t *testing.T) {
	f := &fakeSpeech{charAudio: 5 * time.Millisecond}
	sp := &fakeSpeakers{factor: 10}
	v, _ := newFakeVoices(t, f, sp)
	ctx := testContext(t, 20*time.Second)
	text := "The first turn.\n\nThe second turn, longer.\n\nThe third."
	c, res := synthesize(ctx, t, v, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en", Speed: 1.05, Expressivity: 2, TurnByTurn: true})
	if len(res.Turns) != 3 {
		t.Fatalf("%d turns, want 3", len(res.Turns))
	}
	for i, tr := range res.Turns {
		if tr.State != sessions.TurnSpoken || tr.TimeToFirstAudio <= 0 || tr.End <= tr.Start {
			t.Errorf("turn %d = %+v, want spoken with audio", i, tr)
		}
		if got := c.states2[i]; len(got) != 3 || got[0] != sessions.TurnPending || got[1] != sessions.TurnSpeaking || got[2] != sessions.TurnSpoken {
			t.Errorf("turn %d went %v, want pending, speaking, spoken", i, got)
		}
	}
	want := "speak:The first turn.|flush|speak:The second turn, longer.|flush|speak:The third.|flush|close"
	if got := strings.Join(f.stream(0).controls(), "|"); got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
	o := f.v2[0]
	if o.Model != "flux-kit-en" || o.Speed != 1.05 || o.Expressivity == nil || *o.Expressivity != 2 {
		t.Errorf("stream opened with %+v", o)
	}
	if q := o.StreamQuery(); q.Has("container") || q.Has("bit_rate") {
		t.Errorf("batch-only parameters in the handshake: %v", q)
	}
}

// TestInterruptTurn: Stop interrupts a turn-based voice mid-turn; the
// turn shows what was spoken and what was left, which together are the
// text, and the synthesis is saved as cancelled with what arrived.
func TestInterruptTurn(t *testing.T) {
	// The service holds the turn 20 frames (of 88) in, until it hears
	// the Interrupt.
	f := &fakeSpeech{charAudio: 20 * time.Millisecond, holdAt: 20, held: make(chan struct{}, 1)}
	v, _ := newFakeVoices(t, f, nil)
	ctx := testContext(t, 20*time.Second)
	text := "This sentence is long enough to be interrupted well before its end, which is far away."
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	c := collect(s.Events(), func() {
		go func() {
			<-f.held
			stopped <- s.Stop()
		}()
	})
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	res := s.Result()
	tr := res.Turns[0]
	if tr.State != sessions.TurnInterrupted || tr.Estimated {
		t.Fatalf("turn %+v, want interrupted by the service's word", tr)
	}
	if tr.Spoken+tr.Remaining != text || tr.Spoken == "" || tr.Remaining == "" {
		t.Errorf("spoken %q + remaining %q, want the text split", tr.Spoken, tr.Remaining)
	}
	if !res.Stopped || c.done == nil {
		t.Errorf("stopped %v, done event %v", res.Stopped, c.done != nil)
	}
	if got := f.stream(0).controls(); !strings.Contains(strings.Join(got, "|"), "flush|interrupt") {
		t.Errorf("sent %q, want an Interrupt after the Flush", got)
	}
	saved, err := v.Open(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Session.Status != store.StatusCancelled || saved.Details.InterruptedSpoken != tr.Spoken || len(saved.PCM) != len(res.PCM) {
		t.Errorf("saved %s, spoken %q, %d samples", saved.Session.Status, saved.Details.InterruptedSpoken, len(saved.PCM))
	}
}

// TestStopPlaying: a stop while the audio plays, after the service sent
// all of it, silences the speaker and tells from the playhead what was
// heard; a general voice's stream is cleared when still speaking.
func TestStopPlaying(t *testing.T) {
	for _, voice := range []string{"aura-asteria-en", "flux-kit-en"} {
		t.Run(voice, func(t *testing.T) {
			f := &fakeSpeech{charAudio: 20 * time.Millisecond}
			clk := clock.NewFake(time.Unix(1000, 0))
			sp := &fakeSpeakers{factor: 1, clock: clk}
			v, _ := newFakeVoices(t, f, sp)
			ctx := testContext(t, 20*time.Second)
			text := "A sentence that takes a couple of seconds to say out loud."
			all := int(time.Duration(len(text))*f.charAudio/fakeFrameDur) * int(fakeFrameDur*fakeRate/time.Second)
			s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: voice})
			if err != nil {
				t.Fatal(err)
			}
			stopped := make(chan error, 1)
			collect(s.Events(), func() {
				go func() {
					// Once the service has sent all the audio, the
					// speaker plays 0.3 s of it, and Stop comes.
					sp.opened()[0].waitWritten(all, s.Done())
					clk.Advance(300 * time.Millisecond)
					stopped <- s.Stop()
				}()
			})
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			tr := s.Result().Turns[0]
			if tr.State != sessions.TurnInterrupted || !tr.Estimated || tr.Spoken+tr.Remaining != text || tr.Remaining == "" {
				t.Errorf("turn %+v, want interrupted, estimated from the playhead", tr)
			}
			if p := sp.opened()[0]; p.stops == 0 {
				t.Error("the speaker was not stopped")
			}
		})
	}
}

// TestInterruptUnanswered: when the service never answers an
// Interrupt, the stop ends after its grace period, timed by the
// synthesis's clock; the turn is interrupted, estimated since the
// service never said what was spoken, and the synthesis saved as
// cancelled.
func TestInterruptUnanswered(t *testing.T) {
	f := &fakeSpeech{charAudio: 20 * time.Millisecond, holdAt: 10, held: make(chan struct{}, 1), deaf: true}
	v, _ := newFakeVoices(t, f, nil)
	clk := clock.NewFake(time.Unix(1000, 0))
	ctx := testContext(t, 20*time.Second)
	text := "Nobody answers this interruption, so the stop waits for its grace period."
	s, err := v.SynthesizeOn(ctx, clk, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	c := collect(s.Events(), func() {
		go func() {
			<-f.held
			go func() { stopped <- s.Stop() }()
			// The progress ticker and, once Stop came, the grace timer.
			if clk.WaitForWaiters(2, s.Done()) {
				clk.Advance(sessions.StopGrace)
			}
		}()
	})
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	res := s.Result()
	tr := res.Turns[0]
	if tr.State != sessions.TurnInterrupted || !tr.Estimated || tr.Spoken+tr.Remaining != text || tr.Remaining == "" {
		t.Errorf("turn %+v, want interrupted, estimated from the audio received", tr)
	}
	if !res.Stopped || c.done == nil || c.states[len(c.states)-1] != sessions.StateStopped {
		t.Errorf("stopped %v, done event %v, states %v", res.Stopped, c.done != nil, c.states)
	}
	if got := f.stream(0).controls(); !strings.Contains(strings.Join(got, "|"), "flush|interrupt") {
		t.Errorf("sent %q, want an Interrupt after the Flush", got)
	}
	saved, err := v.Open(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Session.Status != store.StatusCancelled || len(saved.PCM) != len(res.PCM) {
		t.Errorf("saved %s with %d samples, want cancelled with %d", saved.Session.Status, len(saved.PCM), len(res.PCM))
	}
}

// TestCompare: the same text in two voices, one after the other, both
// kept, each with its time to first audio; a speed voice B cannot take
// is not sent.
func TestCompare(t *testing.T) {
	f := &fakeSpeech{charAudio: 5 * time.Millisecond}
	v, db := newFakeVoices(t, f, &fakeSpeakers{factor: 20})
	ctx := testContext(t, 20*time.Second)
	c, err := v.Compare(ctx, sessions.SynthesisRequest{Text: "Compare these voices.", Voice: "aura-2-thalia-en", Speed: 1.3}, "flux-kit-en")
	if err != nil {
		t.Fatal(err)
	}
	var sides []string
	for ev := range c.Events() {
		if e, ok := ev.(*sessions.CompareSideEvent); ok {
			sides = append(sides, e.Side)
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(sides, "") != "AB" {
		t.Errorf("sides %v, want A then B", sides)
	}
	res := c.Results()
	if len(res) != 2 || res[0].Request.Voice != "aura-2-thalia-en" || res[1].Request.Voice != "flux-kit-en" {
		t.Fatalf("results %+v", res)
	}
	for i, r := range res {
		if len(r.PCM) == 0 || r.TimeToFirstAudio <= 0 || r.SessionID == 0 {
			t.Errorf("side %d: %d samples, time to first audio %v, session %d", i, len(r.PCM), r.TimeToFirstAudio, r.SessionID)
		}
	}
	if f.v1[0].Speed != 1.3 || f.v2[0].Speed != 1.3 {
		t.Errorf("speeds sent %v and %v, want 1.3 for both", f.v1[0].Speed, f.v2[0].Speed)
	}
	if n, _ := db.Sessions(ctx, store.Filter{Kind: store.KindSynthesis}); len(n) != 2 {
		t.Errorf("%d syntheses in history, want 2", len(n))
	}
	// Voice B that takes no speed is asked for none.
	c2, err := v.Compare(ctx, sessions.SynthesisRequest{Text: "Again.", Voice: "flux-kit-en", Speed: 0.8, Expressivity: 1}, "aura-asteria-en")
	if err != nil {
		t.Fatal(err)
	}
	for range c2.Events() {
	}
	if err := c2.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(f.v1) != 2 || f.v1[1].Speed != 0 {
		t.Errorf("voice B was asked for speed %v", f.v1[1].Speed)
	}
}

// TestSynthesizeRefusals: a bad request is refused before any stream is
// opened, and a stream that cannot open is reported.
func TestSynthesizeRefusals(t *testing.T) {
	f := &fakeSpeech{charAudio: time.Millisecond}
	v, _ := newFakeVoices(t, f, nil)
	ctx := testContext(t, 10*time.Second)
	if _, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: "", Voice: "flux-kit-en"}); !errors.Is(err, sessions.ErrInvalidSynthesis) {
		t.Errorf("empty text: %v", err)
	}
	if len(f.v1)+len(f.v2) != 0 {
		t.Error("a stream was opened for a refused request")
	}
	f.failOpen = &api.Error{Status: 429, Code: "TOO_MANY_REQUESTS"}
	_, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: "Hi", Voice: "flux-kit-en"})
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Errorf("Synthesize = %v, want the service's 429", err)
	}
}

// TestEncodeAudio: a synthesis saved in each format decodes back to
// about as long as it was.
func TestEncodeAudio(t *testing.T) {
	pcm := make([]int16, sessions.SynthesisRate) // one second of a tone
	for i := range pcm {
		pcm[i] = int16(8000 * sinAt(i))
	}
	for _, enc := range sessions.SaveEncodings {
		t.Run(enc, func(t *testing.T) {
			var buf bytes.Buffer
			if err := sessions.EncodeAudio(t.Context(), &buf, pcm, sessions.SynthesisRate, enc); err != nil {
				t.Fatal(err)
			}
			b, err := audio.Decode(t.Context(), bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("the %s file does not decode: %v", enc, err)
			}
			if d := b.Duration(); d < 900*time.Millisecond || d > 1200*time.Millisecond {
				t.Errorf("%s decodes to %v, want about 1s", enc, d)
			}
			checkSavedLength(t, enc, &buf)
			if got, ok := sessions.EncodingForPath("x" + sessions.SaveExtension(enc)); !ok || (got != enc && enc != "mulaw" && enc != "alaw") {
				t.Errorf("the extension %s reads back as %q", sessions.SaveExtension(enc), got)
			}
		})
	}
	if err := sessions.EncodeAudio(t.Context(), &bytes.Buffer{}, pcm, sessions.SynthesisRate, "wma"); err == nil {
		t.Error("wma was accepted")
	}
}

func sinAt(i int) float64 {
	const f = 440.0 / sessions.SynthesisRate
	x := float64(i) * f
	x -= float64(int(x))
	// A triangle wave is tone enough for a codec, and needs no math.
	return 4*abs(x-0.5) - 1
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestPlay: audio played again goes to the speaker, and Stop silences it.
func TestPlay(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	sp := &fakeSpeakers{factor: 1, clock: clk}
	v, _ := newFakeVoices(t, &fakeSpeech{}, sp)
	ctx := testContext(t, 10*time.Second)
	pcm := make([]int16, sessions.SynthesisRate*2)
	p, err := v.Play(ctx, pcm, sessions.SynthesisRate)
	if err != nil {
		t.Fatal(err)
	}
	// The speaker waits for its last sample: it plays 50 ms of it.
	clk.WaitForWaiters(1, p.Done())
	clk.Advance(50 * time.Millisecond)
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	pl := sp.opened()[0]
	if len(pl.pcm) != len(pcm) || pl.stops == 0 || !pl.closed {
		t.Errorf("player got %d samples, %d stops, closed %v", len(pl.pcm), pl.stops, pl.closed)
	}
	if p.Played() >= p.Duration() {
		t.Errorf("played %v of %v after a stop", p.Played(), p.Duration())
	}
	short, err := v.Play(ctx, pcm[:2400], sessions.SynthesisRate)
	if err != nil {
		t.Fatal(err)
	}
	clk.WaitForWaiters(1, short.Done())
	clk.Advance(time.Second)
	if err := short.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Play(ctx, nil, sessions.SynthesisRate); err == nil {
		t.Error("nothing was played without an error")
	}
}

// TestSynthesizeWithoutSpeaker: a speaker that cannot be opened does not
// lose the synthesis. It goes on silent, says why once, and keeps and
// saves its audio, which can then be written to a file.
func TestSynthesizeWithoutSpeaker(t *testing.T) {
	f := &fakeSpeech{charAudio: 10 * time.Millisecond}
	noCard := fmt.Errorf("audio: open speaker: %w", device.ErrNoOutputDevice)
	v, _ := newFakeVoices(t, f, &fakeSpeakers{factor: 8, fail: noCard})
	ctx := testContext(t, 20*time.Second)
	text := "Nobody hears this, but it is kept."
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: "aura-2-thalia-en"})
	if err != nil {
		t.Fatalf("Synthesize = %v; a missing speaker must not fail it", err)
	}
	var told []error
	for ev := range s.Events() {
		if e, ok := ev.(*sessions.NoSpeakerEvent); ok {
			told = append(told, e.Err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	res := s.Result()
	var se *sessions.SpeakerError
	if len(told) != 1 || !errors.As(told[0], &se) || !errors.Is(told[0], device.ErrNoOutputDevice) {
		t.Errorf("told %v, want one NoSpeakerEvent with the speaker's error", told)
	}
	if !errors.Is(res.Unplayed, device.ErrNoOutputDevice) {
		t.Errorf("Unplayed = %v", res.Unplayed)
	}
	wantSamples := int(time.Duration(len(text))*f.charAudio/fakeFrameDur) * int(fakeFrameDur*fakeRate/time.Second)
	if len(res.PCM) != wantSamples || res.SessionID == 0 {
		t.Fatalf("kept %d samples (want %d), session %d", len(res.PCM), wantSamples, res.SessionID)
	}
	var buf bytes.Buffer
	if err := sessions.EncodeAudio(ctx, &buf, res.PCM, res.SampleRate, "linear16"); err != nil || buf.Len() < 2*wantSamples {
		t.Errorf("saved as WAV: %d bytes, %v", buf.Len(), err)
	}
}
