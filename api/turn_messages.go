package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Message types of the turn-aware /v2/listen WebSocket beyond those it
// shares with /v1/listen (Error, Warning, Configure, CloseStream).
const (
	TypeConnected        = "Connected"
	TypeTurnInfo         = "TurnInfo"
	TypeConfigureSuccess = "ConfigureSuccess"
	TypeConfigureFailure = "ConfigureFailure"
	TypeForceEndTurn     = "ForceEndTurn"
)

// CodeInvalidThreshold is the code of a ConfigureFailure for a threshold
// out of range or an eager threshold above the end-of-turn threshold.
const CodeInvalidThreshold = "INVALID_THRESHOLD"

// TurnEvent is the event of a TurnInfo message. It is an open set: a value
// this client does not know is kept as it came and shown, never an error.
type TurnEvent string

// The events of a turn, in the order a turn goes through them:
// StartOfTurn, then Update about every 0.25 s of audio, then EndOfTurn.
// With an eager end-of-turn threshold, EagerEndOfTurn may come before
// EndOfTurn, and TurnResumed when speech goes on after it.
const (
	EventStartOfTurn    TurnEvent = "StartOfTurn"
	EventUpdate         TurnEvent = "Update"
	EventEagerEndOfTurn TurnEvent = "EagerEndOfTurn"
	EventTurnResumed    TurnEvent = "TurnResumed"
	EventEndOfTurn      TurnEvent = "EndOfTurn"
)

// TurnEvents lists the events the interface names.
var TurnEvents = []TurnEvent{EventStartOfTurn, EventUpdate, EventEagerEndOfTurn, EventTurnResumed, EventEndOfTurn}

// Known reports whether e is one of the events the interface names.
func (e TurnEvent) Known() bool {
	switch e {
	case EventStartOfTurn, EventUpdate, EventEagerEndOfTurn, EventTurnResumed, EventEndOfTurn:
		return true
	}
	return false
}

// TurnTrigger says what ended a turn; it is sent on EndOfTurn only. It is
// an open set: a value this client does not know is kept and shown.
type TurnTrigger string

// The end-of-turn triggers the interface names.
const (
	// TriggerModel: the end-of-turn confidence reached eot_threshold.
	TriggerModel TurnTrigger = "model"
	// TriggerManual: the client sent ForceEndTurn.
	TriggerManual TurnTrigger = "manual"
	// TriggerTimeout: eot_timeout_ms of silence passed inside the turn.
	TriggerTimeout TurnTrigger = "timeout"
)

// TurnTriggers lists the triggers the interface names.
var TurnTriggers = []TurnTrigger{TriggerModel, TriggerManual, TriggerTimeout}

// Known reports whether t is one of the triggers the interface names.
func (t TurnTrigger) Known() bool {
	switch t {
	case TriggerModel, TriggerManual, TriggerTimeout:
		return true
	}
	return false
}

// TurnMessage is a message the service sends on /v2/listen: *Connected,
// *TurnInfo, *ConfigureSuccess, *ConfigureFailure, *TurnWarning,
// *TurnError or *UnknownMessage.
type TurnMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// Connected is the first message of a /v2/listen stream.
type Connected struct {
	Type       string `json:"type"`
	RequestID  string `json:"request_id"`
	SequenceID int    `json:"sequence_id"`
}

// MessageType implements TurnMessage.
func (*Connected) MessageType() string { return TypeConnected }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m Connected) MarshalJSON() ([]byte, error) {
	type wire Connected
	m.Type = TypeConnected
	return json.Marshal(wire(m))
}

// TurnWord is a word of a turn's transcript. Start and End, in seconds
// from the start of the stream, are optional on the wire: zero when the
// service did not send them.
type TurnWord struct {
	Word       string  `json:"word"`
	Confidence float64 `json:"confidence"`
	Start      float64 `json:"start,omitzero"`
	End        float64 `json:"end,omitzero"`
}

// TurnInfo reports the state of the current turn. Every message carries the
// whole transcript of the turn so far over the audio window, in seconds
// from the start of the stream. TurnIndex counts turns from 0 and
// increments after EndOfTurn; Trigger is set on EndOfTurn only.
type TurnInfo struct {
	Type                string      `json:"type"`
	RequestID           string      `json:"request_id"`
	SequenceID          int         `json:"sequence_id"`
	Event               TurnEvent   `json:"event"`
	TurnIndex           int         `json:"turn_index"`
	AudioWindowStart    float64     `json:"audio_window_start"`
	AudioWindowEnd      float64     `json:"audio_window_end"`
	Transcript          string      `json:"transcript"`
	Words               []TurnWord  `json:"words"`
	EndOfTurnConfidence float64     `json:"end_of_turn_confidence"`
	Trigger             TurnTrigger `json:"trigger,omitempty"`
	// Languages and LanguagesHinted are sent by flux-general-multi.
	// An empty, non-nil slice is sent as [], as the service does when
	// the turn has no transcript yet or no hints are active.
	Languages       []string `json:"languages,omitzero"`
	LanguagesHinted []string `json:"languages_hinted,omitzero"`
}

