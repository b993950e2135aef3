package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Message types of the /v1/listen WebSocket.
const (
	TypeResults       = "Results"
	TypeMetadata      = "Metadata"
	TypeUtteranceEnd  = "UtteranceEnd"
	TypeSpeechStarted = "SpeechStarted"
	TypeError         = "Error"
	TypeWarning       = "Warning"

	TypeKeepAlive   = "KeepAlive"
	TypeFinalize    = "Finalize"
	TypeCloseStream = "CloseStream"
	TypeConfigure   = "Configure"
)

// ModelInfo names a model and its version.
type ModelInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Arch    string `json:"arch"`
}

// ListenMessage is a message received on a /v1/listen stream: *Results,
// *Metadata, *UtteranceEnd, *SpeechStarted, *StreamError or *UnknownMessage.
type ListenMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// ResultsChannel holds the alternatives of a Results message.
type ResultsChannel struct {
	Alternatives []Alternative `json:"alternatives"`
}

// ResultsMetadata is the metadata block of a Results message.
type ResultsMetadata struct {
	RequestID string            `json:"request_id"`
	ModelInfo ModelInfo         `json:"model_info"`
	ModelUUID string            `json:"model_uuid"`
	Extra     map[string]string `json:"extra,omitempty"`
}

// Results carries a transcript of the audio from Start for Duration
// seconds. IsFinal marks a transcript that will not change; SpeechFinal
// marks the end of speech (an endpoint); FromFinalize marks the answer to a
// Finalize message. Entities sit at the top level, beside Channel.
type Results struct {
	Type         string          `json:"type"`
	ChannelIndex []int           `json:"channel_index"`
	Duration     float64         `json:"duration"`
	Start        float64         `json:"start"`
	IsFinal      bool            `json:"is_final"`
	SpeechFinal  bool            `json:"speech_final"`
	FromFinalize bool            `json:"from_finalize"`
	Channel      ResultsChannel  `json:"channel"`
	Metadata     ResultsMetadata `json:"metadata"`
	// Entities is present (possibly empty) on finals with detect_entities.
	Entities []Entity `json:"entities,omitzero"`
}

// MessageType implements ListenMessage.
func (*Results) MessageType() string { return TypeResults }

// Transcript returns the transcript of the first alternative.
func (r *Results) Transcript() string {
	if len(r.Channel.Alternatives) == 0 {
		return ""
	}
	return r.Channel.Alternatives[0].Transcript
}

// Metadata closes a stream: it is sent after CloseStream or before an
// idle close. SHA256 is "incomplete" for streams; Models and ModelInfo
// appear once audio was decoded.
type Metadata struct {
	Type           string               `json:"type"`
	TransactionKey string               `json:"transaction_key"`
	RequestID      string               `json:"request_id"`
	SHA256         string               `json:"sha256"`
	Created        string               `json:"created"`
	Duration       float64              `json:"duration"`
	Channels       int                  `json:"channels"`
	Models         []string             `json:"models,omitempty"`
	ModelInfo      map[string]ModelInfo `json:"model_info,omitempty"`
	Extra          map[string]string    `json:"extra,omitempty"`
}

// MessageType implements ListenMessage.
func (*Metadata) MessageType() string { return TypeMetadata }

// UtteranceEnd reports a gap of utterance_end_ms after the last word.
type UtteranceEnd struct {
	Type        string  `json:"type"`
	Channel     []int   `json:"channel"`
	LastWordEnd float64 `json:"last_word_end"`
}

// MessageType implements ListenMessage.
func (*UtteranceEnd) MessageType() string { return TypeUtteranceEnd }

// SpeechStarted reports the start of speech (vad_events=true).
type SpeechStarted struct {
	Type      string  `json:"type"`
	Channel   []int   `json:"channel"`
	Timestamp float64 `json:"timestamp"`
}

// MessageType implements ListenMessage.
func (*SpeechStarted) MessageType() string { return TypeSpeechStarted }

// StreamError is an Error message sent on a socket.
type StreamError struct {
	Type        string `json:"type"`
	Variant     string `json:"variant,omitempty"`
	Description string `json:"description,omitempty"`
	Code        string `json:"code,omitempty"`
	Message     string `json:"message,omitempty"`
}

// MessageType implements ListenMessage.
func (*StreamError) MessageType() string { return TypeError }

// Err converts the message into an *Error.
func (m *StreamError) Err() *Error {
	return &Error{Code: firstNonEmpty(m.Code, m.Variant), Message: firstNonEmpty(m.Description, m.Message)}
}

// UnknownMessage is a message of a type this client does not know. It is
// kept, not refused: the service adds message types over time.
type UnknownMessage struct {
	Type string
	Raw  json.RawMessage
}

// MessageType implements ListenMessage.
func (m *UnknownMessage) MessageType() string { return m.Type }

// ControlMessage is a client control message with no other field:
// KeepAlive, Finalize or CloseStream.
type ControlMessage struct {
	Type string `json:"type"`
	// Channel is sent by some clients with Finalize; it is optional.
	Channel *int `json:"channel,omitempty"`
}

// ErrNotJSONObject is returned for a text frame that is not a JSON object
// with a string type.
var ErrNotJSONObject = errors.New("not a JSON object with a type")

// maxMessageBytes bounds the size of a text message accepted from a peer.
const maxMessageBytes = 4 << 20

// peekType reads the type discriminator of a JSON text message.
func peekType(data []byte) (string, error) {
	if len(data) > maxMessageBytes {
		return "", fmt.Errorf("message of %d bytes is too large", len(data))
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotJSONObject, err)
	}
	if head.Type == nil {
		return "", ErrNotJSONObject
	}
	return *head.Type, nil
}

// decodeMessage decodes a text frame received from a WebSocket into the
// message byType makes for its type. A type byType does not know (it
// makes an *UnknownMessage) keeps its raw JSON; malformed JSON is an
// error.
func decodeMessage[M interface{ MessageType() string }](data []byte, byType func(typ string) M) (M, error) {
	var none M
	typ, err := peekType(data)
	if err != nil {
		return none, err
	}
	msg := byType(typ)
	if u, ok := any(msg).(*UnknownMessage); ok {
		u.Type, u.Raw = typ, append(json.RawMessage(nil), data...)
		return msg, nil
	}
	if err := json.Unmarshal(data, msg); err != nil {
		return none, fmt.Errorf("decode %s message: %w", typ, err)
	}
	return msg, nil
}

// DecodeListenMessage decodes a text frame received from /v1/listen.
// Unknown types become *UnknownMessage; malformed JSON is an error.
func DecodeListenMessage(data []byte) (ListenMessage, error) {
	return decodeMessage(data, func(typ string) ListenMessage {
		switch typ {
		case TypeResults:
			return &Results{}
		case TypeMetadata:
			return &Metadata{}
		case TypeUtteranceEnd:
			return &UtteranceEnd{}
		case TypeSpeechStarted:
			return &SpeechStarted{}
		case TypeError:
			return &StreamError{}
		}
		return &UnknownMessage{}
	})
}

// DecodeControlMessage decodes a text frame a client sent to /v1/listen.
func DecodeControlMessage(data []byte) (ControlMessage, error) {
	typ, err := peekType(data)
	if err != nil {
		return ControlMessage{}, err
	}
	var m ControlMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return ControlMessage{}, fmt.Errorf("decode %s message: %w", typ, err)
	}
	return m, nil
}
