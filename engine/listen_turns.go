package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/engine/turn"
)

// turnPlan is a /v2/listen request, checked and resolved.
type turnPlan struct {
	opts   api.TurnOptions
	format audio.Format // Encoding none means "detect the container"
}

// turnNotOffered are parameters of /v2/listen the engine does not
// implement; they are refused in plain words rather than ignored.
var turnNotOffered = []struct {
	name string
	set  func(*api.TurnOptions) bool
}{
	{"keyterm", func(o *api.TurnOptions) bool { return len(o.Keyterms) > 0 }},
	{"profanity_filter", func(o *api.TurnOptions) bool { return o.ProfanityFilter }},
	{"numerals", func(o *api.TurnOptions) bool { return o.Numerals }},
	{"redact", func(o *api.TurnOptions) bool { return len(o.Redact) > 0 }},
}

// planTurns reads and checks a /v2/listen query. Every refusal is an
// *api.OptionError with the status, code and message to answer.
func (e *Engine) planTurns(q url.Values) (*turnPlan, error) {
	o, unknown, err := api.ParseTurnOptions(q)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		e.log.Debug("ignored unknown turn parameters", "params", unknown)
	}
	if err := (api.Endpoint{Region: e.cfg.Region}).CheckModel(o.Model); err != nil {
		return nil, err
	}
	if !strings.EqualFold(o.Model, turnModelName) {
		return nil, badRequest(msgNoSuchModel + " The local engine serves " + turnModelName +
			" only: its recogniser understands English, so it cannot honour " + o.Model + ".")
	}
	o.Model = turnModelName
	for _, f := range turnNotOffered {
		if f.set(&o) {
			return nil, notOffered(f.name + " on /v2/listen")
		}
	}
	p := &turnPlan{opts: o}
	switch o.Encoding {
	case "", "ogg-opus":
		// Containerized: the format is read from the audio.
	case "linear16", "linear32", "mulaw", "alaw":
		enc, err := audio.ParseEncoding(o.Encoding)
		if err != nil {
			return nil, badRequest(err.Error())
		}
		p.format = audio.Format{Encoding: enc, SampleRate: o.SampleRate, Channels: 1}
		if err := p.format.Validate(); err != nil {
			return nil, badRequest(err.Error())
		}
	default:
		return nil, notOffered("encoding=" + o.Encoding)
	}
	return p, nil
}

// turnSettings converts options to the detector's settings.
func turnSettings(o api.TurnOptions) turn.Settings {
	return turn.Settings{
		EOTThreshold:   o.EffectiveEOTThreshold(),
		EagerThreshold: o.EagerEOTThreshold,
		EOTTimeout:     time.Duration(o.EffectiveEOTTimeoutMS()) * time.Millisecond,
	}
}

// handleTurnStream serves the /v2/listen WebSocket. Every check happens
// before the upgrade, so a refused request gets an HTTP status and an
// error body.
func (e *Engine) handleTurnStream(w http.ResponseWriter, r *http.Request) {
	plan, err := e.planTurns(r.URL.Query())
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	det, err := turn.New(turnSettings(plan.opts))
	if err != nil {
		// Unreachable: ParseTurnOptions checks the same ranges.
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, err.Error())
		return
	}
	dec, release, err := e.asr.decoder(r.Context(), streamingPostSpeechFrames)
	if err != nil {
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", "The speech model could not be loaded: "+err.Error())
		return
	}
	defer release()
	ad, err := audio.NewSpeechDecoder(plan.format)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, err.Error())
		return
	}
	defer ad.Close()
	stream, err := dec.NewStream(sphinx.StreamOptions{})
	if err != nil {
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", "The recogniser could not start: "+err.Error())
		return
	}
	defer stream.Close()

	sock, done, ok := e.acceptSocket(w, r, maxFrameBytes, listenOutQueue)
	if !ok {
		return
	}
	defer done()
	s := &turnSession{
		socket:   sock,
		opts:     plan.opts,
		audio:    ad,
		turnFeed: turnFeed{stream: stream, det: det},
	}
	s.serve(e.ctx, s.handler())
	// serve has waited for the loop, the only writer of samples.
	noteAudio(r.Context(), float64(s.samples)/sphinx.SampleRate, 1, turnModelName)
}

