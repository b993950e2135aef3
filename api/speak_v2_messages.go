package api

import (
	"encoding/json"
	"fmt"
	"math"
)

// SpeechMessage is a message the service sends on /v2/speak:
// *SpeakAudio, *SpeechConnected, *SpeechTurnStarted, *SpeechFlushed,
// *SpeechMetadata, *SpeechInterrupted, *SessionMetadata, *SpeechWarning,
// *SpeechError or *UnknownMessage.
type SpeechMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// SpeechConnected is the first message of a /v2/speak stream.
type SpeechConnected struct {
	Type         string   `json:"type"`
	RequestID    string   `json:"request_id"`
	ModelName    string   `json:"model_name"`
	ModelVersion string   `json:"model_version"`
	ModelUUIDs   []string `json:"model_uuids,omitempty"`
}

// MessageType implements SpeechMessage.
func (*SpeechConnected) MessageType() string { return TypeConnected }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechConnected) MarshalJSON() ([]byte, error) {
	type wire SpeechConnected
	m.Type = TypeConnected
	return json.Marshal(wire(m))
}

// SpeechTurnStarted (type SpeechStarted) opens a turn: its audio follows.
// SpeechID, assigned by the service, names the turn in every later
// message about it; clients never send one.
type SpeechTurnStarted struct {
	Type     string `json:"type"`
	SpeechID string `json:"speech_id"`
}

// MessageType implements SpeechMessage.
func (*SpeechTurnStarted) MessageType() string { return TypeSpeechStarted }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechTurnStarted) MarshalJSON() ([]byte, error) {
	type wire SpeechTurnStarted
	m.Type = TypeSpeechStarted
	return json.Marshal(wire(m))
}

// SpeechFlushed answers a Flush on /v2/speak. The turn's audio may still
// be arriving: the end of a turn is SpeechMetadata, not SpeechFlushed.
type SpeechFlushed struct {
	Type     string `json:"type"`
	SpeechID string `json:"speech_id"`
}

// MessageType implements SpeechMessage.
func (*SpeechFlushed) MessageType() string { return TypeFlushed }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechFlushed) MarshalJSON() ([]byte, error) {
	type wire SpeechFlushed
	m.Type = TypeFlushed
	return json.Marshal(wire(m))
}

// SpeechControls counts the inline voice controls applied to a turn.
type SpeechControls struct {
	PronunciationsApplied int `json:"pronunciations_applied"`
	PronunciationWarnings int `json:"pronunciation_warnings"`
}

// SpeechMetadata is the last message of a turn, sent once all its audio
// has been: the billing and timing counts of the turn.
type SpeechMetadata struct {
	Type                   string         `json:"type"`
	SpeechID               string         `json:"speech_id"`
	AudioDurationMS        int            `json:"audio_duration_ms"`
	InputCharacterCount    int            `json:"input_character_count"`
	BillableCharacterCount int            `json:"billable_character_count"`
	ControlsApplied        SpeechControls `json:"controls_applied"`
}

// MessageType implements SpeechMessage.
func (*SpeechMetadata) MessageType() string { return TypeSpeechMetadata }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechMetadata) MarshalJSON() ([]byte, error) {
	type wire SpeechMetadata
	m.Type = TypeSpeechMetadata
	return json.Marshal(wire(m))
}

// SpeechInterrupted answers an Interrupt: the turn ended early.
// TextSpoken is what the listener heard and TextRemaining what they did
// not. AudioPlayedMS, when the service sends it, is how much audio had
// been played when the interrupt landed.
type SpeechInterrupted struct {
	Type          string `json:"type"`
	SpeechID      string `json:"speech_id"`
	TextSpoken    string `json:"text_spoken"`
	TextRemaining string `json:"text_remaining"`
	AudioPlayedMS int    `json:"audio_played_ms,omitzero"`
}

// MessageType implements SpeechMessage.
func (*SpeechInterrupted) MessageType() string { return TypeSpeechInterrupted }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechInterrupted) MarshalJSON() ([]byte, error) {
	type wire SpeechInterrupted
	m.Type = TypeSpeechInterrupted
	return json.Marshal(wire(m))
}

// SessionMetadata closes a /v2/speak stream: the totals of the session.
type SessionMetadata struct {
	Type                        string `json:"type"`
	TotalAudioDurationMS        int    `json:"total_audio_duration_ms"`
	TotalInputCharacterCount    int    `json:"total_input_character_count"`
	TotalBillableCharacterCount int    `json:"total_billable_character_count"`
}

