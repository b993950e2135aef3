package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// AgentMessage is a message of /v1/agent/converse, either way. What the
// service sends is decoded by DecodeAgentMessage, what a client sends by
// DecodeAgentClientMessage.
type AgentMessage interface {
	MessageType() string
}

// Welcome is the first message of the agent socket.
type Welcome struct {
	RequestID string `json:"request_id"`
}

// SettingsApplied acknowledges Settings: audio is accepted from now on.
type SettingsApplied struct{}

// Roles of ConversationText and History.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ConversationText is what one side said, as text.
type ConversationText struct {
	Role            string   `json:"role"`
	Content         string   `json:"content"`
	Languages       []string `json:"languages,omitempty"`
	LanguagesHinted []string `json:"languages_hinted,omitempty"`
}

// UserStartedSpeaking says the person speaks: playback of the agent's
// audio stops at once (barge-in).
type UserStartedSpeaking struct{}

// AgentThinking carries what the agent thinks before it answers.
type AgentThinking struct {
	Content string `json:"content"`
}

// FunctionCall is one call the model makes. Arguments is a JSON text.
type FunctionCall struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	ClientSide       bool   `json:"client_side"`
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// FunctionCallRequest asks for calls: the client runs those that are
// client-side and answers each with FunctionCallResponse.
type FunctionCallRequest struct {
	Functions []FunctionCall `json:"functions"`
}

// UnmarshalJSON reads the current functions[] form, and the early-access
// flat form (function_name, function_call_id, input) some clients and
// recordings still have.
func (r *FunctionCallRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		Functions []FunctionCall  `json:"functions"`
		Name      string          `json:"function_name"`
		ID        string          `json:"function_call_id"`
		Input     json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Functions = w.Functions
	if len(w.Functions) == 0 && w.Name != "" {
		args := "{}"
		if len(w.Input) > 0 {
			args = string(w.Input)
		}
		r.Functions = []FunctionCall{{ID: w.ID, Name: w.Name, Arguments: args, ClientSide: true}}
	}
	return nil
}

// FunctionCallResponse is the result of a call: sent by the client for a
// client-side function, by the service for one it ran itself.
type FunctionCallResponse struct {
	ID      string `json:"id,omitempty"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

// UnmarshalJSON reads id/name/content, and the older function_call_id and
// output.
func (r *FunctionCallResponse) UnmarshalJSON(data []byte) error {
	var w struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Content string `json:"content"`
		OldID   string `json:"function_call_id"`
		Output  string `json:"output"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = FunctionCallResponse{ID: w.ID, Name: w.Name, Content: w.Content}
	if r.ID == "" {
		r.ID = w.OldID
	}
	if r.Content == "" {
		r.Content = w.Output
	}
	return nil
}

// FunctionCallCancelled says calls asked for are no longer wanted.
type FunctionCallCancelled struct {
	Functions []FunctionCall `json:"functions"`
}

// AgentStartedSpeaking says the agent's audio begins, with where the time
// went, in seconds.
type AgentStartedSpeaking struct {
	TotalLatency float64 `json:"total_latency"`
	TTSLatency   float64 `json:"tts_latency"`
	TTTLatency   float64 `json:"ttt_latency"`
}

// AgentAudioDone says the last byte of the reply's audio was sent (not
// that it was heard).
type AgentAudioDone struct{}

// AgentUpdated acknowledges an Update*: its Type is PromptUpdated,
// SpeakUpdated, ThinkUpdated or ListenUpdated.
type AgentUpdated struct {
	Type string `json:"type"`
}

// InjectionRefused says an Inject* message could not be taken, and why.
type InjectionRefused struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// AgentHistory is a piece of the conversation: what a role said, or the
// function calls made, with their responses. It is a server message and
// an item of Settings' agent.context.messages.
type AgentHistory struct {
	Role          string                `json:"role,omitempty"`
	Content       string                `json:"content,omitempty"`
	FunctionCalls []HistoryFunctionCall `json:"function_calls,omitempty"`
}

// HistoryFunctionCall is a function call and its response.
type HistoryFunctionCall struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	ClientSide bool   `json:"client_side"`
	Arguments  string `json:"arguments"`
	Response   string `json:"response"`
}

