package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxErrorMessage bounds the message kept from an error body, in bytes.
const maxErrorMessage = 2000

// Sentinel errors. An *Error matches the sentinel of its class with
// errors.Is, so callers never inspect status codes or strings.
var (
	// ErrInvalidOptions is matched by every *OptionError: a request that
	// was refused before it left because it breaks a rule of the interface.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrUnauthorized is matched by 401 and 403 answers.
	ErrUnauthorized = errors.New("not authorized")
	// ErrRateLimited is matched by 429 answers: too many connections at once.
	ErrRateLimited = errors.New("too many simultaneous connections")
	// ErrNotFound is matched by 404 answers.
	ErrNotFound = errors.New("not found")
	// ErrUndecodableAudio is matched by DATA-0000: the service could not
	// decode the audio it was sent.
	ErrUndecodableAudio = errors.New("audio could not be decoded")
	// ErrEmptyAudio is returned when a caller tries to send a zero-length
	// audio frame, which the service would treat as a close.
	ErrEmptyAudio = errors.New("empty audio frame")
	// ErrClosed is returned by operations on a stream that has ended.
	ErrClosed = errors.New("stream closed")
)

// Error is an error answered by the service: an HTTP error body, a failed
// WebSocket handshake, an Error message on a socket, or a close frame that
// carries a reason.
type Error struct {
	// Status is the HTTP status, or 0 when the error arrived on an open socket.
	Status int
	// Code is the machine-readable code: err_code, category, code, or the
	// reason of a close frame (for example DATA-0000 or NET-0001).
	Code string
	// Message is the human-readable text: err_msg, message or description.
	Message string
	// Details is extra text the modern error shape carries.
	Details string
	// RequestID identifies the request to the service's support.
	RequestID string
	// CloseCode is the WebSocket close status when the error came from a
	// close frame, else 0.
	CloseCode int
}

// Error returns the message, prefixed by the status and code.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d", e.Status)
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
	} else if e.CloseCode != 0 {
		fmt.Fprintf(&b, "closed with %d", e.CloseCode)
	}
	if e.Code != "" && !strings.EqualFold(e.Code, http.StatusText(e.Status)) {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(e.Code)
	}
	msg := e.Message
	if msg == "" {
		msg = e.Details
	}
	if msg != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(msg)
	}
	if b.Len() == 0 {
		return "service error"
	}
	return b.String()
}

// StatusCode returns the HTTP status (0 on an open socket).
func (e *Error) StatusCode() int { return e.Status }

// Is reports whether the error belongs to the class of a sentinel.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests || e.Code == "TOO_MANY_REQUESTS"
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrUndecodableAudio:
		return e.Code == CodeUndecodable
	}
	return false
}

// Error codes that the interface names.
const (
	CodeUndecodable             = "DATA-0000"
	CodeRateTooHigh             = "DATA-0001"
	CodeNetTimeout              = "NET-0001"
	CodeBadRequest              = "Bad Request"
	CodeInvalidAuth             = "INVALID_AUTH"
	CodeInvalidQueryParameter   = "INVALID_QUERY_PARAMETER"
	CodeUnauthorizedFeatures    = "UNAUTHORIZED_FEATURES_REQUESTED"
	CodeTooManyRequests         = "TOO_MANY_REQUESTS"
	CodePayloadError            = "PAYLOAD_ERROR"
	CodePayloadTooLarge         = "PAYLOAD_TOO_LARGE"
	CodeRemoteContentError      = "REMOTE_CONTENT_ERROR"
	CodeUnsupportedMediaType    = "UNSUPPORTED_MEDIA_TYPE"
	CodeNotFound                = "NOT_FOUND"
	CodeMethodNotAllowed        = "METHOD_NOT_ALLOWED"
	CodeForceEndTurnNoActive    = "FORCE_END_TURN_NO_ACTIVE_TURN"
	CodeInputMarkupStripped     = "INPUT_MARKUP_STRIPPED"
	CodeInternalServerError     = "INTERNAL_SERVER_ERROR"
	CodeUnparsableClientMessage = "UNPARSABLE_CLIENT_MESSAGE"
)

// errorBody is the union of every error-body shape the service uses: the
// legacy {err_code, err_msg}, the modern {category, message, details}, the
// 503 variant spelled error_code, and the socket {code, description}.
type errorBody struct {
	ErrCode     string `json:"err_code"`
	ErrorCode   string `json:"error_code"`
	ErrMsg      string `json:"err_msg"`
	Category    string `json:"category"`
	Message     string `json:"message"`
	Details     string `json:"details"`
	Code        string `json:"code"`
	Description string `json:"description"`
	RequestID   string `json:"request_id"`
}

// ParseError builds an *Error from an HTTP status and error body. Every
// known body shape is understood; a plain-text or empty body becomes the
// message. requestID, when not empty, is used if the body names none (the
// service also sends it as a header).
func ParseError(status int, body []byte, requestID string) *Error {
	e := &Error{Status: status, RequestID: requestID}
	trimmed := strings.TrimSpace(string(body))
	var eb errorBody
	switch {
	case trimmed == "":
	case strings.HasPrefix(trimmed, "{") && json.Unmarshal(body, &eb) == nil:
		e.Code = firstNonEmpty(eb.ErrCode, eb.ErrorCode, eb.Category, eb.Code)
		e.Message = firstNonEmpty(eb.ErrMsg, eb.Message, eb.Description)
		e.Details = eb.Details
		if eb.RequestID != "" {
			e.RequestID = eb.RequestID
		}
		if e.Code == "" && e.Message == "" && e.Details == "" {
			// An object of a shape we do not know: keep it as the message.
			e.Message = trimmed
		}
	case strings.HasPrefix(trimmed, `"`):
		var s string
		if json.Unmarshal(body, &s) == nil {
			e.Message = s
		} else {
			e.Message = trimmed
		}
	default:
		e.Message = trimmed
	}
	if len(e.Message) > maxErrorMessage {
		// Cut at a character boundary so the message stays valid UTF-8.
		cut := maxErrorMessage
		for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
			cut--
		}
		e.Message = e.Message[:cut] + "…"
	}
	return e
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// LegacyErrorBody is the {err_code, err_msg, request_id} body the service
// answers REST and handshake errors with. The local engine writes it.
type LegacyErrorBody struct {
	ErrCode   string `json:"err_code"`
	ErrMsg    string `json:"err_msg"`
	RequestID string `json:"request_id,omitempty"`
}

// ModernErrorBody is the {category, message, details, request_id} body.
type ModernErrorBody struct {
	Category  string `json:"category"`
	Message   string `json:"message"`
	Details   string `json:"details,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// OptionError is a request refused before it left because it breaks a rule
// of the interface. Param names the offending parameter; Reason says why in
// words a person can act on. It matches ErrInvalidOptions.
type OptionError struct {
	Param  string
	Reason string
	// Status and Code are what the service answers for the same mistake,
	// so the local engine can answer it exactly as the service does.
	Status int
	Code   string
}

func (e *OptionError) Error() string {
	if e.Param == "" {
		return e.Reason
	}
	return e.Param + ": " + e.Reason
}

// Is makes every OptionError match ErrInvalidOptions.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOptions }

func badParam(param, reason string) *OptionError {
	return &OptionError{Param: param, Reason: reason, Status: http.StatusBadRequest, Code: CodeBadRequest}
}
