package sessions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
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
	// Parts are the pieces the text was sent in, in order (see
	// SynthesisPart).
	Parts []SynthesisPart
	// Stopped is set when Stop cut the synthesis short.
	Stopped bool
	// Partial, when set, says that part of the text was never spoken
	// though nobody stopped the synthesis, how much was, and why.
	Partial *PartialSynthesisError
	// SessionID is the synthesis's id in history, 0 without.
	SessionID int64
	// Model is the voice the service says spoke.
	Model string
	// Unplayed is why the audio was kept without playing it: the
	// speaker could not be opened (a *SpeakerError); nil otherwise.
	Unplayed error
}

// SpeakerError is a speaker that could not be opened or went away: a
// synthesis goes on without it and keeps its audio.
type SpeakerError struct{ Err error }

func (e *SpeakerError) Error() string { return "the speaker: " + e.Err.Error() }
func (e *SpeakerError) Unwrap() error { return e.Err }

// NoSpeakerEvent reports that the speaker could not be opened: the
// synthesis goes on without playing, and its audio is kept (Err is a
// *SpeakerError).
type NoSpeakerEvent struct{ Err error }

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

// TextSkippedEvent reports, before a synthesis starts, characters of its
// text that its voice does not say (emoji, letters of another script's
// language): Skipped says what they are. The voice says the rest.
type TextSkippedEvent struct{ Voice, Skipped string }

// SynthesisDoneEvent is the last event of a synthesis but its final
// StateEvent: what was kept.
type SynthesisDoneEvent struct{ Result SynthesisResult }

func (*FirstAudioEvent) isEvent()        {}
func (*PlaybackStartedEvent) isEvent()   {}
func (*SynthesisProgressEvent) isEvent() {}
func (*SpeechTurnEvent) isEvent()        {}
func (*SpeakWarningEvent) isEvent()      {}
func (*NoSpeakerEvent) isEvent()         {}
func (*SynthesisDoneEvent) isEvent()     {}
func (*TextSkippedEvent) isEvent()       {}

// Synthesis is one text spoken by one voice, streaming: the text goes to
// the voice's WebSocket (/v1/speak with Speak and Flush for a general
// voice, /v2/speak turn by turn for a turn-based one), and its audio is
// played as it arrives and kept. Stop clears (v1) or interrupts (v2) it.
//
// Its life is the sessions' one lifecycle; its run is a state machine
// (synthRun, in voices_run.go). Stop, Done, Events and Result are safe
// for concurrent use. Events must be read until it is closed.
type Synthesis struct {
	*lifecycle
	v    *Voices
	req  SynthesisRequest
	hist synthesisHistory // nil without history
	// wireLabel labels the stream's wire events until the history entry,
	// made at the end, is bound to it; set before the run starts.
	wireLabel string

	mu     sync.Mutex // guards result
	result SynthesisResult
}

// Synthesize checks the request, opens the speaker and the voice's stream
// and starts speaking in the background. It returns once the stream is
// open. ctx bounds the whole synthesis: cancelling it stops it as Stop
// does.
func (v *Voices) Synthesize(ctx context.Context, req SynthesisRequest) (*Synthesis, error) {
	return v.synthesize(ctx, req, v.cfg.Clock)
}

// synthesize is Synthesize timed by clk (nil for the real clock).
func (v *Voices) synthesize(ctx context.Context, req SynthesisRequest, clk Clock) (*Synthesis, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	if v.cfg.Streamer == nil {
		return nil, errors.New("voices: no service to speak with")
	}
	hist := synthesisHistoryOf(v.cfg.History)
	s := &Synthesis{
		lifecycle: newLifecycle("speak", clk),
		v:         v,
		req:       req,
		hist:      hist,
		result:    SynthesisResult{Request: req, SampleRate: SynthesisRate},
	}
	s.emit(&StateEvent{State: StateConnecting})
	if rep := req.sayable(); len(rep.Skipped) > 0 {
		s.emit(&TextSkippedEvent{Voice: req.Voice, Skipped: rep.String()})
	}
	if err := s.start(ctx, s.prepare); err != nil {
		return nil, err
	}
	return s, nil
}

// prepare opens the speaker, unless silent, and the voice's stream, on
// the caller's goroutine so that Synthesize reports the stream failing.
// A speaker that cannot be opened does not fail the synthesis: it goes
// on silent, its audio kept, and says so with a *NoSpeakerEvent.
func (s *Synthesis) prepare(ctx context.Context) (runFunc, error) {
	var (
		player   Player
		unplayed error
	)
	if !s.req.Silent && s.v.cfg.Speakers != nil {
		p, err := s.v.cfg.Speakers.Open(ctx, s.v.cfg.OutputDevice, SynthesisRate)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			unplayed = &SpeakerError{Err: err}
			s.emit(&NoSpeakerEvent{Err: unplayed})
		default:
			player = p
		}
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	dctx, s.wireLabel = runWire(dctx)
	st, err := s.v.open(dctx, s.req)
	cancel()
	if err != nil {
		if player != nil {
			player.Close()
		}
		return nil, fmt.Errorf("speak: %w", err)
	}
	r := &synthRun{s: s, st: st, player: player, unplayed: unplayed, clock: s.clock}
	return r.run, nil
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
// *SpeechTurnEvent, *SpeakWarningEvent, *SpeakRetryEvent,
// *TextSkippedEvent, *SaveFailedEvent (what history could not keep), a
// final *HistoryEvent (whether history holds it) and, last but the final
// state, *SynthesisDoneEvent. It
// is closed once the synthesis has ended and every event was delivered.
func (s *Synthesis) Events() <-chan Event { return s.lifecycle.Events() }

// Done is closed when the synthesis has ended: its audio all played (or
// stopped) and it is saved.
func (s *Synthesis) Done() <-chan struct{} { return s.lifecycle.Done() }

// Stop stops speaking at once: a general voice's stream is cleared, a
// turn-based voice's turn interrupted (the turn then shows what was
// spoken and what was left), and the speaker silenced. What arrived is
// kept and saved. It waits for the end, is idempotent, and returns why
// the synthesis failed, if it did: a *PartialSynthesisError when some of
// its text was spoken and the rest never was, though nobody stopped it.
func (s *Synthesis) Stop() error { return s.lifecycle.Stop() }

// Result returns what the synthesis has kept so far; complete once Done
// is closed.
func (s *Synthesis) Result() SynthesisResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	r.PCM = slices.Clone(r.PCM)
	r.Turns = slices.Clone(r.Turns)
	r.Parts = slices.Clone(r.Parts)
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