// MessageType implements SpeechMessage.
func (*SessionMetadata) MessageType() string { return TypeSessionMetadata }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SessionMetadata) MarshalJSON() ([]byte, error) {
	type wire SessionMetadata
	m.Type = TypeSessionMetadata
	return json.Marshal(wire(m))
}

// SpeechWarning is a Warning on /v2/speak: something was not done or was
// changed, but the stream goes on. Code is CodeInputMarkupStripped,
// CodeNoActiveSpeech, CodeSynthesisRetrying or one this client does not
// know, which is kept as it came.
type SpeechWarning struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	Description string `json:"description"`
}

// MessageType implements SpeechMessage.
func (*SpeechWarning) MessageType() string { return TypeWarning }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechWarning) MarshalJSON() ([]byte, error) {
	type wire SpeechWarning
	m.Type = TypeWarning
	return json.Marshal(wire(m))
}

// SpeechError is the fatal Error message of /v2/speak (codes such as
// MESSAGE-0000, DATA-0000, BIG-0000, NET-0000); the service closes the
// stream after it.
type SpeechError struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	Description string `json:"description"`
}

// MessageType implements SpeechMessage.
func (*SpeechError) MessageType() string { return TypeError }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeechError) MarshalJSON() ([]byte, error) {
	type wire SpeechError
	m.Type = TypeError
	return json.Marshal(wire(m))
}

// Err converts the message into an *Error.
func (m *SpeechError) Err() *Error { return &Error{Code: m.Code, Message: m.Description} }

// DecodeSpeechMessage decodes a text frame received from /v2/speak.
// Unknown types become *UnknownMessage with the raw JSON; unknown warning
// codes are kept. Malformed JSON is an error. It never panics.
func DecodeSpeechMessage(data []byte) (SpeechMessage, error) {
	return decodeMessage(data, func(typ string) SpeechMessage {
		switch typ {
		case TypeConnected:
			return &SpeechConnected{}
		case TypeSpeechStarted:
			return &SpeechTurnStarted{}
		case TypeFlushed:
			return &SpeechFlushed{}
		case TypeSpeechMetadata:
			return &SpeechMetadata{}
		case TypeSpeechInterrupted:
			return &SpeechInterrupted{}
		case TypeSessionMetadata:
			return &SessionMetadata{}
		case TypeWarning:
			return &SpeechWarning{}
		case TypeError:
			return &SpeechError{}
		}
		return &UnknownMessage{}
	})
}

// SpeechInterrupt ends the turn in progress at once; the service answers
// SpeechInterrupted, or a Warning NO_ACTIVE_SPEECH outside a turn.
type SpeechInterrupt struct{}

// MessageType implements SpeakClientMessage.
func (*SpeechInterrupt) MessageType() string { return TypeInterrupt }

// MarshalJSON writes {"type":"Interrupt"}.
func (SpeechInterrupt) MarshalJSON() ([]byte, error) { return []byte(`{"type":"Interrupt"}`), nil }

// SpeechConfigure changes the speed of a /v2/speak stream mid-stream. It
// carries speed and nothing else: expressivity is fixed for the life of
// the connection.
type SpeechConfigure struct {
	Speed float64 `json:"speed"`
}

// MessageType implements SpeakClientMessage.
func (*SpeechConfigure) MessageType() string { return TypeConfigure }

// MarshalJSON writes {"type":"Configure","speed":1.05}, the speed as the
// step it names.
func (m SpeechConfigure) MarshalJSON() ([]byte, error) {
	if math.IsNaN(m.Speed) || math.IsInf(m.Speed, 0) {
		return nil, fmt.Errorf("speed %v is not a number", m.Speed)
	}
	return []byte(`{"type":"Configure","speed":` + FormatSpeakV2Speed(m.Speed) + `}`), nil
}

// Validate applies the speed rule of /v2/speak to the message.
func (m *SpeechConfigure) Validate() error { return CheckSpeakV2Speed(m.Speed) }

// DecodeSpeechClientMessage decodes a text frame a client sent to
// /v2/speak, for the local engine: Speak, Flush, Interrupt, Configure or
// Close. Unknown types, and Clear (a /v1/speak message), become
// *UnknownMessage. A message whose fields have the wrong type is an error
// matching ErrBadSpeakMessage. It never panics.
func DecodeSpeechClientMessage(data []byte) (SpeakClientMessage, error) {
	return decodeSpeakClient(data, true)
}
