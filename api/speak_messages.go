package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Message types of the speak WebSockets (/v1/speak and /v2/speak) beyond
// those they share with the listen families (Metadata, Warning, Error,
// Connected, SpeechStarted, Configure).
const (
	TypeSpeak             = "Speak"
	TypeFlush             = "Flush"
	TypeClear             = "Clear"
	TypeClose             = "Close"
	TypeFlushed           = "Flushed"
	TypeCleared           = "Cleared"
	TypeInterrupt         = "Interrupt"
	TypeSpeechMetadata    = "SpeechMetadata"
	TypeSpeechInterrupted = "SpeechInterrupted"
	TypeSessionMetadata   = "SessionMetadata"
	// TypeAudio marks a binary frame of audio. It never travels as a
	// type field: the service sends audio as binary frames.
	TypeAudio = "Audio"
)

// Codes the speak WebSockets send in warnings.
const (
	// CodeExcessiveFlush: more than MaxFlushesPerMinute Flush messages;
	// the flush was not done.
	CodeExcessiveFlush = "EXCESSIVE_FLUSH"
	// CodeNoActiveSpeech: a Flush or Interrupt on /v2/speak with no turn
	// in progress.
	CodeNoActiveSpeech = "NO_ACTIVE_SPEECH"
	// CodeSynthesisRetrying: /v2/speak is retrying a failed synthesis;
	// audio is delayed, not lost.
	CodeSynthesisRetrying = "SYNTHESIS_RETRYING"
	// CodeTextSkipped: the local engine's warning that characters of a
	// Speak its voice does not say (emoji, letters of another language's
	// script) were left out; the rest is spoken. The hosted service is
	// not known to send one.
	CodeTextSkipped = "TEXT_SKIPPED"
)

// MaxFlushesPerMinute is the service's limit of Flush messages on the
// /v1/speak WebSocket per 60 seconds; beyond it the service answers with a
// Warning EXCESSIVE_FLUSH instead of flushing.
const MaxFlushesPerMinute = 20

// ErrEmptyText is matched by the refusal of text with no characters,
// which the service would answer with a 400 error. The refusal is also an
// *OptionError, so it matches ErrInvalidOptions too.
var ErrEmptyText = errors.New("input text contains no characters")

// SpeakAudio is a binary frame of synthesized audio, in the encoding and
// sample rate of the stream, with no container. Next returns it between
// the typed messages of both speak WebSockets.
type SpeakAudio struct {
	Data []byte
}

// MessageType implements SpeakMessage and SpeechMessage.
func (*SpeakAudio) MessageType() string { return TypeAudio }

// SpeakMessage is a message the service sends on /v1/speak: *SpeakAudio,
// *SpeakMetadata, *Flushed, *Cleared, *SpeakWarning, *StreamError or
// *UnknownMessage.
type SpeakMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// SpeakMetadata is the first message of a /v1/speak stream, sent right
// after the handshake: which voice speaks.
type SpeakMetadata struct {
	Type                 string   `json:"type"`
	RequestID            string   `json:"request_id"`
	ModelName            string   `json:"model_name"`
	ModelVersion         string   `json:"model_version"`
	ModelUUID            string   `json:"model_uuid"`
	AdditionalModelUUIDs []string `json:"additional_model_uuids,omitempty"`
}

// MessageType implements SpeakMessage.
func (*SpeakMetadata) MessageType() string { return TypeMetadata }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m SpeakMetadata) MarshalJSON() ([]byte, error) {
	type wire SpeakMetadata
	m.Type = TypeMetadata
	return json.Marshal(wire(m))
}

// Flushed answers a Flush on /v1/speak once the audio of the text
// buffered before it has been sent. SequenceID counts flushes from 0.
type Flushed struct {
	Type       string `json:"type"`
	SequenceID int    `json:"sequence_id"`
}

// MessageType implements SpeakMessage.
func (*Flushed) MessageType() string { return TypeFlushed }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m Flushed) MarshalJSON() ([]byte, error) {
	type wire Flushed
	m.Type = TypeFlushed
	return json.Marshal(wire(m))
}

// Cleared answers a Clear on /v1/speak: the buffered text and the audio
// not yet sent were dropped. SequenceID counts clears from 0.
type Cleared struct {
	Type       string `json:"type"`
	SequenceID int    `json:"sequence_id"`
}

// MessageType implements SpeakMessage.
func (*Cleared) MessageType() string { return TypeCleared }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m Cleared) MarshalJSON() ([]byte, error) {
	type wire Cleared
	m.Type = TypeCleared
	return json.Marshal(wire(m))
}

// SpeakWarning is a Warning on /v1/speak: something was not done (for
// example CodeExcessiveFlush), but the stream goes on. The hosted service
// sends warn_code and warn_msg while its published description says code
// and description; both are read, and both are written, so any client
// understands the local engine.
type SpeakWarning struct {
	Type        string
	Code        string
	Description string
}

// MessageType implements SpeakMessage.
func (*SpeakWarning) MessageType() string { return TypeWarning }

