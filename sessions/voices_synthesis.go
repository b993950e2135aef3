package sessions

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// SynthesisRate is the sample rate both speak streams are asked for:
// linear16 at 24 kHz, a rate both endpoints produce.
const SynthesisRate = 24000

// Timings of a synthesis.
const (
	// progressEvery is how often progress, level and turn states are
	// reported while audio arrives or plays.
	progressEvery = 40 * time.Millisecond
	// turnLookahead is how little queued audio makes a turn-by-turn
	// synthesis send its next turn: enough that the next turn's audio
	// arrives before the speaker runs dry, little enough that an
	// interruption finds the turn still being synthesised.
	turnLookahead = 1500 * time.Millisecond
	// stopGrace bounds the wait for the service's answer to Clear or
	// Interrupt and for the stream's close.
	stopGrace = 3 * time.Second
	// saveTimeout bounds saving a synthesis to history.
	saveTimeout = 10 * time.Second
)

// SpeakStreamer opens the speak streams. ClientStreamer adapts
// *api.Client; tests use fakes.
type SpeakStreamer interface {
	SpeakStream(ctx context.Context, opts api.SpeakOptions) (SpeakStream, error)
	SpeechStream(ctx context.Context, opts api.SpeakV2Options) (SpeechStream, error)
}

// SpeakStream is an open /v1/speak stream; *api.SpeakStream implements it.
type SpeakStream interface {
	Speak(ctx context.Context, text string) error
	Flush(ctx context.Context) error
	Clear(ctx context.Context) error
	CloseStream(ctx context.Context) error
	Next(ctx context.Context) (api.SpeakMessage, error)
	Close() error
}

// SpeechStream is an open /v2/speak stream; *api.SpeechStream implements it.
type SpeechStream interface {
	Speak(ctx context.Context, text string) error
	Flush(ctx context.Context) error
	Interrupt(ctx context.Context) error
	CloseStream(ctx context.Context) error
	Next(ctx context.Context) (api.SpeechMessage, error)
	Close() error
}

