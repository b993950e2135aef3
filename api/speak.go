package api

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultSpeakModel is the voice /v1/speak uses when no model is given.
const DefaultSpeakModel = "aura-asteria-en"

// Encodings of synthesized audio.
const (
	EncodingMP3      = "mp3"
	EncodingOpus     = "opus"
	EncodingFLAC     = "flac"
	EncodingAAC      = "aac"
	EncodingLinear16 = "linear16"
	EncodingMulaw    = "mulaw"
	EncodingAlaw     = "alaw"
)

// Containers of synthesized audio. ContainerNone asks for the bare
// encoded stream.
const (
	ContainerWAV  = "wav"
	ContainerOgg  = "ogg"
	ContainerNone = "none"
)

// SpeakEncodings are the encodings a batch (REST) synthesis returns.
var SpeakEncodings = []string{EncodingMP3, EncodingOpus, EncodingFLAC, EncodingAAC, EncodingLinear16, EncodingMulaw, EncodingAlaw}

// SpeakStreamEncodings are the encodings both speak WebSockets stream:
// raw samples with no container, so playback can start on the first frame.
var SpeakStreamEncodings = []string{EncodingLinear16, EncodingMulaw, EncodingAlaw}

// Speed limits of /v1/speak. Speed applies to the aura-2 voices in
// English and Spanish only.
const (
	MinSpeakSpeed = 0.7
	MaxSpeakSpeed = 1.5
)

// Text limits of /v1/speak, in characters: longer text is answered 422.
const (
	MaxSpeakCharsAura2 = 1000
	MaxSpeakCharsAura  = 2000
)

// MaxSpeakV2Chars is the longest text a client sends in one turn of
// /v2/speak. The service publishes no limit for the turn-based voices;
// that of the aura voices is taken, about two and a half minutes of
// speech.
const MaxSpeakV2Chars = MaxSpeakCharsAura

// MsgEmptyText is the service's answer to a synthesis of no text.
const MsgEmptyText = "Input text contains no characters."

// PriorityLow is the only processing priority the service takes; it
// applies to callback (asynchronous) requests.
const PriorityLow = "low"

// SpeakOptions are the query parameters of /v1/speak, batch and
// streaming. A zero number or empty string is not sent, so the service's
// default applies. Query, StreamQuery and ParseSpeakOptions convert to and
// from the URL form.
type SpeakOptions struct {
	// Model is an aura-* or aura-2-* voice; empty means DefaultSpeakModel.
	Model string
	// Encoding of the audio returned: mp3 (the batch default), opus,
	// flac, aac, linear16 (the streaming default), mulaw or alaw.
	Encoding string
	// Container wraps the audio: wav or none for linear16, mulaw and
	// alaw; ogg for opus. Batch only.
	Container string
	// SampleRate in Hz; which rates apply depends on the encoding.
	SampleRate int
	// BitRate in bits per second, for mp3, opus and aac. Batch only.
	BitRate int
	// Speed multiplies the speaking rate (0.7 to 1.5); aura-2 voices in
	// English and Spanish only.
	Speed float64
	// Callback receives the audio instead of the response, which then
	// carries only a request id; CallbackMethod is POST or PUT. Batch only.
	Callback       string
	CallbackMethod string
	// Priority is "low" for callback requests. Batch only.
	Priority string

	Tag       []string
	MipOptOut bool
}

// Query parameter names of the speak endpoints beyond those of /v1/listen.
const (
	qContainer    = "container"
	qBitRate      = "bit_rate"
	qSpeed        = "speed"
	qPriority     = "priority"
	qExpressivity = "expressivity"
)

// knownSpeakParams lists every parameter ParseSpeakOptions understands.
var knownSpeakParams = map[string]bool{
	qModel: true, qEncoding: true, qContainer: true, qSampleRate: true, qBitRate: true, qSpeed: true,
	qCallback: true, qCallbackMethod: true, qPriority: true, qTag: true, qMipOptOut: true,
}