type speakWarningWire struct {
	Type        string `json:"type"`
	WarnCode    string `json:"warn_code,omitempty"`
	WarnMsg     string `json:"warn_msg,omitempty"`
	Code        string `json:"code,omitempty"`
	Description string `json:"description,omitempty"`
}

// MarshalJSON writes the warning in both spellings.
func (m SpeakWarning) MarshalJSON() ([]byte, error) {
	return json.Marshal(speakWarningWire{Type: TypeWarning, WarnCode: m.Code, WarnMsg: m.Description, Code: m.Code, Description: m.Description})
}

// UnmarshalJSON reads warn_code and warn_msg, or code and description.
func (m *SpeakWarning) UnmarshalJSON(data []byte) error {
	var w speakWarningWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = SpeakWarning{Type: w.Type, Code: firstNonEmpty(w.WarnCode, w.Code), Description: firstNonEmpty(w.WarnMsg, w.Description)}
	return nil
}

// DecodeSpeakMessage decodes a text frame received from /v1/speak.
// Unknown types become *UnknownMessage with the raw JSON; malformed JSON
// is an error. It never panics.
func DecodeSpeakMessage(data []byte) (SpeakMessage, error) {
	return decodeMessage(data, func(typ string) SpeakMessage {
		switch typ {
		case TypeMetadata:
			return &SpeakMetadata{}
		case TypeFlushed:
			return &Flushed{}
		case TypeCleared:
			return &Cleared{}
		case TypeWarning:
			return &SpeakWarning{}
		case TypeError:
			return &StreamError{}
		}
		return &UnknownMessage{}
	})
}

// SpeakClientMessage is a message a client sends on a speak WebSocket:
// *SpeakText, *SpeakFlush, *SpeakClear, *SpeakClose, *SpeechInterrupt,
// *SpeechConfigure or *UnknownMessage.
type SpeakClientMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// SpeakText adds text to synthesize. On /v1/speak the service buffers it
// until it has enough to speak or a Flush arrives; on /v2/speak it joins
// successive texts verbatim, with no added white space.
type SpeakText struct {
	Text string `json:"text"`
}

// MessageType implements SpeakClientMessage.
func (*SpeakText) MessageType() string { return TypeSpeak }

// MarshalJSON writes {"type":"Speak","text":...}.
func (m SpeakText) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{TypeSpeak, m.Text})
}

// SpeakFlush asks the service to synthesize the text buffered so far. On
// /v1/speak it answers Flushed; on /v2/speak it ends the turn, answering
// Flushed and then SpeechMetadata.
type SpeakFlush struct{}

// MessageType implements SpeakClientMessage.
func (*SpeakFlush) MessageType() string { return TypeFlush }

// MarshalJSON writes {"type":"Flush"}.
func (SpeakFlush) MarshalJSON() ([]byte, error) { return []byte(`{"type":"Flush"}`), nil }

// SpeakClear drops the buffered text and the audio not yet sent
// (barge-in on /v1/speak); the service answers Cleared.
type SpeakClear struct{}

// MessageType implements SpeakClientMessage.
func (*SpeakClear) MessageType() string { return TypeClear }

// MarshalJSON writes {"type":"Clear"}.
func (SpeakClear) MarshalJSON() ([]byte, error) { return []byte(`{"type":"Clear"}`), nil }

// SpeakClose asks the service to finish the buffered text and close.
type SpeakClose struct{}

// MessageType implements SpeakClientMessage.
func (*SpeakClose) MessageType() string { return TypeClose }

// MarshalJSON writes {"type":"Close"}.
func (SpeakClose) MarshalJSON() ([]byte, error) { return []byte(`{"type":"Close"}`), nil }

// ErrBadSpeakMessage matches the error of a client message whose fields
// have the wrong type (a Speak whose text is not a string, say).
var ErrBadSpeakMessage = errors.New("malformed speak message")

// DecodeSpeakClientMessage decodes a text frame a client sent to
// /v1/speak, for the local engine: Speak, Flush, Clear or Close. Unknown
// types, and the /v2/speak messages, become *UnknownMessage. A Speak with
// no text decodes to an empty SpeakText, which the service answers with
// a 400. It never panics.
func DecodeSpeakClientMessage(data []byte) (SpeakClientMessage, error) {
	return decodeSpeakClient(data, false)
}

func decodeSpeakClient(data []byte, v2 bool) (SpeakClientMessage, error) {
	typ, err := peekType(data)
	if err != nil {
		return nil, err
	}
	var msg SpeakClientMessage
	switch {
	case typ == TypeSpeak:
		var w struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSpeakMessage, err)
		}
		m := &SpeakText{}
		if w.Text != nil {
			m.Text = *w.Text
		}
		return m, nil
	case typ == TypeFlush:
		msg = &SpeakFlush{}
	case typ == TypeClose:
		msg = &SpeakClose{}
	case typ == TypeClear && !v2:
		msg = &SpeakClear{}
	case typ == TypeInterrupt && v2:
		msg = &SpeechInterrupt{}
	case typ == TypeConfigure && v2:
		var c SpeechConfigure
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSpeakMessage, err)
		}
		return &c, nil
	default:
		return &UnknownMessage{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
	}
	return msg, nil
}