func (h AgentHistory) validate(field string) error {
	switch {
	case len(h.FunctionCalls) > 0:
		if h.Role != "" || h.Content != "" {
			return invalidSetting(field, "a history item is either text (role and content) or function calls, not both")
		}
	case h.Role != RoleUser && h.Role != RoleAssistant:
		return invalidSetting(field+".role", fmt.Sprintf("role is user or assistant, not %q", h.Role))
	}
	return nil
}

// LatencyReport says where a turn's time went, in seconds; a field not
// sent is zero.
type LatencyReport struct {
	STTLatency         float64 `json:"stt_latency,omitempty"`
	TTTTokenLatency    float64 `json:"ttt_token_latency,omitempty"`
	TTTTextLatency     float64 `json:"ttt_text_latency,omitempty"`
	TTTToolLatency     float64 `json:"ttt_tool_latency,omitempty"`
	TTTThinkingLatency float64 `json:"ttt_thinking_latency,omitempty"`
	TTSLatency         float64 `json:"tts_latency,omitempty"`
	TotalLatency       float64 `json:"total_latency,omitempty"`
}

// EndOfThought marks the end of the model's work on a turn (seen on the
// wire, not documented).
type EndOfThought struct{}

// AgentNotice is a Warning or an Error of the agent socket.
type AgentNotice struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	Description string `json:"description"`
	// Message is sent empty by the service beside description.
	Message string `json:"message,omitempty"`
}

// Error implements error, for an Error the stream ends with.
func (n *AgentNotice) Error() string {
	d := n.Description
	if d == "" {
		d = n.Message
	}
	if n.Code != "" {
		return n.Code + ": " + d
	}
	return d
}

// AgentAudio is a binary frame of the agent's speech, in the
// audio.output format.
type AgentAudio struct {
	Data []byte
}

// Client messages.

// UpdatePrompt replaces the prompt mid-conversation (PromptUpdated).
type UpdatePrompt struct {
	Prompt string `json:"prompt"`
}