// speakStreamParams are the parameters the /v1/speak WebSocket takes.
// StreamQuery sends these and nothing else.
var speakStreamParams = []string{qModel, qEncoding, qSampleRate, qSpeed, qTag, qMipOptOut}

// Query returns the options as the URL query of a batch request.
func (o *SpeakOptions) Query() url.Values {
	q := url.Values{}
	setStr := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setStr(qModel, o.Model)
	setStr(qEncoding, o.Encoding)
	setStr(qContainer, o.Container)
	if o.SampleRate != 0 {
		q.Set(qSampleRate, strconv.Itoa(o.SampleRate))
	}
	if o.BitRate != 0 {
		q.Set(qBitRate, strconv.Itoa(o.BitRate))
	}
	if o.Speed != 0 {
		q.Set(qSpeed, formatSpeed(o.Speed))
	}
	setStr(qCallback, o.Callback)
	setStr(qCallbackMethod, o.CallbackMethod)
	setStr(qPriority, o.Priority)
	for _, t := range o.Tag {
		q.Add(qTag, t)
	}
	if o.MipOptOut {
		q.Set(qMipOptOut, "true")
	}
	return q
}

// StreamQuery returns the options as the URL query of the WebSocket. It is
// built from the parameters the WebSocket takes, so a batch-only setting
// can never reach the handshake even when Validate was not called.
func (o *SpeakOptions) StreamQuery() url.Values {
	return onlySpeakParams(o.Query(), speakStreamParams)
}

// onlySpeakParams returns the values of q whose names are in keep.
func onlySpeakParams(q url.Values, keep []string) url.Values {
	out := url.Values{}
	for _, k := range keep {
		if vs, ok := q[k]; ok {
			out[k] = slices.Clone(vs)
		}
	}
	return out
}

