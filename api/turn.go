package api

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The turn-aware speech-to-text models, served on /v2/listen only.
const (
	ModelFluxGeneralEN    = "flux-general-en"
	ModelFluxGeneralMulti = "flux-general-multi"
)

// TurnModels lists the models /v2/listen accepts. The bare name "flux" is
// not one of them: it names two products (see ResolveFlux).
var TurnModels = []string{ModelFluxGeneralEN, ModelFluxGeneralMulti}

// TurnEncodings are the raw encodings /v2/listen accepts. Containerized
// audio (wav, ogg, ...) is sent with no encoding at all.
var TurnEncodings = []string{"linear16", "linear32", "mulaw", "alaw", "opus", "ogg-opus"}

// Defaults and ranges of the end-of-turn settings of /v2/listen. An
// eot_threshold of 1.0 disables the model's own end-of-turn detection,
// leaving the timeout and ForceEndTurn.
const (
	DefaultEOTThreshold  = 0.7
	MinEOTThreshold      = 0.5
	MaxEOTThreshold      = 1.0
	MinEagerEOTThreshold = 0.3
	MaxEagerEOTThreshold = 0.9
	DefaultEOTTimeoutMS  = 5000
	MinEOTTimeoutMS      = 500
	MaxEOTTimeoutMS      = 60000
)

// FluxMultiLanguages are the languages flux-general-multi speaks, the
// values language hints may take. A locale subtag (en-GB, pt-BR) is
// accepted and taken as its base language.
var FluxMultiLanguages = []string{"en", "es", "fr", "de", "hi", "ru", "pt", "ja", "it", "nl"}

// MaxKeyterms is the most keyterms a stream or a Configure may carry.
const MaxKeyterms = 100

// CodeInvalidParameter is the code the service answers a refused
// parameter of /v2/listen with (language hints, for one).
const CodeInvalidParameter = "INVALID_PARAMETER"

// TurnRedactions are the redact values /v2/listen accepts.
var TurnRedactions = []string{"numbers", "aggressive_numbers"}

// TurnOptions are the query parameters of the turn-aware /v2/listen
// WebSocket. A zero number or empty string is not sent, so the service's
// default applies; every zero value lies outside its parameter's range, so
// "unset" is never confused with a real setting. Query and
// ParseTurnOptions convert to and from the URL form.
type TurnOptions struct {
	// Model is required: flux-general-en or flux-general-multi.
	Model string

	// Encoding and SampleRate describe raw audio. For containerized audio
	// (wav, ogg) leave both empty: the format is detected.
	Encoding   string
	SampleRate int

	// EOTThreshold is the end-of-turn confidence at which a turn ends
	// (0.5 to 1.0, default 0.7; 1.0 leaves only the timeout).
	EOTThreshold float64
	// EagerEOTThreshold, when set (0.3 to 0.9, at most the end-of-turn
	// threshold), enables EagerEndOfTurn and TurnResumed events.
	EagerEOTThreshold float64
	// EOTTimeoutMS ends a turn after this much silence whatever the
	// model's confidence (500 to 60000, default 5000).
	EOTTimeoutMS int

	// Keyterms are terms to boost, plain words without a :weight.
	Keyterms []string
	// LanguageHints name the languages to expect (flux-general-multi only).
	LanguageHints []string

	ProfanityFilter bool
	Numerals        bool
	// Redact is numbers or aggressive_numbers.
	Redact []string

	Tag       []string
	MipOptOut bool
}

// Query parameter names of /v2/listen beyond those shared with /v1/listen.
const (
	qEOTThreshold      = "eot_threshold"
	qEagerEOTThreshold = "eager_eot_threshold"
	qEOTTimeoutMS      = "eot_timeout_ms"
	qLanguageHint      = "language_hint"
	qLanguageHints     = "language_hints"
)

// knownTurnParams lists every parameter ParseTurnOptions understands.
var knownTurnParams = map[string]bool{
	qModel: true, qEncoding: true, qSampleRate: true, qEOTThreshold: true, qEagerEOTThreshold: true,
	qEOTTimeoutMS: true, qKeyterm: true, qLanguageHint: true, qLanguageHints: true,
	qProfanityFilter: true, qNumerals: true, qRedact: true, qTag: true, qMipOptOut: true,
}

// turnUnavailableParams are parameters of /v1/listen that the turn-aware
// models do not offer; the service refuses them on /v2/listen.
var turnUnavailableParams = []string{qSmartFormat, qDiarizeModel, qPunctuate}

