package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

// engineVoices is a playground on the shared local engine, playing on
// miniaudio's null backend (real time, no sound card) unless silent.
func engineVoices(t *testing.T, speakers bool) *sessions.Voices {
	t.Helper()
	l := localEngine(t)
	c := newClient(t, l.Endpoint(), l.Key)
	cfg := sessions.VoicesConfig{
		Streamer: sessions.ClientStreamer{Client: c},
		Models:   func(ctx context.Context) (*api.ModelList, error) { return c.Models(ctx, false) },
		History:  openDB(t),
		Backend:  "Local engine",
	}
	if speakers {
		cfg.Speakers = sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}
	}
	return sessions.NewVoices(cfg)
}

// TestVoicesEngine: on the local engine, the voice list has both
// families apart; a general and a turn-based voice each stream real
// speech, played through the null backend, with time to first audio and
// playback latency measured, and saved with their audio.
func TestVoicesEngine(t *testing.T) {
	t.Parallel()
	v := engineVoices(t, true)
	ctx := testContext(t, 30*time.Second)
	list, err := v.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	families := map[sessions.VoiceFamily]int{}
	for _, vc := range list {
		families[vc.Family]++
		if fam, _ := sessions.FamilyOf(vc.Name); fam != vc.Family || vc.Language == "" {
			t.Errorf("voice %+v", vc)
		}
	}
	if families[sessions.FamilyGeneral] == 0 || families[sessions.FamilyTurn] == 0 {
		t.Fatalf("voices by family %v, want both", families)
	}
	for _, voice := range []string{"aura-2-thalia-en", "flux-kit-en"} {
		t.Run(voice, func(t *testing.T) {
			c, res := synthesize(ctx, t, v, sessions.SynthesisRequest{Text: "Hello. This is the local engine speaking.", Voice: voice})
			t.Logf("%s: %.2f s of audio, time to first audio %v, playback latency %v", voice, res.Duration().Seconds(), res.TimeToFirstAudio, res.PlaybackLatency)
			if res.Duration() < time.Second || c.samples != len(res.PCM) {
				t.Errorf("%v of audio kept, %d samples reported of %d", res.Duration(), c.samples, len(res.PCM))
			}
			if rms, _ := audio.Level(res.PCM); rms < -40 {
				t.Errorf("the audio is silent: %.1f dBFS", rms)
			}
			if res.TimeToFirstAudio <= 0 || res.TimeToFirstAudio > 5*time.Second || !res.HasPlaybackLatency {
				t.Errorf("time to first audio %v, playback latency measured %v", res.TimeToFirstAudio, res.HasPlaybackLatency)
			}
			if res.Turns[0].State != sessions.TurnSpoken || res.Stopped {
				t.Errorf("turn %+v, stopped %v", res.Turns[0], res.Stopped)
			}
			saved, err := v.Open(ctx, res.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved.PCM) != len(res.PCM) || saved.Details.Voice != voice {
				t.Errorf("saved %d samples by %s", len(saved.PCM), saved.Details.Voice)
			}
		})
	}
}

// TestInterruptEngine: interrupting the local engine mid-turn gives the
// text spoken and the text remaining, which together are the text sent.
func TestInterruptEngine(t *testing.T) {
	t.Parallel()
	v := engineVoices(t, false)
	ctx := testContext(t, 30*time.Second)
	text := "The first sentence is short. The second sentence goes on for a while, so that there is time to interrupt it. " +
		"The third sentence is never reached at all, because the turn is interrupted well before it."
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en", Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	collect(s.Events(), func() { go func() { stopped <- s.Stop() }() })
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	tr := s.Result().Turns[0]
	t.Logf("spoken %q, remaining %q (estimated %v)", tr.Spoken, tr.Remaining, tr.Estimated)
	if tr.State != sessions.TurnInterrupted {
		t.Fatalf("turn %+v, want interrupted", tr)
	}
	join := strings.Join(strings.Fields(tr.Spoken+" "+tr.Remaining), " ")
	if join != text || tr.Remaining == "" {
		t.Errorf("spoken + remaining = %q, want %q", join, text)
	}
}

// TestLongTurnEngine: a turn-based voice speaks a text longer than one
// turn of /v2/speak takes (the engine fails a turn past 2,000 characters
// with BIG-0000) in parts, each a turn of the service, as one turn of
// the synthesis; all of it is spoken.
func TestLongTurnEngine(t *testing.T) {
	t.Parallel()
	v := engineVoices(t, false)
	ctx := testContext(t, 2*time.Minute)
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "Sentence %d walks along the river with a few more words to fill the line. ", i+1)
	}
	text := strings.TrimSpace(b.String()) // about 2,300 characters
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en", Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	collect(s.Events(), nil)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	res := s.Result()
	if len(res.Turns) != 1 || res.Turns[0].State != sessions.TurnSpoken || res.Duration() < 60*time.Second {
		t.Errorf("turns %+v, %v of audio; want one turn spoken, over a minute", res.Turns, res.Duration())
	}
}
