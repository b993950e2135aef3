package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/store"
)

// TurnStreamer opens turn-aware /v2/listen streams. ClientStreamer adapts
// *api.Client; tests use fakes.
type TurnStreamer interface {
	Turns(ctx context.Context, opts api.TurnOptions) (TurnStream, error)
}

// TurnStream is an open /v2/listen stream; *api.TurnStream implements it.
// Its methods must be safe for concurrent use.
type TurnStream interface {
	Send(ctx context.Context, audio []byte) error
	Configure(ctx context.Context, c api.Configure) error
	ForceEndTurn(ctx context.Context) error
	CloseStream(ctx context.Context) error
	Ping(ctx context.Context) error
	Next(ctx context.Context) (api.TurnMessage, error)
	Close() error
}

// Turns implements TurnStreamer.
func (c ClientStreamer) Turns(ctx context.Context, opts api.TurnOptions) (TurnStream, error) {
	s, err := c.Client.Turns(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// TurnState is where a turn is in its life, as its events tell it.
type TurnState string

// States of a turn. A turn opens with StartOfTurn (or whatever event first
// names its index), may become eager (EagerEndOfTurn) and resumed
// (TurnResumed), and ends with EndOfTurn.
const (
	TurnOpen    TurnState = "open"
	TurnEager   TurnState = "eager"
	TurnResumed TurnState = "resumed"
	TurnEnded   TurnState = "ended"
)

// Turn is one turn of a conversation as the service has described it so
// far. Start and End are the audio window in seconds from the start of
// the stream.
type Turn struct {
	Index int
	State TurnState
	// Transcript and Words are the whole turn so far.
	Transcript          string
	Words               []api.TurnWord
	EndOfTurnConfidence float64
	// Trigger says what ended the turn (model, manual, timeout, or a value
	// this client does not know, kept as it came); empty until it ends.
	Trigger    api.TurnTrigger
	Start, End float64
	// Opened and Closed are when the turn's first event and its EndOfTurn
	// arrived.
	Opened, Closed time.Time
	// Events counts the TurnInfo messages of the turn.
	Events int
	// SpeechEnd is the end of speech, in seconds of stream: the end of the
	// turn's last word when the service times its words, else the audio
	// window end of the last event before EndOfTurn (which comes later
	// than speech, so the latency is then a lower bound).
	SpeechEnd float64
	// Latency is the time from the end of speech, mapped to wall time by
	// the audio clock (when that audio was captured), to the arrival of
	// EndOfTurn. HasLatency is false when it could not be measured (the
	// turn is not over, or no event came before its EndOfTurn).
	Latency    time.Duration
	HasLatency bool
}

// TurnSettings are the end-of-turn settings in force on a stream.
type TurnSettings struct {
	EOTThreshold float64
	// EagerEOTThreshold is 0 when eager end-of-turn events are off.
	EagerEOTThreshold float64
	EOTTimeoutMS      int
	Keyterms          []string
}

// TurnInfoEvent reports a TurnInfo message: the event as it came (an
// unknown one is kept), and the turn it describes, after it.
type TurnInfoEvent struct {
	Event api.TurnEvent
	Turn  Turn
	// SequenceID is the service's message counter.
	SequenceID int
	At         time.Time
}

// ConfigureEvent reports the service's answer to a Configure message: OK
// with the settings now in force (ConfigureSuccess), or not OK and
// nothing changed (ConfigureFailure). Requested is the Configure it
// answers.
type ConfigureEvent struct {
	Requested api.Configure
	OK        bool
	Applied   TurnSettings
	At        time.Time
}

// TurnWarningEvent reports a Warning: something was not done, and the
// stream goes on (FORCE_END_TURN_NO_ACTIVE_TURN after a ForceEndTurn with
// no turn in progress).
type TurnWarningEvent struct {
	Code, Description string
	At                time.Time
}

// ConnectedEvent reports the service's Connected message.
type ConnectedEvent struct {
	RequestID string
	At        time.Time
}

// SentEvent reports a control message sent to the service: Configure,
// ForceEndTurn or CloseStream.
type SentEvent struct {
	Type string
	At   time.Time
}

// UnknownTurnMessageEvent reports a message of a type this client does not
// know, kept with its JSON so that it can be shown.
type UnknownTurnMessageEvent struct {
	Type string
	Raw  json.RawMessage
	At   time.Time
}

func (*TurnInfoEvent) isEvent()           {}
func (*ConfigureEvent) isEvent()          {}
func (*TurnWarningEvent) isEvent()        {}
func (*ConnectedEvent) isEvent()          {}
func (*SentEvent) isEvent()               {}
func (*UnknownTurnMessageEvent) isEvent() {}

// ConversationHistory is where a conversation saves itself; *store.DB
// implements it.
type ConversationHistory = CaptionHistory

// ConversationConfig configures a conversation.
type ConversationConfig struct {
	// Streamer opens the stream.
	Streamer TurnStreamer
	// Inspector, when not nil, keeps the stream's wire events with the
	// session's history entry.
	Inspector *Inspector
	// Options are the stream's options; the session sets the audio format
	// (linear16, 16 kHz) itself. An empty model is flux-general-en.
	Options api.TurnOptions
	// Source is the microphone or a recording paced at real time.
	Source audio.Source
	// History, when set, receives the session and every turn as it ends.
	History ConversationHistory
	// Title, SourceName and Backend describe the session in history.
	Title, SourceName, Backend string
	// Tail is the most silence sent, in real time, after a source that
	// ends by itself (a recording), while a turn is still open, so that
	// the last turn ends as it would in a conversation. 0 means the
	// end-of-turn timeout plus a second; negative sends none.
	Tail time.Duration
	// OwnsSource makes the session close Source when it ends.
	OwnsSource bool
	// Logger receives the session's records; nil discards them.
	Logger *slog.Logger
	// Clock stamps events and times the tail and the wait for the last
	// turn; nil is the real clock.
	Clock Clock
	// Recognizer, on the local engine, is loaded before the stream opens
	// (StateLoading).
	Recognizer Recognizer
	// KeepAudio keeps the audio sent with the session in History, which
	// must also be an AudioHistory, as Ogg Opus on the turns' clock (see
	// keepaudio.go).
	KeepAudio bool
}

// Conversation is a turn-aware session: audio from a source goes to a
// /v2/listen stream, and the turn events that come back become turns,
// each timestamped on arrival, with the end-of-turn latency measured and
// each turn saved to history when it ends. The end-of-turn settings can
// be changed while it runs (Configure), and a turn ended by hand
// (ForceEndTurn).
//
// A lost connection ends the session (StateFailed): a turn cannot be
// carried over to another stream, whose turn counter restarts.
//
// Start, Stop, Configure, ForceEndTurn and Events are safe for concurrent
// use. Events must be read until it is closed.
type Conversation struct {
	*lifecycle
	cfg  ConversationConfig
	opts api.TurnOptions
	log  *slog.Logger
	// ctl takes control messages to the run loop, the stream's one
	// writer, which sends them in order with the audio.
	ctl chan control

	mu        sync.Mutex // guards the fields below
	sessionID int64
	pending   []api.Configure // sent, not yet answered, oldest first
	settings  TurnSettings
	ended     []Turn
}

// control is a Configure (or, when configure is nil, a ForceEndTurn) for
// the run loop to send; its outcome comes back on result.
type control struct {
	configure *api.Configure
	result    chan error
}

// NewConversation returns a conversation; Start starts it.
func NewConversation(cfg ConversationConfig) *Conversation {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := cfg.Options
	if o.Model == "" {
		o.Model = api.ModelFluxGeneralEN
	}
	o.Encoding = "linear16"
	o.SampleRate = streamRate
	if cfg.Tail == 0 {
		cfg.Tail = time.Duration(o.EffectiveEOTTimeoutMS())*time.Millisecond + time.Second
	}
	return &Conversation{
		lifecycle: newLifecycle("conversation", cfg.Clock),
		cfg:       cfg,
		opts:      o,
		log:       log,
		ctl:       make(chan control),
		settings: TurnSettings{
			EOTThreshold:      o.EffectiveEOTThreshold(),
			EagerEOTThreshold: o.EagerEOTThreshold,
			EOTTimeoutMS:      o.EffectiveEOTTimeoutMS(),
			Keyterms:          slices.Clone(o.Keyterms),
		},
	}
}

// A Conversation's events are *TurnInfoEvent, *ConfigureEvent,
// *TurnWarningEvent, *ConnectedEvent, *SentEvent,
// *UnknownTurnMessageEvent, *StateEvent, *LevelEvent, *SaveFailedEvent
// and *HistoryEvent.

// SessionID returns the session's id in history (0 without history, and
// while a full disk has no room for its entry).
func (c *Conversation) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *Conversation) setSessionID(id int64) {
	c.mu.Lock()
	c.sessionID = id
	c.mu.Unlock()
}

// SourceName names the audio of the session, as history shows it.
func (c *Conversation) SourceName() string { return c.cfg.SourceName }

// Options returns the options the stream was opened with.
func (c *Conversation) Options() api.TurnOptions { return c.opts }

// Settings returns the end-of-turn settings in force, as the service last
// confirmed them.
func (c *Conversation) Settings() TurnSettings {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.settings
	s.Keyterms = slices.Clone(s.Keyterms)
	return s
}

// Turns returns the turns that have ended so far, in order.
func (c *Conversation) Turns() []Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ended)
}

