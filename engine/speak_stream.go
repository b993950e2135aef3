package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/sayable"
)

// Limits of the /v1/speak WebSocket. The service publishes the flush
// limit (api.MaxFlushesPerMinute); the character submission limit is the
// engine's own, a token bucket: speakCharBurst characters at once, then
// speakCharRate a second. Past it a Speak is refused with a Warning
// DATA-0001 (its text is not buffered), and the client slows down.
const (
	speakCharBurst = 5000
	speakCharRate  = 500
	// maxSpeakBuffer is how many characters may wait for a Flush; past it
	// the stream fails with BIG-0001, as the service does with too many
	// characters.
	maxSpeakBuffer = 20000
	flushWindow    = time.Minute
)

// Codes and messages of the /v1/speak WebSocket.
const (
	codeMessageType    = "MESSAGE-0000"
	codeUnrecognized   = "DATA-0000"
	codeTooManyChars   = "BIG-0001"
	codeInternal       = "NET-0000"
	msgExcessiveFlush  = "Rate limit exceeded for flushes. Please try again later."
	msgRateTooHigh     = "Character submission rate too high: the text of this Speak was not accepted. Slow down and send it again."
	msgBinaryFromUser  = "Binary frames are not accepted: send text in Speak messages."
	msgSynthesisFailed = "Synthesis failed."
)

// handleSpeakStream serves the /v1/speak WebSocket. Every check happens
// before the upgrade, so a refused request gets an HTTP status and an
// error body: only linear16, mulaw and alaw stream.
func (e *Engine) handleSpeakStream(w http.ResponseWriter, r *http.Request) {
	sock, plan, done, ok := e.acceptSpeak(w, r, e.planSpeak)
	if !ok {
		return
	}
	defer done()
	s := &speakStream{speakSocket: sock, plan: plan, q: newJobQueue[speakJob]()}
	defer s.q.stop()
	_, version := voiceArch(plan.voice)
	first := api.SpeakMetadata{RequestID: sock.rid, ModelName: plan.voice.Name, ModelVersion: version, ModelUUID: voiceUUID(plan.voice.Name)}
	s.serve(e.ctx, s.withWorker(first, s.work, streamHandler{
		text: func(ctx context.Context, data []byte) (websocket.StatusCode, string, bool) {
			return s.control(ctx, data, e.clock.Now())
		},
		audio: func(ctx context.Context, _ []byte) (websocket.StatusCode, string, bool) {
			return s.fail(ctx, websocket.StatusUnsupportedData, codeMessageType, msgBinaryFromUser)
		},
	}))
	// serve has waited for the loop, the only writer of accepted.
	noteChars(r.Context(), s.accepted, plan.voice.Name)
}

// speakJob is the text of one Flush (or of the Close) to synthesise.
type speakJob struct {
	text  string // plain text
	seq   int    // the Flush's sequence_id; -1 for the text left at Close
	epoch uint64 // the Clear epoch the job belongs to
}

// speakStream is one /v1/speak WebSocket. Speak appends to a buffer;
// Flush hands the buffer to the worker, which streams its audio and then
// Flushed; Clear drops the buffer, the job in progress, the jobs waiting
// and the audio not yet written (every frame carries the Clear epoch it
// was made in, and the writer drops those of an older one).
type speakStream struct {
	*speakSocket
	plan  *speakPlan
	q     *jobQueue[speakJob]
	epoch atomic.Uint64 // bumped by Clear

	// Processor state.
	buf        strings.Builder
	bufChars   int
	flushes    int         // Flush messages accepted: the next sequence_id
	clears     int         // Clear messages: the next sequence_id
	flushTimes []time.Time // accepted Flushes within flushWindow
	tokens     float64     // characters the client may still send at once
	lastSpeak  time.Time
	accepted   int // characters accepted for synthesis, for the usage
}

// control handles one text message; done reports that the stream ends.
func (s *speakStream) control(ctx context.Context, data []byte, now time.Time) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeSpeakClientMessage(data)
	if err != nil {
		return s.fail(ctx, websocket.StatusPolicyViolation, codeUnrecognized, "The message is not a Speak, Flush, Clear or Close message.")
	}
	switch m := m.(type) {
	case *api.SpeakText:
		return s.speakText(ctx, m.Text, now)
	case *api.SpeakFlush:
		s.flush(ctx, now)
	case *api.SpeakClear:
		s.q.reset(func() { s.epoch.Add(1) })
		s.buf.Reset()
		s.bufChars = 0
		s.sendMsg(ctx, api.Cleared{SequenceID: s.clears})
		s.clears++
	case *api.SpeakClose:
		if s.bufChars > 0 {
			s.q.push(speakJob{text: s.buf.String(), seq: -1, epoch: s.epoch.Load()})
			s.buf.Reset()
			s.bufChars = 0
		}
		s.q.close()
		code, reason, _ := s.waitWorker(ctx)
		return code, reason, true
	default:
		return s.fail(ctx, websocket.StatusPolicyViolation, codeUnrecognized, fmt.Sprintf("Unknown message type %q: this stream takes Speak, Flush, Clear and Close.", m.MessageType()))
	}
	return 0, "", false
}

// fail sends an Error and ends the stream with code.
func (s *speakStream) fail(ctx context.Context, code websocket.StatusCode, errCode, desc string) (websocket.StatusCode, string, bool) {
	s.sendMsg(ctx, api.StreamError{Type: api.TypeError, Code: errCode, Description: desc})
	return code, errCode + ": " + desc, true
}

