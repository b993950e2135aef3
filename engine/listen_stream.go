package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/diarize"
	"github.com/earshot-app/earshot/engine/sphinx"
)

// Limits of a /v1/listen stream.
const (
	maxFrameBytes = 8 << 20 // the largest single audio frame
	// listenOutQueue is how many messages may wait for the writer of a
	// listen stream.
	listenOutQueue = 256
	// preSpeechSeconds is how much audio the voice detector keeps before
	// the speech it detected; SpeechStarted reports the speech itself.
	preSpeechSeconds = float64(sphinx.DefaultVADPreSpeech) / sphinx.FrameRate
)

// Close reasons of a stream, as the service words its codes.
const (
	reasonIdle     = "NET-0001: no audio or text message arrived within the timeout window"
	reasonShutdown = "the local engine is shutting down"
)

// checkOrigin refuses a WebSocket upgrade from a web page of another
// origin: a page a person happens to visit must not reach the engine
// through their browser. Clients that are not browsers send no Origin.
func checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("connections from the web page %q are refused", o)
	}
	return nil
}

// handleListenStream serves the /v1/listen WebSocket. Every check happens
// before the upgrade, so a refused request gets an HTTP status and an
// error body, as the service answers at the handshake.
func (e *Engine) handleListenStream(w http.ResponseWriter, r *http.Request) {
	if refuseOrigin(w, r) {
		return
	}
	plan, err := e.planListen(r.URL.Query(), api.Streaming)
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	if plan.opts.Multichannel && plan.opts.Channels > 1 {
		writeOptionError(w, r, notOffered("multichannel streaming"))
		return
	}
	if plan.weight > 0 {
		if !e.limit.acquire(plan.weight) {
			e.tooMany(w, r)
			return
		}
		defer e.limit.release(plan.weight)
	}
	dec, release, err := e.asr.decoder(r.Context(), plan.postSpeech)
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
	stream, err := dec.NewStream(sphinx.StreamOptions{Partials: plan.opts.InterimResults})
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
	s := &listenSession{
		socket:  sock,
		plan:    plan,
		created: e.now(),
		audio:   ad,
		stream:  stream,
		sum:     sha256.New(),
	}
	if plan.diarize {
		s.online = diarize.NewOnline()
	}
	s.run(e.ctx, s.process)
}

// listenSession is one /v1/listen stream. Three goroutines serve it, all
// owned by the socket's run: the reader (frames in), the processor
// (process: audio to recogniser to messages) and the writer (messages
// out). Only the processor touches the fields below the socket.
type listenSession struct {
	*socket
	plan    *listenPlan
	created time.Time
	audio   *audio.SpeechDecoder
	stream  *sphinx.Stream
	online  *diarize.Online
	sum     hash.Hash

	bytesIn  int64
	samples  int64   // 16 kHz samples decoded so far
	decoded  bool    // some audio was decoded
	cursor   float64 // end of the audio the last final covered
	pcm      []int16 // audio since pcmStart, for diarization
	pcmStart int64   // sample index of pcm[0]
	inSpeech bool

	checkedContainer bool // the container was checked against encoding

	lastWordEnd  float64 // end of the last word seen in any result
	utteranceEnd bool    // an UtteranceEnd was sent for lastWordEnd
	sawWords     bool
}

// process is the processor loop. It returns how to close the socket.
func (s *listenSession) process(ctx context.Context, in <-chan inbound, writeFailed <-chan struct{}) (websocket.StatusCode, string) {
	idle := time.NewTimer(s.e.cfg.IdleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return websocket.StatusGoingAway, reasonShutdown
		case <-writeFailed:
			return websocket.StatusGoingAway, ""
		case <-idle.C:
			s.sendMetadata()
			return websocket.StatusInternalError, reasonIdle
		case f := <-in:
			if f.err != nil {
				return websocket.StatusNormalClosure, ""
			}
			idle.Reset(s.e.cfg.IdleTimeout)
			if f.binary {
				if len(f.data) == 0 {
					// A zero-length frame is taken as a close.
					return s.finish()
				}
				if err := s.pushAudio(f.data); err != nil {
					return websocket.StatusPolicyViolation, "DATA-0000: " + err.Error()
				}
				continue
			}
			if code, reason, done := s.control(f.data); done {
				return code, reason
			}
		}
	}
}

