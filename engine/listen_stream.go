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
	"sync"
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

// handleListenStream serves the /v1/listen WebSocket. Every check happens
// before the upgrade, so a refused request gets an HTTP status and an
// error body, as the service answers at the handshake.
//
// With multichannel=true and raw audio of channels=N, each channel is
// recognised on its own (see listen_multichannel.go); otherwise the
// channels are mixed to one, as batch transcription does.
func (e *Engine) handleListenStream(w http.ResponseWriter, r *http.Request) {
	plan, err := e.planListen(r.URL.Query(), api.Streaming)
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	n := streamChannels(plan)
	if err := e.checkStreamChannels(plan, n); err != nil {
		writeOptionError(w, r, err)
		return
	}
	// The router counted the connection; the rest of the stream's weight
	// is taken here.
	weight := streamWeight(plan, n) - weightRequest
	if weight > 0 {
		if !e.limit.acquire(weight) {
			e.tooMany(w, r)
			return
		}
	}
	s := &listenSession{plan: plan, weight: weight, sum: sha256.New()}
	defer s.release(e)
	for c := range n {
		ch, msg, err := e.openChannel(r.Context(), plan, c)
		if err != nil {
			writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", msg+err.Error())
			return
		}
		s.chans = append(s.chans, ch)
	}
	ad, err := audio.NewStreamDecoder(plan.format)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, err.Error())
		return
	}
	defer ad.Close()
	s.audio = ad

	sock, done, ok := e.acceptSocket(w, r, maxFrameBytes, listenOutQueue)
	if !ok {
		return
	}
	defer done()
	s.socket = sock
	s.created = e.clock.Now()
	s.serve(e.ctx, s.handler())
	model, _ := resolveListenModel(plan.opts.Model)
	noteAudio(r.Context(), float64(s.chans[0].samples)/sphinx.SampleRate, len(s.chans), model)
}

// Messages of a recogniser that could not be had, before the error.
const (
	msgModelNotLoaded  = "The speech model could not be loaded: "
	msgRecogniserStart = "The recogniser could not start: "
)

// openChannel takes a decoder and starts the recogniser stream of channel
// index. On failure msg says what failed, to be followed by the error.
func (e *Engine) openChannel(ctx context.Context, plan *listenPlan, index int) (ch *listenChannel, msg string, err error) {
	dec, release, err := e.recognizerFor(listenModelFor(plan.opts.Model)).decoder(ctx, plan.postSpeech)
	if err != nil {
		return nil, msgModelNotLoaded, err
	}
	stream, err := dec.NewStream(sphinx.StreamOptions{Partials: plan.opts.InterimResults})
	if err != nil {
		release()
		return nil, msgRecogniserStart, err
	}
	ch = &listenChannel{index: index, stream: stream, giveBack: release}
	if plan.diarize {
		ch.online = diarize.NewOnline()
	}
	return ch, "", nil
}

// listenSession is one /v1/listen stream. Three goroutines serve it, all
// owned by the socket's run: the reader (frames in), the processor
// (process: audio to recognisers to messages) and the writer (messages
// out). Only the processor touches the fields below the socket, but for
// the channels', which it hands to goroutines of their own while it waits
// for them (see eachChannel).
type listenSession struct {
	*socket
	plan    *listenPlan
	created time.Time
	audio   *audio.StreamDecoder
	sum     hash.Hash
	// ctx is the processor's: it ends when the engine shuts down.
	ctx context.Context
	// weight is what the session holds of the concurrency allowance on
	// top of its connection.
	weight int

	// chans are the channels recognised apart: one, or with multichannel
	// one per channel of the audio. Its length is fixed before any audio
	// reaches a recogniser.
	chans []*listenChannel
	// split turns decoded audio into each channel's 16 kHz samples; it is
	// made once the audio's format is known.
	split *channelSplitter

	bytesIn int64
	decoded bool // some audio was decoded
}

// listenChannel is what a stream keeps for one channel it recognises: its
// recogniser stream and where its results stand. Timestamps are the
// channel's own, from the start of the stream.
type listenChannel struct {
	index    int
	stream   *sphinx.Stream
	giveBack func() // returns the decoder
	online   *diarize.Online

	samples  int64   // 16 kHz samples decoded so far
	cursor   float64 // end of the audio the last final covered
	pcm      []int16 // audio since pcmStart, for diarization
	pcmStart int64   // sample index of pcm[0]
	inSpeech bool

	lastWordEnd  float64 // end of the last word seen in any result
	utteranceEnd bool    // an UtteranceEnd was sent for lastWordEnd
	sawWords     bool

	failed bool     // the recogniser failed on Finalize
	queued [][]byte // messages made, for the processor to send
}

