package api

import (
	"context"
	"encoding/json"
	"fmt"
)

// SpeakStream is an open /v1/speak WebSocket. Text goes out in Speak
// messages, with Flush, Clear and Close as control messages; audio and
// messages come back through Next. One goroutine reads and one writes, so
// a slow consumer never stalls the socket. Methods are safe for
// concurrent use; Close must be called to release the connection.
//
// The stream sends each message when it is given. The service limits
// how fast characters and Flushes may come, and refuses what comes
// faster (a Warning DATA-0001 for a Speak, EXCESSIVE_FLUSH for a Flush,
// read with Next): a client paces its messages with a SpeakPace, and
// sends again what was refused (sessions.Voices does both).
type SpeakStream struct {
	s         *socket
	requestID string
}

// SpeakStream opens a streaming synthesis on /v1/speak, authorized as the
// other streams are, including short-lived tokens. The options are
// checked for streaming before the connection is attempted (only
// linear16, mulaw and alaw stream; container, bit_rate, callback and
// priority are batch-only), and the handshake carries only the parameters
// the WebSocket takes.
func (c *Client) SpeakStream(ctx context.Context, opts SpeakOptions) (*SpeakStream, error) {
	if err := opts.CheckRequest(Streaming); err != nil {
		return nil, err
	}
	s, rid, err := c.dial(ctx, PathSpeak, opts.StreamQuery())
	if err != nil {
		return nil, fmt.Errorf("open speak stream: %w", err)
	}
	return &SpeakStream{s: s, requestID: rid}, nil
}

// RequestID returns the request id the service gave the connection in
// the handshake, when it sent one (Metadata carries it too).
func (t *SpeakStream) RequestID() string { return t.requestID }

// Speak sends text to synthesize. Empty text is refused with an error
// matching ErrEmptyText and never sent (the service would answer 400).
func (t *SpeakStream) Speak(ctx context.Context, text string) error {
	if text == "" {
		return errEmptyText()
	}
	return t.control(ctx, SpeakText{Text: text})
}

// Flush asks the service to synthesize the text buffered so far; it
// answers Flushed after the audio. The service takes at most
// MaxFlushesPerMinute a minute and answers more with a Warning
// EXCESSIVE_FLUSH (read with Next) instead of flushing.
func (t *SpeakStream) Flush(ctx context.Context) error { return t.control(ctx, SpeakFlush{}) }

// Clear drops the buffered text and the audio not yet sent, to stop
// speaking at once; the service answers Cleared.
func (t *SpeakStream) Clear(ctx context.Context) error { return t.control(ctx, SpeakClear{}) }

// CloseStream asks the service to finish the buffered text and close.
// Keep calling Next until it returns io.EOF.
func (t *SpeakStream) CloseStream(ctx context.Context) error { return t.control(ctx, SpeakClose{}) }

func (t *SpeakStream) control(ctx context.Context, m json.Marshaler) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	return t.s.send(ctx, false, b, true)
}

// Next returns the next message from the service: *SpeakAudio for a
// binary frame of audio, or a typed message. It returns io.EOF once the
// service has closed the stream normally, and otherwise the error that
// ended it (an *Error for a close frame with a reason). A text frame that
// cannot be decoded is returned as an *UnknownMessage with an empty Type.
func (t *SpeakStream) Next(ctx context.Context) (SpeakMessage, error) {
	f, err := t.s.next(ctx)
	if err != nil {
		return nil, err
	}
	if f.binary {
		return &SpeakAudio{Data: f.data}, nil
	}
	msg, err := DecodeSpeakMessage(f.data)
	if err != nil {
		return &UnknownMessage{Raw: f.data}, nil
	}
	return msg, nil
}

// Close closes the connection at once and releases its goroutines. It is
// idempotent. To end cleanly, call CloseStream and read to io.EOF first.
func (t *SpeakStream) Close() error { return t.s.close() }