// MessageType implements TurnMessage.
func (*TurnInfo) MessageType() string { return TypeTurnInfo }

// MarshalJSON writes the message with its type, whatever Type holds, and
// words as an array even when there are none.
func (m TurnInfo) MarshalJSON() ([]byte, error) {
	type wire TurnInfo
	m.Type = TypeTurnInfo
	if m.Words == nil {
		m.Words = []TurnWord{}
	}
	return json.Marshal(wire(m))
}

// Thresholds are the end-of-turn settings a Configure message changes
// and a ConfigureSuccess message echoes. A nil field is not set: in a
// Configure it keeps its current value. In a ConfigureSuccess they are
// written as JSON numbers; a Configure writes them as strings (see
// Configure). Reading accepts either form.
type Thresholds struct {
	EOTThreshold      *float64 `json:"eot_threshold,omitempty"`
	EagerEOTThreshold *float64 `json:"eager_eot_threshold,omitempty"`
	EOTTimeoutMS      *int     `json:"eot_timeout_ms,omitempty"`
}

// IsZero reports whether no threshold is set.
func (t Thresholds) IsZero() bool {
	return t.EOTThreshold == nil && t.EagerEOTThreshold == nil && t.EOTTimeoutMS == nil
}

// UnmarshalJSON reads each threshold from a JSON number or a string
// holding one; null or absent leaves it unset.
func (t *Thresholds) UnmarshalJSON(data []byte) error {
	var raw struct {
		EOT     json.RawMessage `json:"eot_threshold"`
		Eager   json.RawMessage `json:"eager_eot_threshold"`
		Timeout json.RawMessage `json:"eot_timeout_ms"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var out Thresholds
	var err error
	if out.EOTThreshold, err = flexFloat(qEOTThreshold, raw.EOT); err != nil {
		return err
	}
	if out.EagerEOTThreshold, err = flexFloat(qEagerEOTThreshold, raw.Eager); err != nil {
		return err
	}
	f, err := flexFloat(qEOTTimeoutMS, raw.Timeout)
	if err != nil {
		return err
	}
	if f != nil {
		if *f != math.Trunc(*f) || math.Abs(*f) > 1<<31 {
			return fmt.Errorf("%s must be a whole number of milliseconds, not %v", qEOTTimeoutMS, *f)
		}
		ms := int(*f)
		out.EOTTimeoutMS = &ms
	}
	*t = out
	return nil
}

// flexFloat reads a finite number written as a JSON number or string.
func flexFloat(name string, raw json.RawMessage) (*float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s must be a number, not %s", name, raw)
	}
	return &f, nil
}

// ConfigureSuccess confirms a Configure message, echoing the settings
// that now apply.
type ConfigureSuccess struct {
	Type          string     `json:"type"`
	RequestID     string     `json:"request_id"`
	SequenceID    int        `json:"sequence_id"`
	Thresholds    Thresholds `json:"thresholds"`
	Keyterms      []string   `json:"keyterms"`
	LanguageHints []string   `json:"language_hints,omitempty"`
}

// MessageType implements TurnMessage.
func (*ConfigureSuccess) MessageType() string { return TypeConfigureSuccess }

// MarshalJSON writes the message with its type, whatever Type holds, and
// keyterms as an array even when there are none.
func (m ConfigureSuccess) MarshalJSON() ([]byte, error) {
	type wire ConfigureSuccess
	m.Type = TypeConfigureSuccess
	if m.Keyterms == nil {
		m.Keyterms = []string{}
	}
	return json.Marshal(wire(m))
}

// ConfigureFailure reports a Configure message that was not applied;
// every setting keeps its value. Code and Description, when sent, say why
// (for example INVALID_THRESHOLD).
type ConfigureFailure struct {
	Type        string `json:"type"`
	RequestID   string `json:"request_id"`
	SequenceID  int    `json:"sequence_id"`
	Code        string `json:"code,omitempty"`
	Description string `json:"description,omitempty"`
}

// MessageType implements TurnMessage.
func (*ConfigureFailure) MessageType() string { return TypeConfigureFailure }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m ConfigureFailure) MarshalJSON() ([]byte, error) {
	type wire ConfigureFailure
	m.Type = TypeConfigureFailure
	return json.Marshal(wire(m))
}

// TurnWarning is a Warning on /v2/listen: something was not done, but the
// stream goes on. Code is in SCREAMING_SNAKE case, for example
// FORCE_END_TURN_NO_ACTIVE_TURN (CodeForceEndTurnNoActive).
type TurnWarning struct {
	Type        string `json:"type"`
	RequestID   string `json:"request_id"`
	SequenceID  int    `json:"sequence_id"`
	Code        string `json:"code"`
	Description string `json:"description"`
}

// MessageType implements TurnMessage.
func (*TurnWarning) MessageType() string { return TypeWarning }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m TurnWarning) MarshalJSON() ([]byte, error) {
	type wire TurnWarning
	m.Type = TypeWarning
	return json.Marshal(wire(m))
}

// TurnError is the fatal Error message of /v2/listen; the service closes
// the stream after it.
type TurnError struct {
	Type        string `json:"type"`
	SequenceID  int    `json:"sequence_id"`
	Code        string `json:"code"`
	Description string `json:"description"`
}

// MessageType implements TurnMessage.
func (*TurnError) MessageType() string { return TypeError }

// MarshalJSON writes the message with its type, whatever Type holds.
func (m TurnError) MarshalJSON() ([]byte, error) {
	type wire TurnError
	m.Type = TypeError
	return json.Marshal(wire(m))
}

// Err converts the message into an *Error.
func (m *TurnError) Err() *Error { return &Error{Code: m.Code, Message: m.Description} }

// DecodeTurnMessage decodes a text frame received from /v2/listen.
// Unknown types become *UnknownMessage with the raw JSON; unknown event
// and trigger values are kept. Malformed JSON is an error. It never
// panics.
func DecodeTurnMessage(data []byte) (TurnMessage, error) {
	return decodeMessage(data, func(typ string) TurnMessage {
		switch typ {
		case TypeConnected:
			return &Connected{}
		case TypeTurnInfo:
			return &TurnInfo{}
		case TypeConfigureSuccess:
			return &ConfigureSuccess{}
		case TypeConfigureFailure:
			return &ConfigureFailure{}
		case TypeWarning:
			return &TurnWarning{}
		case TypeError:
			return &TurnError{}
		}
		return &UnknownMessage{}
	})
}

// TurnClientMessage is a message a client sends on /v2/listen:
// *Configure, *ForceEndTurn, *CloseStream or *UnknownMessage.
type TurnClientMessage interface {
	// MessageType returns the type discriminator.
	MessageType() string
}

// Configure changes the end-of-turn settings mid-stream. Every field is
// optional and anything omitted keeps its current value: a nil threshold
// is not sent, nor is a nil Keyterms or LanguageHints (an empty, non-nil
// slice is sent as [] and clears the list). Thresholds travel as strings,
// as the specification writes them.
type Configure struct {
	Thresholds    Thresholds
	Keyterms      []string
	LanguageHints []string
}

// MessageType implements TurnClientMessage.
func (*Configure) MessageType() string { return TypeConfigure }

// configureWire is the JSON form of Configure.
type configureWire struct {
	Type          string              `json:"type"`
	Thresholds    *thresholdsAsString `json:"thresholds,omitempty"`
	Keyterms      []string            `json:"keyterms,omitzero"`
	LanguageHints []string            `json:"language_hints,omitzero"`
}

type thresholdsAsString struct {
	EOTThreshold      string `json:"eot_threshold,omitempty"`
	EagerEOTThreshold string `json:"eager_eot_threshold,omitempty"`
	EOTTimeoutMS      string `json:"eot_timeout_ms,omitempty"`
}

// MarshalJSON writes {"type":"Configure",...} with the thresholds as
// strings and the omitted fields left out.
func (c Configure) MarshalJSON() ([]byte, error) {
	w := configureWire{Type: TypeConfigure, Keyterms: c.Keyterms, LanguageHints: c.LanguageHints}
	if !c.Thresholds.IsZero() {
		w.Thresholds = &thresholdsAsString{}
		if v := c.Thresholds.EOTThreshold; v != nil {
			w.Thresholds.EOTThreshold = formatThreshold(*v)
		}
		if v := c.Thresholds.EagerEOTThreshold; v != nil {
			w.Thresholds.EagerEOTThreshold = formatThreshold(*v)
		}
		if v := c.Thresholds.EOTTimeoutMS; v != nil {
			w.Thresholds.EOTTimeoutMS = strconv.Itoa(*v)
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a Configure message, with thresholds as strings or
// numbers.
func (c *Configure) UnmarshalJSON(data []byte) error {
	var w struct {
		Thresholds    *Thresholds `json:"thresholds"`
		Keyterms      []string    `json:"keyterms"`
		LanguageHints []string    `json:"language_hints"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = Configure{Keyterms: w.Keyterms, LanguageHints: w.LanguageHints}
	if w.Thresholds != nil {
		c.Thresholds = *w.Thresholds
	}
	return nil
}

// Validate checks the ranges of the settings a Configure sets. Whether
// they fit together with the settings in force (an eager threshold above
// the end-of-turn threshold, hints with flux-general-en) is checked by
// TurnOptions.WithConfigure.
func (c *Configure) Validate() error {
	eot, eager, timeout := 0.0, 0.0, 0
	if v := c.Thresholds.EOTThreshold; v != nil {
		if *v == 0 {
			return badParam(qEOTThreshold, "eot_threshold 0 is out of range")
		}
		eot = *v
	}
	if v := c.Thresholds.EagerEOTThreshold; v != nil {
		if *v == 0 {
			return badParam(qEagerEOTThreshold, "eager_eot_threshold 0 is out of range")
		}
		eager = *v
	}
	if v := c.Thresholds.EOTTimeoutMS; v != nil {
		if *v == 0 {
			return badParam(qEOTTimeoutMS, "eot_timeout_ms 0 is out of range")
		}
		timeout = *v
	}
	// The eager threshold is compared with the one in force elsewhere.
	if eot == 0 && eager != 0 {
		eot = MaxEOTThreshold
	}
	if err := checkTurnThresholds(eot, eager, timeout); err != nil {
		return err
	}
	return checkKeyterms(c.Keyterms)
}

// ForceEndTurn ends the current turn at once: the service answers with an
// EndOfTurn whose trigger is manual, or, outside a turn, a Warning
// FORCE_END_TURN_NO_ACTIVE_TURN.
type ForceEndTurn struct{}

// MessageType implements TurnClientMessage.
func (*ForceEndTurn) MessageType() string { return TypeForceEndTurn }

// MarshalJSON writes {"type":"ForceEndTurn"}.
func (ForceEndTurn) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"ForceEndTurn"}`), nil
}

// CloseStream asks the service to end a /v2/listen stream. It does not
// finalize the turn: no EndOfTurn follows; the last message is an Update
// and the service closes the socket.
type CloseStream struct{}

// MessageType implements TurnClientMessage.
func (*CloseStream) MessageType() string { return TypeCloseStream }

// MarshalJSON writes {"type":"CloseStream"}.
func (CloseStream) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"CloseStream"}`), nil
}