// control handles a text message. done reports that the stream ends.
func (s *listenSession) control(data []byte) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeControlMessage(data)
	if err != nil {
		s.send(&api.StreamError{Type: api.TypeError, Variant: "SchemaError", Description: "The text message is not a JSON object with a type."})
		return 0, "", false
	}
	switch m.Type {
	case api.TypeKeepAlive:
	case api.TypeFinalize:
		evs, err := s.stream.Finalize()
		if err != nil {
			return websocket.StatusInternalError, "NET-0000: the recogniser failed", true
		}
		if !s.handle(evs, true) {
			s.emptyFinal(true)
		}
	case api.TypeCloseStream:
		code, reason := s.finish()
		return code, reason, true
	default:
		s.send(&api.StreamError{Type: api.TypeError, Variant: "SchemaError",
			Description: fmt.Sprintf("Unknown message type %q: this stream takes KeepAlive, Finalize and CloseStream.", m.Type)})
	}
	return 0, "", false
}

// finish ends the stream cleanly: the last results, then Metadata.
func (s *listenSession) finish() (websocket.StatusCode, string) {
	if tail, err := s.audio.Flush(); err == nil && len(tail) > 0 {
		s.feed(tail)
	}
	evs, err := s.stream.End()
	if err == nil {
		s.handle(evs, false)
	}
	s.sendMetadata()
	return websocket.StatusNormalClosure, ""
}

// pushAudio decodes a frame and feeds the recogniser.
func (s *listenSession) pushAudio(data []byte) error {
	s.bytesIn += int64(len(data))
	s.sum.Write(data)
	pcm, err := s.audio.Decode(data)
	if err != nil {
		if errors.Is(err, audio.ErrUndecodable) || errors.Is(err, audio.ErrTooLarge) {
			return errors.New("the audio could not be decoded; check that encoding and sample_rate match what is sent")
		}
		return err
	}
	if !s.checkedContainer {
		if info, ok := s.audio.Info(); ok {
			s.checkedContainer = true
			if want, ok := declaredContainer(s.plan.opts.Encoding); ok && info.Container != want {
				return fmt.Errorf("encoding=%s was declared but the audio is %s", s.plan.opts.Encoding, info.Container)
			}
		}
	}
	s.feed(pcm)
	return nil
}

// declaredContainer is the container a containerized encoding value
// names, if it names one.
func declaredContainer(encoding string) (audio.Container, bool) {
	switch encoding {
	case "flac":
		return audio.ContainerFLAC, true
	case "ogg-opus":
		return audio.ContainerOggOpus, true
	}
	return audio.ContainerUnknown, false
}

// feed passes 16 kHz audio to the recogniser and sends what it produces.
func (s *listenSession) feed(pcm []int16) {
	if len(pcm) == 0 {
		return
	}
	s.decoded = true
	if s.online != nil {
		s.pcm = append(s.pcm, pcm...)
	}
	s.samples += int64(len(pcm))
	evs, err := s.stream.Push(pcm)
	if err != nil {
		s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
		return
	}
	s.handle(evs, false)
	s.checkUtteranceEnd()
	s.trimPCM()
}

// handle turns recogniser events into messages. It reports whether a
// final was sent. With fromFinalize the events answer a Finalize: the last
// final among them is marked from_finalize, whatever ended its utterance
// (the audio Finalize flushes may itself hold the silence that ends it).
func (s *listenSession) handle(evs []sphinx.Event, fromFinalize bool) bool {
	sentFinal := false
	lastFinal := -1
	if fromFinalize {
		for i, ev := range evs {
			if ev.Kind == sphinx.Final {
				lastFinal = i
			}
		}
	}
	for i, ev := range evs {
		switch ev.Kind {
		case sphinx.SpeechStarted:
			s.inSpeech = true
			if s.plan.opts.VADEvents {
				ts := min(ev.Result.Start+preSpeechSeconds, ev.At)
				s.send(&api.SpeechStarted{Type: api.TypeSpeechStarted, Channel: []int{0, 1}, Timestamp: round4(ts)})
			}
		case sphinx.Partial:
			if s.plan.opts.InterimResults {
				s.sendInterim(ev)
			}
		case sphinx.Final:
			s.inSpeech = false
			s.sendFinal(ev, i == lastFinal)
			sentFinal = true
		}
	}
	return sentFinal
}

func (s *listenSession) sendInterim(ev sphinx.Event) {
	words, _ := wordsOf([]sphinx.Result{ev.Result})
	for i := range words {
		// The recogniser computes word posteriors only for finals.
		words[i].Confidence = 0
	}
	sh := s.plan.shape(words, nil, false)
	sh.alt.Confidence = 0
	if len(words) > 0 {
		s.noteWords(words[len(words)-1].End)
	}
	s.send(s.results(sh.alt, nil, s.cursor, ev.At, false, false, false))
}