// keytermWeight matches the :weight suffix that keywords take and keyterms
// do not.
var keytermWeight = regexp.MustCompile(`:\s*-?\d+(\.\d+)?$`)

// Query returns the options as URL query parameters.
func (o *TurnOptions) Query() url.Values {
	q := url.Values{}
	if o.Model != "" {
		q.Set(qModel, o.Model)
	}
	if o.Encoding != "" {
		q.Set(qEncoding, o.Encoding)
	}
	if o.SampleRate != 0 {
		q.Set(qSampleRate, strconv.Itoa(o.SampleRate))
	}
	if o.EOTThreshold != 0 {
		q.Set(qEOTThreshold, formatThreshold(o.EOTThreshold))
	}
	if o.EagerEOTThreshold != 0 {
		q.Set(qEagerEOTThreshold, formatThreshold(o.EagerEOTThreshold))
	}
	if o.EOTTimeoutMS != 0 {
		q.Set(qEOTTimeoutMS, strconv.Itoa(o.EOTTimeoutMS))
	}
	for _, k := range o.Keyterms {
		q.Add(qKeyterm, k)
	}
	for _, l := range o.LanguageHints {
		q.Add(qLanguageHint, l)
	}
	if o.ProfanityFilter {
		q.Set(qProfanityFilter, "true")
	}
	if o.Numerals {
		q.Set(qNumerals, "true")
	}
	for _, r := range o.Redact {
		q.Add(qRedact, r)
	}
	for _, t := range o.Tag {
		q.Add(qTag, t)
	}
	if o.MipOptOut {
		q.Set(qMipOptOut, "true")
	}
	return q
}

// formatThreshold writes a threshold in its shortest exact decimal form.
func formatThreshold(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// ParseTurnOptions reads /v2/listen options from a URL query as the
// service does, for the local engine's handshake: values must have the
// right type (else INVALID_QUERY_PARAMETER), the parameters the turn-aware
// models do not offer (smart_format, diarize_model, punctuate) are refused,
// and the result is checked with Validate. The error is an *OptionError
// carrying the status and code to answer with. It also returns the names
// of parameters it does not know, which the service ignores.
func ParseTurnOptions(q url.Values) (TurnOptions, []string, error) {
	unknown := unknownParams(q, func(k string) bool { return knownTurnParams[k] || slices.Contains(turnUnavailableParams, k) })
	for _, p := range turnUnavailableParams {
		if _, ok := q[p]; ok {
			return TurnOptions{}, unknown, badParam(p, fmt.Sprintf(
				"%s is not available on /v2/listen: the turn-aware models (flux-general-en, flux-general-multi) do not offer it", p))
		}
	}
	var o TurnOptions
	r := queryReader{q: q}
	o.Model = r.str(qModel)
	o.Encoding = r.lower(qEncoding)
	o.SampleRate = r.positive(qSampleRate)
	o.EOTThreshold = r.number(qEOTThreshold)
	o.EagerEOTThreshold = r.number(qEagerEOTThreshold)
	o.EOTTimeoutMS = r.positive(qEOTTimeoutMS)
	o.Keyterms = r.list(qKeyterm)
	o.LanguageHints = append(r.list(qLanguageHint), r.list(qLanguageHints)...)
	o.ProfanityFilter = r.boolean(qProfanityFilter)
	o.Numerals = r.boolean(qNumerals)
	o.Redact = r.lowerList(qRedact)
	o.Tag = q[qTag]
	o.MipOptOut = r.boolean(qMipOptOut)
	if r.err != nil {
		return TurnOptions{}, unknown, r.err
	}
	if err := o.Validate(); err != nil {
		return TurnOptions{}, unknown, err
	}
	return o, unknown, nil
}

// CheckTurnModel applies the specification's model rules of /v2/listen:
// the model is required and is flux-general-en or flux-general-multi.
func CheckTurnModel(model string) error {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return badParam(qModel, "model is required on /v2/listen: flux-general-en or flux-general-multi")
	case m == "flux":
		return badParam(qModel, `model=flux is not a valid value: "Flux" names two products; to transcribe with turn detection use flux-general-en or flux-general-multi`)
	case slices.Contains(TurnModels, m):
		return nil
	case strings.HasPrefix(m, "flux-general-"):
		return badParam(qModel, fmt.Sprintf("unknown turn-aware model %q; /v2/listen takes flux-general-en or flux-general-multi", model))
	case strings.HasPrefix(m, "flux-") || strings.HasPrefix(m, "aura-"):
		return badParam(qModel, fmt.Sprintf("%s is a text-to-speech voice, not a transcription model; /v2/listen takes flux-general-en or flux-general-multi", model))
	}
	return badParam(qModel, fmt.Sprintf("%s is not a turn-aware model; /v2/listen takes flux-general-en or flux-general-multi (continuous models such as nova-3 are served on /v1/listen)", model))
}

