package api

import (
	"context"
	"encoding/json"
	"fmt"
)

// TurnStream is an open turn-aware /v2/listen WebSocket. Audio goes out as
// binary frames, Configure, ForceEndTurn and CloseStream as text frames;
// received messages are read with Next. One goroutine reads and one
// writes, so a slow consumer never stalls the socket. Methods are safe for
// concurrent use; Close must be called to release the connection.
type TurnStream struct {
	s         *socket
	requestID string
}

// Turns opens a turn-aware transcription on /v2/listen, on the endpoint's
// main host (regional hosts serve it too), authorized as Listen is,
// including short-lived tokens. The options are checked before the
// connection is attempted; a refused handshake is an *Error with the
// status and message the service answered.
func (c *Client) Turns(ctx context.Context, opts TurnOptions) (*TurnStream, error) {
	if err := opts.CheckRequest(); err != nil {
		return nil, err
	}
	s, rid, err := c.dial(ctx, PathListenV2, opts.Query())
	if err != nil {
		return nil, fmt.Errorf("open turn stream: %w", err)
	}
	return &TurnStream{s: s, requestID: rid}, nil
}

// RequestID returns the request id the service gave the connection in
// the handshake, when it sent one (the Connected message carries it too).
func (t *TurnStream) RequestID() string { return t.requestID }

// Send queues one frame of audio. An empty frame is refused with
// ErrEmptyAudio, never sent. The stream keeps its own copy of audio.
func (t *TurnStream) Send(ctx context.Context, audio []byte) error {
	if len(audio) == 0 {
		return ErrEmptyAudio
	}
	return t.s.send(ctx, true, append([]byte(nil), audio...), false)
}

// Configure changes the end-of-turn settings mid-stream; fields it omits
// keep their values. Its ranges are checked before it is sent. The
// service answers with ConfigureSuccess or ConfigureFailure, read with
// Next.
func (t *TurnStream) Configure(ctx context.Context, c Configure) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return t.control(ctx, c)
}

// ForceEndTurn ends the current turn at once. The service answers with an
// EndOfTurn whose trigger is manual or, when no turn is in progress, with
// a Warning FORCE_END_TURN_NO_ACTIVE_TURN; the stream stays open.
func (t *TurnStream) ForceEndTurn(ctx context.Context) error {
	return t.control(ctx, ForceEndTurn{})
}

// Ping waits for the service to answer a WebSocket ping: it is there,
// though it may be busy with the audio it was sent.
func (t *TurnStream) Ping(ctx context.Context) error { return t.s.ping(ctx) }

// CloseStream asks the service to finish. It does not end the turn in
// progress: the last message is an Update, then the service closes. Keep
// calling Next until it returns io.EOF.
func (t *TurnStream) CloseStream(ctx context.Context) error {
	return t.control(ctx, CloseStream{})
}

// control sends a text message and waits until it is written.
func (t *TurnStream) control(ctx context.Context, m json.Marshaler) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	return t.s.send(ctx, false, b, true)
}

// Next returns the next message from the service. It returns io.EOF once
// the service has closed the stream normally (after CloseStream it closes
// without a status, which counts as normal), and otherwise the error that
// ended it. A text frame that cannot be decoded is returned as an
// *UnknownMessage with an empty Type, so it can be shown; binary frames
// are not expected on this family and are skipped.
func (t *TurnStream) Next(ctx context.Context) (TurnMessage, error) {
	for {
		f, err := t.s.next(ctx)
		if err != nil {
			return nil, err
		}
		if f.binary {
			continue
		}
		msg, err := DecodeTurnMessage(f.data)
		if err != nil {
			return &UnknownMessage{Raw: f.data}, nil
		}
		return msg, nil
	}
}

// Close closes the connection at once and releases its goroutines. It is
// idempotent. To end cleanly, call CloseStream and read to io.EOF first.
func (t *TurnStream) Close() error { return t.s.close() }