// UnmarshalJSON reads prompt, and the older instructions.
func (u *UpdatePrompt) UnmarshalJSON(data []byte) error {
	var w struct {
		Prompt       *string `json:"prompt"`
		Instructions string  `json:"instructions"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	u.Prompt = w.Instructions
	if w.Prompt != nil {
		u.Prompt = *w.Prompt
	}
	return nil
}

// UpdateSpeak changes the voice mid-conversation (SpeakUpdated).
type UpdateSpeak struct {
	Speak SpeakChain `json:"speak"`
}

// UpdateThink changes the model mid-conversation (ThinkUpdated).
type UpdateThink struct {
	Think ThinkChain `json:"think"`
}

// UpdateListen changes the transcription mid-conversation
// (ListenUpdated).
type UpdateListen struct {
	Listen AgentListen `json:"listen"`
}

// InjectUserMessage is a typed message from the person.
type InjectUserMessage struct {
	Content string `json:"content"`
}

// Behaviours of InjectAgentMessage.
const (
	InjectDefault   = "default"
	InjectQueue     = "queue"
	InjectInterrupt = "interrupt"
)

// InjectAgentMessage makes the agent say Message.
type InjectAgentMessage struct {
	Message  string `json:"message"`
	Behavior string `json:"behavior,omitempty"`
}

// UnmarshalJSON reads message, and content, which older clients send.
func (m *InjectAgentMessage) UnmarshalJSON(data []byte) error {
	var w struct {
		Message  *string `json:"message"`
		Content  string  `json:"content"`
		Behavior string  `json:"behavior"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = InjectAgentMessage{Message: w.Content, Behavior: w.Behavior}
	if w.Message != nil {
		m.Message = *w.Message
	}
	return nil
}

// AgentKeepAlive keeps a quiet socket open.
type AgentKeepAlive struct{}

// AgentForceEndTurn ends the person's turn at once (listen version v2).
type AgentForceEndTurn struct{}

// MessageType names each message as the wire does.
func (*Welcome) MessageType() string               { return TypeWelcome }
func (*SettingsApplied) MessageType() string       { return TypeSettingsApplied }
func (*ConversationText) MessageType() string      { return TypeConversationText }
func (*UserStartedSpeaking) MessageType() string   { return TypeUserStartedSpeaking }
func (*AgentThinking) MessageType() string         { return TypeAgentThinking }
func (*FunctionCallRequest) MessageType() string   { return TypeFunctionCallRequest }
func (*FunctionCallResponse) MessageType() string  { return TypeFunctionCallResponse }
func (*FunctionCallCancelled) MessageType() string { return TypeFunctionCallCancelled }
func (*AgentStartedSpeaking) MessageType() string  { return TypeAgentStartedSpeaking }
func (*AgentAudioDone) MessageType() string        { return TypeAgentAudioDone }
func (m *AgentUpdated) MessageType() string        { return m.Type }
func (*InjectionRefused) MessageType() string      { return TypeInjectionRefused }
func (*AgentHistory) MessageType() string          { return TypeHistory }
func (*LatencyReport) MessageType() string         { return TypeLatencyReport }
func (*EndOfThought) MessageType() string          { return TypeEndOfThought }
func (n *AgentNotice) MessageType() string         { return n.Type }
func (*AgentAudio) MessageType() string            { return "Audio" }
func (*AgentSettings) MessageType() string         { return TypeSettings }
func (*UpdatePrompt) MessageType() string          { return TypeUpdatePrompt }
func (*UpdateSpeak) MessageType() string           { return TypeUpdateSpeak }
func (*UpdateThink) MessageType() string           { return TypeUpdateThink }
func (*UpdateListen) MessageType() string          { return TypeUpdateListen }
func (*InjectUserMessage) MessageType() string     { return TypeInjectUserMessage }
func (*InjectAgentMessage) MessageType() string    { return TypeInjectAgentMessage }
func (*AgentKeepAlive) MessageType() string        { return TypeKeepAlive }
func (*AgentForceEndTurn) MessageType() string     { return TypeForceEndTurn }

// EncodeAgentMessage writes m as the text frame it is on the wire, with
// its type. Binary audio (*AgentAudio) is not a text frame.
func EncodeAgentMessage(m AgentMessage) ([]byte, error) {
	switch x := m.(type) {
	case *AgentAudio:
		return nil, errors.New("agent audio is sent as a binary frame")
	case *UnknownMessage:
		return append([]byte(nil), x.Raw...), nil
	case *AgentSettings:
		return json.Marshal(*x)
	case *AgentUpdated, *AgentNotice:
		return json.Marshal(x) // their Type field carries the type
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	typ, _ := json.Marshal(m.MessageType())
	if string(body) == "{}" || string(body) == "null" {
		return []byte(`{"type":` + string(typ) + `}`), nil
	}
	return append([]byte(`{"type":`+string(typ)+`,`), body[1:]...), nil
}

// ErrBadAgentMessage matches the error of a known message whose fields
// could not be read.
var ErrBadAgentMessage = errors.New("malformed agent message")

// DecodeAgentMessage decodes a text frame the service sent on
// /v1/agent/converse. A type this client does not know becomes an
// *UnknownMessage, kept to be shown, never an error; a known type with
// fields of the wrong shape is an error matching ErrBadAgentMessage. It
// never panics.
func DecodeAgentMessage(data []byte) (AgentMessage, error) {
	typ, err := peekType(data)
	if err != nil {
		return nil, err
	}
	var m AgentMessage
	switch typ {
	case TypeWelcome:
		m = &Welcome{}
	case TypeSettingsApplied:
		m = &SettingsApplied{}
	case TypeConversationText:
		m = &ConversationText{}
	case TypeUserStartedSpeaking:
		m = &UserStartedSpeaking{}
	case TypeAgentThinking:
		m = &AgentThinking{}
	case TypeFunctionCallRequest:
		m = &FunctionCallRequest{}
	case TypeFunctionCallResponse:
		m = &FunctionCallResponse{}
	case TypeFunctionCallCancelled:
		m = &FunctionCallCancelled{}
	case TypeAgentStartedSpeaking:
		m = &AgentStartedSpeaking{}
	case TypeAgentAudioDone:
		m = &AgentAudioDone{}
	case TypePromptUpdated, TypeSpeakUpdated, TypeThinkUpdated, TypeListenUpdated:
		return &AgentUpdated{Type: typ}, nil
	case TypeInjectionRefused:
		m = &InjectionRefused{}
	case TypeHistory:
		m = &AgentHistory{}
	case TypeLatencyReport:
		m = &LatencyReport{}
	case TypeEndOfThought:
		m = &EndOfThought{}
	case TypeWarning, TypeError:
		m = &AgentNotice{}
	default:
		return &UnknownMessage{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadAgentMessage, typ, err)
	}
	if n, ok := m.(*AgentNotice); ok {
		n.Type = typ
	}
	return m, nil
}

// DecodeAgentClientMessage decodes a text frame a client sent on
// /v1/agent/converse, for the local engine. It accepts the field names
// older clients use (InjectAgentMessage content, UpdatePrompt
// instructions, FunctionCallResponse function_call_id and output). An
// unknown type becomes an *UnknownMessage; a known type that cannot be
// read is an *OptionError naming the field, with the code the service
// answers (UNPARSABLE_CLIENT_MESSAGE). It never panics.
func DecodeAgentClientMessage(data []byte) (AgentMessage, error) {
	typ, err := peekType(data)
	if err != nil {
		return nil, &OptionError{Reason: "Text message received from client did not match any of the formats we expect.", Code: CodeUnparsableClientMessage}
	}
	var m AgentMessage
	switch typ {
	case TypeSettings:
		var s AgentSettings
		if err := json.Unmarshal(data, &s); err != nil {
			var oe *OptionError
			if errors.As(err, &oe) {
				return nil, oe
			}
			return nil, settingsParseError(err)
		}
		return &s, nil
	case TypeUpdatePrompt:
		m = &UpdatePrompt{}
	case TypeUpdateSpeak:
		m = &UpdateSpeak{}
	case TypeUpdateThink:
		m = &UpdateThink{}
	case TypeUpdateListen:
		m = &UpdateListen{}
	case TypeInjectUserMessage:
		m = &InjectUserMessage{}
	case TypeInjectAgentMessage:
		m = &InjectAgentMessage{}
	case TypeFunctionCallResponse:
		m = &FunctionCallResponse{}
	case TypeKeepAlive:
		return &AgentKeepAlive{}, nil
	case TypeForceEndTurn:
		return &AgentForceEndTurn{}, nil
	default:
		return &UnknownMessage{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, settingsParseError(err)
	}
	return m, nil
}

// CheckAgentClientMessage applies the rules a client can check of a
// message it is about to send, naming what is wrong. listenV2 says
// whether the listen provider in force is version v2.
func CheckAgentClientMessage(m AgentMessage, listenV2 bool) error {
	switch x := m.(type) {
	case *AgentSettings:
		return x.Validate()
	case *UpdatePrompt:
		if strings.TrimSpace(x.Prompt) == "" {
			return invalidSetting("prompt", "the new prompt is empty")
		}
	case *UpdateSpeak:
		if len(x.Speak) == 0 {
			return invalidSetting("speak", "UpdateSpeak needs a voice")
		}
		return x.Speak.Validate("speak")
	case *UpdateThink:
		return x.Think.Validate("think")
	case *UpdateListen:
		return x.Listen.Provider.Validate("listen.provider")
	case *InjectUserMessage:
		if strings.TrimSpace(x.Content) == "" {
			return invalidSetting("content", "the message is empty")
		}
	case *InjectAgentMessage:
		if strings.TrimSpace(x.Message) == "" {
			return invalidSetting("message", "the message is empty")
		}
		switch x.Behavior {
		case "", InjectDefault, InjectQueue, InjectInterrupt:
		default:
			return invalidSetting("behavior", fmt.Sprintf("behavior is default, queue or interrupt, not %q", x.Behavior))
		}
	case *FunctionCallResponse:
		if x.ID == "" || x.Name == "" {
			return invalidSetting("id", "a function's response names the call it answers (id and name)")
		}
	case *AgentForceEndTurn:
		if !listenV2 {
			return invalidSetting("listen.provider.version", "ForceEndTurn works with a turn-aware listen provider (version v2, flux-general-*) only")
		}
	}
	return nil
}
