package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Message types of the voice agent's /v1/agent/converse WebSocket.
const (
	TypeSettings              = "Settings"
	TypeWelcome               = "Welcome"
	TypeSettingsApplied       = "SettingsApplied"
	TypeConversationText      = "ConversationText"
	TypeUserStartedSpeaking   = "UserStartedSpeaking"
	TypeAgentThinking         = "AgentThinking"
	TypeFunctionCallRequest   = "FunctionCallRequest"
	TypeFunctionCallResponse  = "FunctionCallResponse"
	TypeAgentStartedSpeaking  = "AgentStartedSpeaking"
	TypeAgentAudioDone        = "AgentAudioDone"
	TypePromptUpdated         = "PromptUpdated"
	TypeSpeakUpdated          = "SpeakUpdated"
	TypeThinkUpdated          = "ThinkUpdated"
	TypeListenUpdated         = "ListenUpdated"
	TypeInjectionRefused      = "InjectionRefused"
	TypeHistory               = "History"
	TypeLatencyReport         = "LatencyReport"
	TypeEndOfThought          = "EndOfThought"
	TypeFunctionCallCancelled = "FunctionCallCancelled"
	TypeUpdatePrompt          = "UpdatePrompt"
	TypeUpdateSpeak           = "UpdateSpeak"
	TypeUpdateThink           = "UpdateThink"
	TypeUpdateListen          = "UpdateListen"
	TypeInjectUserMessage     = "InjectUserMessage"
	TypeInjectAgentMessage    = "InjectAgentMessage"
)

// Codes of the voice agent's Error and Warning messages.
const (
	// CodeInvalidSettings: Settings (or an Update) that can be read but
	// break a rule, such as a speak model that contradicts its version.
	CodeInvalidSettings = "INVALID_SETTINGS"
	// CodeSettingsRequired: a text message other than Settings came first.
	CodeSettingsRequired = "SETTINGS_REQUIRED"
	// CodeForceEndTurnUnsupported: ForceEndTurn with a listen provider
	// other than version v2.
	CodeForceEndTurnUnsupported = "FORCE_END_TURN_UNSUPPORTED"
	// CodeInjectDuringSpeech: InjectAgentMessage while the agent speaks.
	CodeInjectDuringSpeech = "INJECT_AGENT_MESSAGE_DURING_AGENT_SPEECH"
	// CodeFunctionCallTimeout: a client-side function was not answered.
	CodeFunctionCallTimeout = "FUNCTION_CALL_TIMEOUT"
	// CodeThinkFailed: the language model could not be reached or failed.
	CodeThinkFailed = "THINK_PROVIDER_FAILED"
	// CodeAgentIdle: the socket was closed for lack of audio or messages.
	CodeAgentIdle = "CLIENT_MESSAGE_TIMEOUT"
)

// Provider types and versions of the agent's settings.
const (
	ProviderDeepgram   = "deepgram"
	ProviderOpenAI     = "open_ai"
	ProviderAnthropic  = "anthropic"
	ProviderGoogle     = "google"
	ProviderGroq       = "groq"
	ProviderAWSBedrock = "aws_bedrock"
	ProviderElevenLabs = "eleven_labs"
	ProviderCartesia   = "cartesia"
	ProviderAWSPolly   = "aws_polly"

	AgentVersionV1 = "v1"
	AgentVersionV2 = "v2"

	// DefaultAgentVoice is what the agent speaks with when Settings has no
	// agent.speak at all: turn-based text to speech (version v2).
	DefaultAgentVoice = "flux-kit-en"
)

// Encodings of the agent's audio. Input takes what streaming
// transcription takes; output is raw samples, or a container around them.
var (
	AgentInputEncodings  = ListenEncodings
	AgentOutputEncodings = []string{EncodingLinear16, EncodingMulaw, EncodingAlaw, EncodingMP3, EncodingOpus, EncodingFLAC, EncodingAAC}
	AgentContainers      = []string{"none", "wav", "ogg"}
)