// turnSession is one /v2/listen stream. As with /v1/listen, three
// goroutines serve it, all owned by the socket's run: the reader, the
// processor (process, after the Connected message) and the writer. Only
// the processor touches the fields below the socket.
type turnSession struct {
	*socket
	audio *audio.SpeechDecoder
	turnFeed

	opts api.TurnOptions // the settings in force
	seq  int             // sequence_id of the next message

	checkedContainer bool
}

// handler is what the stream does with the socket's frames.
func (s *turnSession) handler() streamHandler {
	return streamHandler{
		start: func(context.Context) {
			s.send(api.Connected{RequestID: s.rid, SequenceID: s.nextSeq()})
		},
		text:  s.control,
		audio: s.audioFrame,
		idle: func(context.Context) (websocket.StatusCode, string) {
			s.send(api.TurnError{SequenceID: s.nextSeq(), Code: api.CodeNetTimeout, Description: "No audio or text message arrived within the timeout window."})
			return websocket.StatusInternalError, reasonIdle
		},
	}
}

// audioFrame handles a binary frame. done reports that the stream ends.
func (s *turnSession) audioFrame(_ context.Context, data []byte) (code websocket.StatusCode, reason string, done bool) {
	if len(data) == 0 {
		// A zero-length frame is taken as a close, as on /v1/listen.
		code, reason = s.finish()
		return code, reason, true
	}
	if err := s.pushAudio(data); err != nil {
		var ue undecodableError
		if errors.As(err, &ue) {
			s.send(api.TurnError{SequenceID: s.nextSeq(), Code: api.CodeUndecodable, Description: ue.Error()})
			return websocket.StatusPolicyViolation, "DATA-0000: " + ue.Error(), true
		}
		s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
		s.send(api.TurnError{SequenceID: s.nextSeq(), Code: api.CodeInternalServerError, Description: "The recogniser failed."})
		return websocket.StatusInternalError, "the recogniser failed", true
	}
	return 0, "", false
}

// control handles a text message. done reports that the stream ends.
func (s *turnSession) control(_ context.Context, data []byte) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeTurnClientMessage(data)
	switch {
	case errors.Is(err, api.ErrBadConfigure):
		s.send(api.ConfigureFailure{RequestID: s.rid, SequenceID: s.nextSeq()})
		return 0, "", false
	case err != nil:
		s.warn(api.CodeUnparsableClientMessage, "The text message is not a JSON object with a type.")
		return 0, "", false
	}
	switch m := m.(type) {
	case *api.Configure:
		s.configure(m)
	case *api.ForceEndTurn:
		if err := s.forceEndTurn(); err != nil {
			s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
			s.send(api.TurnError{SequenceID: s.nextSeq(), Code: api.CodeInternalServerError, Description: "The recogniser failed."})
			return websocket.StatusInternalError, "the recogniser failed", true
		}
	case *api.CloseStream:
		code, reason := s.finish()
		return code, reason, true
	case *api.UnknownMessage:
		if m.Type == api.TypeKeepAlive {
			// Not defined on /v2/listen; taken, like any message, as a
			// sign of life, and otherwise ignored.
			return 0, "", false
		}
		s.warn(api.CodeUnparsableClientMessage, fmt.Sprintf("Unknown message type %q: this stream takes Configure, ForceEndTurn and CloseStream.", m.Type))
	}
	return 0, "", false
}