// EffectiveEOTThreshold returns the end-of-turn threshold in force: the
// one set, or the service's default.
func (o *TurnOptions) EffectiveEOTThreshold() float64 {
	if o.EOTThreshold == 0 {
		return DefaultEOTThreshold
	}
	return o.EOTThreshold
}

// EffectiveEOTTimeoutMS returns the end-of-turn timeout in force: the one
// set, or the service's default.
func (o *TurnOptions) EffectiveEOTTimeoutMS() int {
	if o.EOTTimeoutMS == 0 {
		return DefaultEOTTimeoutMS
	}
	return o.EOTTimeoutMS
}

// Validate applies the rules the service enforces on /v2/listen options.
// The *OptionError it returns carries the status and code the service
// answers with, so the local engine answers the same way.
func (o *TurnOptions) Validate() error {
	if err := CheckTurnModel(o.Model); err != nil {
		return err
	}
	if o.Encoding != "" && !slices.Contains(TurnEncodings, o.Encoding) {
		return badParam(qEncoding, fmt.Sprintf("unknown encoding %q; for containerized audio (wav, ogg) omit encoding, for raw audio use one of %s",
			o.Encoding, strings.Join(TurnEncodings, ", ")))
	}
	if IsRawPCM(o.Encoding) && o.SampleRate == 0 {
		return badParam(qSampleRate, fmt.Sprintf("sample_rate is required with encoding=%s: raw audio has no header to read it from", o.Encoding))
	}
	if o.SampleRate != 0 && (o.SampleRate < 4000 || o.SampleRate > 192000) {
		return badParam(qSampleRate, fmt.Sprintf("sample_rate %d is out of range (4000 to 192000 Hz)", o.SampleRate))
	}
	if err := checkTurnThresholds(o.EOTThreshold, o.EagerEOTThreshold, o.EOTTimeoutMS); err != nil {
		return err
	}
	if err := checkKeyterms(o.Keyterms); err != nil {
		return err
	}
	if err := checkLanguageHints(o.Model, o.LanguageHints); err != nil {
		return err
	}
	for _, r := range o.Redact {
		if !slices.Contains(TurnRedactions, r) {
			return badParam(qRedact, fmt.Sprintf("redact takes numbers or aggressive_numbers on /v2/listen, not %q", r))
		}
	}
	return nil
}

// checkTurnThresholds checks the end-of-turn settings; zero means unset.
func checkTurnThresholds(eot, eager float64, timeoutMS int) error {
	if eot != 0 && !(eot >= MinEOTThreshold && eot <= MaxEOTThreshold) {
		return badParam(qEOTThreshold, fmt.Sprintf("eot_threshold %s is out of range (%s to %s)",
			formatThreshold(eot), formatThreshold(MinEOTThreshold), formatThreshold(MaxEOTThreshold)))
	}
	if eager != 0 && !(eager >= MinEagerEOTThreshold && eager <= MaxEagerEOTThreshold) {
		return badParam(qEagerEOTThreshold, fmt.Sprintf("eager_eot_threshold %s is out of range (%s to %s)",
			formatThreshold(eager), formatThreshold(MinEagerEOTThreshold), formatThreshold(MaxEagerEOTThreshold)))
	}
	if eager != 0 {
		effective := eot
		if effective == 0 {
			effective = DefaultEOTThreshold
		}
		if eager > effective {
			return badParam(qEagerEOTThreshold, fmt.Sprintf("eager_eot_threshold %s is above eot_threshold %s: an eager end of turn must come no later than the end of turn",
				formatThreshold(eager), formatThreshold(effective)))
		}
	}
	if timeoutMS != 0 && (timeoutMS < MinEOTTimeoutMS || timeoutMS > MaxEOTTimeoutMS) {
		return badParam(qEOTTimeoutMS, fmt.Sprintf("eot_timeout_ms %d is out of range (%d to %d)", timeoutMS, MinEOTTimeoutMS, MaxEOTTimeoutMS))
	}
	return nil
}

func checkKeyterms(terms []string) error {
	if len(terms) > MaxKeyterms {
		return badParam(qKeyterm, fmt.Sprintf("%d keyterms given; at most %d are accepted", len(terms), MaxKeyterms))
	}
	for _, k := range terms {
		switch {
		case strings.TrimSpace(k) == "":
			return badParam(qKeyterm, "a keyterm cannot be empty")
		case keytermWeight.MatchString(k):
			return badParam(qKeyterm, fmt.Sprintf("keyterm %q carries a :weight; keyterms are plain terms", k))
		}
	}
	return nil
}