// AgentSettings is the Settings message, the first a client sends on
// /v1/agent/converse. Its fields follow wire-reference section 5.
type AgentSettings struct {
	Tags         []string         `json:"tags,omitempty"`
	Experimental bool             `json:"experimental,omitempty"`
	MIPOptOut    bool             `json:"mip_opt_out,omitempty"`
	Flags        *AgentFlags      `json:"flags,omitempty"`
	Audio        AgentAudioConfig `json:"audio"`
	Agent        AgentConfig      `json:"agent"`
}

// AgentFlags are switches of the agent. History asks for History
// messages (on unless false).
type AgentFlags struct {
	History *bool `json:"history,omitempty"`
}

// AgentAudioConfig are the formats of the audio each way.
type AgentAudioConfig struct {
	Input  *AgentAudioInput  `json:"input,omitempty"`
	Output *AgentAudioOutput `json:"output,omitempty"`
}

// AgentAudioInput is the format of the audio the client sends.
type AgentAudioInput struct {
	Encoding   string `json:"encoding"`
	SampleRate int    `json:"sample_rate,omitempty"`
}

// AgentAudioOutput is the format of the audio the agent sends back.
type AgentAudioOutput struct {
	Encoding   string `json:"encoding,omitempty"`
	SampleRate int    `json:"sample_rate,omitempty"`
	Bitrate    int    `json:"bitrate,omitempty"`
	Container  string `json:"container,omitempty"`
}

// AgentConfig is Settings.agent: the pipeline.
type AgentConfig struct {
	// Language is deprecated in favour of the listen provider's.
	Language string        `json:"language,omitempty"`
	Context  *AgentContext `json:"context,omitempty"`
	Listen   *AgentListen  `json:"listen,omitempty"`
	// Think is one provider, or more as a fallback chain (an array on
	// the wire).
	Think ThinkChain `json:"think,omitzero"`
	// Speak is one voice, or more as a fallback chain; none means the
	// turn-based DefaultAgentVoice.
	Speak    SpeakChain `json:"speak,omitzero"`
	Greeting string     `json:"greeting,omitempty"`
}

// AgentContext carries a conversation to continue.
type AgentContext struct {
	Messages []AgentHistory `json:"messages"`
}

// AgentListen is agent.listen.
type AgentListen struct {
	Provider ListenProvider `json:"provider"`
}

// ListenProvider is the transcription of the person's speech: version v1
// with a nova-* model (continuous, with endpointing), or v2 with a
// flux-general-* model and its end-of-turn thresholds.
type ListenProvider struct {
	Type        string   `json:"type"`
	Version     string   `json:"version,omitempty"`
	Model       string   `json:"model"`
	Language    string   `json:"language,omitempty"`
	Keyterms    []string `json:"keyterms,omitempty"`
	SmartFormat *bool    `json:"smart_format,omitempty"`
	// Version v2 only.
	EOTThreshold      *float64 `json:"eot_threshold,omitempty"`
	EagerEOTThreshold *float64 `json:"eager_eot_threshold,omitempty"`
	EOTTimeoutMS      *int     `json:"eot_timeout_ms,omitempty"`
	LanguageHints     []string `json:"language_hints,omitempty"`
}

// TurnAware reports whether the provider detects turns (version v2): the
// only one ForceEndTurn works with.
func (p ListenProvider) TurnAware() bool { return p.Version == AgentVersionV2 }

// Think is one language model the agent thinks with.
type Think struct {
	Provider ThinkProvider `json:"provider"`
	// Endpoint is a model of one's own: a chat-completions URL.
	Endpoint *AgentEndpoint `json:"endpoint,omitempty"`
	Prompt   string         `json:"prompt,omitempty"`
	// ContextLength bounds the conversation sent to a model of one's own.
	ContextLength ContextLength   `json:"context_length,omitzero"`
	Functions     []AgentFunction `json:"functions,omitempty"`
}

