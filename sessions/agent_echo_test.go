package sessions_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

// room is a laptop: what its speaker plays reaches its microphone after a
// delay, weaker, with a short reverberation. The speaker (a
// sessions.Player) plays in real time, paced by the microphone (an
// audio.Source) reading 20 ms frames.
type room struct {
	mu     sync.Mutex
	queue  []int16 // 24 kHz, written and not yet played
	played time.Duration
	hist   []int16   // played audio at 16 kHz, for the echo
	taps   []float64 // impulse response at 16 kHz
	down   *audio.Resampler

	clock time.Duration // the microphone's time
	voice []int16       // the person's speech still to be heard, 16 kHz
	pace  *audio.Replay // 20 ms frames of silence, in real time
	noise *rand.Rand
	// lag is a machine too slow for its microphone: each frame is read
	// this much late, and the microphone's time falls behind the wall
	// clock's.
	lag time.Duration
}

func newRoom(t *testing.T, delay time.Duration, gain float64) *room {
	t.Helper()
	d := int(16000 * delay / time.Second)
	n := 16000 * 60 / 1000 // 60 ms of reverberation
	h := make([]float64, d+n+1)
	h[d] = gain
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 1; k <= n; k++ {
		f := 1 - float64(k)/float64(n+1)
		h[d+k] = gain * 0.3 * f * f * (rng.Float64()*2 - 1)
	}
	rs, err := audio.NewResampler(sessions.AgentOutputRate(), 16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	pace, err := audio.NewSilence(mono16k, audio.ReplayConfig{Paced: true, FrameDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &room{taps: h, down: rs, pace: pace, noise: rand.New(rand.NewPCG(5, 6))}
}

// The speaker.

func (r *room) Write(_ context.Context, pcm []int16) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = append(r.queue, pcm...)
	return nil
}
func (r *room) End() {}
func (r *room) Drain(ctx context.Context) error {
	for r.Queued() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
func (r *room) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = nil
	r.played = 0 // a new stream begins
}
func (r *room) Played() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.played
}
func (r *room) Queued() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return audio.FramesDuration(int64(len(r.queue)), sessions.AgentOutputRate())
}
func (r *room) FirstWrite() time.Time { return time.Time{} }
func (r *room) Started() time.Time    { return time.Time{} }
func (r *room) Close() error          { return nil }

// say makes the person speak into the microphone, over whatever plays.
func (r *room) say(pcm []int16) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.voice = append(r.voice, pcm...)
}

// listened is how long the microphone has been recording.
func (r *room) listened() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clock
}

// The microphone.

func (r *room) Format() audio.Format { return mono16k }

func (r *room) Read(ctx context.Context) ([]int16, error) {
	frame, err := r.pace.Read(ctx)
	if err != nil {
		return nil, err
	}
	if r.lag > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(r.lag):
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// 20 ms of the speaker's queue plays now.
	n := min(len(r.queue), sessions.AgentOutputRate()/50)
	out := make([]int16, sessions.AgentOutputRate()/50)
	copy(out, r.queue[:n])
	r.queue = r.queue[n:]
	r.played += audio.FramesDuration(int64(n), sessions.AgentOutputRate())
	r.clock += 20 * time.Millisecond
	down := audio.Float32ToInt16(nil, r.down.Process(nil, audio.Int16ToFloat32(nil, out)))
	r.hist = append(r.hist, down...)
	mic := make([]int16, len(frame))
	base := len(r.hist) - len(mic)
	for i := range mic {
		var s float64
		for k, c := range r.taps {
			if j := base + i - k; c != 0 && j >= 0 {
				s += c * float64(r.hist[j])
			}
		}
		if len(r.voice) > 0 {
			s += float64(r.voice[0])
			r.voice = r.voice[1:]
		}
		// A real microphone is never silent: its noise floor, about
		// -56 dBFS.
		s += 50 * (r.noise.Float64()*2 - 1)
		mic[i] = int16(max(-32768, min(32767, s)))
	}
	if keep := len(r.taps) + len(mic); len(r.hist) > 4*keep {
		r.hist = append(r.hist[:0], r.hist[len(r.hist)-keep:]...)
	}
	return mic, nil
}

