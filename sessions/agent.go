package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/store"
)

// A conversation with the voice agent: the microphone to the agent, the
// agent's speech to the speaker, chat text both ways, function calls the
// app runs, and every message for the inspector; all saved to history.

// AgentConn is a conversation as the session drives it; *api.AgentStream
// implements it.
type AgentConn interface {
	Next(ctx context.Context) (api.AgentMessage, error)
	SendAudio(ctx context.Context, audio []byte) error
	Send(ctx context.Context, m api.AgentMessage) error
	Applied() bool
	RequestID() string
	Close() error
}

// AgentDialer opens conversations.
type AgentDialer interface {
	Converse(ctx context.Context, s api.AgentSettings) (AgentConn, error)
}

// ClientAgent opens conversations with a Client.
type ClientAgent struct{ Client *api.Client }

// Converse implements AgentDialer.
func (c ClientAgent) Converse(ctx context.Context, s api.AgentSettings) (AgentConn, error) {
	return c.Client.Converse(ctx, s)
}

// ListenMode is how the microphone reaches the agent.
type ListenMode int

const (
	// ListenEchoCancel sends the microphone all the time, less the echo of
	// the agent's own voice (acoustic echo cancellation with the played
	// audio as the reference). Until the canceller has heard
	// echoWarmUp of the agent, the microphone is gated while the agent
	// speaks, as in half-duplex: an unconverged canceller lets echo by.
	ListenEchoCancel ListenMode = iota
	// ListenOpen sends the microphone all the time, as it is: for
	// headphones.
	ListenOpen
	// ListenHalfDuplex sends nothing of the microphone while the agent's
	// voice plays, and a short tail after, so the agent never hears
	// itself; the person cannot interrupt by speaking.
	ListenHalfDuplex
	// ListenPushToTalk sends the microphone only while Talk is held.
	ListenPushToTalk
)

// echoWarmUp is how much of the agent's voice the echo canceller hears
// before it is trusted alone.
const echoWarmUp = 3 * time.Second

// Double-talk detection while the agent speaks, with echo cancellation:
// the person's voice passes the canceller about as loud as it came (the
// agent's echo comes out 20 dB and more weaker); once heard, the
// microphone stays open for doubleTalkHold.
const (
	doubleTalkRatio     = 0.25 // -12 dB
	doubleTalkOverFloor = 4    // +12 dB over the room's noise
	doubleTalkHold      = 400 * time.Millisecond
	doubleTalkFrames    = 8 // 160 ms of microphone frames
)

// halfDuplexTail is how long the microphone stays gated after the
// agent's voice stops playing: the room's echo dies down.
const halfDuplexTail = 300 * time.Millisecond

// AppFunction is a client-side function the app offers the agent and
// runs itself when asked.
type AppFunction struct {
	Def api.AgentFunction
	// Run answers a call; args is the call's JSON arguments.
	Run func(ctx context.Context, args json.RawMessage) (string, error)
}

// AgentHistory keeps conversations: RecordHistory and their lines. A
// conversation in which nothing was said is deleted as it ends.
type AgentHistory interface {
	RecordHistory
	AddSegment(ctx context.Context, g store.Segment) (int64, error)
	SaveAudio(ctx context.Context, id int64, a store.Audio) error
	DeleteSession(ctx context.Context, id int64) error
}

// AgentConfig configures an AgentSession.
type AgentConfig struct {
	Dialer   AgentDialer
	Settings api.AgentSettings
	// Source is the microphone; nil for a typed conversation.
	Source audio.Source
	// Inspector, when not nil, keeps the conversation's wire events with
	// its history entry.
	Inspector *Inspector
	// Player plays the agent's voice; nil keeps it silent (text only).
	Player Player
	Mode   ListenMode
	// Functions are run by the app when the agent calls them; they are
	// declared in the settings' first think provider.
	Functions []AppFunction
	History   AgentHistory
	Title     string
	Backend   string
	Clock     Clock
	Logger    *slog.Logger
	// KeepAlive is how often KeepAlive is sent when no audio goes; zero
	// means every 4 s (the agent closes a socket silent for 10 s).
	KeepAlive time.Duration
}

// AgentSession is one conversation with the agent.
type AgentSession struct {
	*lifecycle
	cfg  AgentConfig
	log  *slog.Logger
	conn AgentConn
	rec  *record
	id   atomic.Int64 // rec's id, for other goroutines: made late on a full disk

	cmds chan func(context.Context)

	mu       sync.Mutex // guards talking and muted
	talking  bool       // push-to-talk held
	muted    bool
	sendRate int
	// spokeAt is when the person last spoke to the agent: the last
	// microphone frame with their voice that went, or a typed message.
	// Only the loop uses it.
	spokeAt time.Time
	typed   bool            // spokeAt is a typed message's
	sound   *agentRecording // what history keeps of the sound; the loop's

	// Barge-in stops the speaker as the receiver reads UserStartedSpeaking,
	// not when the loop, which may be busy with the microphone, gets to
	// it. stopMu guards stopPlayer, the loop's player (nil once closed).
	stopMu     sync.Mutex
	stopPlayer Player
	bargeAt    atomic.Int64 // when the last UserStartedSpeaking was read (clock, UnixNano)
	stoppedAt  atomic.Int64 // when the receiver then stopped the speaker; 0 when it did not

	// dropped is set as the conversation ends when nothing was said in
	// it, so that history does not keep it (Kept).
	dropped atomic.Bool
}

