package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Speed and expressivity limits of /v2/speak. Speed moves in steps of
// SpeakV2SpeedStep; expressivity is a whole number, 0 being the voice's
// nominal delivery.
const (
	MinSpeakV2Speed     = 0.5
	MaxSpeakV2Speed     = 1.5
	SpeakV2SpeedStep    = 0.05
	MinExpressivity     = -2
	MaxExpressivity     = 2
	DefaultExpressivity = 0
)

// speedTolerance absorbs the binary rounding of decimal speeds such as
// 1.15, so a value a person typed is taken as the step it names.
const speedTolerance = 1e-6

// SpeakV2SampleRates are the sample rates /v2/speak produces.
var SpeakV2SampleRates = []int{8000, 16000, 24000, 32000, 44100, 48000}

// SpeakV2Options are the query parameters of /v2/speak (turn-based
// synthesis with flux voices), batch and streaming. A zero number or empty
// string is not sent; Expressivity is a pointer so that 0 can be asked for
// explicitly. Container, BitRate, Callback, CallbackMethod, Priority and
// the mp3, opus, flac and aac encodings are batch-only: the WebSocket
// fails the connection on any of them, so StreamQuery never sends them.
type SpeakV2Options struct {
	// Model is required: a flux-{voice}-{language} voice.
	Model string
	// Encoding is linear16 (the default), mulaw or alaw; batch also takes
	// mp3, opus, flac and aac.
	Encoding   string
	SampleRate int
	// Speed multiplies the speaking rate, 0.5 to 1.5 in steps of 0.05. A
	// stream can change it with Configure.
	Speed float64
	// Expressivity widens (positive) or flattens (negative) the delivery,
	// -2 to 2; nil leaves the default 0. It is fixed for the life of a
	// connection: Configure cannot change it.
	Expressivity *int

	// Batch only.
	Container      string
	BitRate        int
	Callback       string
	CallbackMethod string
	Priority       string

	Tag       []string
	MipOptOut bool
}

// speakV2StreamParams are the parameters the /v2/speak WebSocket takes;
// any other fails the connection. StreamQuery sends these and nothing else.
var speakV2StreamParams = []string{qModel, qEncoding, qSampleRate, qSpeed, qExpressivity, qTag, qMipOptOut}

// speakV2BatchOnlyParams are the parameters only the batch request takes.
var speakV2BatchOnlyParams = []string{qContainer, qBitRate, qCallback, qCallbackMethod, qPriority}

// Query returns the options as the URL query of a batch request: the
// parameters /v1/speak shares, the speed written as the step it names,
// and the expressivity.
func (o *SpeakV2Options) Query() url.Values {
	shared := SpeakOptions{Model: o.Model, Encoding: o.Encoding, Container: o.Container, SampleRate: o.SampleRate,
		BitRate: o.BitRate, Callback: o.Callback, CallbackMethod: o.CallbackMethod, Priority: o.Priority,
		Tag: o.Tag, MipOptOut: o.MipOptOut}
	q := shared.Query()
	if o.Speed != 0 {
		q.Set(qSpeed, FormatSpeakV2Speed(o.Speed))
	}
	if o.Expressivity != nil {
		q.Set(qExpressivity, strconv.Itoa(*o.Expressivity))
	}
	return q
}

// StreamQuery returns the options as the URL query of the WebSocket. It is
// built from the parameters the WebSocket takes, so no batch-only or
// unknown parameter can reach the handshake, which would fail it.
func (o *SpeakV2Options) StreamQuery() url.Values {
	return onlySpeakParams(o.Query(), speakV2StreamParams)
}

// FormatSpeakV2Speed writes a speed as the step it names, in its shortest
// decimal form: 1.05, 1.1, 0.5.
func FormatSpeakV2Speed(f float64) string {
	steps := math.Round(f / SpeakV2SpeedStep)
	if math.Abs(steps*SpeakV2SpeedStep-f) > speedTolerance {
		return formatSpeed(f)
	}
	return strconv.FormatFloat(steps/20, 'f', -1, 64)
}

// The steps of SpeakV2SpeedStep are counted in twentieths: steps/20 is the
// closest float64 to the decimal step, where steps*SpeakV2SpeedStep may
// not be (21*0.05 is 1.0500000000000003).

// CheckSpeakV2Speed applies the speed rule of /v2/speak: 0.5 to 1.5 in
// steps of 0.05.
func CheckSpeakV2Speed(speed float64) error {
	if !(speed >= MinSpeakV2Speed-speedTolerance && speed <= MaxSpeakV2Speed+speedTolerance) {
		return badParam(qSpeed, fmt.Sprintf("speed %s is out of range (%s to %s)", formatSpeed(speed), formatSpeed(MinSpeakV2Speed), formatSpeed(MaxSpeakV2Speed)))
	}
	steps := math.Round(speed / SpeakV2SpeedStep)
	if math.Abs(steps*SpeakV2SpeedStep-speed) > speedTolerance {
		return badParam(qSpeed, fmt.Sprintf("speed %s is not a step of %s; try %s", formatSpeed(speed), formatSpeed(SpeakV2SpeedStep), strconv.FormatFloat(steps/20, 'f', -1, 64)))
	}
	return nil
}

// CheckSpeakV2Model applies the specification's model rules of /v2/speak:
// the model is required and is a flux-{voice}-{language} voice; aura
// voices are served on /v1/speak only.
func CheckSpeakV2Model(model string) error {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return badParam(qModel, "model is required on /v2/speak: a flux-{voice}-{language} voice, for example flux-kit-en")
	case IsFluxVoice(m):
		return nil
	case m == "flux":
		return badParam(qModel, `model=flux is not a valid value: /v2/speak takes a flux-{voice}-{language} voice, for example flux-kit-en`)
	case IsTurnAwareModel(m):
		return badParam(qModel, fmt.Sprintf("%s is a transcription model, served on /v2/listen; /v2/speak takes a flux-{voice}-{language} voice", model))
	case strings.HasPrefix(m, "aura-"):
		return badParam(qModel, fmt.Sprintf("%s is not served on /v2/speak: aura voices are served on /v1/speak only", model))
	}
	return badParam(qModel, fmt.Sprintf("unknown voice %q; /v2/speak takes a flux-{voice}-{language} voice", model))
}

