package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/sayable"
)

// Text limits of the local engine's synthesis beyond those of the service.
const (
	// maxFluxChars is the longest text of one /v2/speak request, and of
	// one turn on the /v2/speak WebSocket (see api.MaxSpeakV2Chars).
	maxFluxChars = api.MaxSpeakV2Chars
	// maxSpeakBody bounds the JSON body of a synthesis request: the
	// longest text allowed, in the widest UTF-8, with room for escapes.
	maxSpeakBody = 64 << 10
	// callbackTimeout bounds the delivery of audio to a callback URL.
	callbackTimeout = 2 * time.Minute
)

// Headers of a synthesis answer, as the service spells them.
const (
	headerModelName = "dg-model-name"
	headerModelUUID = "dg-model-uuid"
	headerCharCount = "dg-char-count"
	// headerSpeakError is a trailer set when synthesis failed after the
	// audio had begun: the status was already sent.
	headerSpeakError = "dg-error"
)

// speakPlan is a synthesis request, checked and resolved.
type speakPlan struct {
	voice  tts.Voice
	params tts.Params
	// spec is the output format of a batch request.
	spec audio.EncodeSpec
	// stream and rate are the raw encoding and sample rate of a WebSocket.
	stream audio.Encoding
	rate   int
	// callback, when set, receives the audio of a batch request.
	callback       string
	callbackMethod string
}

// lookupVoice maps a model name the service's rules accepted to the local
// voice behind it; a name the engine does not serve is a plain 400.
func lookupVoice(model string) (tts.Voice, error) {
	name := strings.ToLower(model)
	if name == "" {
		name = api.DefaultSpeakModel
	}
	v, ok := tts.Lookup(name)
	if !ok {
		return tts.Voice{}, badRequest(fmt.Sprintf("No voice %q is served by the local engine; GET /v1/models lists its voices.", model))
	}
	return v, nil
}

// streamFormat resolves the raw encoding and sample rate of a WebSocket:
// linear16 at 24000 Hz by default, mu-law and A-law at 8000 Hz.
func streamFormat(encoding string, rate int) (audio.Encoding, int, error) {
	if encoding == "" {
		encoding = api.EncodingLinear16
	}
	enc, err := audio.ParseEncoding(encoding)
	if err != nil || enc == audio.EncodingNone {
		return audio.EncodingNone, 0, badRequest(fmt.Sprintf("encoding %q cannot be streamed; use linear16, mulaw or alaw", encoding))
	}
	if rate == 0 {
		rate = api.DefaultSpeakSampleRate
		if enc != audio.EncodingLinear16 {
			rate = 8000
		}
	}
	return enc, rate, nil
}

// batchSpec checks a batch output format against what the encoders make.
func batchSpec(spec audio.EncodeSpec) (audio.EncodeSpec, error) {
	n, err := spec.Normalize()
	if err != nil {
		reason := err.Error()
		var bad *audio.EncodeSpecError
		if errors.As(err, &bad) {
			reason = bad.Reason
		}
		return spec, badRequest("The local engine cannot produce this audio format: " + reason + ".")
	}
	return n, nil
}

// planSpeak reads and checks a /v1/speak query for a transport.
func (e *Engine) planSpeak(q url.Values, mode api.Mode) (*speakPlan, error) {
	o, unknown, err := api.ParseSpeakOptions(q)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		e.log.Debug("ignored unknown speak parameters", "params", unknown)
	}
	if err := o.Validate(mode); err != nil {
		return nil, err
	}
	v, err := lookupVoice(o.Model)
	if err != nil {
		return nil, err
	}
	p := &speakPlan{voice: v, params: tts.Params{Speed: o.Speed}, callback: o.Callback, callbackMethod: o.CallbackMethod}
	if mode == api.Streaming {
		p.stream, p.rate, err = streamFormat(o.Encoding, o.SampleRate)
		return p, err
	}
	p.spec, err = batchSpec(audio.EncodeSpec{Encoding: o.EffectiveEncoding(mode), Container: o.Container, SampleRate: o.SampleRate, BitRate: o.BitRate})
	return p, err
}

// planSpeakV2 reads and checks a /v2/speak query for a transport. On the
// WebSocket, api.ParseSpeakV2Options refuses every batch-only and unknown
// parameter, which fails the handshake.
func (e *Engine) planSpeakV2(q url.Values, mode api.Mode) (*speakPlan, error) {
	o, unknown, err := api.ParseSpeakV2Options(q, mode)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		e.log.Debug("ignored unknown speak parameters", "params", unknown)
	}
	v, err := lookupVoice(o.Model)
	if err != nil {
		return nil, err
	}
	p := &speakPlan{voice: v, params: tts.Params{Speed: o.Speed}, callback: o.Callback, callbackMethod: o.CallbackMethod}
	if o.Expressivity != nil {
		p.params.Expressivity = *o.Expressivity
	}
	if mode == api.Streaming {
		p.stream, p.rate, err = streamFormat(o.Encoding, o.SampleRate)
		return p, err
	}
	enc := o.Encoding
	if enc == "" {
		enc = api.EncodingLinear16
	}
	p.spec, err = batchSpec(audio.EncodeSpec{Encoding: enc, Container: o.Container, SampleRate: o.SampleRate, BitRate: o.BitRate})
	return p, err
}