// formatSpeed writes a speed in its shortest exact decimal form.
func formatSpeed(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// EffectiveModel returns the voice in force: the one set, or the default.
func (o *SpeakOptions) EffectiveModel() string {
	if o.Model == "" {
		return DefaultSpeakModel
	}
	return o.Model
}

// EffectiveEncoding returns the encoding in force for mode: the one set,
// or the default (mp3 for batch, linear16 for streaming).
func (o *SpeakOptions) EffectiveEncoding(mode Mode) string {
	return effectiveSpeakEncoding(o.Encoding, mode)
}

func effectiveSpeakEncoding(enc string, mode Mode) string {
	switch {
	case enc != "":
		return enc
	case mode == Streaming:
		return EncodingLinear16
	}
	return EncodingMP3
}

// ParseSpeakOptions reads /v1/speak options from a URL query as the
// service does, for the local engine: values must have the right type
// (else INVALID_QUERY_PARAMETER). It returns the names of parameters it
// does not know. The options are not validated: call Validate with the
// transport they arrived on.
func ParseSpeakOptions(q url.Values) (SpeakOptions, []string, error) {
	var o SpeakOptions
	unknown := unknownParams(q, func(k string) bool { return knownSpeakParams[k] })
	r := queryReader{q: q}
	o.Model = r.str(qModel)
	o.Encoding = r.lower(qEncoding)
	o.Container = r.lower(qContainer)
	o.SampleRate = r.positive(qSampleRate)
	o.BitRate = r.positive(qBitRate)
	o.Speed = r.number(qSpeed)
	o.Callback = r.str(qCallback)
	o.CallbackMethod = r.upper(qCallbackMethod)
	o.Priority = r.lower(qPriority)
	o.Tag = q[qTag]
	o.MipOptOut = r.boolean(qMipOptOut)
	if r.err != nil {
		return SpeakOptions{}, unknown, r.err
	}
	return o, unknown, nil
}

// Voice names: aura-{voice}-{language}, aura-2-{voice}-{language} and
// flux-{voice}-{language}. The voice is one segment of lower-case letters
// and digits; the language is the last segment.
var (
	auraVoice  = regexp.MustCompile(`^aura-(2-)?[a-z0-9]+-[a-z]{2}$`)
	aura2Voice = regexp.MustCompile(`^aura-2-[a-z0-9]+-[a-z]{2}$`)
	fluxVoice  = regexp.MustCompile(`^flux-[a-z0-9]+-[a-z]{2}$`)
)

// IsAuraVoice reports whether model names a general text-to-speech voice
// (aura-* or aura-2-*), served on /v1/speak only.
func IsAuraVoice(model string) bool { return auraVoice.MatchString(strings.ToLower(model)) }

// IsFluxVoice reports whether model names a turn-based text-to-speech
// voice (flux-{voice}-{language}), served on /v2/speak only. The
// turn-aware transcription models (flux-general-*) are not voices.
func IsFluxVoice(model string) bool {
	m := strings.ToLower(model)
	return fluxVoice.MatchString(m) && !IsTurnAwareModel(m)
}

// VoiceLanguage returns the language of a voice, the last segment of its
// name ("en" for aura-2-thalia-en), or "" for a name with no segments.
func VoiceLanguage(model string) string {
	i := strings.LastIndexByte(model, '-')
	if i < 0 {
		return ""
	}
	return strings.ToLower(model[i+1:])
}

// SpeedAvailable reports whether a /v1/speak voice takes a speed: the
// aura-2 voices in English and Spanish.
func SpeedAvailable(model string) bool {
	m := strings.ToLower(model)
	lang := VoiceLanguage(m)
	return aura2Voice.MatchString(m) && (lang == "en" || lang == "es")
}

// CheckSpeakModel applies the specification's model rules of /v1/speak:
// empty (the default voice) or an aura voice; a flux voice is served on
// /v2/speak only.
func CheckSpeakModel(model string) error {
	m := strings.ToLower(model)
	switch {
	case m == "", IsAuraVoice(m):
		return nil
	case m == "flux":
		return badParam(qModel, `model=flux is not a valid value: "Flux" names two products; to synthesize turn by turn use a flux-{voice}-{language} voice on /v2/speak`)
	case IsTurnAwareModel(m):
		return badParam(qModel, fmt.Sprintf("%s is a transcription model, not a voice", model))
	case strings.HasPrefix(m, "flux-"):
		return badParam(qModel, fmt.Sprintf("%s is not served on /v1/speak: flux voices are served on /v2/speak only", model))
	}
	return badParam(qModel, fmt.Sprintf("unknown voice %q; /v1/speak takes aura-{voice}-{language} or aura-2-{voice}-{language} voices", model))
}

// Sample rates the service produces, by encoding. mp3, opus and aac have
// one fixed rate.
var (
	speakRatesLinear16 = []int{8000, 16000, 24000, 32000, 48000}
	speakRatesG711     = []int{8000, 16000}
	speakRatesFLAC     = []int{8000, 16000, 22050, 32000, 48000}
	speakRatesMP3      = []int{22050}
	speakRatesOpus     = []int{48000}
	speakRatesAAC      = []int{22050}
)

// DefaultSpeakSampleRate is the rate of linear16 audio when none is set.
const DefaultSpeakSampleRate = 24000

func speakSampleRates(enc string) []int {
	switch enc {
	case EncodingLinear16:
		return speakRatesLinear16
	case EncodingMulaw, EncodingAlaw:
		return speakRatesG711
	case EncodingFLAC:
		return speakRatesFLAC
	case EncodingMP3:
		return speakRatesMP3
	case EncodingOpus:
		return speakRatesOpus
	case EncodingAAC:
		return speakRatesAAC
	}
	return nil
}

// Bit rates by encoding: mp3 takes two values, opus and aac a range.
const (
	MinOpusBitRate = 4000
	MaxOpusBitRate = 650000
	MinAACBitRate  = 4000
	MaxAACBitRate  = 192000
)

var mp3BitRates = []int{32000, 48000}

// checkSpeakAudio applies the rules of encoding, container, sample rate
// and bit rate shared by both speak endpoints; linearRates lists the
// sample rates the endpoint takes for linear16.
func checkSpeakAudio(enc, container string, sampleRate, bitRate int, mode Mode, linearRates []int) error {
	encodings := SpeakEncodings
	if mode == Streaming {
		encodings = SpeakStreamEncodings
	}
	if !slices.Contains(encodings, enc) {
		if mode == Streaming && slices.Contains(SpeakEncodings, enc) {
			return badParam(qEncoding, fmt.Sprintf("encoding %s is batch-only; a stream takes %s", enc, strings.Join(SpeakStreamEncodings, ", ")))
		}
		return badParam(qEncoding, fmt.Sprintf("unknown encoding %q; use one of %s", enc, strings.Join(encodings, ", ")))
	}
	if container != "" {
		if mode == Streaming {
			return badParam(qContainer, "container is batch-only: a stream sends raw audio with no container")
		}
		var allowed []string
		switch enc {
		case EncodingLinear16, EncodingMulaw, EncodingAlaw:
			allowed = []string{ContainerWAV, ContainerNone}
		case EncodingOpus:
			allowed = []string{ContainerOgg}
		default:
			allowed = []string{ContainerNone}
		}
		if !slices.Contains(allowed, container) {
			return badParam(qContainer, fmt.Sprintf("container %q does not apply to %s; use %s", container, enc, strings.Join(allowed, " or ")))
		}
	}
	if sampleRate != 0 {
		rates := speakSampleRates(enc)
		if enc == EncodingLinear16 {
			rates = linearRates
		}
		if !slices.Contains(rates, sampleRate) {
			return badParam(qSampleRate, fmt.Sprintf("sample_rate %d is not available for %s; use %s", sampleRate, enc, joinInts(rates)))
		}
	}
	if bitRate != 0 {
		if mode == Streaming {
			return badParam(qBitRate, "bit_rate is batch-only")
		}
		switch enc {
		case EncodingMP3:
			if !slices.Contains(mp3BitRates, bitRate) {
				return badParam(qBitRate, fmt.Sprintf("bit_rate %d is not available for mp3; use %s", bitRate, joinInts(mp3BitRates)))
			}
		case EncodingOpus:
			if bitRate < MinOpusBitRate || bitRate > MaxOpusBitRate {
				return badParam(qBitRate, fmt.Sprintf("bit_rate %d is out of range for opus (%d to %d)", bitRate, MinOpusBitRate, MaxOpusBitRate))
			}
		case EncodingAAC:
			if bitRate < MinAACBitRate || bitRate > MaxAACBitRate {
				return badParam(qBitRate, fmt.Sprintf("bit_rate %d is out of range for aac (%d to %d)", bitRate, MinAACBitRate, MaxAACBitRate))
			}
		default:
			return badParam(qBitRate, fmt.Sprintf("bit_rate does not apply to %s; it applies to mp3, opus and aac", enc))
		}
	}
	return nil
}

// checkSpeakCallback applies the rules of callback, callback_method and
// priority, which are batch-only on both speak endpoints.
func checkSpeakCallback(callback, method, priority string, mode Mode) error {
	if mode == Streaming {
		switch {
		case callback != "":
			return badParam(qCallback, "callback is batch-only: a stream sends its audio on the socket")
		case method != "":
			return badParam(qCallbackMethod, "callback_method is batch-only")
		case priority != "":
			return badParam(qPriority, "priority is batch-only")
		}
		return nil
	}
	if err := checkCallback(callback); err != nil {
		return err
	}
	if method != "" && method != http.MethodPost && method != http.MethodPut {
		return badParam(qCallbackMethod, fmt.Sprintf("callback_method takes POST or PUT, not %q", method))
	}
	if priority != "" && priority != PriorityLow {
		return badParam(qPriority, fmt.Sprintf("priority takes %s, not %q", PriorityLow, priority))
	}
	return nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// Validate applies the rules the service enforces on /v1/speak options
// for the given transport. The *OptionError it returns carries the status
// and code the service answers with, so the local engine answers the same
// way.
func (o *SpeakOptions) Validate(mode Mode) error {
	if err := CheckSpeakModel(o.Model); err != nil {
		return err
	}
	enc := o.EffectiveEncoding(mode)
	if err := checkSpeakAudio(enc, o.Container, o.SampleRate, o.BitRate, mode, speakRatesLinear16); err != nil {
		return err
	}
	if o.Speed != 0 {
		if !(o.Speed >= MinSpeakSpeed && o.Speed <= MaxSpeakSpeed) {
			return badParam(qSpeed, fmt.Sprintf("speed %s is out of range (%s to %s)", formatSpeed(o.Speed), formatSpeed(MinSpeakSpeed), formatSpeed(MaxSpeakSpeed)))
		}
		if !SpeedAvailable(o.EffectiveModel()) {
			return badParam(qSpeed, fmt.Sprintf("speed is available for aura-2 voices in English and Spanish only, not %s", o.EffectiveModel()))
		}
	}
	return checkSpeakCallback(o.Callback, o.CallbackMethod, o.Priority, mode)
}

// CheckRequest applies Validate and, on top of it, the rules a careful
// client checks before a request leaves although the service would accept
// it: callback_method and priority mean nothing without a callback.
func (o *SpeakOptions) CheckRequest(mode Mode) error {
	if err := o.Validate(mode); err != nil {
		return err
	}
	return checkCallbackCompanions(o.Callback, o.CallbackMethod, o.Priority)
}

func checkCallbackCompanions(callback, method, priority string) error {
	if callback != "" {
		return nil
	}
	switch {
	case method != "":
		return badParam(qCallbackMethod, "callback_method has no effect without a callback")
	case priority != "":
		return badParam(qPriority, "priority applies to callback requests only")
	}
	return nil
}

// MaxSpeakChars returns the longest text, in characters, one /v1/speak
// request may carry with model (empty for the default voice).
func MaxSpeakChars(model string) int {
	if strings.HasPrefix(strings.ToLower(model), "aura-2-") {
		return MaxSpeakCharsAura2
	}
	return MaxSpeakCharsAura
}

// CheckSpeakText applies the service's text rules of a /v1/speak request:
// text with no characters is answered 400 MsgEmptyText, text longer than
// the voice's limit 422.
func CheckSpeakText(model, text string) error {
	if err := checkTextNotEmpty(text); err != nil {
		return err
	}
	if max, n := MaxSpeakChars(model), utf8.RuneCountInString(text); n > max {
		return &OptionError{Param: "text", Reason: fmt.Sprintf("text of %d characters is longer than the %d that %s takes in one request", n, max, modelOrDefault(model)),
			Status: http.StatusUnprocessableEntity, Code: http.StatusText(http.StatusUnprocessableEntity)}
	}
	return nil
}

func modelOrDefault(model string) string {
	if model == "" {
		return DefaultSpeakModel
	}
	return model
}

// checkTextNotEmpty refuses text with no characters but white space.
func checkTextNotEmpty(text string) error {
	if strings.TrimSpace(text) == "" {
		return errEmptyText()
	}
	return nil
}

// emptyTextError is the refusal of text with no characters: an
// *OptionError carrying the service's 400 (for the engine to answer
// with) that also matches ErrEmptyText.
type emptyTextError struct{ *OptionError }

func errEmptyText() error { return emptyTextError{badParam("text", MsgEmptyText)} }

// Is matches ErrEmptyText; the *OptionError it wraps matches
// ErrInvalidOptions.
func (e emptyTextError) Is(target error) bool { return target == ErrEmptyText }

// Unwrap returns the *OptionError.
func (e emptyTextError) Unwrap() error { return e.OptionError }
