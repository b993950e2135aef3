package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// SpeechStream is an open turn-based /v2/speak WebSocket. Text goes out
// in Speak messages and a turn ends with Flush (or, early, Interrupt);
// audio and messages come back through Next. A turn runs SpeechStarted,
// audio, Flushed, SpeechMetadata; audio starts before the Flush. One
// goroutine reads and one writes, so a slow consumer never stalls the
// socket. Methods are safe for concurrent use; Close must be called to
// release the connection.
//
// The service joins the texts of a turn verbatim, so Speak adds the
// separator that SpeechSeparator gives. Expressivity is fixed when the
// stream opens; only the speed can change, with Configure.
type SpeechStream struct {
	s         *socket
	requestID string

	mu   sync.Mutex // held across a send that changes last, so the wire order matches it
	last string     // the text sent last in the current turn, "" at the start of a turn
}

// SpeechStream opens a turn-based synthesis on /v2/speak, authorized as
// the other streams are, including short-lived tokens. The options are
// checked for streaming before the connection is attempted: a batch-only
// setting (mp3, opus, flac or aac, container, bit_rate, callback,
// callback_method, priority) is refused here, where the service would fail
// the connection. The handshake is built from the parameters the
// WebSocket takes only.
func (c *Client) SpeechStream(ctx context.Context, opts SpeakV2Options) (*SpeechStream, error) {
	if err := opts.CheckRequest(Streaming); err != nil {
		return nil, err
	}
	s, rid, err := c.dial(ctx, PathSpeakV2, opts.StreamQuery())
	if err != nil {
		return nil, fmt.Errorf("open speech stream: %w", err)
	}
	return &SpeechStream{s: s, requestID: rid}, nil
}

// RequestID returns the request id the service gave the connection in
// the handshake, when it sent one (Connected carries it too).
func (t *SpeechStream) RequestID() string { return t.requestID }

// SpeechSeparator returns what goes between two successive texts of a
// turn, which the service joins verbatim: nothing at the start of a turn
// (prev empty), after text ending in white space, before text starting
// with white space, or before closing punctuation (",", ".", "?", ")"
// and the like), so "Hello" then ", world" reads "Hello, world"; else a
// single space, so "Hello" then "world" does not read "Helloworld".
func SpeechSeparator(prev, next string) string {
	if prev == "" || next == "" {
		return ""
	}
	p, _ := utf8.DecodeLastRuneInString(prev)
	n, _ := utf8.DecodeRuneInString(next)
	if unicode.IsSpace(p) || unicode.IsSpace(n) || strings.ContainsRune(closingPunctuation, n) {
		return ""
	}
	return " "
}

// closingPunctuation never takes a space before it.
const closingPunctuation = ",.;:!?)]}…%'’\"”»"

// Speak adds text to the current turn, after the separator SpeechSeparator
// gives. Empty text is refused with an error matching ErrEmptyText and
// never sent. Audio starts before Flush; the service sends Warning
// INPUT_MARKUP_STRIPPED if it removed markup such as SSML.
func (t *SpeechStream) Speak(ctx context.Context, text string) error {
	if text == "" {
		return errEmptyText()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	wire := SpeechSeparator(t.last, text) + text
	if err := t.control(ctx, SpeakText{Text: wire}); err != nil {
		return err
	}
	t.last = text
	return nil
}

// Flush ends the turn: the service speaks the rest of its text and
// answers Flushed, then SpeechMetadata once all its audio has been sent.
// The next Speak starts a new turn.
func (t *SpeechStream) Flush(ctx context.Context) error { return t.endTurn(ctx, SpeakFlush{}) }

// Interrupt ends the turn at once; the service answers SpeechInterrupted
// with the text spoken and the text remaining, or, with no turn in
// progress, a Warning NO_ACTIVE_SPEECH.
func (t *SpeechStream) Interrupt(ctx context.Context) error {
	return t.endTurn(ctx, SpeechInterrupt{})
}

func (t *SpeechStream) endTurn(ctx context.Context, m json.Marshaler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.control(ctx, m); err != nil {
		return err
	}
	t.last = ""
	return nil
}

// Configure changes the speed mid-stream (0.5 to 1.5 in steps of 0.05),
// checked before it is sent. Nothing else can change: expressivity is
// fixed for the life of the connection.
func (t *SpeechStream) Configure(ctx context.Context, speed float64) error {
	c := SpeechConfigure{Speed: speed}
	if err := c.Validate(); err != nil {
		return err
	}
	return t.control(ctx, c)
}

// CloseStream asks the service to finish and close; it sends
// SessionMetadata first. Keep calling Next until it returns io.EOF.
func (t *SpeechStream) CloseStream(ctx context.Context) error { return t.control(ctx, SpeakClose{}) }

func (t *SpeechStream) control(ctx context.Context, m json.Marshaler) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	return t.s.send(ctx, false, b, true)
}

// Next returns the next message from the service: *SpeakAudio for a
// binary frame of audio, or a typed message. It returns io.EOF once the
// service has closed the stream normally, and otherwise the error that
// ended it. A text frame that cannot be decoded is returned as an
// *UnknownMessage with an empty Type.
func (t *SpeechStream) Next(ctx context.Context) (SpeechMessage, error) {
	f, err := t.s.next(ctx)
	if err != nil {
		return nil, err
	}
	if f.binary {
		return &SpeakAudio{Data: f.data}, nil
	}
	msg, err := DecodeSpeechMessage(f.data)
	if err != nil {
		return &UnknownMessage{Raw: f.data}, nil
	}
	return msg, nil
}

// Close closes the connection at once and releases its goroutines. It is
// idempotent. To end cleanly, call CloseStream and read to io.EOF first.
func (t *SpeechStream) Close() error { return t.s.close() }
