package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/sayable"
	"github.com/earshot-app/earshot/internal/textseg"
)

// Warning codes of /v2/speak beyond those api names.
const (
	// codeConfigureRefused: a Configure whose speed is not allowed; the
	// speed in force stays.
	codeConfigureRefused = "CONFIGURE_REFUSED"
	codeTooManyCharsTurn = "BIG-0000"
)

// handleSpeechStream serves the /v2/speak WebSocket (turn-based
// synthesis with the flux voices). Any batch-only or unknown parameter
// fails the handshake.
func (e *Engine) handleSpeechStream(w http.ResponseWriter, r *http.Request) {
	sock, plan, done, ok := e.acceptSpeak(w, r, e.planSpeakV2)
	if !ok {
		return
	}
	defer done()
	s := &speechStream{speakSocket: sock, plan: plan, q: newJobQueue[speechJob](), speed: plan.params.Speed}
	defer s.q.stop()
	_, version := voiceArch(plan.voice)
	first := api.SpeechConnected{RequestID: sock.rid, ModelName: plan.voice.Name, ModelVersion: version, ModelUUIDs: []string{voiceUUID(plan.voice.Name)}}
	s.serve(e.ctx, s.withWorker(first, s.work, streamHandler{
		text: s.control,
		audio: func(ctx context.Context, _ []byte) (websocket.StatusCode, string, bool) {
			code, reason := s.fail(ctx, websocket.StatusUnsupportedData, codeMessageType, msgBinaryFromUser)
			return code, reason, true
		},
	}))
	// serve has waited for the loop, the only writer of the totals.
	noteChars(r.Context(), s.totalBillable, plan.voice.Name)
}

// speechTurn is one turn of a /v2/speak stream. Its fields are each
// owned by one goroutine, as marked; interrupted is shared.
type speechTurn struct {
	id          string
	interrupted atomic.Bool

	// Processor: the turn's text as received (markup stripped), how much
	// of it was handed to the worker, and the counts. Final once the turn
	// is flushed or interrupted; the worker reads input and billable
	// after the final job, which the queue's lock orders after them.
	text      string
	committed int
	input     int
	billable  int

	// Worker.
	startQueued bool
	samples     int
	// done is guarded by the job queue's lock: the turn's Flushed and
	// SpeechMetadata were queued; it can no longer be interrupted.
	done bool

	// Writer: what the client has really been sent.
	startWritten bool
	sentEnd      int // text[:sentEnd] is spoken by the audio written
}

// speechJob is a span of a turn to synthesise: the turn's text from
// offset, len(text) bytes. final marks the last span of a flushed turn.
type speechJob struct {
	turn   *speechTurn
	text   string
	offset int
	final  bool
}

// speechStream is one /v2/speak WebSocket. The processor cuts the turn's
// text at sentence ends as it arrives and hands each complete sentence to
// the worker at once, so audio starts before the Flush and no word is
// ever cut; Flush hands over the rest. Interrupt cancels the synthesis,
// drops the audio not yet written and answers from what the writer
// really sent.
type speechStream struct {
	*speakSocket
	plan *speakPlan
	q    *jobQueue[speechJob]

	speed float64 // guarded by q's lock: the speed for the next job

	// Processor state.
	open          *speechTurn   // the turn taking text, nil between turns
	turns         []*speechTurn // turns not known to be finished
	totalInput    int
	totalBillable int

	// Writer state.
	samplesWritten int
}

func (s *speechStream) fail(ctx context.Context, code websocket.StatusCode, errCode, desc string) (websocket.StatusCode, string) {
	s.sendMsg(ctx, api.SpeechError{Code: errCode, Description: desc})
	return code, errCode + ": " + desc
}

func (s *speechStream) warn(ctx context.Context, code, desc string) {
	s.sendMsg(ctx, api.SpeechWarning{Code: code, Description: desc})
}