// configure applies a Configure message whole, or not at all.
func (s *turnSession) configure(c *api.Configure) {
	fail := func(why string) {
		s.e.log.Debug("configure refused", "request_id", s.rid, "reason", why)
		s.send(api.ConfigureFailure{RequestID: s.rid, SequenceID: s.nextSeq()})
	}
	if err := c.Validate(); err != nil {
		fail(err.Error())
		return
	}
	if len(c.Keyterms) > 0 {
		fail("keyterms are not offered")
		return
	}
	next, err := s.opts.WithConfigure(*c)
	if err != nil {
		fail(err.Error())
		return
	}
	if err := s.det.SetSettings(turnSettings(next)); err != nil {
		fail(err.Error())
		return
	}
	s.opts = next
	set := s.det.Settings()
	th := api.Thresholds{EOTThreshold: &set.EOTThreshold}
	if set.EagerThreshold != 0 {
		th.EagerEOTThreshold = &set.EagerThreshold
	}
	ms := int(set.EOTTimeout / time.Millisecond)
	th.EOTTimeoutMS = &ms
	s.send(api.ConfigureSuccess{RequestID: s.rid, SequenceID: s.nextSeq(), Thresholds: th, Keyterms: slices.Clone(s.opts.Keyterms)})
}

// forceEndTurn ends the turn in progress at once, or warns that there is
// none.
func (s *turnSession) forceEndTurn() error {
	if !s.det.InTurn() {
		s.warn(api.CodeForceEndTurnNoActive, "ForceEndTurn arrived while no turn was in progress.")
		return nil
	}
	// The recogniser ends its utterance too, so that the words heard so far
	// belong to this turn and the next audio starts afresh.
	evs, err := s.stream.Finalize()
	if err != nil {
		return fmt.Errorf("finalize: %w", err)
	}
	s.fill = 0
	b := s.evidence(evs)
	msgs, _ := s.det.ForceEnd(b)
	s.sendTurns(msgs)
	return nil
}

// finish ends the stream as CloseStream asks: all the audio received is
// decoded, but the turn in progress is not ended. The last message is an
// Update of that turn over all the audio, then the socket closes without
// a status.
func (s *turnSession) finish() (websocket.StatusCode, string) {
	if tail, err := s.audio.Flush(); err == nil && len(tail) > 0 {
		if err := s.feed(tail); err != nil {
			s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
			return websocket.StatusNoStatusRcvd, ""
		}
	}
	// Finalize decodes the recogniser's last, partial block; the words it
	// finishes join the turn without deciding its end.
	evs, err := s.stream.Finalize()
	if err != nil {
		s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
		return websocket.StatusNoStatusRcvd, ""
	}
	if m, ok := s.det.Last(s.evidence(evs)); ok {
		s.sendTurns([]turn.Message{m})
	}
	return websocket.StatusNoStatusRcvd, ""
}

// undecodableError is audio the engine could not decode.
type undecodableError struct{ msg string }

func (e undecodableError) Error() string { return e.msg }

// pushAudio decodes a frame and feeds the recogniser.
func (s *turnSession) pushAudio(data []byte) error {
	pcm, err := s.audio.Decode(data)
	if err != nil {
		if errors.Is(err, audio.ErrUndecodable) || errors.Is(err, audio.ErrTooLarge) {
			return undecodableError{"the audio could not be decoded; check that encoding and sample_rate match what is sent"}
		}
		return undecodableError{err.Error()}
	}
	if !s.checkedContainer {
		if info, ok := s.audio.Info(); ok {
			s.checkedContainer = true
			if want, ok := declaredContainer(s.opts.Encoding); ok && info.Container != want {
				return undecodableError{fmt.Sprintf("encoding=%s was declared but the audio is %s", s.opts.Encoding, info.Container)}
			}
		}
	}
	return s.feed(pcm)
}

// feed passes 16 kHz audio to the recogniser and sends the turn events
// of every block.
func (s *turnSession) feed(pcm []int16) error {
	msgs, err := s.push(pcm)
	s.sendTurns(msgs)
	return err
}