// Events of an agent session.
type (
	// AgentTextEvent is what one side said (ConversationText).
	AgentTextEvent struct {
		Role    string
		Content string
		At      time.Time
	}
	// AgentSpeakingEvent: the agent's voice begins (AgentStartedSpeaking),
	// with the service's latencies, in seconds.
	AgentSpeakingEvent struct {
		Total, TTS, TTT float64
		At              time.Time
	}
	// AgentAudioDoneEvent: the agent sent the last of its reply.
	AgentAudioDoneEvent struct{ At time.Time }
	// AgentBargeInEvent: the person spoke over the agent; the agent's
	// voice stopped StoppedIn after the service said so
	// (UserStartedSpeaking), and Silenced after the person's voice began
	// at the microphone: what the person lived, the service's time to
	// hear them included. Silenced is 0 when the client did not hear the
	// person's voice begin (a typed conversation, a voice too quiet).
	AgentBargeInEvent struct {
		At        time.Time
		StoppedIn time.Duration
		Silenced  time.Duration
		// Cut reports that the agent was speaking.
		Cut bool
	}
	// AgentFunctionEvent is a function call: requested (Done false), then
	// done with its result.
	AgentFunctionEvent struct {
		ID, Name, Arguments string
		ClientSide          bool
		Done                bool
		Result              string
		Err                 error
		Took                time.Duration
	}
	// AgentAckEvent acknowledges an update (PromptUpdated, SpeakUpdated,
	// ThinkUpdated, ListenUpdated).
	AgentAckEvent struct{ Type string }
	// AgentNoticeEvent is a Warning or an Error of the agent, or a refused
	// injection (Type InjectionRefused).
	AgentNoticeEvent struct {
		Type, Code, Description string
	}
	// AgentLatencyEvent is the service's LatencyReport.
	AgentLatencyEvent struct{ Report api.LatencyReport }
	// AgentTurnLatencyEvent is where a reply's time went.
	AgentTurnLatencyEvent struct{ TurnLatency }
	// AgentWireEvent is a message on the wire, either way, for the
	// inspector: its type, its JSON (never a key: none travels in a
	// message) and when.
	AgentWireEvent struct {
		Out  bool
		Type string
		JSON string
		At   time.Time
	}
)

func (*AgentTextEvent) isEvent()        {}
func (*AgentSpeakingEvent) isEvent()    {}
func (*AgentAudioDoneEvent) isEvent()   {}
func (*AgentBargeInEvent) isEvent()     {}
func (*AgentFunctionEvent) isEvent()    {}
func (*AgentAckEvent) isEvent()         {}
func (*AgentNoticeEvent) isEvent()      {}
func (*AgentLatencyEvent) isEvent()     {}
func (*AgentTurnLatencyEvent) isEvent() {}
func (*AgentWireEvent) isEvent()        {}

// NewAgentSession returns a session; Start opens it.
func NewAgentSession(cfg AgentConfig) *AgentSession {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 4 * time.Second
	}
	if cfg.Title == "" {
		cfg.Title = "Agent conversation"
	}
	return &AgentSession{lifecycle: newLifecycle("agent session", cfg.Clock), cfg: cfg, log: log, cmds: make(chan func(context.Context), 16)}
}

// Start opens the conversation: the settings go first, with the audio
// formats of the microphone and the speaker; audio follows once the agent
// applied them.
func (a *AgentSession) Start(ctx context.Context) error {
	return a.start(ctx, func(ctx context.Context) (runFunc, error) {
		set := a.cfg.Settings
		rate := 16000
		if a.cfg.Source != nil {
			rate = a.cfg.Source.Format().SampleRate
		}
		a.sendRate = rate
		micRate := 0
		if a.cfg.Source != nil {
			micRate = rate
		}
		sound, err := newAgentRecording(micRate)
		if err != nil {
			return nil, err
		}
		a.sound = sound
		set.Audio.Input = &api.AgentAudioInput{Encoding: api.EncodingLinear16, SampleRate: rate}
		set.Audio.Output = &api.AgentAudioOutput{Encoding: api.EncodingLinear16, SampleRate: agentOutputRate, Container: "none"}
		if len(a.cfg.Functions) > 0 && len(set.Agent.Think) > 0 {
			th := append(api.ThinkChain(nil), set.Agent.Think...)
			for i := range th { // a fallback of the chain may call them too
				for _, f := range a.cfg.Functions {
					th[i].Functions = append(th[i].Functions, f.Def)
				}
			}
			set.Agent.Think = th
		}
		if err := set.Validate(); err != nil {
			return nil, err
		}
		a.emit(&StateEvent{State: StateConnecting})
		dctx, wireLabel := runWire(ctx) // the entry is made once connected
		conn, err := a.cfg.Dialer.Converse(dctx, set)
		if err != nil {
			return nil, err
		}
		details, _ := json.Marshal(agentDetails(set))
		rec := openRecord(ctx, a.cfg.History, store.Session{Kind: store.KindAgent, Title: a.cfg.Title,
			Source: "Agent", Backend: a.cfg.Backend, Model: thinkModel(set), Details: string(details)}, a.clock, a.log,
			lateID(a.emit, func(id int64) {
				a.id.Store(id)
				a.cfg.Inspector.Bind(wireLabel, id)
			}))
		a.conn, a.rec = conn, rec
		a.id.Store(rec.ID())
		a.cfg.Inspector.Bind(wireLabel, rec.ID())
		if b, err := api.EncodeAgentMessage(&set); err == nil {
			a.emit(&AgentWireEvent{Out: true, Type: api.TypeSettings, JSON: string(b), At: a.clock.Now()})
		}
		return a.run, nil
	})
}

// agentOutputRate is the rate the agent speaks at: what the speaker plays.
const agentOutputRate = 24000

// AgentOutputRate is the sample rate of the agent's voice, to open the
// speaker with.
func AgentOutputRate() int { return agentOutputRate }

func thinkModel(s api.AgentSettings) string {
	if len(s.Agent.Think) == 0 {
		return ""
	}
	return s.Agent.Think[0].Provider.Model
}

// agentDetails is what history keeps of the settings: the models, the
// voice and the prompt (never a header: they may carry credentials).
func agentDetails(s api.AgentSettings) map[string]any {
	d := map[string]any{"think": thinkModel(s)}
	if v := s.Agent.Voices(); len(v) > 0 {
		d["voice"] = v[0].Provider.Model
	}
	if len(s.Agent.Think) > 0 && s.Agent.Think[0].Prompt != "" {
		d["prompt"] = s.Agent.Think[0].Prompt
	}
	if s.Agent.Listen != nil {
		d["listen"] = s.Agent.Listen.Provider.Model
	}
	return d
}

// Say sends typed text as the person's (InjectUserMessage).
func (a *AgentSession) Say(text string) { a.sendCmd(&api.InjectUserMessage{Content: text}) }