// control handles one text message; done reports that the stream ends.
func (s *speechStream) control(ctx context.Context, data []byte) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeSpeechClientMessage(data)
	if err != nil {
		code, reason := s.fail(ctx, websocket.StatusPolicyViolation, codeUnrecognized, "The message is not a valid Speak, Flush, Interrupt, Configure or Close message.")
		return code, reason, true
	}
	switch m := m.(type) {
	case *api.SpeakText:
		if code, reason, done := s.speakText(ctx, m.Text); done {
			return code, reason, true
		}
	case *api.SpeakFlush:
		if s.open == nil {
			s.warn(ctx, api.CodeNoActiveSpeech, "Flush arrived while no speech was in progress.")
			break
		}
		s.commit(s.open, true)
		s.open = nil
	case *api.SpeechInterrupt:
		s.interrupt(ctx)
	case *api.SpeechConfigure:
		if err := m.Validate(); err != nil {
			var oe *api.OptionError
			desc := err.Error()
			if errors.As(err, &oe) {
				desc = oe.Reason
			}
			s.warn(ctx, codeConfigureRefused, "Configure was not applied: "+desc+".")
			break
		}
		speed := math.Round(m.Speed/api.SpeakV2SpeedStep) / 20
		s.q.locked(func() { s.speed = speed })
	case *api.SpeakClose:
		if s.open != nil {
			s.commit(s.open, true)
			s.open = nil
		}
		s.q.close()
		code, reason, ok := s.waitWorker(ctx)
		if ok {
			input, billable := s.totalInput, s.totalBillable
			s.queue(ctx, outFrame{build: func() [][]byte {
				return [][]byte{s.encode(api.SessionMetadata{
					TotalAudioDurationMS:        s.ms(s.samplesWritten),
					TotalInputCharacterCount:    input,
					TotalBillableCharacterCount: billable,
				})}
			}})
		}
		return code, reason, true
	default:
		code, reason := s.fail(ctx, websocket.StatusPolicyViolation, codeUnrecognized,
			fmt.Sprintf("Unknown message type %q: this stream takes Speak, Flush, Interrupt, Configure and Close.", m.MessageType()))
		return code, reason, true
	}
	return 0, "", false
}

// ms converts output samples to milliseconds.
func (s *speechStream) ms(samples int) int {
	return int(math.Round(float64(samples) * 1000 / float64(s.plan.rate)))
}

// speakText adds text to the turn in progress, opening one if needed, and
// hands every sentence it completes to the worker.
func (s *speechStream) speakText(ctx context.Context, text string) (websocket.StatusCode, string, bool) {
	if text == "" {
		return 0, "", false // joining nothing changes nothing
	}
	plain, stripped := tts.StripMarkup(text)
	if stripped {
		s.warn(ctx, api.CodeInputMarkupStripped, "Markup such as SSML was removed from the text; plain text is expected.")
	}
	if rep := sayable.Check(s.plan.voice.Language, plain); rep.Nothing() {
		s.warn(ctx, api.CodeTextSkipped, nothingToSay(s.plan.voice, rep))
	} else if len(rep.Skipped) > 0 {
		s.warn(ctx, api.CodeTextSkipped, skippedText(s.plan.voice, rep))
	}
	if s.open == nil {
		if plain == "" {
			return 0, "", false
		}
		s.open = &speechTurn{id: newSpeechID()}
		s.q.locked(func() {
			s.turns = slices.DeleteFunc(s.turns, func(t *speechTurn) bool { return t.done || t.interrupted.Load() })
		})
		s.turns = append(s.turns, s.open)
	}
	t := s.open
	in, n := utf8.RuneCountInString(text), utf8.RuneCountInString(plain)
	if utf8.RuneCountInString(t.text)+n > maxFluxChars {
		code, reason := s.fail(ctx, websocket.StatusMessageTooBig, codeTooManyCharsTurn,
			fmt.Sprintf("A turn takes at most %d characters; Flush to end the turn and start another.", maxFluxChars))
		return code, reason, true
	}
	t.text += plain
	t.input += in
	t.billable += n
	s.totalInput += in
	s.totalBillable += n
	s.commit(t, false)
	return 0, "", false
}

// commit hands the turn's complete sentences (all of its text when final)
// to the worker.
func (s *speechStream) commit(t *speechTurn, final bool) {
	rest := t.text[t.committed:]
	cut := len(rest)
	if !final {
		cut = textseg.Complete(rest)
		if cut == 0 {
			return
		}
	}
	s.q.push(speechJob{turn: t, text: rest[:cut], offset: t.committed, final: final})
	t.committed += cut
}