// readSpeakText reads the {"text": ...} body of a synthesis request.
func readSpeakText(r *http.Request) (string, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return "", badRequest(fmt.Sprintf("The body must be JSON ({\"text\": ...}), not %s.", ct))
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSpeakBody+1))
	if err != nil {
		return "", badRequest("The request body could not be read: " + err.Error())
	}
	if len(body) > maxSpeakBody {
		return "", &api.OptionError{Param: "text", Reason: fmt.Sprintf("The request body is larger than %d bytes.", maxSpeakBody),
			Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE"}
	}
	var req struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", badRequest("The body is not a JSON object with a text field: " + err.Error())
	}
	if req.Text == nil {
		return "", badRequest(api.MsgEmptyText)
	}
	return *req.Text, nil
}

// checkFluxText applies the text rules of /v2/speak: no empty text (400,
// as /v1/speak), at most maxFluxChars characters (422).
func checkFluxText(text string) error {
	if strings.TrimSpace(text) == "" {
		return badRequest(api.MsgEmptyText)
	}
	if n := utf8.RuneCountInString(text); n > maxFluxChars {
		return &api.OptionError{Param: "text", Reason: fmt.Sprintf("text of %d characters is longer than the %d that the local engine takes in one /v2/speak request", n, maxFluxChars),
			Status: http.StatusUnprocessableEntity, Code: http.StatusText(http.StatusUnprocessableEntity)}
	}
	return nil
}

// nothingToSay says that a voice says none of a text's characters.
func nothingToSay(v tts.Voice, rep sayable.Report) string {
	return fmt.Sprintf("The voice %s speaks %s, and this text has nothing it can say: only %s.", v.Name, sayable.LanguageName(v.Language), rep)
}

// skippedText says which characters of a text a voice leaves out.
func skippedText(v tts.Voice, rep sayable.Report) string {
	return fmt.Sprintf("The voice %s (%s) does not say %s; it says the rest.", v.Name, sayable.LanguageName(v.Language), rep)
}

// handleSpeak serves POST /v1/speak.
func (e *Engine) handleSpeak(w http.ResponseWriter, r *http.Request) { e.serveSpeak(w, r, false) }

// handleSpeakV2 serves POST /v2/speak, the batch form of the turn-based
// voices.
func (e *Engine) handleSpeakV2(w http.ResponseWriter, r *http.Request) { e.serveSpeak(w, r, true) }

func (e *Engine) serveSpeak(w http.ResponseWriter, r *http.Request, v2 bool) {
	var plan *speakPlan
	var err error
	if v2 {
		plan, err = e.planSpeakV2(r.URL.Query(), api.Batch)
	} else {
		plan, err = e.planSpeak(r.URL.Query(), api.Batch)
	}
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	text, err := readSpeakText(r)
	if err == nil {
		if v2 {
			err = checkFluxText(text)
		} else {
			err = api.CheckSpeakText(plan.voice.Name, text)
		}
	}
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	plain, _ := tts.StripMarkup(text)
	if strings.TrimSpace(plain) == "" {
		writeOptionError(w, r, badRequest(api.MsgEmptyText))
		return
	}
	if rep := sayable.Check(plan.voice.Language, plain); rep.Nothing() {
		writeOptionError(w, r, badRequest(nothingToSay(plan.voice, rep)))
		return
	}
	plain = sayable.Strip(plan.voice.Language, plain)
	job := synthesis{synth: e.tts, voice: plan.voice, params: plan.params, spec: plan.spec, text: plain, chars: utf8.RuneCountInString(text)}
	if plan.callback != "" {
		e.acceptCallback(w, r, job, plan.callback, plan.callbackMethod)
		return
	}
	if !e.beginStream() {
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", reasonShutdown+".")
		return
	}
	defer e.streams.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(e.ctx, cancel)
	defer stop()

	rc := http.NewResponseController(w)
	started := false
	err = job.run(ctx, w, func(h http.Header) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.Header().Set("Trailer", headerSpeakError)
		w.WriteHeader(http.StatusOK)
		started = true
	}, func() error {
		return rc.Flush()
	})
	switch {
	case err == nil:
	case !started:
		e.log.Error("synthesis failed", "request_id", requestID(r.Context()), "err", err)
		writeError(w, r, http.StatusInternalServerError, "INTERNAL_SERVER_ERROR", "Synthesis failed.")
	default:
		if ctx.Err() == nil {
			e.log.Error("synthesis failed", "request_id", requestID(r.Context()), "err", err)
		}
		w.Header().Set(headerSpeakError, "synthesis stopped before the end of the text")
	}
}

// synthesis is one batch synthesis: text in, encoded audio out.
type synthesis struct {
	synth  *tts.Synthesizer
	voice  tts.Voice
	params tts.Params
	spec   audio.EncodeSpec
	text   string // plain text to speak
	chars  int    // characters received, the count billed
}