// speakText buffers the text of a Speak message.
func (s *speakStream) speakText(ctx context.Context, text string, now time.Time) (websocket.StatusCode, string, bool) {
	if strings.TrimSpace(text) == "" {
		// The service answers 400; the stream goes on.
		s.sendMsg(ctx, api.StreamError{Type: api.TypeError, Code: api.CodeBadRequest, Description: api.MsgEmptyText})
		return 0, "", false
	}
	if plain, _ := tts.StripMarkup(text); strings.TrimSpace(plain) != "" {
		switch rep := sayable.Check(s.plan.voice.Language, plain); {
		case rep.Nothing():
			// As for empty text: 400, and the stream goes on.
			s.sendMsg(ctx, api.StreamError{Type: api.TypeError, Code: api.CodeBadRequest, Description: nothingToSay(s.plan.voice, rep)})
			return 0, "", false
		case len(rep.Skipped) > 0:
			s.sendMsg(ctx, api.SpeakWarning{Code: api.CodeTextSkipped, Description: skippedText(s.plan.voice, rep)})
		}
	}
	n := utf8.RuneCountInString(text)
	if !s.admit(n, now) {
		s.sendMsg(ctx, api.SpeakWarning{Code: api.CodeRateTooHigh, Description: msgRateTooHigh})
		return 0, "", false
	}
	if s.bufChars+n > maxSpeakBuffer {
		return s.fail(ctx, websocket.StatusMessageTooBig, codeTooManyChars,
			fmt.Sprintf("More than %d characters are waiting for a Flush.", maxSpeakBuffer))
	}
	if s.bufChars > 0 && !endsInSpace(s.buf.String()) && !startsWithSpace(text) {
		// Buffered texts are read as one; keep words apart.
		s.buf.WriteByte(' ')
	}
	s.buf.WriteString(text)
	s.bufChars += n
	s.accepted += n
	return 0, "", false
}

func endsInSpace(s string) bool     { return s != "" && strings.ContainsRune(" \t\n\r", rune(s[len(s)-1])) }
func startsWithSpace(s string) bool { return s != "" && strings.ContainsRune(" \t\n\r", rune(s[0])) }

// admit applies the character submission limit: a token bucket that may
// go into debt by one message, so a message longer than the burst is not
// refused for ever.
func (s *speakStream) admit(n int, now time.Time) bool {
	if s.lastSpeak.IsZero() {
		s.tokens = speakCharBurst
	} else {
		s.tokens = min(speakCharBurst, s.tokens+now.Sub(s.lastSpeak).Seconds()*speakCharRate)
	}
	s.lastSpeak = now
	if s.tokens < 0 {
		return false
	}
	s.tokens -= float64(n)
	return true
}

// flush hands the buffer to the worker, unless Flushes come too often.
func (s *speakStream) flush(ctx context.Context, now time.Time) {
	cut := 0
	for cut < len(s.flushTimes) && now.Sub(s.flushTimes[cut]) >= flushWindow {
		cut++
	}
	s.flushTimes = s.flushTimes[cut:]
	if len(s.flushTimes) >= api.MaxFlushesPerMinute {
		s.sendMsg(ctx, api.SpeakWarning{Code: api.CodeExcessiveFlush, Description: msgExcessiveFlush})
		return
	}
	s.flushTimes = append(s.flushTimes, now)
	s.q.push(speakJob{text: s.buf.String(), seq: s.flushes, epoch: s.epoch.Load()})
	s.flushes++
	s.buf.Reset()
	s.bufChars = 0
}

// work is the worker: it synthesises the jobs in order.
func (s *speakStream) work(ctx context.Context) {
	for {
		j, jctx, ok := s.q.next(ctx)
		if !ok {
			return
		}
		s.speak(ctx, jctx, j)
	}
}

// speak streams the audio of one job, then its Flushed.
func (s *speakStream) speak(ctx, jctx context.Context, j speakJob) {
	ctx, cancel := jobContext(ctx, jctx)
	defer cancel()
	stale := func() bool { return s.epoch.Load() != j.epoch }
	plain, _ := tts.StripMarkup(j.text)
	plain = sayable.Strip(s.plan.voice.Language, plain)
	if strings.TrimSpace(plain) != "" {
		raw, err := newRawEncoder(s.plan.voice, s.plan.stream, s.plan.rate)
		if err == nil {
			emit := func(f []float32) error {
				b, _ := raw.frame(f)
				if b == nil {
					return nil
				}
				if !s.queue(ctx, outFrame{binary: true, data: b, stale: stale}) {
					return ctx.Err()
				}
				return nil
			}
			err = s.e.tts.Synthesize(ctx, s.plan.voice, plain, s.plan.params, func(c tts.Chunk) error { return emit(raw.pcm.convert(c.PCM)) })
			if err == nil {
				err = emit(raw.pcm.flush())
			}
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, tts.ErrClosed) {
				return
			}
			s.e.log.Error("synthesis failed", "request_id", s.rid, "err", err)
			s.queue(ctx, outFrame{data: s.encode(api.StreamError{Type: api.TypeError, Code: codeInternal, Description: msgSynthesisFailed}), stale: stale})
		}
	}
	if j.seq >= 0 {
		s.queue(ctx, outFrame{data: s.encode(api.Flushed{SequenceID: j.seq}), stale: stale})
	}
}