// ErrNotRunning is returned by Configure and ForceEndTurn when the
// session is not connected.
var ErrNotRunning = errors.New("the conversation is not running")

// Start checks the options, records the session, opens the stream and
// starts capturing in the background. It returns once the stream is open.
// ctx bounds the whole session: cancelling it stops the session like Stop.
func (c *Conversation) Start(ctx context.Context) error { return c.start(ctx, c.prepare) }

func (c *Conversation) prepare(ctx context.Context) (runFunc, error) {
	if c.cfg.Streamer == nil || c.cfg.Source == nil {
		return nil, errors.New("conversation: a streamer and a source are needed")
	}
	if err := c.opts.CheckRequest(); err != nil {
		return nil, err
	}
	f := c.cfg.Source.Format()
	conv, err := audio.NewConverter16kMono(f.SampleRate, f.Channels)
	if err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	if err := warm(ctx, c.cfg.Recognizer, c.emit); err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	c.emit(&StateEvent{State: StateConnecting})
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	dctx, wireLabel := runWire(dctx) // the entry is made once connected
	st, err := c.cfg.Streamer.Turns(dctx, c.opts)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	optJSON, _ := json.Marshal(c.opts.Query())
	rec := openRecord(ctx, historyOrNil(c.cfg.History), store.Session{
		Kind:    store.KindConversation,
		Title:   c.cfg.Title,
		Source:  c.cfg.SourceName,
		Backend: c.cfg.Backend,
		Model:   c.opts.Model,
		Options: string(optJSON),
	}, c.clock, c.log, lateID(c.emit, func(id int64) {
		c.setSessionID(id)
		c.cfg.Inspector.Bind(wireLabel, id)
	}))
	c.setSessionID(rec.ID())
	c.cfg.Inspector.Bind(wireLabel, rec.ID())
	keep, err := newKeptAudio(c.cfg.KeepAudio && rec != nil, c.cfg.History, 1, c.log)
	if err != nil {
		c.log.Warn("conversation: the audio will not be kept", "err", err)
	}

	r := &conversationRun{
		c:      c,
		rec:    rec,
		keep:   keep,
		stream: st,
		conv:   conv,
		frames: make(chan capturedFrame, 256),
		msgs:   make(chan received[api.TurnMessage], 64),
		index:  map[int]int{},
	}
	return r.run, nil
}

