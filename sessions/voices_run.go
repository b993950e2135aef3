package sessions

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/clock"
)

// A synthesis's run is a state machine: one phase, which only
// synthRun.enter changes, along synthTransitions:
//
//	speaking ─ every part's audio arrived ─────────────────▶ draining
//	speaking ─ a part refused too often (partial) ─────────▶ draining
//	speaking ─ Stop while a turn-based voice speaks ───────▶ halting
//	speaking ─ Stop otherwise (after a v1 Clear too) ──────▶ stopping
//	draining ─ the stream ended and the tail played ───────▶ done
//	draining ─ Stop ───────────────────────────────────────▶ stopping
//	halting  ─ answered, the stream ended, or grace ───────▶ stopping
//	stopping ─ the stream ended (or grace), speaker silent ▶ stopped
//
// Besides the phase, the run awaits at most two things, each a channel
// that is nil once it has answered: the stream (msgs, until its end) and
// the speaker's drain (drained). Draining and stopping end when neither
// is awaited; when the owner's ctx ends, the run stops and awaits
// neither.
//
// While speaking, the turns go out in parts (voices_parts.go), one Speak
// and one Flush each, the next once the service has acknowledged the one
// before; on /v1/speak an api.SpeakPace holds each to the service's
// limits, a timer (wait) standing for the pause, and a part the service
// refused for rate goes again.

// synthPhase is where a synthesis is.
type synthPhase int

const (
	// phaseSpeaking: turns are sent, their audio arrives and plays.
	phaseSpeaking synthPhase = iota
	// phaseDraining: the service sent every turn's audio and was sent
	// Close (or closed by itself); the stream's end and, with a speaker,
	// its last sample played are awaited.
	phaseDraining
	// phaseHalting: Stop came while the service spoke a turn of a
	// turn-based voice: the speaker is silent, Interrupt was sent, and
	// the service's answer (what was spoken) is awaited, for stopGrace
	// at most. Audio arriving now is dropped.
	phaseHalting
	// phaseStopping: stopped; every turn has its final state and Close
	// was sent. The stream's end and the silenced speaker are awaited,
	// for stopGrace at most. Audio arriving now is dropped.
	phaseStopping
	// phaseDone: every sample was played (or, silent, received).
	phaseDone
	// phaseStopped: Stop (or the owner's leaving) ended it.
	phaseStopped
)