// release closes the recogniser streams, gives their decoders back and
// returns the session's weight to the allowance.
func (s *listenSession) release(e *Engine) {
	for _, ch := range s.chans {
		ch.stream.Close()
		ch.giveBack()
	}
	if s.weight > 0 {
		e.limit.release(s.weight)
	}
}

// handler is what the stream does with the socket's frames.
func (s *listenSession) handler() streamHandler {
	return streamHandler{
		start: func(ctx context.Context) { s.ctx = ctx },
		text:  s.control,
		audio: s.audioFrame,
		idle: func(context.Context) (websocket.StatusCode, string) {
			s.sendMetadata()
			return websocket.StatusInternalError, reasonIdle
		},
	}
}

// audioFrame handles a binary frame. done reports that the stream ends.
func (s *listenSession) audioFrame(_ context.Context, data []byte) (code websocket.StatusCode, reason string, done bool) {
	if len(data) == 0 {
		// A zero-length frame is taken as a close.
		code, reason = s.finish()
		return code, reason, true
	}
	if err := s.pushAudio(data); err != nil {
		var ce *closeError
		if errors.As(err, &ce) {
			return ce.code, ce.reason, true
		}
		return websocket.StatusPolicyViolation, "DATA-0000: " + err.Error(), true
	}
	return 0, "", false
}

// closeError ends a stream with its own close code and reason.
type closeError struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeError) Error() string { return e.reason }