// interrupt ends every unfinished turn at once: the worker's synthesis is
// cancelled, the audio waiting for the writer is dropped, and each turn is
// answered SpeechInterrupted from the audio really written.
func (s *speechStream) interrupt(ctx context.Context) {
	var hit []*speechTurn
	s.q.reset(func() {
		for _, t := range s.turns {
			if !t.done && !t.interrupted.Load() {
				t.interrupted.Store(true)
				hit = append(hit, t)
			}
		}
	})
	s.turns = s.turns[:0]
	s.open = nil
	if len(hit) == 0 {
		s.warn(ctx, api.CodeNoActiveSpeech, "Interrupt arrived while no speech was in progress.")
		return
	}
	for _, t := range hit {
		text := t.text
		s.queue(ctx, outFrame{build: func() [][]byte {
			var msgs [][]byte
			if !t.startWritten {
				t.startWritten = true
				msgs = append(msgs, s.encode(api.SpeechTurnStarted{SpeechID: t.id}))
			}
			end := min(t.sentEnd, len(text))
			return append(msgs, s.encode(api.SpeechInterrupted{SpeechID: t.id, TextSpoken: text[:end], TextRemaining: text[end:]}))
		}})
	}
}

// work is the worker: it synthesises the jobs in order.
func (s *speechStream) work(ctx context.Context) {
	for {
		j, jctx, ok := s.q.next(ctx)
		if !ok {
			return
		}
		s.speak(ctx, jctx, j)
	}
}

// speak streams the audio of one span; after the last span of a turn it
// sends Flushed and SpeechMetadata.
func (s *speechStream) speak(ctx, jctx context.Context, j speechJob) {
	t := j.turn
	if t.interrupted.Load() {
		return
	}
	ctx, cancel := jobContext(ctx, jctx)
	defer cancel()
	stale := t.interrupted.Load
	start := func() {
		if !t.startQueued {
			t.startQueued = true
			s.queue(ctx, outFrame{data: s.encode(api.SpeechTurnStarted{SpeechID: t.id}), stale: stale, written: func() { t.startWritten = true }})
		}
	}
	if strings.TrimSpace(j.text) != "" {
		p := s.plan.params
		s.q.locked(func() { p.Speed = s.speed })
		raw, err := newRawEncoder(s.plan.voice, s.plan.stream, s.plan.rate)
		if err == nil {
			emit := func(f []float32, end int) error {
				b, n := raw.frame(f)
				if n == 0 {
					return nil
				}
				start()
				t.samples += n
				if !s.queue(ctx, outFrame{binary: true, data: b, stale: stale, written: func() {
					t.sentEnd = max(t.sentEnd, end)
					s.samplesWritten += n
				}}) {
					return ctx.Err()
				}
				return nil
			}
			// Left out, what the voice does not say; offsets stay the text's.
			err = s.e.tts.Synthesize(ctx, s.plan.voice, sayable.Strip(s.plan.voice.Language, j.text), p, func(c tts.Chunk) error {
				return emit(raw.pcm.convert(c.PCM), j.offset+c.TextEnd)
			})
			if err == nil {
				err = emit(raw.pcm.flush(), j.offset+len(j.text))
			}
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, tts.ErrClosed) {
				return
			}
			s.e.log.Error("synthesis failed", "request_id", s.rid, "err", err)
			s.queue(ctx, outFrame{data: s.encode(api.SpeechWarning{Code: codeInternal, Description: msgSynthesisFailed}), stale: stale})
		}
	}
	if !j.final {
		return
	}
	start()
	s.q.locked(func() {
		if t.interrupted.Load() {
			return
		}
		t.done = true
		s.queue(ctx, outFrame{data: s.encode(api.SpeechFlushed{SpeechID: t.id})})
		s.queue(ctx, outFrame{data: s.encode(api.SpeechMetadata{
			SpeechID:               t.id,
			AudioDurationMS:        s.ms(t.samples),
			InputCharacterCount:    t.input,
			BillableCharacterCount: t.billable,
		})})
	})
}

// newSpeechID returns a speech_id as the service makes them: "dg_sp_" and
// 12 hex digits.
func newSpeechID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "dg_sp_" + hex.EncodeToString(b)
}