func (p synthPhase) String() string {
	switch p {
	case phaseSpeaking:
		return "speaking"
	case phaseDraining:
		return "draining"
	case phaseHalting:
		return "halting"
	case phaseStopping:
		return "stopping"
	case phaseDone:
		return "done"
	case phaseStopped:
		return "stopped"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// stopped reports whether Stop has come: the result is then Stopped.
func (p synthPhase) stopped() bool {
	return p == phaseHalting || p == phaseStopping || p == phaseStopped
}

// ended reports whether the run is over.
func (p synthPhase) ended() bool { return p == phaseDone || p == phaseStopped }

// synthTransitions are the only moves between phases; the ended phases
// have none.
var synthTransitions = map[synthPhase][]synthPhase{
	phaseSpeaking: {phaseDraining, phaseHalting, phaseStopping},
	phaseDraining: {phaseStopping, phaseDone},
	phaseHalting:  {phaseStopping},
	phaseStopping: {phaseStopped},
}

// synthTurn is a turn as the run loop tracks it.
type synthTurn struct {
	SpeechTurn
	sent     time.Time // when its first part was sent
	gotAudio bool
	complete bool // the service sent all its audio, every part's
	settled  bool // its state after a stop is final
}

// synthRun is a running synthesis; only its run loop touches it. Its
// goroutines, the pump and the drain, read st, player, clock and own,
// which do not change while they run.
type synthRun struct {
	s      *Synthesis
	st     synthStream
	player Player
	clock  Clock
	// unplayed is why there is no player though one was wanted.
	unplayed error

	phase   synthPhase
	msgs    chan received[any] // the stream, nil once it has ended
	drained chan error         // the speaker's drain, nil unless one is awaited
	grace   clock.Timer        // the bound on a stop, once Stop came
	own     context.Context    // the run's own life, for its goroutines
	wg      sync.WaitGroup     // the pump and the drain

	turns []*synthTurn
	parts []*synthPart
	next  int // the next part to send
	// pace holds a /v1/speak stream to the service's limits; nil on
	// /v2/speak. wait, when set, fires when the pace lets the next part
	// go; gaveUp is why the run stopped sending before the end.
	pace     *api.SpeakPace
	wait     clock.Timer
	waited   bool // wait fired: the next part goes without asking the pace again
	gaveUp   error
	pcm      []int16
	carry    []byte // an odd byte of linear16 split across frames
	reported int    // samples reported in progress events
	meter    audio.Meter
	model    string
	measured synthMeasures

	began     time.Time
	stoppedAt int // the playhead when Stop came
}

// synthMeasures are a synthesis's measurements.
type synthMeasures struct {
	ttfa       time.Duration // set with gotFirst, at the first audio
	gotFirst   bool
	latency    time.Duration // set with hasLatency, once the speaker took the first audio
	hasLatency bool
}

// enter moves the run to phase to. It is the only place the phase
// changes; a move not in synthTransitions is a bug in the run loop, and
// panics rather than leave the synthesis in a phase with no way out.
func (r *synthRun) enter(to synthPhase) {
	if !slices.Contains(synthTransitions[r.phase], to) {
		panic(fmt.Sprintf("sessions: a synthesis cannot go from %s to %s", r.phase, to))
	}
	r.phase = to
}

// toDraining enters draining: the service is asked to close, unless it
// has, and the speaker to play its tail.
func (r *synthRun) toDraining(ctx context.Context) error {
	r.enter(phaseDraining)
	if r.msgs != nil {
		if err := r.sendClose(ctx); err != nil {
			return fmt.Errorf("send Close: %w", err)
		}
	}
	if r.player != nil {
		r.startDrain()
	}
	return nil
}

// toStopping enters stopping: every turn gets its final state, and the
// service is asked to close unless draining did or the stream ended.
func (r *synthRun) toStopping(ctx context.Context) {
	from := r.phase
	r.enter(phaseStopping)
	r.settleStopped()
	if from != phaseDraining && r.msgs != nil {
		if err := r.sendClose(ctx); err != nil {
			r.s.v.log.Warn("close the stream", "err", err)
		}
	}
}

// awaiting reports whether the stream or the speaker has yet to end.
func (r *synthRun) awaiting() bool { return r.msgs != nil || r.drained != nil }

func (r *synthRun) run(ctx context.Context) error {
	s := r.s
	defer r.st.close()
	if r.player != nil {
		defer r.player.Close()
	}
	// The pump and the drain live as long as the run, not as long as the
	// owner's ctx: when the owner leaves, the loop stops them itself.
	own, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.own = own
	msgs := make(chan received[any], 64)
	r.msgs = msgs
	r.wg.Go(func() { pump(own, r.clock, r.st.next, msgs) })
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
	r.cutParts()
	if s.req.Family() == FamilyGeneral {
		r.pace = api.NewSpeakPace()
	}
	r.began = r.clock.Now()
	s.emit(&StateEvent{State: StateLive})
	for _, t := range r.turns {
		s.emit(&SpeechTurnEvent{Turn: t.SpeechTurn})
	}

	runErr := r.incomplete(r.loop(ctx))
	if r.grace != nil {
		r.grace.Stop()
	}
	if r.wait != nil {
		r.wait.Stop()
	}
	if r.player != nil && runErr != nil {
		r.player.Stop()
	}
	r.flushProgress()
	res := r.snapshot()
	errors.As(runErr, &res.Partial)
	res.SessionID = r.save(ctx, res, runErr)
	s.mu.Lock()
	s.result = res
	s.mu.Unlock()
	s.emit(&SynthesisDoneEvent{Result: res})
	if runErr != nil {
		s.emit(&StateEvent{State: StateFailed, Err: runErr})
	} else {
		s.emit(&StateEvent{State: StateStopped})
	}
	return runErr
}

// loop speaks the turns and plays their audio until all of it has been
// played, Stop, ctx's end or a failure.
func (r *synthRun) loop(ctx context.Context) error {
	err := r.sendNext(ctx)
	if err == nil {
		err = r.events(ctx)
	}
	if err != nil && ctx.Err() != nil {
		// A send failed because the owner left: that is a stop.
		r.abandon(ctx)
		return nil
	}
	return err
}

// events runs the phases until an ended one.
func (r *synthRun) events(ctx context.Context) error {
	tick := r.clock.NewTicker(progressEvery)
	defer tick.Stop()
	stopCh := r.s.stopping()
	for {
		switch {
		case r.phase == phaseDraining && !r.awaiting():
			r.enter(phaseDone)
		case r.phase == phaseStopping && !r.awaiting():
			r.enter(phaseStopped)
		}
		if r.phase.ended() {
			return nil
		}
		var grace, wait <-chan time.Time
		if r.grace != nil {
			grace = r.grace.C()
		}
		if r.wait != nil {
			wait = r.wait.C()
		}
		select {
		case <-stopCh:
			stopCh = nil
			r.stop(ctx)
		case <-ctx.Done():
			// The owner is gone: stop without waiting for the service.
			r.abandon(ctx)
			return nil
		case <-grace:
			// The service did not answer the stop, or end the stream, in
			// time: go on without it.
			r.grace = nil
			r.msgs = nil
			if r.phase == phaseHalting {
				r.toStopping(ctx)
			}
		case <-wait:
			// The pace lets the next part go.
			r.wait, r.waited = nil, true
			if r.phase == phaseSpeaking {
				if err := r.sendNext(ctx); err != nil {
					return err
				}
			}
		case m := <-r.msgs:
			if err := r.handle(ctx, m); err != nil {
				return err
			}
		case err := <-r.drained:
			r.drained = nil
			if err := r.onDrained(err); err != nil {
				return err
			}
		case <-tick.C():
			r.progress()
			if r.phase == phaseSpeaking {
				if err := r.maybeSendNext(ctx); err != nil {
					return err
				}
			}
		}
	}
}

// stop starts stopping: the speaker is silenced, the stream cleared or
// the turn interrupted, and the grace period for the service's answer
// begins.
func (r *synthRun) stop(ctx context.Context) {
	r.s.emit(&StateEvent{State: StateStopping})
	played := r.playhead()
	if r.player != nil {
		r.player.Stop()
	}
	r.stoppedAt = played
	r.grace = r.clock.NewTimer(stopGrace)
	cur := r.current()
	if r.phase != phaseSpeaking || r.msgs == nil || cur == nil || cur.complete {
		r.toStopping(ctx)
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	err := r.st.halt(cctx)
	cancel()
	switch {
	case err != nil:
		r.s.v.log.Warn("send Clear or Interrupt", "err", err)
		r.toStopping(ctx)
	case r.s.req.Family() == FamilyGeneral:
		// Clear gives no feedback, says the specification: the stream
		// is closed at once, and what arrives after is dropped.
		r.toStopping(ctx)
	default:
		r.enter(phaseHalting)
	}
}

// abandon ends the synthesis at once, the owner being gone: it stops
// if it had not, and awaits neither the service nor the speaker.
func (r *synthRun) abandon(ctx context.Context) {
	if !r.phase.stopped() {
		r.stop(ctx)
	}
	r.msgs, r.drained = nil, nil
	if r.phase == phaseHalting {
		r.toStopping(ctx)
	}
	r.enter(phaseStopped)
}

// answered takes the service's answer to Clear or Interrupt.
func (r *synthRun) answered(ctx context.Context) {
	if r.phase == phaseHalting {
		r.toStopping(ctx)
	}
}

// onDrained takes the end of the speaker's drain.
func (r *synthRun) onDrained(err error) error {
	r.progress()
	if r.phase.stopped() {
		return nil // silenced by the stop, which settled the turns
	}
	if err != nil {
		return fmt.Errorf("play: %w", err)
	}
	r.markPlayed()
	return nil
}

// sendClose asks the service to close the stream.
func (r *synthRun) sendClose(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	return r.st.closeStream(cctx)
}

// startDrain ends the player's stream so that its tail plays, and awaits
// the last sample on drained.
func (r *synthRun) startDrain() {
	ch := make(chan error, 1)
	r.drained = ch
	r.wg.Go(func() { ch <- r.player.Drain(r.own) })
}

// maybeSendNext sends the next part once the one before is
// acknowledged and the speaker is about to run out.
func (r *synthRun) maybeSendNext(ctx context.Context) error {
	if r.next >= len(r.parts) || r.next == 0 || !r.parts[r.next-1].acked || r.wait != nil {
		return nil
	}
	if r.player != nil && r.player.Queued() > turnLookahead {
		return nil
	}
	return r.sendNext(ctx)
}

// allSent reports whether every part was sent and the service sent all
// of the last one.
func (r *synthRun) allSent() bool {
	return r.next == len(r.parts) && r.parts[len(r.parts)-1].acked
}

// handle takes one message from the stream.
func (r *synthRun) handle(ctx context.Context, m received[any]) error {
	if m.err != nil {
		return r.streamEnded(ctx, m.err)
	}
	switch msg := m.msg.(type) {
	case *api.SpeakAudio:
		return r.onAudio(ctx, msg.Data, m.at)
	case *api.SpeakMetadata:
		r.model = msg.ModelName
	case *api.SpeechConnected:
		r.model = msg.ModelName
	case *api.Flushed:
		if err := r.partDone(ctx); err != nil {
			return err
		}
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
		if err := r.partDone(ctx); err != nil {
			return err
		}
	case *api.Cleared:
		r.answered(ctx)
	case *api.SpeechInterrupted:
		if t := r.current(); r.phase == phaseHalting && t != nil && !t.settled {
			// What the service says of the part in flight, with the
			// turn's parts before and after it.
			t.Spoken, t.Remaining, t.Estimated = msg.TextSpoken, msg.TextRemaining, false
			if before, after := r.splitTurnAt(t, r.inFlight()); len(before)+len(after) > 0 {
				t.Spoken = joinText(append(before, msg.TextSpoken)...)
				t.Remaining = joinText(append([]string{msg.TextRemaining}, after...)...)
			}
			t.complete, t.settled = true, true
			t.End = len(r.pcm)
			r.setState(t, TurnInterrupted)
		}
		r.answered(ctx)
	case *api.SessionMetadata:
	case *api.SpeakWarning:
		switch msg.Code {
		case api.CodeRateTooHigh:
			r.speakRefused()
		case api.CodeExcessiveFlush:
			if err := r.flushRefused(ctx); err != nil {
				return err
			}
		case api.CodeTextSkipped:
			// Said before the synthesis began (TextSkippedEvent).
		default:
			r.s.emit(&SpeakWarningEvent{Code: msg.Code, Description: msg.Description})
		}
	case *api.SpeechWarning:
		if msg.Code != api.CodeTextSkipped {
			r.s.emit(&SpeakWarningEvent{Code: msg.Code, Description: msg.Description})
		}
		if msg.Code == api.CodeNoActiveSpeech {
			r.answered(ctx)
		}
	case *api.StreamError:
		if msg.Err().Code == api.CodeRateTooHigh {
			// Sent as an Error, the refusal of a Speak for rate is still
			// a refusal of that Speak only.
			r.speakRefused()
			break
		}
		return fmt.Errorf("the service failed the synthesis: %w", msg.Err())
	case *api.SpeechError:
		return fmt.Errorf("the service failed the synthesis: %w", msg.Err())
	case *api.UnknownMessage:
		r.s.v.log.Debug("unknown speak message", "type", msg.Type)
	}
	if r.phase == phaseSpeaking && (r.allSent() || r.gaveUp != nil) {
		return r.toDraining(ctx)
	}
	return nil
}

// streamEnded takes the end of the stream: err is io.EOF when the
// service closed it.
func (r *synthRun) streamEnded(ctx context.Context, err error) error {
	r.msgs = nil
	switch r.phase {
	case phaseHalting:
		// No answer to the stop can come now.
		r.toStopping(ctx)
		return nil
	case phaseStopping:
		return nil
	}
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("the stream ended: %w", err)
	}
	if r.phase == phaseSpeaking {
		for _, p := range r.parts {
			if !p.acked {
				return errors.New("the service closed the stream before the text was spoken")
			}
		}
		// Closed without our Close: play the tail anyway.
		return r.toDraining(ctx)
	}
	return nil
}

// current returns the turn the service is speaking: that of the last
// part sent.
func (r *synthRun) current() *synthTurn {
	if r.next == 0 {
		return nil
	}
	return r.parts[r.next-1].turn
}

// onAudio keeps and plays a frame of audio.
func (r *synthRun) onAudio(ctx context.Context, data []byte, at time.Time) error {
	if r.phase.stopped() {
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
	if p := r.inFlight(); p != nil && !p.gotAudio {
		p.gotAudio = true
		p.start = len(r.pcm)
	}
	if t := r.current(); t != nil && !t.gotAudio {
		t.gotAudio = true
		t.Start = len(r.pcm)
		t.TimeToFirstAudio = at.Sub(t.sent)
		if r.player == nil && t.State == TurnPending {
			r.setState(t, TurnSpeaking)
		}
	}
	if m := &r.measured; !m.gotFirst {
		m.gotFirst = true
		m.ttfa = at.Sub(r.turns[0].sent)
		r.s.emit(&FirstAudioEvent{TimeToFirstAudio: m.ttfa, At: at})
	}
	r.pcm = append(r.pcm, pcm...)
	if r.player != nil {
		if err := r.player.Write(ctx, pcm); err != nil {
			return fmt.Errorf("play: %w", err)
		}
		if !r.measured.hasLatency {
			r.checkStarted()
		}
	}
	return nil
}

// turnComplete records that the service sent all of the current turn.
func (r *synthRun) turnComplete() {
	t := r.current()
	if t == nil || t.complete {
		return
	}
	t.complete = true
	t.End = len(r.pcm)
	if !r.phase.stopped() && r.player == nil {
		r.setState(t, TurnSpoken)
	}
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
// said, or estimated from the playhead), the rest not spoken.
func (r *synthRun) settleStopped() {
	p := r.stoppedAt
	for _, t := range r.turns {
		if t.settled {
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
	r.s.emit(&SpeechTurnEvent{Turn: t.SpeechTurn})
}

// progress reports new audio, the playhead, the level there and the
// turns' states by the playhead.
func (r *synthRun) progress() {
	r.flushProgress()
	if r.player == nil || r.phase.stopped() {
		return
	}
	if !r.measured.hasLatency {
		r.checkStarted()
	}
	p := r.playhead()
	if p > 0 {
		frame := r.pcm[max(p-SynthesisRate/25, 0):p]
		rms, peak := r.meter.Update(frame)
		r.s.emit(&LevelEvent{RMS: rms, Peak: peak})
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
	r.s.emit(ev)
}

// checkStarted reports the playback latency once the speaker started.
func (r *synthRun) checkStarted() {
	started, first := r.player.Started(), r.player.FirstWrite()
	if started.IsZero() || first.IsZero() {
		return
	}
	m := &r.measured
	m.hasLatency = true
	m.latency = max(started.Sub(first), 0)
	r.s.emit(&PlaybackStartedEvent{Latency: m.latency})
}

// snapshot is the result as it stands.
func (r *synthRun) snapshot() SynthesisResult {
	res := SynthesisResult{
		Request:            r.s.req,
		PCM:                slices.Clone(r.pcm),
		SampleRate:         SynthesisRate,
		TimeToFirstAudio:   r.measured.ttfa,
		PlaybackLatency:    r.measured.latency,
		HasPlaybackLatency: r.measured.hasLatency,
		Stopped:            r.phase.stopped(),
		Model:              r.model,
		Unplayed:           r.unplayed,
	}
	for _, t := range r.turns {
		res.Turns = append(res.Turns, t.SpeechTurn)
	}
	for _, p := range r.parts {
		sp := SynthesisPart{Turn: p.turn.Index, Text: p.text, Spoken: p.acked, Refusals: p.refusals, Start: p.start, End: -1}
		if p.acked {
			sp.End = p.end
		}
		res.Parts = append(res.Parts, sp)
	}
	return res
}

// joinText joins pieces of text with single spaces, skipping empty ones.
func joinText(pieces ...string) string {
	return strings.Join(strings.Fields(strings.Join(pieces, " ")), " ")
}
