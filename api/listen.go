package api

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Mode tells a batch request (POST) from a stream (WebSocket): some
// parameters and rules differ between them.
type Mode int

// The two transports of /v1/listen.
const (
	Batch Mode = iota
	Streaming
)

func (m Mode) String() string {
	if m == Streaming {
		return "streaming"
	}
	return "batch"
}

// Endpointing is the silence, in milliseconds, after which a stream marks
// speech_final. The zero value leaves the service's default; EndpointingOff
// turns endpointing off (the query value "false").
type Endpointing int

// EndpointingOff disables endpointing.
const EndpointingOff Endpointing = -1

// ListenOptions are the query parameters of /v1/listen, batch and
// streaming. Booleans are sent only when true; strings and numbers only
// when set. Query and ParseListenQuery convert to and from the URL form.
type ListenOptions struct {
	Model    string
	Version  string
	Language string
	// DetectLanguage asks the service to identify the dominant language.
	DetectLanguage bool

	// Encoding and SampleRate describe raw audio. For containerized audio
	// (wav, mp3, flac, ogg) leave both empty: the format is detected.
	Encoding     string
	SampleRate   int
	Channels     int
	Multichannel bool

	Punctuate       bool
	SmartFormat     bool
	Numerals        bool
	Paragraphs      bool
	Utterances      bool
	UttSplit        float64
	Dictation       bool
	Measurements    bool
	FillerWords     bool
	ProfanityFilter bool

	// DiarizeModel enables diarization and selects its version (batch:
	// latest, v1, v2; streaming: latest, v1). It must not be combined with
	// the deprecated Diarize and DiarizeVersion.
	DiarizeModel   string
	Diarize        bool
	DiarizeVersion string

	DetectEntities bool
	Redact         []string

	// Summarize is "v2" (or the legacy "true"). Batch only.
	Summarize        string
	Topics           bool
	CustomTopic      []string
	CustomTopicMode  string
	Intents          bool
	CustomIntent     []string
	CustomIntentMode string
	Sentiment        bool

	Keyterm  []string
	Keywords []string
	Search   []string
	Replace  []string

	Tag            []string
	Extra          map[string]string
	Callback       string
	CallbackMethod string
	MipOptOut      bool

	// Streaming only.
	InterimResults bool
	Endpointing    Endpointing
	UtteranceEndMs int
	VADEvents      bool
}

// Query parameter names of /v1/listen.
const (
	qModel            = "model"
	qVersion          = "version"
	qLanguage         = "language"
	qDetectLanguage   = "detect_language"
	qEncoding         = "encoding"
	qSampleRate       = "sample_rate"
	qChannels         = "channels"
	qMultichannel     = "multichannel"
	qPunctuate        = "punctuate"
	qSmartFormat      = "smart_format"
	qNumerals         = "numerals"
	qParagraphs       = "paragraphs"
	qUtterances       = "utterances"
	qUttSplit         = "utt_split"
	qDictation        = "dictation"
	qMeasurements     = "measurements"
	qFillerWords      = "filler_words"
	qProfanityFilter  = "profanity_filter"
	qDiarizeModel     = "diarize_model"
	qDiarize          = "diarize"
	qDiarizeVersion   = "diarize_version"
	qDetectEntities   = "detect_entities"
	qRedact           = "redact"
	qSummarize        = "summarize"
	qTopics           = "topics"
	qCustomTopic      = "custom_topic"
	qCustomTopicMode  = "custom_topic_mode"
	qIntents          = "intents"
	qCustomIntent     = "custom_intent"
	qCustomIntentMode = "custom_intent_mode"
	qSentiment        = "sentiment"
	qKeyterm          = "keyterm"
	qKeywords         = "keywords"
	qSearch           = "search"
	qReplace          = "replace"
	qTag              = "tag"
	qExtra            = "extra"
	qCallback         = "callback"
	qCallbackMethod   = "callback_method"
	qMipOptOut        = "mip_opt_out"
	qInterimResults   = "interim_results"
	qEndpointing      = "endpointing"
	qUtteranceEndMs   = "utterance_end_ms"
	qVADEvents        = "vad_events"
)