// Configure changes the end-of-turn settings mid-stream; fields it omits
// keep their values. Its ranges are checked before it is sent; the
// service's answer arrives as a ConfigureEvent.
func (c *Conversation) Configure(ctx context.Context, cfg api.Configure) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := c.control(ctx, &cfg); err != nil {
		return fmt.Errorf("send Configure: %w", err)
	}
	return nil
}

// ForceEndTurn ends the turn in progress. The service answers with an
// EndOfTurn whose trigger is manual or, with no turn in progress, a
// TurnWarningEvent; the stream goes on either way.
func (c *Conversation) ForceEndTurn(ctx context.Context) error {
	if err := c.control(ctx, nil); err != nil {
		return fmt.Errorf("send ForceEndTurn: %w", err)
	}
	return nil
}

// control hands a control message to the run loop and waits until it is
// sent. ErrNotRunning when the session is not connected.
func (c *Conversation) control(ctx context.Context, cfg *api.Configure) error {
	req := control{configure: cfg, result: make(chan error, 1)}
	select {
	case c.ctl <- req:
	case <-c.stopping():
		return ErrNotRunning
	case <-c.Done():
		return ErrNotRunning
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// capturedFrame is audio at streamRate and when the source delivered it.
type capturedFrame struct {
	pcm []int16
	at  time.Time
}

// audioMark maps a piece of audio sent, from start to end in stream
// samples, to the wall time its last sample was captured.
type audioMark struct {
	start, end int64
	at         time.Time
}

// maxMarks bounds the audio clock's memory: two minutes of 20 ms frames,
// more than the longest end-of-turn timeout.
const maxMarks = 6000

// tailFrame is the length of one frame of the silence sent after a source
// ends.
const tailFrame = 20 * time.Millisecond

// conversationRun is the state of a running conversation; only the run
// loop touches it.
type conversationRun struct {
	c      *Conversation
	rec    *record
	keep   *keptAudio // the audio kept with the session, or nil
	stream TurnStream
	conv   *audio.Converter16kMono

	frames chan capturedFrame
	source sourceEnd // how the source ended
	msgs   chan received[api.TurnMessage]
	wg     sync.WaitGroup

	sent    int64   // samples sent
	heard   float64 // seconds of audio the service has reported on
	marks   []audioMark
	level   audio.Meter
	lastLvl time.Time

	turns   []Turn
	index   map[int]int // turn index to position in turns
	current int         // position of the turn in progress, -1 when none
	seq     int         // turns saved
	closing bool        // CloseStream was sent
}

func (r *conversationRun) run(ctx context.Context) error {
	c := r.c
	r.current = -1
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	captureCtx, stopCapture := context.WithCancel(ctx)
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		r.capture(captureCtx)
	}()
	go func() {
		defer r.wg.Done()
		r.receive(ctx)
	}()
	defer func() {
		stopCapture()
		cancel()
		r.stream.Close()
		r.wg.Wait()
		if c.cfg.OwnsSource {
			c.cfg.Source.Close()
		}
	}()

	r.setState(StateLive, nil)
	var (
		frames   = r.frames
		stopCh   = c.stopping()
		ctl      = c.ctl
		cw       = newCloseWait(c.clock, c.log, "conversation")
		tail     clock.Ticker
		tailC    <-chan time.Time
		tailLeft time.Duration
	)
	defer cw.stop()
	defer func() {
		if tail != nil {
			tail.Stop()
		}
	}()
	// closeStream stops the audio and asks the service to finish.
	closeStream := func() error {
		frames, stopCh, tailC, ctl = nil, nil, nil, nil
		stopCapture()
		r.setState(StateStopping, nil)
		cw.begin(r.closeAfter())
		r.closing = true
		c.emit(&SentEvent{Type: api.TypeCloseStream, At: c.clock.Now()})
		return r.stream.CloseStream(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			r.finish(store.StatusCancelled, nil)
			return ctx.Err()
		case <-stopCh:
			if err := closeStream(); err != nil {
				return r.finishDone(err)
			}
		case <-cw.silence():
			if !cw.silent(ctx, &r.wg, r.stream.Ping, r.closeAfter()) {
				return r.finishDone(ErrServiceSilent)
			}
		case err := <-cw.pong():
			if why := cw.answered(err, r.closeAfter()); why != nil {
				return r.finishDone(why)
			}
		case <-cw.bound():
			return r.finishDone(ErrServiceSlow)
		case f, ok := <-frames:
			if !ok {
				// The source ended by itself: let the last turn end in
				// silence, as it would in a conversation, then finish.
				frames = nil
				r.source.seen = true
				if c.cfg.Tail > 0 && r.current >= 0 {
					tailLeft = c.cfg.Tail
					tail = c.clock.NewTicker(tailFrame)
					tailC = tail.C()
					continue
				}
				if err := closeStream(); err != nil {
					return r.finishDone(err)
				}
				continue
			}
			if err := r.sendAudio(ctx, f); err != nil {
				r.finish(store.StatusFailed, err)
				return err
			}
		case now := <-tailC:
			if r.current < 0 || tailLeft <= 0 {
				if err := closeStream(); err != nil {
					return r.finishDone(err)
				}
				continue
			}
			tailLeft -= tailFrame
			silence := make([]int16, int(tailFrame.Seconds()*streamRate))
			if err := r.sendAudio(ctx, capturedFrame{pcm: silence, at: now}); err != nil {
				r.finish(store.StatusFailed, err)
				return err
			}
		case req := <-ctl:
			req.result <- r.sendControl(ctx, req.configure)
		case <-r.rec.retry():
			r.rec.retryHeld(ctx)
		case m := <-r.msgs:
			if ended, err := r.onReceived(ctx, cw, m); ended {
				return err
			}
		}
	}
}

// onReceived handles what the stream's reader delivered: a message, or
// the end of the stream. It reports whether the session has ended, with
// its error.
func (r *conversationRun) onReceived(ctx context.Context, cw *closeWait, m received[api.TurnMessage]) (bool, error) {
	if m.err != nil {
		if r.closing && errors.Is(m.err, io.EOF) {
			return true, r.finishDone(nil) // the service finished
		}
		err := m.err
		if errors.Is(err, io.EOF) {
			err = errors.New("the service closed the connection")
		}
		if r.closing {
			r.c.log.Info("conversation: the stream ended while closing", "err", err)
			return true, r.finishDone(err)
		}
		err = fmt.Errorf("conversation: %w", err)
		r.finish(store.StatusFailed, err)
		return true, err
	}
	// The service is still answering: a busy machine is slow, not gone,
	// and the last turn is worth the wait.
	cw.progress(r.closeAfter())
	if err := r.onMessage(ctx, m); err != nil {
		r.finish(store.StatusFailed, err)
		return true, err
	}
	return false, nil
}

// capture reads the source and hands 16 kHz frames, with the time each
// was captured, to the run loop.
func (r *conversationRun) capture(ctx context.Context) {
	defer close(r.frames)
	r.source.err = capture(ctx, r.c.clock, r.c.cfg.Source, r.conv, r.c.log, func(pcm []int16, at time.Time) bool {
		select {
		case r.frames <- capturedFrame{pcm: pcm, at: at}:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// receive moves the stream's messages to the run loop, each stamped with
// the time it arrived.
func (r *conversationRun) receive(ctx context.Context) {
	pump(ctx, r.c.clock, func(ctx context.Context) (api.TurnMessage, error) {
		for {
			m, err := r.stream.Next(ctx)
			if err != nil || m != nil {
				return m, err
			}
		}
	}, r.msgs)
}

// sendControl sends a Configure (or a ForceEndTurn when cfg is nil),
// reported before it goes so that the answer never comes first.
func (r *conversationRun) sendControl(ctx context.Context, cfg *api.Configure) error {
	c := r.c
	if r.closing {
		return ErrNotRunning
	}
	if cfg == nil {
		c.emit(&SentEvent{Type: api.TypeForceEndTurn, At: c.clock.Now()})
		return r.stream.ForceEndTurn(ctx)
	}
	c.mu.Lock()
	c.pending = append(c.pending, *cfg)
	c.mu.Unlock()
	c.emit(&SentEvent{Type: api.TypeConfigure, At: c.clock.Now()})
	if err := r.stream.Configure(ctx, *cfg); err != nil {
		c.mu.Lock()
		c.pending = c.pending[:len(c.pending)-1]
		c.mu.Unlock()
		return err
	}
	return nil
}

// sendAudio sends a frame and records when it was captured, for the audio
// clock.
func (r *conversationRun) sendAudio(ctx context.Context, f capturedFrame) error {
	if now := r.c.clock.Now(); now.Sub(r.lastLvl) >= levelInterval {
		r.lastLvl = now
		rms, peak := r.level.Update(f.pcm)
		r.c.emit(&LevelEvent{RMS: rms, Peak: peak})
	} else {
		r.level.Update(f.pcm)
	}
	r.marks = append(r.marks, audioMark{start: r.sent, end: r.sent + int64(len(f.pcm)), at: f.at})
	r.sent += int64(len(f.pcm))
	r.keep.add(f.pcm, false)
	if len(r.marks) > maxMarks {
		r.marks = slices.Delete(r.marks, 0, len(r.marks)-maxMarks)
	}
	if err := r.stream.Send(ctx, audio.Int16ToBytes(nil, f.pcm)); err != nil {
		return fmt.Errorf("conversation: send audio: %w", err)
	}
	return nil
}

// wallTime maps seconds of stream to the wall time that audio was
// captured, reporting false when it is not known (never sent, or
// forgotten).
func (r *conversationRun) wallTime(t float64) (time.Time, bool) {
	return audioClock(r.marks, t)
}

// audioClock maps seconds of stream to wall time with marks: the sample
// at position p of a frame ending at end, captured at at, was captured
// (end-p)/streamRate earlier.
func audioClock(marks []audioMark, t float64) (time.Time, bool) {
	p := int64(t*streamRate + 0.5)
	i, _ := slices.BinarySearchFunc(marks, p, func(m audioMark, p int64) int {
		switch {
		case m.end < p:
			return -1
		case m.end > p:
			return 1
		}
		return 0
	})
	if i == len(marks) || p < marks[0].start {
		return time.Time{}, false
	}
	m := marks[i]
	return m.at.Add(-time.Duration(m.end-p) * time.Second / streamRate), true
}

func (r *conversationRun) onMessage(ctx context.Context, m received[api.TurnMessage]) error {
	c := r.c
	switch msg := m.msg.(type) {
	case *api.Connected:
		c.emit(&ConnectedEvent{RequestID: msg.RequestID, At: m.at})
	case *api.TurnInfo:
		r.onTurnInfo(ctx, msg, m.at)
	case *api.ConfigureSuccess:
		req := c.popPending()
		c.mu.Lock()
		s := &c.settings
		if v := msg.Thresholds.EOTThreshold; v != nil {
			s.EOTThreshold = *v
		}
		if v := msg.Thresholds.EagerEOTThreshold; v != nil {
			s.EagerEOTThreshold = *v
		}
		if v := msg.Thresholds.EOTTimeoutMS; v != nil {
			s.EOTTimeoutMS = *v
		}
		if msg.Keyterms != nil {
			s.Keyterms = slices.Clone(msg.Keyterms)
		}
		applied := *s
		applied.Keyterms = slices.Clone(s.Keyterms)
		c.mu.Unlock()
		c.emit(&ConfigureEvent{Requested: req, OK: true, Applied: applied, At: m.at})
	case *api.ConfigureFailure:
		req := c.popPending()
		c.emit(&ConfigureEvent{Requested: req, OK: false, Applied: c.Settings(), At: m.at})
	case *api.TurnWarning:
		c.emit(&TurnWarningEvent{Code: msg.Code, Description: msg.Description, At: m.at})
	case *api.TurnError:
		return fmt.Errorf("conversation: the service reported an error: %w", msg.Err())
	case *api.UnknownMessage:
		c.emit(&UnknownTurnMessageEvent{Type: msg.Type, Raw: msg.Raw, At: m.at})
	default:
		c.emit(&UnknownTurnMessageEvent{Type: m.msg.MessageType(), At: m.at})
	}
	return nil
}

func (c *Conversation) popPending() api.Configure {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return api.Configure{}
	}
	req := c.pending[0]
	c.pending = c.pending[1:]
	return req
}

// onTurnInfo moves the turn the message names through its states.
func (r *conversationRun) onTurnInfo(ctx context.Context, msg *api.TurnInfo, at time.Time) {
	pos, ok := r.index[msg.TurnIndex]
	if !ok || r.turns[pos].State == TurnEnded && msg.Event != api.EventEndOfTurn {
		// A new turn: its first event, whichever it is, opens it.
		r.turns = append(r.turns, Turn{Index: msg.TurnIndex, State: TurnOpen, Opened: at})
		pos = len(r.turns) - 1
		r.index[msg.TurnIndex] = pos
	}
	t := &r.turns[pos]
	t.Events++
	if msg.Transcript != "" || len(msg.Words) > 0 || msg.Event.Known() {
		t.Transcript = msg.Transcript
		t.Words = slices.Clone(msg.Words)
	}
	t.EndOfTurnConfidence = msg.EndOfTurnConfidence
	if t.Events == 1 {
		t.Start = msg.AudioWindowStart
	}
	t.End = max(t.End, msg.AudioWindowEnd)
	r.heard = max(r.heard, msg.AudioWindowEnd)
	switch msg.Event {
	case api.EventEagerEndOfTurn:
		t.State = TurnEager
	case api.EventTurnResumed:
		t.State = TurnResumed
	case api.EventEndOfTurn:
		t.State = TurnEnded
		t.Trigger = msg.Trigger
		t.Closed = at
		if n := len(msg.Words); n > 0 && msg.Words[n-1].End > 0 {
			// The service timed the words: speech ended with the last.
			t.SpeechEnd = msg.Words[n-1].End
		}
		if t.Events > 1 || t.SpeechEnd > 0 {
			if wall, ok := r.wallTime(t.SpeechEnd); ok {
				t.Latency = at.Sub(wall)
				t.HasLatency = true
			}
		}
	}
	if msg.Event != api.EventEndOfTurn {
		t.SpeechEnd = msg.AudioWindowEnd
	}
	if t.State == TurnEnded {
		if r.current == pos {
			r.current = -1
		}
	} else {
		r.current = pos
	}
	turn := *t
	turn.Words = slices.Clone(t.Words)
	if msg.Event == api.EventEndOfTurn {
		r.save(ctx, turn)
		r.c.mu.Lock()
		r.c.ended = append(r.c.ended, turn)
		r.c.mu.Unlock()
	}
	r.c.emit(&TurnInfoEvent{Event: msg.Event, Turn: turn, SequenceID: msg.SequenceID, At: at})
}

// TurnDetails is what history keeps of a turn beside its text, words and
// times: the JSON of a conversation segment's Details.
type TurnDetails struct {
	Index               int             `json:"turn_index"`
	Trigger             api.TurnTrigger `json:"trigger,omitzero"`
	EndOfTurnConfidence float64         `json:"end_of_turn_confidence"`
	// LatencyMS is the end-of-turn latency in milliseconds, absent when
	// it could not be measured.
	LatencyMS *float64 `json:"latency_ms,omitzero"`
}

func turnDetails(t Turn) TurnDetails {
	d := TurnDetails{Index: t.Index, Trigger: t.Trigger, EndOfTurnConfidence: t.EndOfTurnConfidence}
	if t.HasLatency {
		ms := float64(t.Latency.Microseconds()) / 1000
		d.LatencyMS = &ms
	}
	return d
}

// save writes a turn to history.
func (r *conversationRun) save(ctx context.Context, t Turn) {
	h := r.c.cfg.History
	if h == nil || t.Transcript == "" && len(t.Words) == 0 {
		return
	}
	words, _ := json.Marshal(t.Words)
	var conf float64
	for _, w := range t.Words {
		conf += w.Confidence
	}
	if len(t.Words) > 0 {
		conf /= float64(len(t.Words))
	}
	details, _ := json.Marshal(turnDetails(t))
	seg := store.Segment{
		Seq:        r.seq,
		Start:      round3(t.Start),
		End:        round3(t.End),
		Text:       t.Transcript,
		Words:      string(words),
		Confidence: conf,
		Details:    string(details),
	}
	r.seq++
	r.rec.save(ctx, "a turn", func(ctx context.Context, id int64) error {
		seg.SessionID = id
		_, err := h.AddSegment(ctx, seg)
		return err
	})
}

func (r *conversationRun) setState(s State, err error) {
	r.c.emit(&StateEvent{State: s, Err: err})
}

// unheard is the audio sent after the last the service reported on.
func (r *conversationRun) unheard() time.Duration {
	return max(0, time.Duration((float64(r.sent)/streamRate-r.heard)*float64(time.Second)))
}

// closeAfter is how long a stopping conversation waits for a word from
// the service: closeTimeout, plus twice the audio it has not reported on
// yet (a loaded machine decodes slower than real time).
func (r *conversationRun) closeAfter() time.Duration {
	return closeTimeout + 2*r.unheard()
}

// finishDone records a session that ended as asked, or with its source:
// a failure when the source failed. why is nil when the service finished
// what it was sent; otherwise, audio after the last the service reported
// on makes the session partial.
func (r *conversationRun) finishDone(why error) error {
	if lost := r.unheard(); why != nil && lost >= untranscribedMin && r.source.failure() == nil {
		err := &UntranscribedError{Audio: lost, Err: why}
		r.finish(store.StatusPartial, err)
		return err
	}
	r.finish(store.StatusDone, nil)
	return r.source.failure()
}

// finish saves the turn still open, records the end of the session and
// reports it.
func (r *conversationRun) finish(status string, err error) {
	if status == store.StatusDone && r.source.failure() != nil {
		status, err = store.StatusFailed, r.source.failure()
	}
	if r.current >= 0 {
		r.save(context.Background(), r.turns[r.current])
		r.current = -1
	}
	r.keep.save(r.rec)
	r.rec.finish(status, float64(r.sent)/streamRate, err)
	if status == store.StatusFailed {
		r.setState(StateFailed, err)
		return
	}
	r.setState(StateStopped, nil)
}

// checkAudioBytes is how much of a file CheckAudioFile decodes.
const checkAudioBytes = 256 << 10

// CheckAudioFile reads the start of the file at path and decodes it, so
// that a file that is not audio (or not one Earshot reads) is refused when
// it is chosen, not when it is played. An error is a *FileError.
func CheckAudioFile(ctx context.Context, path string) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return &FileError{Name: name, Err: err}
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.IsDir() {
		if err == nil {
			err = ErrFolder
		}
		return &FileError{Name: name, Err: err}
	}
	head, err := io.ReadAll(io.LimitReader(f, checkAudioBytes))
	if err != nil {
		return &FileError{Name: name, Err: err}
	}
	if c := audio.Detect(head); c == audio.ContainerMP4 || c == audio.ContainerMatroska {
		// Its first audio track plays (OpenPacedFile): it must have one.
		if _, err := audio.ProbeFile(ctx, path); err != nil {
			return &FileError{Name: name, Err: err}
		}
		return nil
	}
	d, err := audio.NewStreamDecoder(audio.Format{})
	if err != nil {
		return &FileError{Name: name, Err: err}
	}
	defer d.Close()
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := d.Decode(head); err != nil {
		return &FileError{Name: name, Err: err}
	}
	if len(head) < checkAudioBytes {
		// The whole file was read: it must also end well.
		if _, err := d.Flush(); err != nil {
			return &FileError{Name: name, Err: err}
		}
	}
	if _, ok := d.Info(); !ok {
		return &FileError{Name: name, Err: fmt.Errorf("%w: no audio in the first %d KB", audio.ErrUndecodable, checkAudioBytes>>10)}
	}
	return nil
}

// OpenPacedFile opens the recording at path as a source that delivers it
// at real time, as a microphone would, for a conversation from a file; a
// speed above 0 other than 1 plays it that many times faster (or slower).
// It is decoded as it plays, never held whole (a file of hours was
// decoded into memory first, and refused past 46 minutes of 48 kHz
// stereo); the sound of MP4, MOV, WebM and MKV recordings is their first
// audio track. ctx bounds the decoding.
func OpenPacedFile(ctx context.Context, path string, speed float64) (audio.Source, error) {
	cfg := audio.ReplayConfig{Paced: true}
	if speed > 0 && speed != 1 {
		cfg.Clock = clock.Scaled{Origin: time.Now(), Factor: speed}
	}
	src, err := audio.OpenFileReplay(ctx, path, cfg)
	if err != nil {
		return nil, &FileError{Name: filepath.Base(path), Err: err}
	}
	return src, nil
}