// UpdatePrompt replaces the prompt mid-conversation.
func (a *AgentSession) UpdatePrompt(prompt string) { a.sendCmd(&api.UpdatePrompt{Prompt: prompt}) }

// UpdateVoice changes the voice mid-conversation.
func (a *AgentSession) UpdateVoice(s api.Speak) {
	a.sendCmd(&api.UpdateSpeak{Speak: api.SpeakChain{s}})
}

// UpdateThink changes the model mid-conversation.
func (a *AgentSession) UpdateThink(t api.Think) {
	a.sendCmd(&api.UpdateThink{Think: api.ThinkChain{t}})
}

// SetTalking holds (true) or releases push-to-talk.
func (a *AgentSession) SetTalking(on bool) {
	a.mu.Lock()
	a.talking = on
	a.mu.Unlock()
}

// SetMuted mutes the microphone: nothing of it is sent (KeepAlive is).
func (a *AgentSession) SetMuted(on bool) {
	a.mu.Lock()
	a.muted = on
	a.mu.Unlock()
}

// sendCmd queues a client message for the run loop, which checks and
// sends it; a mistake comes back as an AgentNoticeEvent.
func (a *AgentSession) sendCmd(m api.AgentMessage) {
	select {
	case a.cmds <- func(ctx context.Context) { a.send(ctx, m) }:
	case <-a.Done():
	}
}

func (a *AgentSession) send(ctx context.Context, m api.AgentMessage) {
	// The agent may answer before Send returns: the turn is timed from
	// before it.
	sent := a.clock.Now()
	if err := a.conn.Send(ctx, m); err != nil {
		a.emit(&AgentNoticeEvent{Type: "Refused", Description: err.Error()})
		return
	}
	if _, typed := m.(*api.InjectUserMessage); typed {
		a.spokeAt, a.typed = sent, true
	}
	if b, err := api.EncodeAgentMessage(m); err == nil {
		a.emit(&AgentWireEvent{Out: true, Type: m.MessageType(), JSON: string(b), At: a.clock.Now()})
	}
}

// gated reports whether the microphone's audio must not go now: muted,
// push-to-talk released, or the agent's voice playing in half-duplex (or
// while the echo canceller warms up).
func (a *AgentSession) gated(playingUntil, now time.Duration, warm bool) bool {
	a.mu.Lock()
	muted, talking := a.muted, a.talking
	a.mu.Unlock()
	switch {
	case muted:
		return true
	case a.cfg.Mode == ListenPushToTalk:
		return !talking
	case a.cfg.Mode == ListenHalfDuplex, a.cfg.Mode == ListenEchoCancel && !warm:
		return now < playingUntil
	}
	return false
}

// micFrame is a frame of the microphone and the speaker's playhead when
// it was recorded.
type micFrame struct {
	pcm      []int16
	playhead time.Duration
	// at is when it was read (the person's turn is timed from it); t is
	// when it was recorded on the microphone's own clock: the end of the
	// frame, counted in samples since the first. queued is what the
	// speaker had still to play then. Whether the agent was audible in a
	// frame is decided on t and queued, so it depends neither on how late
	// the loop takes the frame nor on a slow machine delivering the
	// microphone's frames late and then at once.
	at     time.Time
	t      time.Duration
	queued time.Duration
	dur    time.Duration // its length
}

// receive reads the next message; UserStartedSpeaking stops the agent's
// voice at once (see bargeIn).
func (a *AgentSession) receive(ctx context.Context) (api.AgentMessage, error) {
	m, err := a.conn.Next(ctx)
	if _, ok := m.(*api.UserStartedSpeaking); ok {
		a.bargeIn()
	}
	return m, err
}

// bargeIn stops the speaker if the agent's voice is playing: the person
// spoke over it. The loop drops what it had received of the reply and not
// yet played.
func (a *AgentSession) bargeIn() {
	a.bargeAt.Store(a.clock.Now().UnixNano())
	a.stoppedAt.Store(0)
	a.stopMu.Lock()
	defer a.stopMu.Unlock()
	if p := a.stopPlayer; p != nil && p.Queued() > 0 {
		p.Stop()
		a.stoppedAt.Store(a.clock.Now().UnixNano())
	}
}

// setPlayer changes the player the receiver may stop.
func (a *AgentSession) setPlayer(p Player) {
	a.stopMu.Lock()
	a.stopPlayer = p
	a.stopMu.Unlock()
}