// headers returns the headers the service sends with the audio.
func (s synthesis) headers(contentType string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set(headerModelName, s.voice.Name)
	h.Set(headerModelUUID, voiceUUID(s.voice.Name))
	h.Set(headerCharCount, strconv.Itoa(s.chars))
	return h
}

// run synthesises the text into w. begin is called with the headers just
// before the first byte is written, and flush after every chunk of audio,
// so the audio leaves while later sentences are still being synthesised.
func (s synthesis) run(ctx context.Context, w io.Writer, begin func(http.Header), flush func() error) error {
	spec, err := s.spec.Normalize()
	if err != nil {
		return fmt.Errorf("speak: %w", err)
	}
	hw := &headedWriter{w: w, begin: func() { begin(s.headers(spec.ContentType())) }}
	enc, err := audio.NewEncoder(ctx, hw, spec)
	if err != nil {
		return fmt.Errorf("speak: %w", err)
	}
	out, err := newPCMOut(s.voice.NativeRate, enc.Spec().SampleRate)
	if err != nil {
		enc.Close()
		return fmt.Errorf("speak: %w", err)
	}
	var i16 []int16
	write := func(f []float32) error {
		i16 = audio.Float32ToInt16(i16[:0], f)
		if err := enc.Write(i16); err != nil {
			return err
		}
		if hw.started {
			return flush()
		}
		return nil
	}
	err = s.synth.Synthesize(ctx, s.voice, s.text, s.params, func(c tts.Chunk) error { return write(out.convert(c.PCM)) })
	if err == nil {
		err = write(out.flush())
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if err == nil && !hw.started {
		hw.start()
	}
	if err != nil {
		return fmt.Errorf("speak: %w", err)
	}
	return flush()
}

// headedWriter calls begin before the first byte is written.
type headedWriter struct {
	w       io.Writer
	begin   func()
	started bool
}

func (h *headedWriter) start() {
	if !h.started {
		h.started = true
		h.begin()
	}
}

func (h *headedWriter) Write(p []byte) (int, error) {
	h.start()
	return h.w.Write(p)
}

// pcmOut converts the voice's native-rate samples to the output rate.
// It is not safe for concurrent use.
type pcmOut struct {
	rs  *audio.Resampler // nil when the rates are equal
	in  []float32
	out []float32
}

func newPCMOut(from, to int) (*pcmOut, error) {
	p := &pcmOut{}
	if from != to {
		rs, err := audio.NewResampler(from, to, 1)
		if err != nil {
			return nil, fmt.Errorf("resample %d Hz to %d Hz: %w", from, to, err)
		}
		p.rs = rs
	}
	return p, nil
}

// convert returns samples at the output rate; the slice is reused by the
// next call.
func (p *pcmOut) convert(pcm []int16) []float32 {
	p.in = audio.Int16ToFloat32(p.in[:0], pcm)
	if p.rs == nil {
		return p.in
	}
	p.out = p.rs.Process(p.out[:0], p.in)
	return p.out
}

// flush returns the resampler's tail.
func (p *pcmOut) flush() []float32 {
	if p.rs == nil {
		return nil
	}
	p.out = p.rs.Flush(p.out[:0])
	return p.out
}

// callbackClient delivers callbacks; it keeps no idle connections, so no
// goroutine outlives a delivery.
var callbackClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}}

// acceptCallback answers a synthesis with a callback: {"request_id"} at
// once, then the audio is synthesised and sent to the callback URL by a
// goroutine the engine owns (Close waits for it). The delivery holds a
// place in the concurrency allowance until it ends.
func (e *Engine) acceptCallback(w http.ResponseWriter, r *http.Request, job synthesis, target, method string) {
	if method == "" {
		method = http.MethodPost
	}
	if !e.limit.acquire(weightRequest) {
		e.tooMany(w, r)
		return
	}
	if !e.beginStream() {
		e.limit.release(weightRequest)
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", reasonShutdown+".")
		return
	}
	rid := requestID(r.Context())
	writeJSON(w, http.StatusOK, api.CallbackAccepted{RequestID: rid})
	go func() {
		defer e.streams.Done()
		defer e.limit.release(weightRequest)
		ctx, cancel := context.WithTimeout(e.ctx, callbackTimeout)
		defer cancel()
		if err := e.deliver(ctx, job, target, method, rid); err != nil {
			e.log.Warn("callback not delivered", "request_id", rid, "err", err)
		}
	}()
}

// deliver synthesises job and sends the audio to the callback URL with
// the headers of a synchronous answer.
func (e *Engine) deliver(ctx context.Context, job synthesis, target, method, rid string) error {
	var buf bytes.Buffer
	var h http.Header
	if err := job.run(ctx, &buf, func(hd http.Header) { h = hd }, func() error { return nil }); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, target, &buf)
	if err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set(api.HeaderRequestID, rid)
	resp, err := callbackClient.Do(req)
	if err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("callback: %s answered %s", target, resp.Status)
	}
	return nil
}