// until passes the session's events by until done reports true; done
// watches the room, which moves in real time (the microphone is paced),
// so it is looked at every 20 ms.
func (e *agentEvents) until(done func() bool) {
	for !done() {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				return // the session ended: the caller's next wait says so
			}
			e.seen = append(e.seen, ev)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// roomSpeakers opens the room's speaker.
type roomSpeakers struct{ r *room }

func (s roomSpeakers) Devices(context.Context) ([]device.Device, error) { return nil, nil }
func (s roomSpeakers) Open(context.Context, string, int) (sessions.Player, error) {
	return s.r, nil
}

// TestAgentHearsItself (must show): the agent's reply, played on laptop
// speakers into a room (delay 30 to 150 ms, attenuation, reverberation)
// and heard by the microphone, causes no barge-in and no words of the
// person over the whole reply with echo cancellation; with the microphone
// open as it is (the control), the agent hears itself.
func TestAgentHearsItself(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		mode  sessions.ListenMode
		delay time.Duration
		lag   time.Duration
		hears bool
	}{
		{"echo cancellation, 30 ms", sessions.ListenEchoCancel, 30 * time.Millisecond, 0, false},
		{"echo cancellation, 150 ms", sessions.ListenEchoCancel, 150 * time.Millisecond, 0, false},
		// A loaded machine reads the microphone a quarter as fast as it
		// records: whether the agent is audible is judged on the
		// microphone's clock, not on when its frames arrive. (The
		// wall clock's judgement let the reply's tail through here, as
		// it did once in CI under the whole suite's load.)
		{"echo cancellation, slow machine", sessions.ListenEchoCancel, 30 * time.Millisecond, 60 * time.Millisecond, false},
		{"open microphone (control)", sessions.ListenOpen, 90 * time.Millisecond, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The slow machine's reply plays at a quarter of real time.
			ctx := testContext(t, 4*time.Minute)
			db := openDB(t)
			rm := newRoom(t, tc.delay, 0.5)
			rm.lag = tc.lag
			ws := agentWorkspaceWith(t, db, roomSpeakers{rm})
			a, err := ws.StartAgent(ctx, sessions.AgentRequest{Source: rm, Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Stop()
			ev := watchAgent(a)
			ev.waitFor(t, ctx, "the conversation", func(e sessions.Event) bool {
				w, ok := e.(*sessions.AgentWireEvent)
				return ok && w.Type == api.TypeSettingsApplied
			})
			// The voice detector settles on the room's noise first (it
			// may take its onset for speech), as in any conversation
			// whose microphone opens before the agent speaks.
			ev.until(func() bool { return rm.listened() >= 1500*time.Millisecond })
			// A long reply: about 8 s of the agent's voice.
			a.Say("what can you do")
			heard, done := false, false
			var quietSince time.Duration // on the microphone's clock
			for !heard {
				select {
				case e, ok := <-ev.ch:
					if !ok {
						t.Fatal("the session ended")
					}
					switch x := e.(type) {
					case *sessions.AgentBargeInEvent:
						// The voice detector may take the microphone's
						// first noise for speech; only a barge-in that cut
						// the agent counts.
						if x.Cut {
							heard = true
							t.Logf("barge-in %v into the session", rm.listened())
						}
					case *sessions.AgentTextEvent:
						if x.Role == api.RoleUser && x.Content != "what can you do" {
							heard = true
							t.Logf("the agent heard %q", x.Content)
						}
					case *sessions.AgentAudioDoneEvent:
						done = true
					}
				case <-time.After(50 * time.Millisecond):
				case <-ctx.Done():
					t.Fatal(ctx.Err())
				}
				// The reply has played out, and the engine had 1.5 s
				// more of the microphone to hear its tail (its
				// endpointing waits for silence): then nothing more will
				// come of it.
				if done && rm.Queued() == 0 {
					if quietSince == 0 {
						quietSince = rm.listened()
					} else if rm.listened()-quietSince > 1500*time.Millisecond {
						break
					}
				}
			}
			if heard != tc.hears {
				t.Errorf("the agent heard itself: %v, want %v (mode %v)", heard, tc.hears, tc.mode)
			}
		})
	}
}

// TestAgentBargeInOverEcho: with echo cancellation, the person can still
// interrupt the agent by speaking over its voice in the room: the agent
// stops, and takes what they said as their turn.
func TestAgentBargeInOverEcho(t *testing.T) {
	t.Parallel()
	// The exchange plays in real time through a room: 29 s on an idle
	// machine, 74 s seen with a load average of 7 on two cores. The bound
	// is for a hang only.
	ctx := testContext(t, 5*time.Minute)
	db := openDB(t)
	question := speech16k(t, ctx, "What is two plus two?")
	rm := newRoom(t, 90*time.Millisecond, 0.5)
	ws := agentWorkspaceWith(t, db, roomSpeakers{rm})
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Source: rm, Mode: sessions.ListenEchoCancel})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	ev := watchAgent(a)
	ev.waitFor(t, ctx, "the conversation", func(e sessions.Event) bool {
		w, ok := e.(*sessions.AgentWireEvent)
		return ok && w.Type == api.TypeSettingsApplied
	})
	ev.until(func() bool { return rm.listened() >= 1500*time.Millisecond })
	a.Say("what can you do")
	ev.waitFor(t, ctx, "the agent's voice", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentSpeakingEvent); return ok })
	// Past the canceller's warm-up, the person speaks over the agent.
	ev.until(func() bool { return rm.Played() >= 4*time.Second })
	rm.say(question)
	b := ev.waitFor(t, ctx, "the barge-in", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentBargeInEvent)
		return ok && x.Cut
	}).(*sessions.AgentBargeInEvent)
	t.Logf("the playback stopped %v after the barge-in", b.StoppedIn)
	// What the person said over the agent reaches it as their turn. (Its
	// words suffer: the start of an utterance over a loud echo is held
	// back until it is known to be a voice, and the canceller's residual
	// suppression takes some of it.)
	said := ev.waitFor(t, ctx, "the person's turn", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentTextEvent)
		return ok && x.Role == api.RoleUser && x.Content != "what can you do"
	}).(*sessions.AgentTextEvent)
	t.Logf("the agent heard %q for %q", said.Content, "What is two plus two?")
}