// Query returns the options as URL query parameters.
func (o *ListenOptions) Query() url.Values {
	q := url.Values{}
	setStr := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setBool := func(k string, v bool) {
		if v {
			q.Set(k, "true")
		}
	}
	setInt := func(k string, v int) {
		if v != 0 {
			q.Set(k, strconv.Itoa(v))
		}
	}
	addAll := func(k string, vs []string) {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	setStr(qModel, o.Model)
	setStr(qVersion, o.Version)
	setStr(qLanguage, o.Language)
	setBool(qDetectLanguage, o.DetectLanguage)
	setStr(qEncoding, o.Encoding)
	setInt(qSampleRate, o.SampleRate)
	setInt(qChannels, o.Channels)
	setBool(qMultichannel, o.Multichannel)
	setBool(qPunctuate, o.Punctuate)
	setBool(qSmartFormat, o.SmartFormat)
	setBool(qNumerals, o.Numerals)
	setBool(qParagraphs, o.Paragraphs)
	setBool(qUtterances, o.Utterances)
	if o.UttSplit != 0 {
		q.Set(qUttSplit, strconv.FormatFloat(o.UttSplit, 'f', -1, 64))
	}
	setBool(qDictation, o.Dictation)
	setBool(qMeasurements, o.Measurements)
	setBool(qFillerWords, o.FillerWords)
	setBool(qProfanityFilter, o.ProfanityFilter)
	setStr(qDiarizeModel, o.DiarizeModel)
	setBool(qDiarize, o.Diarize)
	setStr(qDiarizeVersion, o.DiarizeVersion)
	setBool(qDetectEntities, o.DetectEntities)
	addAll(qRedact, o.Redact)
	setStr(qSummarize, o.Summarize)
	setBool(qTopics, o.Topics)
	addAll(qCustomTopic, o.CustomTopic)
	setStr(qCustomTopicMode, o.CustomTopicMode)
	setBool(qIntents, o.Intents)
	addAll(qCustomIntent, o.CustomIntent)
	setStr(qCustomIntentMode, o.CustomIntentMode)
	setBool(qSentiment, o.Sentiment)
	addAll(qKeyterm, o.Keyterm)
	addAll(qKeywords, o.Keywords)
	addAll(qSearch, o.Search)
	addAll(qReplace, o.Replace)
	addAll(qTag, o.Tag)
	if len(o.Extra) > 0 {
		keys := make([]string, 0, len(o.Extra))
		for k := range o.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			q.Add(qExtra, k+":"+o.Extra[k])
		}
	}
	setStr(qCallback, o.Callback)
	setStr(qCallbackMethod, o.CallbackMethod)
	setBool(qMipOptOut, o.MipOptOut)
	setBool(qInterimResults, o.InterimResults)
	switch {
	case o.Endpointing == EndpointingOff:
		q.Set(qEndpointing, "false")
	case o.Endpointing > 0:
		q.Set(qEndpointing, strconv.Itoa(int(o.Endpointing)))
	}
	setInt(qUtteranceEndMs, o.UtteranceEndMs)
	setBool(qVADEvents, o.VADEvents)
	return q
}

// knownListenParams lists every parameter ParseListenQuery understands.
var knownListenParams = map[string]bool{
	qModel: true, qVersion: true, qLanguage: true, qDetectLanguage: true, qEncoding: true,
	qSampleRate: true, qChannels: true, qMultichannel: true, qPunctuate: true, qSmartFormat: true,
	qNumerals: true, qParagraphs: true, qUtterances: true, qUttSplit: true, qDictation: true,
	qMeasurements: true, qFillerWords: true, qProfanityFilter: true, qDiarizeModel: true,
	qDiarize: true, qDiarizeVersion: true, qDetectEntities: true, qRedact: true, qSummarize: true,
	qTopics: true, qCustomTopic: true, qCustomTopicMode: true, qIntents: true, qCustomIntent: true,
	qCustomIntentMode: true, qSentiment: true, qKeyterm: true, qKeywords: true, qSearch: true,
	qReplace: true, qTag: true, qExtra: true, qCallback: true, qCallbackMethod: true,
	qMipOptOut: true, qInterimResults: true, qEndpointing: true, qUtteranceEndMs: true,
	qVADEvents: true,
}