func (s *listenSession) sendFinal(ev sphinx.Event, fromFinalize bool) {
	words, boundaries := wordsOf([]sphinx.Result{ev.Result})
	if s.online != nil && len(words) > 0 {
		from := max(int64(ev.Result.Start*sphinx.SampleRate)-s.pcmStart, 0)
		to := min(int64(ev.Result.End*sphinx.SampleRate)-s.pcmStart, int64(len(s.pcm)))
		if from < to {
			labelled, err := s.online.Label(context.Background(), float64(s.pcmStart+from)/sphinx.SampleRate,
				diarize.FromInt16(s.pcm[from:to]), words)
			if err == nil {
				words = labelled
			}
		}
	}
	sh := s.plan.shape(words, boundaries, false)
	if len(words) > 0 {
		s.noteWords(words[len(words)-1].End)
	}
	end := max(ev.Result.End, s.cursor)
	speechFinal := s.plan.speechFinal && ev.Result.Reason == sphinx.EndSilence
	s.send(s.results(sh.alt, sh.entities, s.cursor, end, true, speechFinal, fromFinalize))
	s.cursor = end
}

// emptyFinal answers a Finalize that found no speech to finish.
func (s *listenSession) emptyFinal(fromFinalize bool) {
	at := float64(s.samples) / sphinx.SampleRate
	var ents []api.Entity
	if s.plan.opts.DetectEntities {
		ents = []api.Entity{}
	}
	s.send(s.results(api.Alternative{Words: []api.Word{}}, ents, s.cursor, max(at, s.cursor), true, false, fromFinalize))
	s.cursor = max(at, s.cursor)
}

func (s *listenSession) results(alt api.Alternative, ents []api.Entity, start, end float64, final, speechFinal, fromFinalize bool) *api.Results {
	return &api.Results{
		Type:         api.TypeResults,
		ChannelIndex: []int{0, 1},
		Duration:     round4(max(end-start, 0)),
		Start:        round4(start),
		IsFinal:      final,
		SpeechFinal:  speechFinal,
		FromFinalize: fromFinalize,
		Channel:      api.ResultsChannel{Alternatives: []api.Alternative{alt}},
		Metadata: api.ResultsMetadata{
			RequestID: s.rid,
			ModelInfo: modelInfo(),
			ModelUUID: sttModelUUID,
			Extra:     s.plan.opts.Extra,
		},
		Entities: ents,
	}
}

// noteWords records the end of the latest word, for UtteranceEnd.
func (s *listenSession) noteWords(end float64) {
	if end > s.lastWordEnd {
		s.lastWordEnd = end
		s.utteranceEnd = false
		s.sawWords = true
	}
}

// checkUtteranceEnd sends UtteranceEnd once a gap of utterance_end_ms
// follows the last word.
func (s *listenSession) checkUtteranceEnd() {
	ms := s.plan.opts.UtteranceEndMs
	if ms <= 0 || !s.sawWords || s.utteranceEnd {
		return
	}
	now := float64(s.samples) / sphinx.SampleRate
	if now-s.lastWordEnd >= float64(ms)/1000 && !s.inSpeech {
		s.utteranceEnd = true
		s.send(&api.UtteranceEnd{Type: api.TypeUtteranceEnd, Channel: []int{0, 1}, LastWordEnd: round4(s.lastWordEnd)})
	}
}

// trimPCM drops audio diarization no longer needs: everything before the
// last final, and long silences outside speech.
func (s *listenSession) trimPCM() {
	if s.online == nil {
		return
	}
	keepFrom := int64(s.cursor * sphinx.SampleRate)
	if !s.inSpeech {
		// Outside speech, keep only what the detector may still include
		// as pre-speech audio of the next utterance, with a margin.
		keepFrom = max(keepFrom, s.samples-sphinx.SampleRate)
	}
	if drop := keepFrom - s.pcmStart; drop > 0 && drop <= int64(len(s.pcm)) {
		s.pcm = append(s.pcm[:0], s.pcm[drop:]...)
		s.pcmStart = keepFrom
	}
}

func (s *listenSession) sendMetadata() {
	md := &api.Metadata{
		Type:           api.TypeMetadata,
		TransactionKey: transactionKey,
		RequestID:      s.rid,
		SHA256:         hex.EncodeToString(s.sum.Sum(nil)),
		Created:        s.created.UTC().Format(createdLayout),
		Duration:       round6(float64(s.samples) / sphinx.SampleRate),
		Channels:       0,
		Extra:          s.plan.opts.Extra,
	}
	if s.decoded {
		md.Channels = 1
		if info, ok := s.audio.Info(); ok {
			md.Channels = info.Channels
		}
		md.Models = []string{sttModelUUID}
		md.ModelInfo = map[string]api.ModelInfo{sttModelUUID: modelInfo()}
	}
	s.send(md)
}

// send queues a message for the writer.
func (s *listenSession) send(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		s.e.log.Error("encode message", "err", err)
		return
	}
	s.out <- outFrame{data: b}
}