// ThinkProvider names the model.
type ThinkProvider struct {
	Type          string   `json:"type"`
	Model         string   `json:"model,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	Version       string   `json:"version,omitempty"`
	ReasoningMode string   `json:"reasoning_mode,omitempty"`
}

// AgentEndpoint is an HTTP address the agent calls, with headers.
type AgentEndpoint struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// AgentFunction is a function the model may call. Without an endpoint it
// is client-side: the agent asks the client with FunctionCallRequest.
type AgentFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Endpoint    *AgentEndpoint  `json:"endpoint,omitempty"`
}

// ClientSide reports whether the client runs the function.
func (f AgentFunction) ClientSide() bool { return f.Endpoint == nil }

// ContextLength is a number of tokens, or "max".
type ContextLength struct {
	Max    bool
	Tokens int
}

// IsZero reports whether no context length is set.
func (c ContextLength) IsZero() bool { return !c.Max && c.Tokens == 0 }

// MarshalJSON writes "max" or the number.
func (c ContextLength) MarshalJSON() ([]byte, error) {
	if c.Max {
		return []byte(`"max"`), nil
	}
	return json.Marshal(c.Tokens)
}

// UnmarshalJSON reads "max" or a whole number.
func (c *ContextLength) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		if s != "max" {
			return fmt.Errorf("context_length is a number of tokens or \"max\", not %q", s)
		}
		*c = ContextLength{Max: true}
		return nil
	}
	var f float64
	if err := json.Unmarshal(data, &f); err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return fmt.Errorf("context_length is a number of tokens or \"max\", not %s", data)
	}
	*c = ContextLength{Tokens: int(f)}
	return nil
}

// Speak is one voice the agent speaks with.
type Speak struct {
	Provider SpeakProvider `json:"provider"`
	// Endpoint is where a provider other than deepgram is reached.
	Endpoint *AgentEndpoint `json:"endpoint,omitempty"`
}

// SpeakProvider is a voice. The deepgram type takes Version (v1, aura-*
// models; v2, flux-* models), Model and Speed; the other providers name
// their voices their own way, kept as they come.
type SpeakProvider struct {
	Type    string   `json:"type"`
	Version string   `json:"version,omitempty"`
	Model   string   `json:"model,omitempty"`
	Speed   *float64 `json:"speed,omitempty"`
	// Other providers.
	ModelID      string          `json:"model_id,omitempty"`
	Voice        json.RawMessage `json:"voice,omitempty"`
	Language     string          `json:"language,omitempty"`
	LanguageCode string          `json:"language_code,omitempty"`
	Engine       string          `json:"engine,omitempty"`
	Credentials  json.RawMessage `json:"credentials,omitempty"`
}

// DeepgramVersion is the version of a deepgram voice: v1 unless v2 is
// given.
func (p SpeakProvider) DeepgramVersion() string {
	if p.Version == "" {
		return AgentVersionV1
	}
	return p.Version
}

// ThinkChain is agent.think: one provider (an object on the wire) or a
// fallback chain (an array).
type ThinkChain []Think

// SpeakChain is agent.speak: one voice (an object on the wire) or a
// fallback chain (an array).
type SpeakChain []Speak

// MarshalJSON writes one as an object, more as an array.
func (c ThinkChain) MarshalJSON() ([]byte, error) { return marshalChain([]Think(c)) }

// UnmarshalJSON reads an object or an array.
func (c *ThinkChain) UnmarshalJSON(data []byte) error {
	return unmarshalChain(data, (*[]Think)(c))
}

// MarshalJSON writes one as an object, more as an array.
func (c SpeakChain) MarshalJSON() ([]byte, error) { return marshalChain([]Speak(c)) }

// UnmarshalJSON reads an object or an array.
func (c *SpeakChain) UnmarshalJSON(data []byte) error {
	return unmarshalChain(data, (*[]Speak)(c))
}

func marshalChain[T any](c []T) ([]byte, error) {
	if len(c) == 1 {
		return json.Marshal(c[0])
	}
	return json.Marshal(c)
}

func unmarshalChain[T any](data []byte, out *[]T) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var list []T
		if err := json.Unmarshal(data, &list); err != nil {
			return err
		}
		*out = list
		return nil
	}
	if string(data) == "null" {
		*out = nil
		return nil
	}
	var one T
	if err := json.Unmarshal(data, &one); err != nil {
		return err
	}
	*out = []T{one}
	return nil
}

// MarshalJSON writes the message with its type.
func (s AgentSettings) MarshalJSON() ([]byte, error) {
	type wire AgentSettings
	return json.Marshal(struct {
		Type string `json:"type"`
		wire
	}{TypeSettings, wire(s)})
}

// UnmarshalJSON reads Settings, refusing a field of a wrong type with the
// field's path named.
func (s *AgentSettings) UnmarshalJSON(data []byte) error {
	type wire AgentSettings
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return settingsParseError(err)
	}
	*s = AgentSettings(w)
	return nil
}

// settingsParseError names the field of Settings that could not be read,
// as the service does.
func settingsParseError(err error) error {
	field := ""
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field = te.Field
	}
	if field == "" {
		return &OptionError{Reason: "Error parsing client message. " + err.Error(), Code: CodeUnparsableClientMessage}
	}
	return &OptionError{Param: field,
		Reason: "Error parsing client message. Check the " + field + " field against the API spec.",
		Code:   CodeUnparsableClientMessage}
}

// invalidSetting is a rule of the agent's settings broken at field.
func invalidSetting(field, reason string) *OptionError {
	return &OptionError{Param: field, Reason: reason, Code: CodeInvalidSettings}
}

// reasonOf and paramOf read an *OptionError of another endpoint's rules,
// to say it again of an agent setting.
func reasonOf(err error) string {
	var oe *OptionError
	if errors.As(err, &oe) {
		return oe.Reason
	}
	return err.Error()
}

func paramOf(err error) string {
	var oe *OptionError
	if errors.As(err, &oe) {
		return oe.Param
	}
	return ""
}

var functionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate checks every rule of the settings a client can check, and
// says which field breaks it.
func (s AgentSettings) Validate() error {
	if err := s.Audio.validate(); err != nil {
		return err
	}
	for i, t := range s.Tags {
		if strings.TrimSpace(t) == "" {
			return invalidSetting(fmt.Sprintf("tags[%d]", i), "a tag cannot be empty")
		}
	}
	return s.Agent.Validate()
}

func (a AgentAudioConfig) validate() error {
	if in := a.Input; in != nil {
		if !slices.Contains(AgentInputEncodings, in.Encoding) {
			return invalidSetting("audio.input.encoding", fmt.Sprintf("unknown encoding %q; the agent takes %s", in.Encoding, strings.Join(AgentInputEncodings, ", ")))
		}
		if IsRawPCM(in.Encoding) && in.SampleRate <= 0 {
			return invalidSetting("audio.input.sample_rate", in.Encoding+" audio has no header, so its sample rate must be given")
		}
		if in.SampleRate < 0 || in.SampleRate > 192000 {
			return invalidSetting("audio.input.sample_rate", fmt.Sprintf("sample rate %d is out of range", in.SampleRate))
		}
	}
	if out := a.Output; out != nil {
		if out.Encoding != "" && !slices.Contains(AgentOutputEncodings, out.Encoding) {
			return invalidSetting("audio.output.encoding", fmt.Sprintf("unknown encoding %q; the agent speaks %s", out.Encoding, strings.Join(AgentOutputEncodings, ", ")))
		}
		if out.SampleRate < 0 || out.SampleRate > 192000 {
			return invalidSetting("audio.output.sample_rate", fmt.Sprintf("sample rate %d is out of range", out.SampleRate))
		}
		if out.Bitrate < 0 {
			return invalidSetting("audio.output.bitrate", "a bitrate cannot be negative")
		}
		if out.Container != "" && !slices.Contains(AgentContainers, out.Container) {
			return invalidSetting("audio.output.container", fmt.Sprintf("unknown container %q; use %s", out.Container, strings.Join(AgentContainers, ", ")))
		}
	}
	return nil
}

// Validate checks agent: listen, think, speak and the context.
func (a AgentConfig) Validate() error {
	if a.Listen != nil {
		if err := a.Listen.Provider.Validate("agent.listen.provider"); err != nil {
			return err
		}
	}
	if err := a.Think.Validate("agent.think"); err != nil {
		return err
	}
	if err := a.Speak.Validate("agent.speak"); err != nil {
		return err
	}
	if a.Context != nil {
		for i, m := range a.Context.Messages {
			if err := m.validate(fmt.Sprintf("agent.context.messages[%d]", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Voices returns the voices the agent speaks with: the chain given, or
// the turn-based DefaultAgentVoice when none is.
func (a AgentConfig) Voices() SpeakChain {
	if len(a.Speak) == 0 {
		return SpeakChain{{Provider: SpeakProvider{Type: ProviderDeepgram, Version: AgentVersionV2, Model: DefaultAgentVoice}}}
	}
	return a.Speak
}

// Validate checks a listen provider; field is where it sits.
func (p ListenProvider) Validate(field string) error {
	if p.Type != ProviderDeepgram {
		return invalidSetting(field+".type", fmt.Sprintf("the agent listens with the deepgram provider only, not %q", p.Type))
	}
	m := strings.ToLower(p.Model)
	switch p.Version {
	case "", AgentVersionV1:
		if IsTurnAwareModel(m) {
			return invalidSetting(field+".model", p.Model+" is a turn-aware model: give version v2 with it")
		}
		if m != "" {
			if err := CheckListenModel(m); err != nil {
				return invalidSetting(field+".model", reasonOf(err))
			}
		}
		if p.EOTThreshold != nil || p.EagerEOTThreshold != nil || p.EOTTimeoutMS != nil || len(p.LanguageHints) > 0 {
			return invalidSetting(field, "end-of-turn thresholds and language hints belong to version v2 (flux-general-*)")
		}
	case AgentVersionV2:
		if !IsTurnAwareModel(m) {
			return invalidSetting(field+".model", fmt.Sprintf("version v2 takes a flux-general-* model, not %q", p.Model))
		}
		var eot, eager float64
		timeout := 0
		if p.EOTThreshold != nil {
			eot = *p.EOTThreshold
		}
		if p.EagerEOTThreshold != nil {
			eager = *p.EagerEOTThreshold
		}
		if p.EOTTimeoutMS != nil {
			timeout = *p.EOTTimeoutMS
		}
		if err := checkTurnThresholds(eot, eager, timeout); err != nil {
			return invalidSetting(field+"."+paramOf(err), reasonOf(err))
		}
		if err := checkLanguageHints(m, p.LanguageHints); err != nil {
			return invalidSetting(field+".language_hints", reasonOf(err))
		}
	default:
		return invalidSetting(field+".version", fmt.Sprintf("unknown version %q; use v1 (nova-*) or v2 (flux-general-*)", p.Version))
	}
	if err := checkKeyterms(p.Keyterms); err != nil {
		return invalidSetting(field+".keyterms", reasonOf(err))
	}
	return nil
}

// Validate checks a think chain; field is where it sits.
func (c ThinkChain) Validate(field string) error {
	if len(c) == 0 {
		return invalidSetting(field, "the agent needs a language model to think with (agent.think.provider)")
	}
	for i, t := range c {
		f := field
		if len(c) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if err := t.Validate(f); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks one think provider; field is where it sits.
func (t Think) Validate(field string) error {
	p := t.Provider
	if strings.TrimSpace(p.Type) == "" {
		return invalidSetting(field+".provider.type", "name the model's provider (open_ai, anthropic, google, groq, aws_bedrock, or the one the think-model list gives)")
	}
	if strings.TrimSpace(p.Model) == "" {
		return invalidSetting(field+".provider.model", "name a model from the think-model list")
	}
	if p.Temperature != nil && !(*p.Temperature >= 0 && *p.Temperature <= 2) {
		return invalidSetting(field+".provider.temperature", fmt.Sprintf("temperature %v is out of range (0 to 2)", *p.Temperature))
	}
	if t.Endpoint != nil {
		if err := t.Endpoint.validate(field + ".endpoint"); err != nil {
			return err
		}
	}
	if !t.ContextLength.IsZero() && t.Endpoint == nil {
		return invalidSetting(field+".context_length", "context_length applies to a model of one's own, given with endpoint")
	}
	seen := map[string]bool{}
	for i, fn := range t.Functions {
		f := fmt.Sprintf("%s.functions[%d]", field, i)
		if !functionName.MatchString(fn.Name) {
			return invalidSetting(f+".name", fmt.Sprintf("a function's name is 1 to 64 letters, digits, _ or -, not %q", fn.Name))
		}
		if seen[fn.Name] {
			return invalidSetting(f+".name", "two functions are named "+fn.Name)
		}
		seen[fn.Name] = true
		if len(fn.Parameters) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(fn.Parameters, &obj); err != nil || obj == nil {
				return invalidSetting(f+".parameters", "parameters is a JSON Schema object")
			}
		}
		if fn.Endpoint != nil {
			if err := fn.Endpoint.validate(f + ".endpoint"); err != nil {
				return err
			}
			switch strings.ToLower(fn.Endpoint.Method) {
			case "", "get", "post", "put", "patch", "delete":
			default:
				return invalidSetting(f+".endpoint.method", fmt.Sprintf("unknown HTTP method %q", fn.Endpoint.Method))
			}
		}
	}
	return nil
}

func (e AgentEndpoint) validate(field string) error {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalidSetting(field+".url", fmt.Sprintf("%q is not an http or https address", e.URL))
	}
	for k := range e.Headers {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\r\n:") {
			return invalidSetting(field+".headers", fmt.Sprintf("%q is not a header name", k))
		}
	}
	return nil
}

// Validate checks a speak chain; field is where it sits. An empty chain
// is valid: the agent speaks with DefaultAgentVoice.
func (c SpeakChain) Validate(field string) error {
	for i, s := range c {
		f := field
		if len(c) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if err := s.Validate(f); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks one voice: a deepgram model must match its version (a
// flux-* model under v1, or an aura-* model under v2, is invalid), and
// another provider needs its endpoint.
func (s Speak) Validate(field string) error {
	p := s.Provider
	f := field + ".provider"
	switch p.Type {
	case ProviderDeepgram:
		switch v := p.DeepgramVersion(); v {
		case AgentVersionV1:
			if IsFluxVoice(p.Model) {
				return invalidSetting(f+".model", fmt.Sprintf("%s is a turn-based (flux) voice: it needs version v2, and version v1 takes aura-* voices", p.Model))
			}
			if !IsAuraVoice(p.Model) {
				return invalidSetting(f+".model", fmt.Sprintf("version v1 takes an aura-* voice, not %q", p.Model))
			}
			if p.Speed != nil && !(*p.Speed >= MinSpeakSpeed && *p.Speed <= MaxSpeakSpeed) {
				return invalidSetting(f+".speed", fmt.Sprintf("speed %v is out of range (%v to %v)", *p.Speed, MinSpeakSpeed, MaxSpeakSpeed))
			}
		case AgentVersionV2:
			if IsAuraVoice(p.Model) {
				return invalidSetting(f+".model", fmt.Sprintf("%s is a general (aura) voice: it needs version v1, and version v2 takes flux-* voices", p.Model))
			}
			if !IsFluxVoice(p.Model) {
				return invalidSetting(f+".model", fmt.Sprintf("version v2 takes a flux-* voice, not %q", p.Model))
			}
			if p.Speed != nil && !(*p.Speed >= MinSpeakV2Speed && *p.Speed <= MaxSpeakV2Speed) {
				return invalidSetting(f+".speed", fmt.Sprintf("speed %v is out of range (%v to %v)", *p.Speed, MinSpeakV2Speed, MaxSpeakV2Speed))
			}
		default:
			return invalidSetting(f+".version", fmt.Sprintf("unknown version %q; use v1 (aura-*) or v2 (flux-*)", v))
		}
	case "":
		return invalidSetting(f+".type", "name the voice's provider, such as deepgram")
	default:
		if s.Endpoint == nil {
			return invalidSetting(field+".endpoint", "a voice of the "+p.Type+" provider needs its endpoint (url and headers)")
		}
		if err := s.Endpoint.validate(field + ".endpoint"); err != nil {
			return err
		}
	}
	return nil
}