// Validate applies the rules the service enforces on /v2/speak options
// for the given transport. The *OptionError it returns carries the status
// and code the service answers with.
func (o *SpeakV2Options) Validate(mode Mode) error {
	if err := CheckSpeakV2Model(o.Model); err != nil {
		return err
	}
	if mode == Streaming {
		if set := o.batchOnlySet(); len(set) > 0 {
			return batchOnlyParam(set[0])
		}
	}
	enc := o.Encoding
	if enc == "" {
		enc = EncodingLinear16
	}
	if err := checkSpeakAudio(enc, o.Container, 0, o.BitRate, mode, SpeakV2SampleRates); err != nil {
		return err
	}
	if r := o.SampleRate; r != 0 {
		rates := SpeakV2SampleRates
		if enc == EncodingMulaw || enc == EncodingAlaw {
			rates = speakRatesG711
		}
		if !slices.Contains(rates, r) {
			return badParam(qSampleRate, fmt.Sprintf("sample_rate %d is not available for %s; use %s", r, enc, joinInts(rates)))
		}
	}
	if o.Speed != 0 {
		if err := CheckSpeakV2Speed(o.Speed); err != nil {
			return err
		}
	}
	if e := o.Expressivity; e != nil && (*e < MinExpressivity || *e > MaxExpressivity) {
		return badParam(qExpressivity, fmt.Sprintf("expressivity %d is out of range (%d to %d)", *e, MinExpressivity, MaxExpressivity))
	}
	return checkSpeakCallback(o.Callback, o.CallbackMethod, o.Priority, mode)
}

// CheckRequest applies Validate and, on top of it, the rules a careful
// client checks before a request leaves: callback_method and priority
// mean nothing without a callback.
func (o *SpeakV2Options) CheckRequest(mode Mode) error {
	if err := o.Validate(mode); err != nil {
		return err
	}
	return checkCallbackCompanions(o.Callback, o.CallbackMethod, o.Priority)
}

// batchOnlySet names the batch-only settings the options carry.
func (o *SpeakV2Options) batchOnlySet() []string {
	var set []string
	if o.Encoding != "" && !slices.Contains(SpeakStreamEncodings, o.Encoding) && slices.Contains(SpeakEncodings, o.Encoding) {
		set = append(set, qEncoding)
	}
	q := o.Query()
	for _, p := range speakV2BatchOnlyParams {
		if q.Has(p) {
			set = append(set, p)
		}
	}
	return set
}

// batchOnlyParam is the refusal of a batch-only parameter on the
// WebSocket, where the service fails the connection.
func batchOnlyParam(p string) *OptionError {
	return badParam(p, fmt.Sprintf("%s is batch-only on /v2/speak: the WebSocket fails the connection on it", p))
}

// knownSpeakV2Params lists every parameter ParseSpeakV2Options reads.
var knownSpeakV2Params = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range slices.Concat(speakV2StreamParams, speakV2BatchOnlyParams) {
		m[p] = true
	}
	return m
}()

// ParseSpeakV2Options reads /v2/speak options from a URL query as the
// service does, for the local engine. On the WebSocket (Streaming) any
// batch-only or unknown parameter is an error, as it fails the
// connection there; in batch, the names of unknown parameters are
// returned. Values must have the right type (else
// INVALID_QUERY_PARAMETER) and the result is checked with Validate. The
// error is an *OptionError carrying the status and code to answer with.
func ParseSpeakV2Options(q url.Values, mode Mode) (SpeakV2Options, []string, error) {
	unknown := unknownParams(q, func(k string) bool { return knownSpeakV2Params[k] })
	if mode == Streaming {
		if len(unknown) > 0 {
			return SpeakV2Options{}, unknown, &OptionError{Param: unknown[0], Status: http.StatusBadRequest, Code: CodeInvalidQueryParameter,
				Reason: fmt.Sprintf("unknown parameter %s: the /v2/speak WebSocket fails the connection on any parameter it does not know", unknown[0])}
		}
		for _, p := range speakV2BatchOnlyParams {
			if q.Has(p) {
				return SpeakV2Options{}, nil, batchOnlyParam(p)
			}
		}
	}
	var o SpeakV2Options
	r := queryReader{q: q}
	o.Model = r.str(qModel)
	o.Encoding = r.lower(qEncoding)
	o.SampleRate = r.positive(qSampleRate)
	o.Speed = r.number(qSpeed)
	if n, ok := r.integer(qExpressivity); ok {
		o.Expressivity = &n
	}
	o.Container = r.lower(qContainer)
	o.BitRate = r.positive(qBitRate)
	o.Callback = r.str(qCallback)
	o.CallbackMethod = r.upper(qCallbackMethod)
	o.Priority = r.lower(qPriority)
	o.Tag = q[qTag]
	o.MipOptOut = r.boolean(qMipOptOut)
	if r.err != nil {
		return SpeakV2Options{}, unknown, r.err
	}
	if err := o.Validate(mode); err != nil {
		return SpeakV2Options{}, unknown, err
	}
	if o.Speed != 0 {
		// Read as the step it names, so 1.0500001 and 1.05 are one speed.
		o.Speed = math.Round(o.Speed/SpeakV2SpeedStep) / 20
	}
	return o, unknown, nil
}