// ParseListenQuery reads /v1/listen options from a URL query, as the
// service does (see queryReader for the rules every parameter follows).
// It returns the names of parameters it does not know (the service
// ignores those).
func ParseListenQuery(q url.Values) (ListenOptions, []string, error) {
	var o ListenOptions
	unknown := unknownParams(q, func(k string) bool { return knownListenParams[k] })
	r := queryReader{q: q}
	o.Model = r.str(qModel)
	o.Version = r.str(qVersion)
	o.Language = r.str(qLanguage)
	o.DetectLanguage = r.boolean(qDetectLanguage)
	o.Encoding = r.lower(qEncoding)
	o.SampleRate = r.positive(qSampleRate)
	o.Channels = r.positive(qChannels)
	o.Multichannel = r.boolean(qMultichannel)
	o.Punctuate = r.boolean(qPunctuate)
	o.SmartFormat = r.boolean(qSmartFormat)
	o.Numerals = r.boolean(qNumerals)
	o.Paragraphs = r.boolean(qParagraphs)
	o.Utterances = r.boolean(qUtterances)
	if f, set := r.finite(qUttSplit); set {
		if f <= 0 || f > 3600 {
			r.fail(queryError(qUttSplit, "utt_split must be a positive number of seconds, not %q", r.str(qUttSplit)))
		}
		o.UttSplit = f
	}
	o.Dictation = r.boolean(qDictation)
	o.Measurements = r.boolean(qMeasurements)
	o.FillerWords = r.boolean(qFillerWords)
	o.ProfanityFilter = r.boolean(qProfanityFilter)
	o.DiarizeModel = r.str(qDiarizeModel)
	o.Diarize = r.boolean(qDiarize)
	o.DiarizeVersion = r.str(qDiarizeVersion)
	o.DetectEntities = r.boolean(qDetectEntities)
	o.Redact = r.lowerList(qRedact)
	o.Summarize = r.summarize(qSummarize)
	o.Topics = r.boolean(qTopics)
	o.CustomTopic = r.list(qCustomTopic)
	o.CustomTopicMode = r.lower(qCustomTopicMode)
	o.Intents = r.boolean(qIntents)
	o.CustomIntent = r.list(qCustomIntent)
	o.CustomIntentMode = r.lower(qCustomIntentMode)
	o.Sentiment = r.boolean(qSentiment)
	o.Keyterm = r.list(qKeyterm)
	o.Keywords = r.list(qKeywords)
	o.Search = r.list(qSearch)
	o.Replace = r.list(qReplace)
	o.Tag = q[qTag]
	for _, kv := range q[qExtra] {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			r.fail(queryError(qExtra, "extra must be key:value, not %q", kv))
			continue
		}
		if o.Extra == nil {
			o.Extra = map[string]string{}
		}
		o.Extra[k] = v
	}
	o.Callback = r.str(qCallback)
	o.CallbackMethod = r.upper(qCallbackMethod)
	o.MipOptOut = r.boolean(qMipOptOut)
	o.InterimResults = r.boolean(qInterimResults)
	o.Endpointing = readEndpointing(&r)
	o.UtteranceEndMs = r.positive(qUtteranceEndMs)
	o.VADEvents = r.boolean(qVADEvents)
	if r.err != nil {
		return ListenOptions{}, unknown, r.err
	}
	return o, unknown, nil
}

// readEndpointing reads endpointing: a silence in milliseconds, false (or
// 0) for none, true for the service's default.
func readEndpointing(r *queryReader) Endpointing {
	switch v := r.lower(qEndpointing); v {
	case "", "true":
		// "true" keeps the default silence window.
		return 0
	case "false":
		return EndpointingOff
	default:
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 0:
			r.fail(queryError(qEndpointing, "endpointing must be a number of milliseconds or false, not %q", v))
			return 0
		case n == 0:
			return EndpointingOff
		}
		return Endpointing(n)
	}
}

// ListenModels are the continuous speech-to-text models the specification
// names for /v1/listen.
var ListenModels = []string{"nova-3", "nova-3-medical", "nova-3-pharma", "nova-2", "nova", "enhanced", "base"}