// turnFeed passes 16 kHz audio to the recogniser one block at a time and
// gives the turn detector the evidence of every block, so that turns do
// not depend on how the client frames its audio. /v2/listen and the
// agent's turn-aware listening share it.
type turnFeed struct {
	stream   *sphinx.Stream
	det      *turn.Detector
	samples  int64 // 16 kHz samples pushed to the recogniser
	fill     int   // samples of the recogniser's block in progress
	inSpeech bool  // the voice detector hears speech
}

// push feeds pcm and returns the detector's events, in order.
func (f *turnFeed) push(pcm []int16) ([]turn.Message, error) {
	var out []turn.Message
	for len(pcm) > 0 {
		n := min(sphinx.BlockSamples-f.fill, len(pcm))
		evs, err := f.stream.Push(pcm[:n])
		if err != nil {
			return out, fmt.Errorf("recognise: %w", err)
		}
		pcm = pcm[n:]
		f.samples += int64(n)
		f.fill += n
		if f.fill < sphinx.BlockSamples {
			continue
		}
		f.fill = 0
		b := f.evidence(evs)
		if f.inSpeech {
			r, ok, err := f.stream.Partial()
			if err != nil {
				return out, fmt.Errorf("partial hypothesis: %w", err)
			}
			if ok {
				b.Partial = turnWords(r.Words, false)
			}
		}
		out = append(out, f.det.Block(b)...)
	}
	return out, nil
}

// evidence reads the recogniser's events of a block.
func (f *turnFeed) evidence(evs []sphinx.Event) turn.Block {
	b := turn.Block{End: float64(f.samples) / sphinx.SampleRate}
	for _, ev := range evs {
		switch ev.Kind {
		case sphinx.SpeechStarted:
			f.inSpeech = true
		case sphinx.Final:
			f.inSpeech = false
			b.Ended = true
			b.Final = append(b.Final, turnWords(ev.Result.Words, true)...)
		}
	}
	b.InSpeech = f.inSpeech
	return b
}

// turnWords converts recognised words. The recogniser computes word
// posteriors only for final hypotheses; a word still being recognised has
// confidence 0, as in /v1/listen's interim results.
func turnWords(ws []sphinx.Word, final bool) []turn.Word {
	out := make([]turn.Word, len(ws))
	for i, w := range ws {
		c := 0.0
		if final {
			c = w.Confidence
		}
		out[i] = turn.Word{Text: w.Text, Start: w.Start, End: w.End, Confidence: c}
	}
	return out
}

// sendTurns sends the detector's events as TurnInfo messages.
func (s *turnSession) sendTurns(msgs []turn.Message) {
	for _, m := range msgs {
		words := make([]api.TurnWord, len(m.Words))
		for i, w := range m.Words {
			words[i] = api.TurnWord{Word: w.Text, Confidence: round4(w.Confidence), Start: round4(w.Start), End: round4(w.End)}
		}
		s.send(api.TurnInfo{
			RequestID:           s.rid,
			SequenceID:          s.nextSeq(),
			Event:               api.TurnEvent(m.Event),
			TurnIndex:           m.TurnIndex,
			AudioWindowStart:    round4(m.WindowStart),
			AudioWindowEnd:      round4(m.WindowEnd),
			Transcript:          m.Transcript(),
			Words:               words,
			EndOfTurnConfidence: round4(m.Confidence),
			Trigger:             api.TurnTrigger(m.Trigger),
		})
	}
}

func (s *turnSession) warn(code, desc string) {
	s.send(api.TurnWarning{RequestID: s.rid, SequenceID: s.nextSeq(), Code: code, Description: desc})
}

// nextSeq returns the sequence_id of the next message sent: every
// server message is numbered from 0, in the order sent.
func (s *turnSession) nextSeq() int {
	n := s.seq
	s.seq++
	return n
}

// send queues a message for the writer.
func (s *turnSession) send(msg json.Marshaler) {
	b, err := msg.MarshalJSON()
	if err != nil {
		s.e.log.Error("encode message", "err", err)
		return
	}
	s.out <- outFrame{data: b}
}