func checkLanguageHints(model string, hints []string) error {
	if len(hints) == 0 {
		return nil
	}
	if !strings.EqualFold(model, ModelFluxGeneralMulti) {
		return invalidParam(qLanguageHint, fmt.Sprintf("language_hint is not supported for model %s; only %s takes language hints", model, ModelFluxGeneralMulti))
	}
	for _, l := range hints {
		base, _, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(l), "_", "-"), "-")
		if !languagePattern.MatchString(l) || !slices.Contains(FluxMultiLanguages, base) {
			return invalidParam(qLanguageHint, fmt.Sprintf("unsupported language %q in language_hint; %s takes %s", l, ModelFluxGeneralMulti, strings.Join(FluxMultiLanguages, ", ")))
		}
	}
	return nil
}

// invalidParam is the service's answer to a /v2/listen parameter it
// refuses with INVALID_PARAMETER.
func invalidParam(param, reason string) *OptionError {
	return &OptionError{Param: param, Reason: reason, Status: http.StatusBadRequest, Code: CodeInvalidParameter}
}

// CheckRequest applies Validate and, on top of it, the rules a careful
// client checks before a request leaves although the service would accept
// it: a sample_rate sent without an encoding describes nothing.
func (o *TurnOptions) CheckRequest() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.SampleRate != 0 && o.Encoding == "" {
		return badParam(qSampleRate, "sample_rate describes raw audio; set encoding too, or omit both for containerized audio (wav, ogg)")
	}
	return nil
}

// WithConfigure returns the options with a Configure message applied, as
// the service applies one mid-stream: fields the message omits keep their
// values. The result is checked with Validate; on error the options are
// unchanged and the service answers ConfigureFailure.
func (o TurnOptions) WithConfigure(c Configure) (TurnOptions, error) {
	n := o
	n.Keyterms = slices.Clone(o.Keyterms)
	n.LanguageHints = slices.Clone(o.LanguageHints)
	if v := c.Thresholds.EOTThreshold; v != nil {
		if *v == 0 {
			return o, badParam(qEOTThreshold, "eot_threshold 0 is out of range")
		}
		n.EOTThreshold = *v
	}
	if v := c.Thresholds.EagerEOTThreshold; v != nil {
		if *v == 0 {
			return o, badParam(qEagerEOTThreshold, "eager_eot_threshold 0 is out of range")
		}
		n.EagerEOTThreshold = *v
	}
	if v := c.Thresholds.EOTTimeoutMS; v != nil {
		if *v == 0 {
			return o, badParam(qEOTTimeoutMS, "eot_timeout_ms 0 is out of range")
		}
		n.EOTTimeoutMS = *v
	}
	if c.Keyterms != nil {
		n.Keyterms = slices.Clone(c.Keyterms)
	}
	if c.LanguageHints != nil {
		n.LanguageHints = slices.Clone(c.LanguageHints)
	}
	if err := n.Validate(); err != nil {
		return o, err
	}
	return n, nil
}

// Direction tells transcription from synthesis, which decides what the
// word "Flux" means.
type Direction int

// The two directions of speech.
const (
	Transcribe Direction = iota
	Synthesize
)

// ResolveFlux turns a bare "flux" chosen by a person into the model it
// means in that direction: to transcribe, flux-general-en (or
// flux-general-multi when language is set and not English); to
// synthesize, flux-{voice}-{language}, with voice required. Any other name
// is returned unchanged.
func ResolveFlux(name string, dir Direction, voice, language string) (string, error) {
	if !strings.EqualFold(strings.TrimSpace(name), "flux") {
		return name, nil
	}
	lang := strings.ToLower(strings.TrimSpace(language))
	base, _, _ := strings.Cut(strings.ReplaceAll(lang, "_", "-"), "-")
	switch dir {
	case Transcribe:
		if base == "" || base == "en" {
			return ModelFluxGeneralEN, nil
		}
		return ModelFluxGeneralMulti, nil
	case Synthesize:
		v := strings.ToLower(strings.TrimSpace(voice))
		if v == "" {
			return "", badParam(qModel, `"Flux" for speech synthesis needs a voice: the model is flux-{voice}-{language}, for example flux-kit-en`)
		}
		if base == "" {
			base = "en"
		}
		return "flux-" + v + "-" + base, nil
	}
	return "", fmt.Errorf("unknown direction %d", dir)
}