// listenModelFamilies are prefixes of the service's model variants
// (nova-2-meeting, enhanced-phonecall, ...) and its use-case shorthands.
var (
	listenModelFamilies = []string{"nova-3-", "nova-2-", "nova-", "enhanced-", "base-", "whisper-"}
	listenModelAliases  = []string{"whisper", "general", "meeting", "phonecall", "finance", "conversationalai", "voicemail", "video", "custom"}
	uuidPattern         = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	languagePattern     = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$`)
	redactPattern       = regexp.MustCompile(`^[a-z][a-z_]*$`)
	modelSuffix         = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// ListenEncodings are the raw encodings /v1/listen accepts.
var ListenEncodings = []string{"linear16", "linear32", "flac", "alaw", "mulaw", "amr-nb", "amr-wb", "opus", "ogg-opus", "speex", "g729"}

// rawPCMEncodings carry no header, so they need a sample rate.
var rawPCMEncodings = []string{"linear16", "linear32", "mulaw", "alaw"}

// IsRawPCM reports whether encoding is headerless PCM that needs sample_rate.
func IsRawPCM(encoding string) bool { return slices.Contains(rawPCMEncodings, encoding) }

// CheckListenModel applies the specification's model rules of /v1/listen.
func CheckListenModel(model string) error {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return nil
	case m == "flux":
		return badParam(qModel, `model=flux is not a valid value: "Flux" names two products; to transcribe with turn detection use flux-general-en or flux-general-multi on /v2/listen`)
	case IsTurnAwareModel(m):
		return badParam(qModel, fmt.Sprintf("%s is a turn-aware model, served on /v2/listen only; /v1/listen takes nova-3, nova-2, nova, enhanced or base", model))
	case strings.HasPrefix(m, "aura-") || strings.HasPrefix(m, "flux-"):
		return badParam(qModel, fmt.Sprintf("%s is a text-to-speech voice, not a transcription model", model))
	case slices.Contains(ListenModels, m), slices.Contains(listenModelAliases, m), uuidPattern.MatchString(m):
		return nil
	}
	for _, p := range listenModelFamilies {
		if strings.HasPrefix(m, p) && len(m) > len(p) && modelSuffix.MatchString(m[len(p):]) {
			return nil
		}
	}
	return badParam(qModel, fmt.Sprintf("unknown model %q; /v1/listen takes %s", model, strings.Join(ListenModels, ", ")))
}

// Messages the service answers for rules of section 7 of the specification.
const (
	MsgDiarizeConflict        = "diarize_model cannot be used together with diarize or diarize_version."
	MsgSummarizeNotStreaming  = "Summarization is not available for streaming."
	msgFeaturesNotOnStreaming = "Requested features are not available for streaming: %s."
)

// Validate applies the rules the service enforces on /v1/listen options
// for the given mode. The *OptionError it returns carries the status and
// code the service answers with, so the local engine answers the same way.
func (o *ListenOptions) Validate(mode Mode) error {
	if err := CheckListenModel(o.Model); err != nil {
		return err
	}
	if o.Language != "" && o.Language != "multi" && !languagePattern.MatchString(o.Language) {
		return badParam(qLanguage, fmt.Sprintf("%q is not a language tag such as en or en-US", o.Language))
	}
	if o.Encoding != "" && !slices.Contains(ListenEncodings, o.Encoding) {
		return badParam(qEncoding, fmt.Sprintf("unknown encoding %q; for containerized audio (wav, mp3, flac, ogg) omit encoding, for raw audio use one of %s",
			o.Encoding, strings.Join(ListenEncodings, ", ")))
	}
	if IsRawPCM(o.Encoding) && o.SampleRate == 0 {
		return badParam(qSampleRate, fmt.Sprintf("sample_rate is required with encoding=%s: raw audio has no header to read it from", o.Encoding))
	}
	if o.SampleRate != 0 && (o.SampleRate < 4000 || o.SampleRate > 192000) {
		return badParam(qSampleRate, fmt.Sprintf("sample_rate %d is out of range (4000 to 192000 Hz)", o.SampleRate))
	}
	if o.Channels > 32 {
		return badParam(qChannels, fmt.Sprintf("channels %d is out of range (1 to 32)", o.Channels))
	}
	if o.DiarizeModel != "" && (o.Diarize || o.DiarizeVersion != "") {
		return badParam(qDiarizeModel, MsgDiarizeConflict)
	}
	if o.DiarizeModel != "" {
		allowed := []string{"latest", "v1", "v2"}
		if mode == Streaming {
			allowed = []string{"latest", "v1"}
		}
		if !slices.Contains(allowed, o.DiarizeModel) {
			return badParam(qDiarizeModel, fmt.Sprintf("diarize_model %q is not available for %s; use %s", o.DiarizeModel, mode, strings.Join(allowed, ", ")))
		}
	}
	if o.Channels < 0 || o.UtteranceEndMs < 0 || o.Endpointing < EndpointingOff || o.UttSplit < 0 {
		return badParam("", "channels, utterance_end_ms, endpointing and utt_split cannot be negative")
	}
	for k := range o.Extra {
		if k == "" || strings.Contains(k, ":") {
			return badParam(qExtra, fmt.Sprintf("extra key %q must be non-empty and contain no colon", k))
		}
	}
	for _, r := range o.Redact {
		if r == "false" {
			return badParam(qRedact, "redact=false is the default; leave it out")
		}
		if r != "true" && !redactPattern.MatchString(r) {
			return badParam(qRedact, fmt.Sprintf("%q is not a redaction class such as pci, ssn, numbers or pii", r))
		}
	}
	switch o.Summarize {
	case "", "v2", "true":
	default:
		return badParam(qSummarize, fmt.Sprintf("summarize takes v2, not %q", o.Summarize))
	}
	if err := checkCustom(o.CustomTopicMode, o.CustomIntentMode, len(o.CustomTopic), len(o.CustomIntent)); err != nil {
		return err
	}
	if o.CallbackMethod != "" {
		allowed := []string{"POST", "PUT"}
		if mode == Streaming {
			allowed = []string{"POST", "GET", "PUT", "DELETE"}
		}
		if !slices.Contains(allowed, o.CallbackMethod) {
			return badParam(qCallbackMethod, fmt.Sprintf("callback_method takes %s, not %q", strings.Join(allowed, " or "), o.CallbackMethod))
		}
	}
	if err := checkCallback(o.Callback); err != nil {
		return err
	}
	if mode == Streaming {
		if o.Summarize != "" {
			return badParam(qSummarize, MsgSummarizeNotStreaming)
		}
		var refused []string
		if o.Topics || len(o.CustomTopic) > 0 {
			refused = append(refused, qTopics)
		}
		if o.Intents || len(o.CustomIntent) > 0 {
			refused = append(refused, qIntents)
		}
		if len(refused) > 0 {
			return &OptionError{Param: refused[0], Reason: fmt.Sprintf(msgFeaturesNotOnStreaming, strings.Join(refused, ", ")),
				Status: http.StatusForbidden, Code: CodeUnauthorizedFeatures}
		}
	}
	return nil
}

// CheckRequest applies Validate and, on top of it, the rules a careful
// client checks before a request leaves although the service would accept
// it: requests the service takes but silently does not honour, and
// parameters that have no effect where they are sent.
func (o *ListenOptions) CheckRequest(mode Mode) error {
	if err := o.Validate(mode); err != nil {
		return err
	}
	if o.SampleRate != 0 && o.Encoding == "" {
		return badParam(qSampleRate, "sample_rate describes raw audio; set encoding too, or omit both for containerized audio (wav, mp3, flac, ogg)")
	}
	if o.DiarizeVersion != "" && !o.Diarize {
		return badParam(qDiarizeVersion, "diarize_version needs diarize; better, use diarize_model, which replaces both")
	}
	if o.UttSplit != 0 && !o.Utterances {
		return badParam(qUttSplit, "utt_split has no effect without utterances=true")
	}
	if (o.CustomTopicMode != "" && len(o.CustomTopic) == 0) || (o.CustomIntentMode != "" && len(o.CustomIntent) == 0) {
		return badParam(qCustomTopicMode, "custom_topic_mode and custom_intent_mode need custom topics or intents to apply to")
	}
	if len(o.Keyterm) > 0 && o.Model != "" && !strings.HasPrefix(strings.ToLower(o.Model), "nova-3") {
		return badParam(qKeyterm, fmt.Sprintf("keyterm works with nova-3 models only, not %s; older models take keywords", o.Model))
	}
	switch mode {
	case Streaming:
		if o.Sentiment {
			return badParam(qSentiment, "sentiment is batch-only: a stream accepts it but never returns sentiment; transcribe a file to get it")
		}
		if o.UtteranceEndMs != 0 && !o.InterimResults {
			return badParam(qUtteranceEndMs, "utterance_end_ms needs interim_results=true: the gap is measured on interim results")
		}
	case Batch:
		switch {
		case o.InterimResults:
			return badParam(qInterimResults, "interim_results applies to streaming only")
		case o.Endpointing != 0:
			return badParam(qEndpointing, "endpointing applies to streaming only")
		case o.VADEvents:
			return badParam(qVADEvents, "vad_events applies to streaming only")
		}
	}
	return nil
}

// checkCustom applies the rules /v1/listen and /v1/read share on custom
// topics and intents: each mode is extended or strict, and at most 100
// of each may be given.
func checkCustom(topicMode, intentMode string, topics, intents int) error {
	for _, m := range []struct{ name, v string }{{qCustomTopicMode, topicMode}, {qCustomIntentMode, intentMode}} {
		if m.v != "" && m.v != "extended" && m.v != "strict" {
			return badParam(m.name, fmt.Sprintf("%s takes extended or strict, not %q", m.name, m.v))
		}
	}
	if topics > 100 || intents > 100 {
		return badParam(qCustomTopic, "at most 100 custom topics and 100 custom intents may be given")
	}
	return nil
}

// checkCallback refuses a callback, when one is given, that is not an
// absolute http or https URL.
func checkCallback(callback string) error {
	if callback == "" {
		return nil
	}
	if u, err := url.Parse(callback); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badParam(qCallback, fmt.Sprintf("callback %q is not an http or https URL", callback))
	}
	return nil
}