// ErrBadConfigure matches the error of a Configure message that could not
// be read; the service answers it with ConfigureFailure.
var ErrBadConfigure = errors.New("malformed Configure message")

// DecodeTurnClientMessage decodes a text frame a client sent to
// /v2/listen, for the local engine. Unknown types become *UnknownMessage.
// A Configure whose fields have the wrong type is an error matching
// ErrBadConfigure. It never panics.
func DecodeTurnClientMessage(data []byte) (TurnClientMessage, error) {
	typ, err := peekType(data)
	if err != nil {
		return nil, err
	}
	switch typ {
	case TypeConfigure:
		var c Configure
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadConfigure, err)
		}
		return &c, nil
	case TypeForceEndTurn:
		return &ForceEndTurn{}, nil
	case TypeCloseStream:
		return &CloseStream{}, nil
	}
	return &UnknownMessage{Type: typ, Raw: append(json.RawMessage(nil), data...)}, nil
}

// NewConfigureFailure builds the ConfigureFailure the service answers a
// refused Configure with, saying why: INVALID_THRESHOLD for a threshold
// out of range or an eager threshold above the end-of-turn threshold,
// INVALID_PARAMETER for other settings, UNPARSABLE_CLIENT_MESSAGE for a
// message that could not be read (ErrBadConfigure).
func NewConfigureFailure(requestID string, sequenceID int, err error) ConfigureFailure {
	f := ConfigureFailure{Type: TypeConfigureFailure, RequestID: requestID, SequenceID: sequenceID}
	var oe *OptionError
	switch {
	case err == nil:
	case errors.As(err, &oe):
		f.Code, f.Description = CodeInvalidParameter, oe.Reason
		switch oe.Param {
		case qEOTThreshold, qEagerEOTThreshold, qEOTTimeoutMS:
			f.Code = CodeInvalidThreshold
		}
	case errors.Is(err, ErrBadConfigure):
		f.Code, f.Description = CodeUnparsableClientMessage, err.Error()
	default:
		f.Description = err.Error()
	}
	return f
}