// SpeakStream implements SpeakStreamer.
func (c ClientStreamer) SpeakStream(ctx context.Context, opts api.SpeakOptions) (SpeakStream, error) {
	s, err := c.Client.SpeakStream(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// SpeechStream implements SpeakStreamer.
func (c ClientStreamer) SpeechStream(ctx context.Context, opts api.SpeakV2Options) (SpeechStream, error) {
	s, err := c.Client.SpeechStream(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// SpeechTurnState is where a turn of a synthesis is.
type SpeechTurnState string

// States of a turn. With playback, a turn is speaking while the speaker
// plays it and spoken once it has been played; without, as the service
// reports it.
const (
	TurnPending     SpeechTurnState = "pending"
	TurnSpeaking    SpeechTurnState = "speaking"
	TurnSpoken      SpeechTurnState = "spoken"
	TurnInterrupted SpeechTurnState = "interrupted"
	// TurnCancelled is a turn never spoken: the synthesis stopped first.
	TurnCancelled SpeechTurnState = "not spoken"
)

// SpeechTurn is one turn of a synthesis: the whole text, or one paragraph
// or sentence of it when spoken turn by turn.
type SpeechTurn struct {
	Index int
	Text  string
	State SpeechTurnState
	// SpeechID is the service's name of the turn (/v2/speak).
	SpeechID string
	// Spoken and Remaining split Text once the turn was interrupted: what
	// was heard and what was not. Estimated is set when they come from
	// the playhead rather than from the service's SpeechInterrupted.
	Spoken, Remaining string
	Estimated         bool
	// Start and End are the turn's audio in the synthesis's samples; End
	// is set once the service has sent all of it.
	Start, End int
	// TimeToFirstAudio is from sending the turn to its first audio.
	TimeToFirstAudio time.Duration
}

// SynthesisResult is a synthesis as it ended: its audio, kept for the
// waveform, saving and playing again, and its measurements.
type SynthesisResult struct {
	Request SynthesisRequest
	// PCM is 16-bit mono at SampleRate.
	PCM        []int16
	SampleRate int
	// TimeToFirstAudio is from sending the first Speak (its Flush follows
	// at once) to the first binary frame of audio.
	TimeToFirstAudio time.Duration
	// PlaybackLatency is from the first frame written to the speaker to
	// the speaker taking it; HasPlaybackLatency is false without playback.
	PlaybackLatency    time.Duration
	HasPlaybackLatency bool
	Turns              []SpeechTurn
	// Stopped is set when Stop cut the synthesis short.
	Stopped bool
	// SessionID is the synthesis's id in history, 0 without.
	SessionID int64
	// Model is the voice the service says spoke.
	Model string
}

// Duration returns the length of the audio.
func (r *SynthesisResult) Duration() time.Duration {
	return audio.FramesDuration(int64(len(r.PCM)), r.SampleRate)
}

// FirstAudioEvent reports the first audio of a synthesis.
type FirstAudioEvent struct {
	TimeToFirstAudio time.Duration
	At               time.Time
}

// PlaybackStartedEvent reports that the speaker took the first audio,
// Latency after it was written.
type PlaybackStartedEvent struct{ Latency time.Duration }

// SynthesisProgressEvent reports audio received since the last one
// (Samples, at SynthesisRate) and the playhead. Every sample received is
// in exactly one event.
type SynthesisProgressEvent struct {
	Samples  []int16
	Received time.Duration
	Played   time.Duration
}

// SpeechTurnEvent reports a turn whose state changed.
type SpeechTurnEvent struct{ Turn SpeechTurn }

// SpeakWarningEvent reports a Warning from the service: something was
// not done or was changed (INPUT_MARKUP_STRIPPED, EXCESSIVE_FLUSH, ...),
// and the synthesis goes on.
type SpeakWarningEvent struct{ Code, Description string }

// SynthesisDoneEvent is the last event of a synthesis but its final
// StateEvent: what was kept.
type SynthesisDoneEvent struct{ Result SynthesisResult }

func (*FirstAudioEvent) isEvent()        {}
func (*PlaybackStartedEvent) isEvent()   {}
func (*SynthesisProgressEvent) isEvent() {}
func (*SpeechTurnEvent) isEvent()        {}
func (*SpeakWarningEvent) isEvent()      {}
func (*SynthesisDoneEvent) isEvent()     {}

// Synthesis is one text spoken by one voice, streaming: the text goes to
// the voice's WebSocket (/v1/speak with Speak and Flush for a general
// voice, /v2/speak turn by turn for a turn-based one), and its audio is
// played as it arrives and kept. Stop clears (v1) or interrupts (v2) it.
//
// Stop, Done, Events and Result are safe for concurrent use. Events must
// be read until it is closed.
type Synthesis struct {
	v      *Voices
	req    SynthesisRequest
	ev     *eventQueue
	stopCh chan struct{}
	done   chan struct{}
	once   sync.Once

	mu     sync.Mutex // guards result
	result SynthesisResult
	err    error // why it failed, read after done
}

// Synthesize checks the request, opens the speaker and the voice's stream
// and starts speaking in the background. It returns once the stream is
// open. ctx bounds the whole synthesis: cancelling it stops it as Stop
// does.
func (v *Voices) Synthesize(ctx context.Context, req SynthesisRequest) (*Synthesis, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if v.cfg.Streamer == nil {
		return nil, errors.New("voices: no service to speak with")
	}
	s := &Synthesis{
		v:      v,
		req:    req,
		ev:     newEventQueue(128),
		stopCh: make(chan struct{}),
		done:   make(chan struct{}),
		result: SynthesisResult{Request: req, SampleRate: SynthesisRate},
	}
	s.ev.push(&StateEvent{State: StateConnecting})
	var player Player
	if !req.Silent && v.cfg.Speakers != nil {
		p, err := v.cfg.Speakers.Open(ctx, v.cfg.OutputDevice, SynthesisRate)
		if err != nil {
			s.ev.close()
			return nil, fmt.Errorf("open the speaker: %w", err)
		}
		player = p
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	st, err := v.open(dctx, req)
	cancel()
	if err != nil {
		if player != nil {
			player.Close()
		}
		s.ev.close()
		return nil, fmt.Errorf("speak: %w", err)
	}
	go func() {
		defer close(s.done)
		r := &synthRun{s: s, st: st, player: player}
		s.err = r.run(ctx)
	}()
	return s, nil
}

// open opens the stream of the request's family.
func (v *Voices) open(ctx context.Context, req SynthesisRequest) (synthStream, error) {
	if req.Family() == FamilyTurn {
		o := api.SpeakV2Options{Model: req.Voice, Encoding: api.EncodingLinear16, SampleRate: SynthesisRate}
		if req.speedSet() {
			o.Speed = req.Speed
		}
		if req.Expressivity != 0 {
			e := req.Expressivity
			o.Expressivity = &e
		}
		st, err := v.cfg.Streamer.SpeechStream(ctx, o)
		if err != nil {
			return nil, err
		}
		return speechAdapter{st}, nil
	}
	o := api.SpeakOptions{Model: req.Voice, Encoding: api.EncodingLinear16, SampleRate: SynthesisRate}
	if req.speedSet() {
		o.Speed = req.Speed
	}
	st, err := v.cfg.Streamer.SpeakStream(ctx, o)
	if err != nil {
		return nil, err
	}
	return speakAdapter{st}, nil
}

// Request returns what is being spoken.
func (s *Synthesis) Request() SynthesisRequest { return s.req }

// Events returns the synthesis's events: *StateEvent (connecting, live,
// stopping, stopped or failed), *FirstAudioEvent, *PlaybackStartedEvent,
// *SynthesisProgressEvent, *LevelEvent (of the audio at the playhead),
// *SpeechTurnEvent, *SpeakWarningEvent and, last but the final state,
// *SynthesisDoneEvent. It is closed once the synthesis has ended and
// every event was delivered.
func (s *Synthesis) Events() <-chan Event { return s.ev.out }

// Done is closed when the synthesis has ended: its audio all played (or
// stopped) and it is saved.
func (s *Synthesis) Done() <-chan struct{} { return s.done }

// Stop stops speaking at once: a general voice's stream is cleared, a
// turn-based voice's turn interrupted (the turn then shows what was
// spoken and what was left), and the speaker silenced. What arrived is
// kept and saved. It waits for the end, is idempotent, and returns why
// the synthesis failed, if it did.
func (s *Synthesis) Stop() error {
	s.once.Do(func() { close(s.stopCh) })
	<-s.done
	return s.err
}

// Result returns what the synthesis has kept so far; complete once Done
// is closed.
func (s *Synthesis) Result() SynthesisResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	r.PCM = slices.Clone(r.PCM)
	r.Turns = slices.Clone(r.Turns)
	return r
}

// synthStream is either speak stream, as a synthesis drives it.
type synthStream interface {
	speak(ctx context.Context, text string) error
	flush(ctx context.Context) error
	// halt clears (v1) or interrupts (v2).
	halt(ctx context.Context) error
	closeStream(ctx context.Context) error
	next(ctx context.Context) (any, error)
	close() error
}

type speakAdapter struct{ st SpeakStream }

func (a speakAdapter) speak(ctx context.Context, t string) error  { return a.st.Speak(ctx, t) }
func (a speakAdapter) flush(ctx context.Context) error            { return a.st.Flush(ctx) }
func (a speakAdapter) halt(ctx context.Context) error             { return a.st.Clear(ctx) }
func (a speakAdapter) closeStream(ctx context.Context) error      { return a.st.CloseStream(ctx) }
func (a speakAdapter) next(ctx context.Context) (any, error)      { return a.st.Next(ctx) }
func (a speakAdapter) close() error                               { return a.st.Close() }
func (a speechAdapter) speak(ctx context.Context, t string) error { return a.st.Speak(ctx, t) }
func (a speechAdapter) flush(ctx context.Context) error           { return a.st.Flush(ctx) }
func (a speechAdapter) halt(ctx context.Context) error            { return a.st.Interrupt(ctx) }
func (a speechAdapter) closeStream(ctx context.Context) error     { return a.st.CloseStream(ctx) }
func (a speechAdapter) next(ctx context.Context) (any, error)     { return a.st.Next(ctx) }
func (a speechAdapter) close() error                              { return a.st.Close() }

type speechAdapter struct{ st SpeechStream }

// speakReceived is a message from the stream with its arrival time, or the
// error that ended the stream (io.EOF for a clean end).
type speakReceived struct {
	msg any
	at  time.Time
	err error
}

// synthTurn is a turn as the run loop tracks it.
type synthTurn struct {
	SpeechTurn
	sent     time.Time
	sentOK   bool // Speak and Flush went out
	gotAudio bool
	complete bool // the service sent all its audio
	settled  bool // its state after a stop is final
}

// synthRun is a running synthesis; only its run loop touches it.
type synthRun struct {
	s      *Synthesis
	st     synthStream
	player Player

	msgs chan speakReceived
	wg   sync.WaitGroup

	turns    []*synthTurn
	next     int // the next turn to send
	pcm      []int16
	carry    []byte // an odd byte of linear16 split across frames
	reported int    // samples reported in progress events
	firstAt  time.Time
	ttfa     time.Duration
	gotFirst bool
	latency  time.Duration
	gotLat   bool
	model    string

	closing  bool // CloseStream was sent
	eof      bool // the stream ended
	stopping bool
	halted   bool // Clear or Interrupt was sent; later audio is dropped
	haltAck  bool // the service answered it
	drained  chan error
	meter    audio.Meter

	began     time.Time
	stoppedAt int  // the playhead when Stop came
	playedOut bool // the speaker played every sample
}

func (r *synthRun) run(ctx context.Context) (err error) {
	s := r.s
	defer r.st.close()
	if r.player != nil {
		defer r.player.Close()
	}
	rctx, cancel := context.WithCancel(ctx)
	r.msgs = make(chan speakReceived, 64)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.receive(rctx)
	}()
	defer func() {
		cancel()
		r.st.close()
		r.wg.Wait()
	}()

	texts := []string{strings.TrimSpace(s.req.Text)}
	if s.req.TurnByTurn {
		texts = SplitTurns(s.req.Text)
	}
	for i, t := range texts {
		r.turns = append(r.turns, &synthTurn{SpeechTurn: SpeechTurn{Index: i, Text: t, State: TurnPending, End: -1}})
	}
	r.began = time.Now()
	s.ev.push(&StateEvent{State: StateLive})
	for _, t := range r.turns {
		s.ev.push(&SpeechTurnEvent{Turn: t.SpeechTurn})
	}

	runErr := r.loop(ctx)
	if r.player != nil && runErr != nil {
		r.player.Stop()
	}
	r.flushProgress()
	res := r.snapshot()
	res.SessionID = r.save(ctx, res, runErr)
	s.mu.Lock()
	s.result = res
	s.mu.Unlock()
	s.ev.push(&SynthesisDoneEvent{Result: res})
	if runErr != nil {
		s.ev.push(&StateEvent{State: StateFailed, Err: runErr})
	} else {
		s.ev.push(&StateEvent{State: StateStopped})
	}
	s.ev.close()
	return runErr
}

// loop speaks the turns and plays their audio until all of it has been
// played, Stop, ctx's end or a failure.
func (r *synthRun) loop(ctx context.Context) error {
	s := r.s
	if err := r.sendNext(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	stopCh := s.stopCh
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	for {
		if r.finished() {
			return nil
		}
		select {
		case <-stopCh:
			stopCh = nil
			grace = r.stop(ctx)
		case <-ctxDone:
			// The owner is gone: stop without waiting for the service.
			r.stop(ctx)
			r.haltAck, r.eof = true, true
			r.settleStopped()
			return nil
		case <-grace:
			// The service did not answer the stop in time: end anyway.
			r.haltAck, r.eof = true, true
			r.settleStopped()
			if r.drained == nil {
				return nil
			}
		case m, ok := <-r.msgs:
			if !ok {
				r.msgs = nil
				continue
			}
			if err := r.handle(ctx, m); err != nil {
				return err
			}
		case err := <-r.drained:
			r.drained = nil
			r.progress()
			if err != nil && !r.stopping {
				return fmt.Errorf("play: %w", err)
			}
			if r.stopping {
				r.settleStopped()
				if r.eof {
					return nil
				}
			}
			r.markPlayed()
			if r.eof {
				return nil
			}
		case <-tick.C:
			r.progress()
			if !r.stopping {
				if err := r.maybeSendNext(ctx); err != nil {
					return err
				}
			}
		}
	}
}

// finished reports whether nothing is left to do.
func (r *synthRun) finished() bool {
	if !r.eof {
		return false
	}
	if r.stopping {
		return r.drained == nil
	}
	return r.drained == nil && (r.player == nil || r.playedOut)
}

func (r *synthRun) receive(ctx context.Context) {
	defer close(r.msgs)
	for {
		m, err := r.st.next(ctx)
		select {
		case r.msgs <- speakReceived{msg: m, at: time.Now(), err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// sendNext sends the next turn: its text, then Flush.
func (r *synthRun) sendNext(ctx context.Context) error {
	if r.next >= len(r.turns) {
		return nil
	}
	t := r.turns[r.next]
	r.next++
	t.sent = time.Now()
	if r.s.req.Family() == FamilyGeneral {
		for _, c := range chunkText(t.Text, api.MaxSpeakChars(r.s.req.Voice)) {
			if err := r.st.speak(ctx, c); err != nil {
				return fmt.Errorf("send Speak: %w", err)
			}
		}
	} else if err := r.st.speak(ctx, t.Text); err != nil {
		return fmt.Errorf("send Speak: %w", err)
	}
	if err := r.st.flush(ctx); err != nil {
		return fmt.Errorf("send Flush: %w", err)
	}
	t.sentOK = true
	return nil
}

// maybeSendNext sends the next turn once the one before is complete and
// the speaker is about to run out.
func (r *synthRun) maybeSendNext(ctx context.Context) error {
	if r.next >= len(r.turns) || r.next == 0 || !r.turns[r.next-1].complete {
		return nil
	}
	if r.player != nil && r.player.Queued() > turnLookahead {
		return nil
	}
	return r.sendNext(ctx)
}

// handle takes one message from the stream.
func (r *synthRun) handle(ctx context.Context, m speakReceived) error {
	if m.err != nil {
		r.eof = true
		r.msgs = nil
		if errors.Is(m.err, io.EOF) {
			return r.streamEnded()
		}
		if r.stopping {
			r.settleStopped()
			return nil
		}
		return fmt.Errorf("the stream ended: %w", m.err)
	}
	switch msg := m.msg.(type) {
	case *api.SpeakAudio:
		return r.onAudio(ctx, msg.Data, m.at)
	case *api.SpeakMetadata:
		r.model = msg.ModelName
	case *api.SpeechConnected:
		r.model = msg.ModelName
	case *api.Flushed:
		r.turnComplete(ctx)
	case *api.SpeechTurnStarted:
		if t := r.current(); t != nil {
			t.SpeechID = msg.SpeechID
			if r.player == nil && t.State == TurnPending {
				r.setState(t, TurnSpeaking)
			}
		}
	case *api.SpeechFlushed:
		// The turn's audio may still be arriving: SpeechMetadata ends it.
	case *api.SpeechMetadata:
		r.turnComplete(ctx)
	case *api.Cleared:
		r.haltAck = true
		r.settleStopped()
	case *api.SpeechInterrupted:
		r.haltAck = true
		if t := r.current(); t != nil && !t.settled {
			t.Spoken, t.Remaining, t.Estimated = msg.TextSpoken, msg.TextRemaining, false
			t.complete, t.settled = true, true
			t.End = len(r.pcm)
			r.setState(t, TurnInterrupted)
		}
		r.settleStopped()
	case *api.SessionMetadata:
	case *api.SpeakWarning:
		r.s.ev.push(&SpeakWarningEvent{Code: msg.Code, Description: msg.Description})
	case *api.SpeechWarning:
		r.s.ev.push(&SpeakWarningEvent{Code: msg.Code, Description: msg.Description})
		if msg.Code == api.CodeNoActiveSpeech && r.halted {
			r.haltAck = true
			r.settleStopped()
		}
	case *api.StreamError:
		return fmt.Errorf("the service failed the synthesis: %w", msg.Err())
	case *api.SpeechError:
		return fmt.Errorf("the service failed the synthesis: %w", msg.Err())
	case *api.UnknownMessage:
		r.s.v.log.Debug("unknown speak message", "type", msg.Type)
	}
	if r.closable() {
		return r.closeStream(ctx)
	}
	return nil
}

// current returns the turn the service is speaking: the last one sent.
func (r *synthRun) current() *synthTurn {
	if r.next == 0 {
		return nil
	}
	return r.turns[r.next-1]
}

// onAudio keeps and plays a frame of audio.
func (r *synthRun) onAudio(ctx context.Context, data []byte, at time.Time) error {
	if r.halted {
		return nil // in flight when the stream was cleared or interrupted
	}
	if len(r.carry) > 0 {
		data = append(r.carry, data...)
		r.carry = nil
	}
	if len(data)%2 == 1 {
		r.carry = []byte{data[len(data)-1]}
		data = data[:len(data)-1]
	}
	if len(data) == 0 {
		return nil
	}
	pcm := make([]int16, len(data)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
	}
	if t := r.current(); t != nil && !t.gotAudio {
		t.gotAudio = true
		t.Start = len(r.pcm)
		t.TimeToFirstAudio = at.Sub(t.sent)
		if r.player == nil && t.State == TurnPending {
			r.setState(t, TurnSpeaking)
		}
	}
	if !r.gotFirst {
		r.gotFirst = true
		r.firstAt = at
		r.ttfa = at.Sub(r.turns[0].sent)
		r.s.ev.push(&FirstAudioEvent{TimeToFirstAudio: r.ttfa, At: at})
	}
	r.pcm = append(r.pcm, pcm...)
	if r.player != nil {
		if err := r.player.Write(ctx, pcm); err != nil {
			return fmt.Errorf("play: %w", err)
		}
		if !r.gotLat {
			r.checkStarted()
		}
	}
	return nil
}

// turnComplete records that the service sent all of the current turn.
func (r *synthRun) turnComplete(ctx context.Context) {
	t := r.current()
	if t == nil || t.complete {
		return
	}
	t.complete = true
	t.End = len(r.pcm)
	if r.player == nil && !r.stopping {
		r.setState(t, TurnSpoken)
	}
	if !r.stopping {
		if err := r.maybeSendNext(ctx); err != nil {
			r.s.v.log.Warn("send the next turn", "err", err)
		}
	}
}

// closable reports whether the stream has nothing more to do: every turn
// complete (or the stop answered), and CloseStream not yet sent.
func (r *synthRun) closable() bool {
	if r.closing || r.eof {
		return false
	}
	if r.stopping {
		return r.haltAck || !r.halted
	}
	return r.next == len(r.turns) && r.turns[len(r.turns)-1].complete
}

// closeStream asks the service to close, and ends the player's stream so
// that its tail plays.
func (r *synthRun) closeStream(ctx context.Context) error {
	r.closing = true
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	if err := r.st.closeStream(cctx); err != nil && !r.stopping {
		return fmt.Errorf("send Close: %w", err)
	}
	if r.player != nil && !r.stopping && r.drained == nil {
		r.drained = make(chan error, 1)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.drained <- r.player.Drain(ctx)
		}()
	}
	return nil
}

// streamEnded handles the service closing the stream.
func (r *synthRun) streamEnded() error {
	if r.stopping {
		r.settleStopped()
		return nil
	}
	for _, t := range r.turns {
		if !t.complete {
			return errors.New("the service closed the stream before the text was spoken")
		}
	}
	if r.player != nil && r.drained == nil && !r.playedOut {
		// Closed without our Close: play the tail anyway.
		r.closing = true
		r.drained = make(chan error, 1)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.drained <- r.player.Drain(context.Background())
		}()
	}
	return nil
}

// stop starts stopping: the speaker is silenced, the stream cleared or
// the turn interrupted. It returns the channel of the grace period for
// the service's answer.
func (r *synthRun) stop(ctx context.Context) <-chan time.Time {
	r.stopping = true
	r.s.ev.push(&StateEvent{State: StateStopping})
	played := r.playhead()
	if r.player != nil {
		r.player.Stop()
	}
	r.stoppedAt = played
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	cur := r.current()
	serverActive := cur != nil && !cur.complete && !r.eof && !r.closing
	if serverActive {
		r.halted = true
		if err := r.st.halt(cctx); err != nil {
			r.s.v.log.Warn("send Clear or Interrupt", "err", err)
			r.haltAck = true
		}
		if r.s.req.Family() == FamilyGeneral {
			// Clear gives no feedback, says the specification: the
			// stream is closed at once, and what arrives after is
			// dropped.
			r.haltAck = true
		}
	}
	if !r.halted || r.haltAck {
		r.settleStopped()
	}
	if r.closable() {
		if err := r.closeStream(ctx); err != nil {
			r.s.v.log.Warn("close the stream", "err", err)
		}
	}
	return time.After(stopGrace)
}

// playhead returns the sample the speaker has reached; without a
// speaker, everything received counts as heard.
func (r *synthRun) playhead() int {
	if r.player == nil {
		return len(r.pcm)
	}
	return min(int(int64(r.player.Played())*SynthesisRate/int64(time.Second)), len(r.pcm))
}

// settleStopped gives every turn its final state after a stop: those
// played are spoken, the one at the playhead interrupted (as the service
// said, or estimated from the playhead), the rest not spoken. The turn
// the service was asked to interrupt waits for its answer.
func (r *synthRun) settleStopped() {
	if !r.stopping {
		return
	}
	waiting := r.halted && !r.haltAck
	p := r.stoppedAt
	for _, t := range r.turns {
		if t.settled || waiting && t == r.current() {
			continue
		}
		t.settled = true
		switch {
		case !t.gotAudio && (r.player != nil || !t.complete):
			t.Spoken, t.Remaining = "", t.Text
			r.setState(t, TurnCancelled)
		case t.complete && t.End <= p:
			r.setState(t, TurnSpoken)
		default:
			end := t.End
			if end < 0 {
				end = len(r.pcm)
			}
			frac := 0.0
			if end > t.Start {
				frac = float64(min(max(p-t.Start, 0), end-t.Start)) / float64(end-t.Start)
			}
			if !t.complete {
				// The audio the service had not sent yet is text not
				// spoken, however little.
				frac = min(frac, 0.999)
			}
			t.Spoken, t.Remaining = splitAt(t.Text, frac)
			t.Estimated = true
			r.setState(t, TurnInterrupted)
		}
	}
}

// splitAt splits text at the word boundary nearest before frac of its
// characters: spoken + remaining == text.
func splitAt(text string, frac float64) (spoken, remaining string) {
	runes := []rune(text)
	cut := int(frac * float64(len(runes)))
	cut = min(max(cut, 0), len(runes))
	if cut < len(runes) {
		for cut > 0 && !unicode.IsSpace(runes[cut-1]) {
			cut--
		}
	}
	return string(runes[:cut]), string(runes[cut:])
}

// setState changes a turn's state and reports it.
func (r *synthRun) setState(t *synthTurn, st SpeechTurnState) {
	if t.State == st {
		return
	}
	t.State = st
	r.s.ev.push(&SpeechTurnEvent{Turn: t.SpeechTurn})
}

// progress reports new audio, the playhead, the level there and the
// turns' states by the playhead.
func (r *synthRun) progress() {
	r.flushProgress()
	if r.player == nil || r.stopping {
		return
	}
	if !r.gotLat {
		r.checkStarted()
	}
	p := r.playhead()
	if p > 0 {
		frame := r.pcm[max(p-SynthesisRate/25, 0):p]
		rms, peak := r.meter.Update(frame)
		r.s.ev.push(&LevelEvent{RMS: rms, Peak: peak})
	}
	for _, t := range r.turns {
		switch {
		case !t.gotAudio:
		case t.complete && p >= t.End:
			r.speakThenSpoken(t)
		case p > t.Start:
			r.setState(t, TurnSpeaking)
		}
	}
}

// markPlayed marks every turn spoken once the speaker has played all.
func (r *synthRun) markPlayed() {
	r.playedOut = true
	for _, t := range r.turns {
		if t.complete && t.State != TurnInterrupted {
			r.speakThenSpoken(t)
		}
	}
}

// speakThenSpoken marks a turn spoken, reporting it speaking first if
// the playhead crossed all of it between two looks.
func (r *synthRun) speakThenSpoken(t *synthTurn) {
	if t.State == TurnPending {
		r.setState(t, TurnSpeaking)
	}
	r.setState(t, TurnSpoken)
}

// flushProgress reports the audio not yet reported.
func (r *synthRun) flushProgress() {
	var played time.Duration
	if r.player != nil {
		played = r.player.Played()
	}
	if r.reported == len(r.pcm) && r.player == nil {
		return
	}
	ev := &SynthesisProgressEvent{
		Samples:  slices.Clone(r.pcm[r.reported:]),
		Received: audio.FramesDuration(int64(len(r.pcm)), SynthesisRate),
		Played:   played,
	}
	r.reported = len(r.pcm)
	r.s.ev.push(ev)
}

// checkStarted reports the playback latency once the speaker started.
func (r *synthRun) checkStarted() {
	started, first := r.player.Started(), r.player.FirstWrite()
	if started.IsZero() || first.IsZero() {
		return
	}
	r.gotLat = true
	r.latency = max(started.Sub(first), 0)
	r.s.ev.push(&PlaybackStartedEvent{Latency: r.latency})
}

// snapshot is the result as it stands.
func (r *synthRun) snapshot() SynthesisResult {
	res := SynthesisResult{
		Request:            r.s.req,
		PCM:                slices.Clone(r.pcm),
		SampleRate:         SynthesisRate,
		TimeToFirstAudio:   r.ttfa,
		PlaybackLatency:    r.latency,
		HasPlaybackLatency: r.gotLat,
		Stopped:            r.stopping,
		Model:              r.model,
	}
	for _, t := range r.turns {
		res.Turns = append(res.Turns, t.SpeechTurn)
	}
	return res
}

// SynthesisDetails is the JSON saved as a synthesis's Details in history.
type SynthesisDetails struct {
	Voice                string  `json:"voice"`
	Family               string  `json:"family"`
	Speed                float64 `json:"speed"`
	Expressivity         int     `json:"expressivity"`
	TurnByTurn           bool    `json:"turn_by_turn,omitempty"`
	TimeToFirstAudioMS   float64 `json:"time_to_first_audio_ms"`
	PlaybackLatencyMS    float64 `json:"playback_latency_ms,omitempty"`
	Stopped              bool    `json:"stopped,omitempty"`
	Turns                int     `json:"turns"`
	SampleRate           int     `json:"sample_rate"`
	ServiceModel         string  `json:"service_model,omitempty"`
	InterruptedSpoken    string  `json:"interrupted_spoken,omitempty"`
	InterruptedRemaining string  `json:"interrupted_remaining,omitempty"`
}

// synthesisRecord is the JSON saved as a synthesis's response: the request.
type synthesisRecord struct {
	Text         string  `json:"text"`
	Voice        string  `json:"voice"`
	Speed        float64 `json:"speed,omitempty"`
	Expressivity int     `json:"expressivity,omitempty"`
	TurnByTurn   bool    `json:"turn_by_turn,omitempty"`
}

func speedOf(r SynthesisRequest) float64 {
	if r.Speed == 0 {
		return 1
	}
	return r.Speed
}

// synthesisTitle is the start of the text, on one line.
func synthesisTitle(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) > 60 {
		t = string([]rune(t)[:59]) + "…"
	}
	return t
}

// save records the synthesis in history once it has ended: its
// details, its request and text (searchable), and its audio as WAV. It
// returns the session's id, 0 without history or when saving failed.
func (r *synthRun) save(ctx context.Context, res SynthesisResult, runErr error) int64 {
	h := r.s.v.cfg.History
	if h == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	req := r.s.req
	d := SynthesisDetails{
		Voice: req.Voice, Family: string(req.Family()), Speed: speedOf(req), Expressivity: req.Expressivity,
		TurnByTurn: req.TurnByTurn, TimeToFirstAudioMS: ms(res.TimeToFirstAudio), Stopped: res.Stopped,
		Turns: len(res.Turns), SampleRate: res.SampleRate, ServiceModel: res.Model,
	}
	if res.HasPlaybackLatency {
		d.PlaybackLatencyMS = ms(res.PlaybackLatency)
	}
	for _, t := range res.Turns {
		if t.State == TurnInterrupted {
			d.InterruptedSpoken, d.InterruptedRemaining = t.Spoken, t.Remaining
			break
		}
	}
	details, _ := json.Marshal(d)
	rec := synthesisRecord{Text: req.Text, Voice: req.Voice, Speed: speedOf(req), Expressivity: req.Expressivity, TurnByTurn: req.TurnByTurn}
	opts, _ := json.Marshal(synthesisRecord{Voice: rec.Voice, Speed: rec.Speed, Expressivity: rec.Expressivity, TurnByTurn: rec.TurnByTurn})
	body, _ := json.Marshal(rec)
	status, errText := store.StatusDone, ""
	switch {
	case runErr != nil:
		status, errText = store.StatusFailed, runErr.Error()
	case res.Stopped:
		status = store.StatusCancelled
	}
	id, err := h.CreateSession(ctx, store.Session{
		Kind:     store.KindSynthesis,
		Title:    synthesisTitle(req.Text),
		Source:   req.Voice,
		Backend:  r.s.v.cfg.Backend,
		Model:    req.Voice,
		Options:  string(opts),
		Details:  string(details),
		Started:  r.began,
		Ended:    time.Now(),
		Duration: res.Duration().Seconds(),
		Status:   status,
		Error:    errText,
	})
	if err != nil {
		r.s.v.log.Warn("save the synthesis", "err", err)
		return 0
	}
	var errs []error
	if err := h.SaveResponse(ctx, id, body, req.Text); err != nil {
		errs = append(errs, err)
	}
	if len(res.PCM) > 0 {
		var wav bytes.Buffer
		if err := audio.EncodeWAV(&wav, res.PCM, res.SampleRate, 1); err != nil {
			errs = append(errs, err)
		} else if err := h.SaveAudio(ctx, id, store.Audio{ContentType: "audio/wav", Encoding: api.EncodingLinear16, SampleRate: res.SampleRate, Data: wav.Bytes()}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		r.s.v.log.Warn("save the synthesis", "session", id, "err", err)
	}
	return id
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