// control handles a text message. done reports that the stream ends.
func (s *listenSession) control(_ context.Context, data []byte) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeControlMessage(data)
	if err != nil {
		s.send(&api.StreamError{Type: api.TypeError, Variant: "SchemaError", Description: "The text message is not a JSON object with a type."})
		return 0, "", false
	}
	switch m.Type {
	case api.TypeKeepAlive:
	case api.TypeFinalize:
		// Finalize flushes every channel, or only the one it names.
		targets := s.chans
		if m.Channel != nil {
			c := *m.Channel
			if c < 0 || c >= len(s.chans) {
				s.send(&api.StreamError{Type: api.TypeError, Variant: "SchemaError",
					Description: fmt.Sprintf("Finalize names channel %d, but the stream has %s.", c, channelRange(len(s.chans)))})
				return 0, "", false
			}
			targets = s.chans[c : c+1]
		}
		failed := false
		s.eachChannel(targets, func(ch *listenChannel) {
			evs, err := ch.stream.Finalize()
			if err != nil {
				ch.failed = true
				return
			}
			if !s.handle(ch, evs, true) {
				s.emptyFinal(ch, true)
			}
		})
		for _, ch := range targets {
			failed = failed || ch.failed
		}
		if failed {
			return websocket.StatusInternalError, "NET-0000: the recogniser failed", true
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

// channelRange says which channels a stream of n has.
func channelRange(n int) string {
	if n == 1 {
		return "one channel, 0"
	}
	return fmt.Sprintf("%d channels, 0 to %d", n, n-1)
}

// finish ends the stream cleanly: every channel's last results, then
// Metadata.
func (s *listenSession) finish() (websocket.StatusCode, string) {
	var tail [][]int16
	if samples, err := s.audio.Flush(); err == nil {
		if s.split == nil {
			if info, ok := s.audio.Info(); ok {
				// Should begin refuse the audio now, its tail is dropped.
				_ = s.begin(info)
			}
		}
		if s.split != nil {
			tail = s.split.flush(samples)
		}
	}
	s.noteDecoded(tail)
	s.eachChannel(s.chans, func(ch *listenChannel) {
		if tail != nil {
			s.feed(ch, tail[ch.index])
		}
		evs, err := ch.stream.End()
		if err == nil {
			s.handle(ch, evs, false)
		}
	})
	s.sendMetadata()
	return websocket.StatusNormalClosure, ""
}

// pushAudio decodes a frame and feeds the recognisers.
func (s *listenSession) pushAudio(data []byte) error {
	s.bytesIn += int64(len(data))
	s.sum.Write(data)
	samples, err := s.audio.Decode(data)
	if err != nil {
		if errors.Is(err, audio.ErrUndecodable) || errors.Is(err, audio.ErrTooLarge) {
			return errors.New("the audio could not be decoded; check that encoding and sample_rate match what is sent")
		}
		return err
	}
	if s.split == nil {
		info, ok := s.audio.Info()
		if !ok {
			return nil // the container's header is not complete yet
		}
		if err := s.begin(info); err != nil {
			return err
		}
	}
	pcm := s.split.split(samples)
	s.noteDecoded(pcm)
	s.eachChannel(s.chans, func(ch *listenChannel) { s.feed(ch, pcm[ch.index]) })
	return nil
}

// begin prepares the session for the audio once its format is known: the
// container is checked against encoding, a multichannel stream of
// containerized audio gets a recogniser for each of its channels, and the
// channel splitter is made.
func (s *listenSession) begin(info audio.Info) error {
	if want, ok := declaredContainer(s.plan.opts.Encoding); ok && info.Container != want {
		return fmt.Errorf("encoding=%s was declared but the audio is %s", s.plan.opts.Encoding, info.Container)
	}
	apart := s.plan.opts.Multichannel && info.Channels > 1
	if apart && len(s.chans) < info.Channels {
		if err := s.addChannels(info.Channels); err != nil {
			return err
		}
	}
	sp, err := newChannelSplitter(info, apart)
	if err != nil {
		return err
	}
	s.split = sp
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

// noteDecoded records that audio reached the recognisers.
func (s *listenSession) noteDecoded(pcm [][]int16) {
	if len(pcm) > 0 && len(pcm[0]) > 0 {
		s.decoded = true
	}
}

// eachChannel runs f for each of targets, on goroutines of their own when
// there are several, so that the channels are recognised in parallel;
// then it sends the messages they made, channel after channel. f touches
// only its channel and what the session never changes.
func (s *listenSession) eachChannel(targets []*listenChannel, f func(ch *listenChannel)) {
	if len(targets) == 1 {
		f(targets[0])
	} else {
		var wg sync.WaitGroup
		for _, ch := range targets {
			wg.Go(func() { f(ch) })
		}
		wg.Wait()
	}
	for _, ch := range targets {
		for _, b := range ch.queued {
			s.out <- outFrame{data: b}
		}
		clear(ch.queued)
		ch.queued = ch.queued[:0]
	}
}

// feed passes 16 kHz audio of a channel to its recogniser and queues what
// it produces.
func (s *listenSession) feed(ch *listenChannel, pcm []int16) {
	if len(pcm) == 0 {
		return
	}
	if ch.online != nil {
		ch.pcm = append(ch.pcm, pcm...)
	}
	ch.samples += int64(len(pcm))
	evs, err := ch.stream.Push(pcm)
	if err != nil {
		s.e.log.Error("recogniser failed", "request_id", s.rid, "channel", ch.index, "err", err)
		return
	}
	s.handle(ch, evs, false)
	s.checkUtteranceEnd(ch)
	ch.trimPCM()
}

// handle turns a channel's recogniser events into messages. It reports
// whether a final was made. With fromFinalize the events answer a
// Finalize: the last final among them is marked from_finalize, whatever
// ended its utterance (the audio Finalize flushes may itself hold the
// silence that ends it).
func (s *listenSession) handle(ch *listenChannel, evs []sphinx.Event, fromFinalize bool) bool {
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
			ch.inSpeech = true
			if s.plan.opts.VADEvents {
				ts := min(ev.Result.Start+preSpeechSeconds, ev.At)
				s.queue(ch, &api.SpeechStarted{Type: api.TypeSpeechStarted, Channel: s.channelIndex(ch), Timestamp: round4(ts)})
			}
		case sphinx.Partial:
			if s.plan.opts.InterimResults {
				s.sendInterim(ch, ev)
			}
		case sphinx.Final:
			ch.inSpeech = false
			s.sendFinal(ch, ev, i == lastFinal)
			sentFinal = true
		}
	}
	return sentFinal
}

func (s *listenSession) sendInterim(ch *listenChannel, ev sphinx.Event) {
	words, _ := wordsOf([]sphinx.Result{ev.Result})
	for i := range words {
		// The recogniser computes word posteriors only for finals.
		words[i].Confidence = 0
	}
	sh := s.plan.shape(words, nil, false)
	sh.alt.Confidence = 0
	if len(words) > 0 {
		ch.noteWords(words[len(words)-1].End)
	}
	s.queue(ch, s.results(ch, sh.alt, nil, ch.cursor, ev.At, false, false, false))
}

func (s *listenSession) sendFinal(ch *listenChannel, ev sphinx.Event, fromFinalize bool) {
	words, boundaries := wordsOf([]sphinx.Result{ev.Result})
	if ch.online != nil && len(words) > 0 {
		from := max(int64(ev.Result.Start*sphinx.SampleRate)-ch.pcmStart, 0)
		to := min(int64(ev.Result.End*sphinx.SampleRate)-ch.pcmStart, int64(len(ch.pcm)))
		if from < to {
			labelled, err := ch.online.Label(context.Background(), float64(ch.pcmStart+from)/sphinx.SampleRate,
				diarize.FromInt16(ch.pcm[from:to]), words)
			if err == nil {
				words = labelled
			}
		}
	}
	sh := s.plan.shape(words, boundaries, false)
	if len(words) > 0 {
		ch.noteWords(words[len(words)-1].End)
	}
	end := max(ev.Result.End, ch.cursor)
	speechFinal := s.plan.speechFinal && ev.Result.Reason == sphinx.EndSilence
	s.queue(ch, s.results(ch, sh.alt, sh.entities, ch.cursor, end, true, speechFinal, fromFinalize))
	ch.cursor = end
}

// emptyFinal answers a Finalize that found no speech to finish.
func (s *listenSession) emptyFinal(ch *listenChannel, fromFinalize bool) {
	at := float64(ch.samples) / sphinx.SampleRate
	var ents []api.Entity
	if s.plan.opts.DetectEntities {
		ents = []api.Entity{}
	}
	s.queue(ch, s.results(ch, api.Alternative{Words: []api.Word{}}, ents, ch.cursor, max(at, ch.cursor), true, false, fromFinalize))
	ch.cursor = max(at, ch.cursor)
}

// channelIndex is the [channel, channels] pair of the messages about ch.
func (s *listenSession) channelIndex(ch *listenChannel) []int {
	return []int{ch.index, len(s.chans)}
}

func (s *listenSession) results(ch *listenChannel, alt api.Alternative, ents []api.Entity, start, end float64, final, speechFinal, fromFinalize bool) *api.Results {
	return &api.Results{
		Type:         api.TypeResults,
		ChannelIndex: s.channelIndex(ch),
		Duration:     round4(max(end-start, 0)),
		Start:        round4(start),
		IsFinal:      final,
		SpeechFinal:  speechFinal,
		FromFinalize: fromFinalize,
		Channel:      api.ResultsChannel{Alternatives: []api.Alternative{alt}},
		Metadata: api.ResultsMetadata{
			RequestID: s.rid,
			ModelInfo: listenModelFor(s.plan.opts.Model).info(),
			ModelUUID: listenModelFor(s.plan.opts.Model).uuid,
			Extra:     s.plan.opts.Extra,
		},
		Entities: ents,
	}
}

// noteWords records the end of the latest word, for UtteranceEnd.
func (ch *listenChannel) noteWords(end float64) {
	if end > ch.lastWordEnd {
		ch.lastWordEnd = end
		ch.utteranceEnd = false
		ch.sawWords = true
	}
}

// checkUtteranceEnd queues UtteranceEnd once a gap of utterance_end_ms
// follows the channel's last word.
func (s *listenSession) checkUtteranceEnd(ch *listenChannel) {
	ms := s.plan.opts.UtteranceEndMs
	if ms <= 0 || !ch.sawWords || ch.utteranceEnd {
		return
	}
	now := float64(ch.samples) / sphinx.SampleRate
	if now-ch.lastWordEnd >= float64(ms)/1000 && !ch.inSpeech {
		ch.utteranceEnd = true
		s.queue(ch, &api.UtteranceEnd{Type: api.TypeUtteranceEnd, Channel: s.channelIndex(ch), LastWordEnd: round4(ch.lastWordEnd)})
	}
}

// trimPCM drops audio diarization no longer needs: everything before the
// last final, and long silences outside speech.
func (ch *listenChannel) trimPCM() {
	if ch.online == nil {
		return
	}
	keepFrom := int64(ch.cursor * sphinx.SampleRate)
	if !ch.inSpeech {
		// Outside speech, keep only what the detector may still include
		// as pre-speech audio of the next utterance, with a margin.
		keepFrom = max(keepFrom, ch.samples-sphinx.SampleRate)
	}
	if drop := keepFrom - ch.pcmStart; drop > 0 && drop <= int64(len(ch.pcm)) {
		ch.pcm = append(ch.pcm[:0], ch.pcm[drop:]...)
		ch.pcmStart = keepFrom
	}
}

func (s *listenSession) sendMetadata() {
	md := &api.Metadata{
		Type:           api.TypeMetadata,
		TransactionKey: transactionKey,
		RequestID:      s.rid,
		SHA256:         hex.EncodeToString(s.sum.Sum(nil)),
		Created:        s.created.UTC().Format(createdLayout),
		// Every channel has had the same audio time.
		Duration: round6(float64(s.chans[0].samples) / sphinx.SampleRate),
		Channels: 0,
		Extra:    s.plan.opts.Extra,
	}
	if s.decoded {
		md.Channels = 1
		if info, ok := s.audio.Info(); ok {
			md.Channels = info.Channels
		}
		m := listenModelFor(s.plan.opts.Model)
		md.Models = []string{m.uuid}
		md.ModelInfo = map[string]api.ModelInfo{m.uuid: m.info()}
	}
	s.send(md)
}

// queue makes a message about ch, for the processor to send after the
// channel's work (see eachChannel).
func (s *listenSession) queue(ch *listenChannel, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		s.e.log.Error("encode message", "err", err)
		return
	}
	ch.queued = append(ch.queued, b)
}

// send queues a message for the writer. Only the processor calls it.
func (s *listenSession) send(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		s.e.log.Error("encode message", "err", err)
		return
	}
	s.out <- outFrame{data: b}
}