// run is the session's loop.
func (a *AgentSession) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		_ = a.conn.Close()
		if a.cfg.Source != nil {
			_ = a.cfg.Source.Close()
		}
		wg.Wait()
	}()
	msgs := make(chan received[api.AgentMessage], 64)
	a.setPlayer(a.cfg.Player)
	defer a.setPlayer(nil)
	wg.Add(1)
	go func() {
		defer wg.Done()
		pump(ctx, a.clock, a.receive, msgs)
	}()
	mic := make(chan micFrame, 64)
	micErr := make(chan error, 1)
	if src := a.cfg.Source; src != nil {
		player := a.cfg.Player
		wg.Add(1)
		go func() {
			defer wg.Done()
			var recorded time.Duration
			for {
				pcm, err := src.Read(ctx)
				if err != nil {
					micErr <- err
					return
				}
				// The source reuses its buffer: the loop gets a copy,
				// with where the speaker's playhead was as it was
				// recorded (the echo canceller's alignment).
				dur := audio.FramesDuration(int64(len(pcm)/max(1, src.Format().Channels)), src.Format().SampleRate)
				recorded += dur
				f := micFrame{pcm: append([]int16(nil), pcm...), at: a.clock.Now(), t: recorded, dur: dur}
				if player != nil {
					f.playhead, f.queued = player.Played(), player.Queued()
				}
				select {
				case mic <- f:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	keep := a.clock.NewTimer(a.cfg.KeepAlive)
	defer keep.Stop()
	start := a.clock.Now()
	// Echo cancellation: the agent's voice, at the microphone's rate, is
	// the reference.
	var (
		echo     *audio.EchoFilter
		toMic    *audio.Resampler
		refHeard time.Duration
	)
	if a.cfg.Mode == ListenEchoCancel && a.cfg.Source != nil && a.cfg.Player != nil {
		var err error
		if echo, err = audio.NewEchoFilter(a.sendRate); err == nil {
			toMic, err = audio.NewResampler(agentOutputRate, a.sendRate, 1)
		}
		if err != nil {
			a.log.Warn("agent: no echo cancellation", "err", err)
			a.emit(&AgentNoticeEvent{Type: "Echo", Description: "Echo cancellation is not available (" + err.Error() + "); the microphone is muted while the agent speaks."})
			echo = nil
		} else {
			defer echo.Close()
		}
	}
	sound := a.sound
	var turn *turnTiming // the person's turn waiting for the agent's voice
	var fin, fout []float32
	var talkUntil time.Duration // the microphone's clock
	var recent []float64        // the microphone's RMS, last frames
	// The person's voice as the client hears it: when the current run of
	// it began (the start of its first frame), and when it was last heard.
	var voiceFrom, voiceLast time.Time
	var runFrom time.Time // the start of the frames of a double talk being decided
	talkFrames := 0
	var preRoll [][]int16 // cleaned frames held while double talk is decided
	floor := 30.0         // the room's noise (RMS), measured while the agent is silent
	var (
		seq          int
		playingUntil time.Duration // on the microphone's clock: when the agent's voice has played out
		micT         time.Duration // the microphone's clock: the last frame's
		speaking     bool          // the agent's reply is playing or arriving
		bargedIn     bool          // the person spoke over the reply: its rest is dropped
		replyDone    bool          // the agent sent the last of its reply (AgentAudioDone)
		runErr       error
	)
	// save keeps a line of the conversation: what a role said (the
	// person as speaker 0, the agent as 1), or a function call (no
	// speaker), with details of what only it has.
	save := func(role, text string, details map[string]any) {
		seq++
		at := a.clock.Now().Sub(start).Seconds()
		n := seq
		var speaker *int
		switch role {
		case api.RoleUser:
			speaker = new(int)
		case api.RoleAssistant:
			one := 1
			speaker = &one
		}
		if details == nil {
			details = map[string]any{}
		}
		details["role"] = role
		d, _ := json.Marshal(details)
		a.rec.save(ctx, "a line of the conversation", func(ctx context.Context, id int64) error {
			_, err := a.cfg.History.AddSegment(ctx, store.Segment{SessionID: id, Seq: n, Start: at, End: at, Speaker: speaker, Text: text, Details: string(d)})
			return err
		})
	}
	a.emit(&StateEvent{State: StateLive})
loop:
	for {
		select {
		case <-a.stopping():
			break loop
		case err := <-micErr:
			if !errors.Is(err, audio.ErrSourceClosed) && ctx.Err() == nil {
				runErr = err
			}
			break loop
		case cmd := <-a.cmds:
			cmd(ctx)
		case <-keep.C():
			if a.conn.Applied() {
				a.send(ctx, &api.AgentKeepAlive{})
			}
			keep.Reset(a.cfg.KeepAlive)
		case <-a.rec.retry():
			a.rec.retryHeld(ctx)
		case mf := <-mic:
			pcm := mf.pcm
			now := mf.t
			micT = now
			if !a.conn.Applied() {
				continue // audio before SettingsApplied is ignored by the agent
			}
			if p := a.cfg.Player; p != nil && a.cfg.Mode != ListenOpen && speaking {
				// The agent speaks until its last audio has played: a
				// player that runs dry mid-reply does not open the
				// microphone to the rest of it.
				q := mf.queued
				if replyDone && q == 0 {
					speaking = false
				}
				playingUntil = max(playingUntil, now+q+halfDuplexTail)
			}
			out := pcm
			if echo != nil {
				head := int64(mf.playhead) * int64(a.sendRate) / int64(time.Second)
				out = echo.Capture(pcm, head)
			}
			a.mu.Lock()
			muted := a.muted
			a.mu.Unlock()
			sound.heard(out, muted)
			warm := false
			if echo != nil && a.cfg.Player != nil {
				// What has been played, not what was received: the
				// canceller learns from the echo it hears.
				warm = refHeard-a.cfg.Player.Queued() >= echoWarmUp
			}
			if echo != nil && warm && now < playingUntil {
				// Double talk: while the agent plays, what the canceller
				// leaves goes only when it is the person's voice, which
				// the canceller does not reduce, not the residue of the
				// agent's, which it does (by 20 dB and more).
				// The residue trails the echo that made it: the
				// microphone's loudest of the last 300 ms is the measure.
				recent = append(recent[max(0, len(recent)-14):], rms(pcm))
				// doubleTalkFrames in a row: the residue of a word's onset is
				// brief, a person's voice is not. What the person said
				// while it was being decided goes first (preRoll).
				if o := rms(out); o > doubleTalkRatio*slices.Max(recent) && o > doubleTalkOverFloor*floor {
					if talkFrames == 0 {
						runFrom = mf.at.Add(-mf.dur)
					}
					if talkFrames++; talkFrames >= doubleTalkFrames {
						talkUntil = now + doubleTalkHold
						// The person's voice, from the run's first frame.
						voiceFrom, voiceLast = voiceRun(voiceFrom, voiceLast, runFrom, mf.at)
					}
				} else {
					talkFrames = 0
				}
				if now > talkUntil {
					preRoll = append(preRoll, append([]int16(nil), out...))
					if len(preRoll) > doubleTalkFrames+2 {
						preRoll = preRoll[1:]
					}
					continue
				}
			}
			if !speaking && now >= playingUntil {
				// The quietest of the room, rising slowly, falling at once.
				if r := rms(pcm); r < floor {
					floor = max(r, 1)
				} else {
					floor += (r - floor) * 0.01
				}
			}
			if !(echo != nil && warm && now < playingUntil) && rms(out) > max(doubleTalkOverFloor*floor, minVoiceRMS) {
				voiceFrom, voiceLast = voiceRun(voiceFrom, voiceLast, mf.at.Add(-mf.dur), mf.at)
			}
			if a.gated(playingUntil, now, warm) {
				// Nothing of the microphone goes (KeepAlive holds the
				// socket): the agent's voice detector keeps what it
				// learnt of the room, and hears no echo.
				preRoll = preRoll[:0]
				continue
			}
			for _, f := range preRoll {
				if err := a.conn.SendAudio(ctx, audio.Int16ToBytes(nil, f)); err != nil {
					runErr = err
					break loop
				}
			}
			preRoll = preRoll[:0]
			if err := a.conn.SendAudio(ctx, audio.Int16ToBytes(nil, out)); err != nil {
				runErr = err
				break loop
			}
			if rms(out) > max(doubleTalkOverFloor*floor, minVoiceRMS) {
				a.spokeAt, a.typed = mf.at, false // the person's voice went, as far as the client can tell
			}
			keep.Reset(a.cfg.KeepAlive)
		case r := <-msgs:
			if r.err != nil {
				if ctx.Err() == nil && !errors.Is(r.err, api.ErrClosed) {
					runErr = r.err
				} else if ctx.Err() == nil {
					runErr = r.err
				}
				break loop
			}
			switch m := r.msg.(type) {
			case *api.AgentAudio:
				if b := a.bargeAt.Load(); b != 0 && r.at.UnixNano() < b {
					// Received before a barge-in the receiver has acted
					// on: the person spoke over it.
					continue
				}
				if bargedIn {
					// The rest of a reply the person spoke over, sent
					// before the agent heard them: never played.
					continue
				}
				speaking = true
				sound.spoke(audio.BytesToInt16(nil, m.Data), a.clock.Now().Sub(start))
				if turn != nil {
					// The first of the reply's voice: the turn's timing is whole.
					turn.ToAudio = r.at.Sub(turn.end)
					a.emit(&AgentTurnLatencyEvent{turn.TurnLatency})
					save("latency", "", turn.details())
					turn = nil
				}
				if p := a.cfg.Player; p != nil {
					pcm := audio.BytesToInt16(nil, m.Data)
					if echo != nil {
						fin = audio.Int16ToFloat32(fin[:0], pcm)
						fout = toMic.Process(fout[:0], fin)
						echo.Played(audio.Float32ToInt16(nil, fout))
						refHeard += audio.FramesDuration(int64(len(pcm)), agentOutputRate)
					}
					err := p.Write(ctx, pcm)
					// The gate holds until this has played.
					playingUntil = max(playingUntil, micT+p.Queued()+halfDuplexTail)
					if err != nil && !errors.Is(err, device.ErrInterrupted) { // interrupted: a barge-in stopped it
						a.emit(&NoSpeakerEvent{Err: &SpeakerError{Err: err}})
						a.setPlayer(nil)
						_ = p.Close()
						a.cfg.Player = nil
					}
				}
				continue
			case *api.UserStartedSpeaking:
				ev := &AgentBargeInEvent{At: r.at, Cut: speaking}
				if p := a.cfg.Player; p != nil && speaking {
					p.Stop() // barge-in: the queued reply is dropped at once
					if echo != nil {
						echo.Stopped()
					}
				}
				silent := a.clock.Now()
				ev.StoppedIn = silent.Sub(r.at)
				if stopped := a.stoppedAt.Load(); stopped != 0 {
					// The receiver stopped it as it read the message.
					ev.StoppedIn = time.Duration(max(0, stopped-a.bargeAt.Load()))
					silent = time.Unix(0, stopped)
				}
				if !voiceFrom.IsZero() && r.at.Sub(voiceLast) < voiceGap && !voiceFrom.After(silent) {
					ev.Silenced = silent.Sub(voiceFrom)
				}
				if speaking {
					sound.cut(a.clock.Now().Sub(start))
				}
				bargedIn = speaking
				speaking, playingUntil = false, 0
				a.emit(ev)
			case *api.ConversationText:
				a.emit(&AgentTextEvent{Role: m.Role, Content: m.Content, At: r.at})
				save(m.Role, m.Content, nil)
				if m.Role == api.RoleUser && !a.spokeAt.IsZero() && !a.spokeAt.After(r.at) {
					turn = &turnTiming{end: a.spokeAt, TurnLatency: TurnLatency{ToText: r.at.Sub(a.spokeAt), Typed: a.typed}}
				}
			case *api.AgentStartedSpeaking:
				if turn != nil {
					turn.Total, turn.TTT, turn.TTS = m.TotalLatency, m.TTTLatency, m.TTSLatency
				}
				speaking, bargedIn, replyDone = true, false, false
				a.emit(&AgentSpeakingEvent{Total: m.TotalLatency, TTS: m.TTSLatency, TTT: m.TTTLatency, At: r.at})
			case *api.AgentAudioDone:
				replyDone = true
				if p := a.cfg.Player; p != nil {
					p.End()
				}
				a.emit(&AgentAudioDoneEvent{At: r.at})
			case *api.FunctionCallRequest:
				for _, f := range m.Functions {
					a.emit(&AgentFunctionEvent{ID: f.ID, Name: f.Name, Arguments: f.Arguments, ClientSide: f.ClientSide})
					if f.ClientSide {
						wg.Add(1)
						go func() {
							defer wg.Done()
							a.runFunction(ctx, f)
						}()
					}
				}
			case *api.FunctionCallResponse:
				a.emit(&AgentFunctionEvent{ID: m.ID, Name: m.Name, Done: true, Result: m.Content})
			case *api.AgentUpdated:
				a.emit(&AgentAckEvent{Type: m.Type})
			case *api.InjectionRefused:
				a.emit(&AgentNoticeEvent{Type: api.TypeInjectionRefused, Code: m.Code, Description: m.Message})
			case *api.AgentNotice:
				a.emit(&AgentNoticeEvent{Type: m.Type, Code: m.Code, Description: m.Description})
			case *api.AgentHistory:
				// The agent's record of the calls it made, with their
				// results, is what history keeps of them.
				for _, fc := range m.FunctionCalls {
					save("function", fc.Name+"("+fc.Arguments+") answered "+fc.Response, map[string]any{
						"name": fc.Name, "arguments": fc.Arguments, "response": fc.Response, "client_side": fc.ClientSide})
				}
			case *api.LatencyReport:
				a.emit(&AgentLatencyEvent{Report: *m})
			}
			if b, err := api.EncodeAgentMessage(r.msg); err == nil {
				a.emit(&AgentWireEvent{Type: r.msg.MessageType(), JSON: string(b), At: r.at})
			}
		}
	}
	a.emit(&StateEvent{State: StateStopping})
	if p := a.cfg.Player; p != nil {
		p.Stop()
		_ = p.Close()
	}
	if sound.full {
		a.log.Info("agent: the conversation's sound was kept up to its limit", "limit", maxRecording)
	}
	if b, err := sound.ogg(); err != nil {
		a.log.Warn("agent: the conversation's sound could not be encoded", "err", err)
	} else if b != nil {
		a.rec.saveOnce(ctx, "the conversation's sound", bounded(func(ctx context.Context, id int64) error {
			return a.cfg.History.SaveAudio(ctx, id, store.Audio{ContentType: KeptContentType, Encoding: KeptEncoding, SampleRate: recordRate, Data: b})
		}))
	}
	status := store.StatusDone
	if runErr != nil {
		status = store.StatusFailed
	}
	length := a.clock.Now().Sub(start).Seconds()
	if runErr == nil && seq == 0 && a.rec != nil {
		// Nothing was said, by either side: nothing is kept (a typed
		// conversation whose input was empty, a Start then Stop).
		a.dropped.Store(a.rec.drop(a.cfg.History.DeleteSession, length))
	} else {
		a.rec.finish(status, length, runErr)
	}
	if runErr != nil {
		a.emit(&StateEvent{State: StateFailed, Err: runErr})
		return runErr
	}
	a.emit(&StateEvent{State: StateStopped})
	return nil
}

// TurnLatency is where a reply's time went, measured here from the end
// of the person's speech (or from sending a typed message) to their words
// coming back as text and to the first of the agent's voice arriving,
// beside the service's own figures (in seconds; zero when it gave none).
type TurnLatency struct {
	ToText, ToAudio time.Duration
	Total, TTT, TTS float64
	// Typed reports that the turn was typed: the times run from sending.
	Typed bool
}

// minVoiceRMS is the quietest a frame of the person's voice can be, in a
// silent room.
const minVoiceRMS = 100

// voiceGap is the longest pause inside one stretch of a person's voice:
// a longer silence, and the next voice heard begins another.
const voiceGap = 700 * time.Millisecond

// voiceRun takes microphone audio from begun to end that holds the
// person's voice: from and last, when the stretch of voice began and
// when it was last heard, become those with the audio in the stretch.
func voiceRun(from, last, begun, end time.Time) (time.Time, time.Time) {
	if from.IsZero() || begun.Sub(last) > voiceGap {
		from = begun
	}
	return from, end
}

// turnTiming is the timing of a turn of the person's, until the agent's
// voice answers it.
type turnTiming struct {
	end time.Time // when the person stopped speaking
	TurnLatency
}

// details is what history keeps of the timing.
func (l TurnLatency) details() map[string]any {
	return map[string]any{"to_text_ms": l.ToText.Milliseconds(), "to_audio_ms": l.ToAudio.Milliseconds(),
		"total_latency": l.Total, "ttt_latency": l.TTT, "tts_latency": l.TTS, "typed": l.Typed}
}

// runFunction runs a client-side call of one of the app's functions and
// answers it; an unknown function is answered with an error, so the agent
// does not wait.
func (a *AgentSession) runFunction(ctx context.Context, f api.FunctionCall) {
	began := a.clock.Now()
	var fn *AppFunction
	for i := range a.cfg.Functions {
		if a.cfg.Functions[i].Def.Name == f.Name {
			fn = &a.cfg.Functions[i]
		}
	}
	var (
		result string
		err    error
	)
	if fn == nil {
		err = fmt.Errorf("no function %q is offered by this app", f.Name)
	} else {
		fctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		result, err = fn.Run(fctx, json.RawMessage(f.Arguments))
		cancel()
	}
	content := result
	if err != nil {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		content = string(b)
	}
	a.emit(&AgentFunctionEvent{ID: f.ID, Name: f.Name, Arguments: f.Arguments, ClientSide: true, Done: true, Result: content, Err: err, Took: a.clock.Now().Sub(began)})
	select {
	case a.cmds <- func(ctx context.Context) {
		a.send(ctx, &api.FunctionCallResponse{ID: f.ID, Name: f.Name, Content: content})
	}:
	case <-ctx.Done():
	}
}

// Functions the app offers the agent.

// ID is the conversation's id in history (0 before it started, without
// history, or while a full disk has no room for its entry).
func (a *AgentSession) ID() int64 { return a.id.Load() }

// Kept reports whether history keeps the conversation: once it has
// ended, false when nothing was said in it (or there is no history).
func (a *AgentSession) Kept() bool { return a.rec != nil && !a.dropped.Load() }

// HistoryFunctions are the client-side functions over the person's
// history: search it and summarise a past session (leaving out the
// conversation self, whose own words would match), and the time.
func (w *Workspace) HistoryFunctions(self func() int64) []AppFunction {
	return []AppFunction{
		{
			Def: api.AgentFunction{Name: "search_history", Description: "Search the person's saved transcripts, conversations and analyses for words, and return the passages that match.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"the words to look for"}},"required":["query"]}`)},
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				var in struct {
					Query string `json:"query"`
				}
				if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
					return "", errors.New("give the words to look for as query")
				}
				found, err := w.Search(ctx, in.Query, 6)
				if err != nil {
					return "", err
				}
				var hits []store.Hit
				for _, h := range found {
					if self == nil || h.SessionID != self() {
						hits = append(hits, h)
					}
				}
				if len(hits) == 0 {
					return "Nothing in the history matches " + in.Query + ".", nil
				}
				var b strings.Builder
				for _, h := range hits {
					title := fmt.Sprintf("session %d", h.SessionID)
					if s, err := w.cfg.History.Session(ctx, h.SessionID); err == nil {
						title = s.Title + " (" + s.Started.Format("2 January 2006") + ")"
					}
					fmt.Fprintf(&b, "%s: %s\n", title, strings.NewReplacer(store.HighlightStart, "", store.HighlightEnd, "").Replace(h.Snippet))
				}
				return b.String(), nil
			},
		},
		{
			Def: api.AgentFunction{Name: "summarize_session", Description: "Summarise the person's past session (a transcript or a conversation) that best matches some of its words.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words said in the session"}},"required":["query"]}`)},
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				var in struct {
					Query string `json:"query"`
				}
				if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
					return "", errors.New("give words said in the session as query")
				}
				hits, err := w.Search(ctx, in.Query, 6)
				if err != nil {
					return "", err
				}
				id := int64(0)
				for _, h := range hits {
					if self == nil || h.SessionID != self() {
						id = h.SessionID
						break
					}
				}
				if id == 0 {
					return "No past session matches " + in.Query + ".", nil
				}
				tr, err := w.Transcript(ctx, id)
				if err != nil {
					return "", err
				}
				var text []string
				for _, c := range tr.Captions {
					text = append(text, c.Text)
				}
				doc := strings.Join(text, " ")
				if strings.TrimSpace(doc) == "" {
					return "The session " + tr.Title + " has no words to summarise.", nil
				}
				res, err := w.Analyze(ctx, AnalysisInput{Text: doc}, Features{Summary: true}, nil)
				if err != nil {
					return "", err
				}
				if res.Response == nil || res.Response.Results.Summary == nil {
					return "", errors.New("the service gave no summary")
				}
				return tr.Title + " (" + tr.Created.Format("2 January 2006") + "): " + res.Response.Results.Summary.Text, nil
			},
		},
		{
			Def: api.AgentFunction{Name: "get_time", Description: "The current date and time on the person's computer.",
				Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			Run: func(context.Context, json.RawMessage) (string, error) {
				return time.Now().Format("Monday 2 January 2006, 15:04 MST"), nil
			},
		},
	}
}

// AgentRequest is what a person asks of a conversation with the agent.
type AgentRequest struct {
	// Think is the model, an id of the think-model list; "" takes the
	// list's first.
	Think string
	// Voice is the agent's voice; "" takes the settings' voice.
	Voice    string
	Prompt   string
	Greeting string
	// Text makes a typed conversation: no microphone.
	Text bool
	// Silent keeps the agent's voice off the speaker (replies as text).
	Silent   bool
	DeviceID string
	Mode     ListenMode
	// Source replaces the microphone (tests, a recording).
	Source audio.Source
}

// ThinkModels lists the models the agent can think with, from the agent's
// host of the service in use.
func (w *Workspace) ThinkModels(ctx context.Context) ([]api.ThinkModel, error) {
	conn, err := w.Connection(ctx)
	if err != nil {
		return nil, err
	}
	return conn.Client.ThinkModels(ctx)
}

// AgentVoice is the speak provider of a voice name: version v2 for a
// turn-based (flux) voice, v1 for the others.
func AgentVoice(name string) api.Speak {
	p := api.SpeakProvider{Type: api.ProviderDeepgram, Model: name}
	if api.IsFluxVoice(name) {
		p.Version = api.AgentVersionV2
	}
	return api.Speak{Provider: p}
}

// AgentThink is the think provider of a model of the think-model list.
func AgentThink(m api.ThinkModel, prompt string) api.Think {
	return api.Think{Provider: api.ThinkProvider{Type: m.Provider, Model: m.ID}, Prompt: prompt}
}

// StartAgent starts a conversation with the agent of the service in use,
// with the app's functions over history.
func (w *Workspace) StartAgent(ctx context.Context, req AgentRequest) (*AgentSession, error) {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil {
		return nil, err
	}
	models, err := conn.Client.ThinkModels(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the agent's models: %w", err)
	}
	var model *api.ThinkModel
	for i := range models {
		if req.Think == "" || models[i].ID == req.Think {
			model = &models[i]
			break
		}
	}
	if model == nil && req.Think != "" && conn.Kind == BackendLocal && s.AgentLLM != "" && w.cfg.LocalLLM != nil && len(models) > 0 {
		// A model of the language model server, which did not list it
		// (it does not answer now, or does not have it): the local
		// engine asks the server anyway, and its first reply says why
		// the built-in assistant answers instead.
		model = &api.ThinkModel{ID: req.Think, Provider: api.ProviderOpenAI}
	}
	if model == nil {
		var ids []string
		for _, m := range models {
			ids = append(ids, m.ID)
		}
		if len(ids) == 0 {
			return nil, errors.New("the service lists no model for the agent to think with")
		}
		return nil, fmt.Errorf("%w: the agent cannot think with %q; it offers %s", ErrInvalidAgent, req.Think, strings.Join(ids, ", "))
	}
	voice := req.Voice
	if voice == "" {
		voice = s.Voice
	}
	if voice == "" || !(api.IsAuraVoice(voice) || api.IsFluxVoice(voice)) {
		voice = api.DefaultAgentVoice
	}
	think := api.ThinkChain{AgentThink(*model, req.Prompt)}
	if conn.Kind == BackendLocal && models[0].ID != model.ID {
		// A model of the language model server falls back to the local
		// engine's own first model, its built-in assistant: if the
		// server stops answering, the conversation goes on, and the
		// agent says why.
		think = append(think, AgentThink(models[0], req.Prompt))
	}
	set := api.AgentSettings{Tags: []string{"earshot"}, Agent: api.AgentConfig{
		Listen:   &api.AgentListen{Provider: api.ListenProvider{Type: api.ProviderDeepgram, Model: "nova-3"}},
		Think:    think,
		Speak:    api.SpeakChain{AgentVoice(voice)},
		Greeting: req.Greeting,
	}}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidAgent, err)
	}
	var a *AgentSession
	self := func() int64 { return a.ID() }
	cfg := AgentConfig{Dialer: ClientAgent{conn.Client}, Inspector: w.inspector, Settings: set, Mode: req.Mode, History: w.history(),
		Backend: conn.Name, Logger: w.log, Functions: w.HistoryFunctions(self), Source: req.Source}
	if !req.Text && cfg.Source == nil {
		src, _, err := w.openSource(ctx, s, nil, "", req.DeviceID)
		if err != nil {
			return nil, err
		}
		cfg.Source = src
	}
	var noSpeaker error
	if !req.Silent && w.cfg.Speakers != nil {
		p, err := w.cfg.Speakers.Open(ctx, s.OutputDevice, AgentOutputRate())
		if err != nil {
			// No speaker: the conversation goes on in text, and says so.
			noSpeaker = &SpeakerError{Err: err}
		} else {
			cfg.Player = p
		}
	}
	a = NewAgentSession(cfg)
	if noSpeaker != nil {
		a.emit(&NoSpeakerEvent{Err: noSpeaker})
	}
	if err := a.Start(ctx); err != nil {
		if cfg.Source != nil {
			_ = cfg.Source.Close()
		}
		if cfg.Player != nil {
			_ = cfg.Player.Close()
		}
		return nil, err
	}
	return a, nil
}

// ErrInvalidAgent matches a conversation the agent would refuse, refused
// before anything was sent.
var ErrInvalidAgent = errors.New("the agent's settings are not valid")

// rms is the root mean square of samples.
func rms(p []int16) float64 {
	var s float64
	for _, v := range p {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(1, len(p))))
}

// AgentChoices are what a conversation with the agent can be set up with:
// the models it thinks with and the voices it speaks with (the general
// ones, then the turn-based), on the service in use.
type AgentChoices struct {
	Models []api.ThinkModel
	Voices []string
	// LLMErr says why the language model server of the settings cannot
	// be used (LLMProblem): its models are not among Models.
	LLMErr error
}

// AgentChoices lists the agent's models and voices.
func (w *Workspace) AgentChoices(ctx context.Context) (AgentChoices, error) {
	conn, err := w.Connection(ctx)
	if err != nil {
		return AgentChoices{}, err
	}
	models, err := conn.Client.ThinkModels(ctx)
	if err != nil {
		return AgentChoices{}, fmt.Errorf("list the agent's models: %w", err)
	}
	out := AgentChoices{Models: models, LLMErr: w.LLMProblem(ctx)}
	list, err := conn.Client.Models(ctx, false)
	if err != nil {
		return out, fmt.Errorf("list the voices: %w", err)
	}
	for _, v := range append(list.SpeakVoices(), list.TurnVoices()...) {
		if api.IsAuraVoice(v.CanonicalName) || api.IsFluxVoice(v.CanonicalName) {
			out.Voices = append(out.Voices, v.CanonicalName)
		}
	}
	return out, nil
}

// AgentLine is a line of a past conversation with the agent: what a role
// said, a function call (Role "function") with its result, or where a
// reply's time went (Role "latency").
type AgentLine struct {
	Role      string
	Text      string
	Name      string // a function call's
	Arguments string
	Response  string
	Latency   TurnLatency
}

// AgentConversation reads a past conversation back, in order.
func (w *Workspace) AgentConversation(ctx context.Context, id int64) ([]AgentLine, error) {
	segs, err := w.cfg.History.Segments(ctx, id)
	if err != nil {
		return nil, err
	}
	lines := make([]AgentLine, 0, len(segs))
	for _, s := range segs {
		var d struct {
			Role      string  `json:"role"`
			Name      string  `json:"name"`
			Arguments string  `json:"arguments"`
			Response  string  `json:"response"`
			ToText    int64   `json:"to_text_ms"`
			ToAudio   int64   `json:"to_audio_ms"`
			Total     float64 `json:"total_latency"`
			TTT       float64 `json:"ttt_latency"`
			TTS       float64 `json:"tts_latency"`
			Typed     bool    `json:"typed"`
		}
		if s.Details != "" {
			if err := json.Unmarshal([]byte(s.Details), &d); err != nil {
				return nil, fmt.Errorf("a saved line is damaged: %w", err)
			}
		}
		lines = append(lines, AgentLine{Role: d.Role, Text: s.Text, Name: d.Name, Arguments: d.Arguments, Response: d.Response,
			Latency: TurnLatency{ToText: time.Duration(d.ToText) * time.Millisecond, ToAudio: time.Duration(d.ToAudio) * time.Millisecond,
				Total: d.Total, TTT: d.TTT, TTS: d.TTS, Typed: d.Typed}})
	}
	return lines, nil
}

// AgentRecording is the sound kept of a past conversation: a stereo Ogg
// Opus file (a WAV file for conversations kept by earlier versions), the
// person on the left and the agent on the right. A conversation without
// sound is store.ErrNotFound.
func (w *Workspace) AgentRecording(ctx context.Context, id int64) ([]byte, error) {
	a, err := w.cfg.History.Audio(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.Data, nil
}

// RecordingExtension is the file extension of a conversation's sound as
// AgentRecording returns it: .ogg, or .wav for older ones.
func RecordingExtension(sound []byte) string {
	if bytes.HasPrefix(sound, []byte("OggS")) {
		return ".ogg"
	}
	return ".wav"
}

// PlayConversation plays the sound kept of a conversation (see
// AgentRecording), both sides mixed, on the speaker of the settings.
func (w *Workspace) PlayConversation(ctx context.Context, sound []byte) (*Playing, error) {
	b, err := audio.Decode(ctx, bytes.NewReader(sound))
	if err != nil {
		return nil, fmt.Errorf("the conversation's sound cannot be read: %w", err)
	}
	if b.Channels < 1 {
		return nil, errors.New("the conversation's sound has no channel")
	}
	v, err := w.Voices(ctx)
	if err != nil {
		return nil, err
	}
	// Both sides at full level: the person and the agent rarely speak at
	// once, so the sum of the two does not clip where an average would
	// halve each.
	mono := make([]int16, 0, len(b.Samples)/b.Channels)
	for i := 0; i+b.Channels <= len(b.Samples); i += b.Channels {
		var sum float32
		for c := range b.Channels {
			sum += b.Samples[i+c]
		}
		mono = append(mono, int16(max(-32768, min(32767, sum*32767))))
	}
	return v.Play(ctx, mono, b.SampleRate)
}
