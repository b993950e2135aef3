package api

import (
	"context"
	"encoding/json"
	"fmt"
)

// ListenStream is an open /v1/listen WebSocket. Audio goes out as binary
// frames, control messages as text frames; received messages are read
// with Next. One goroutine reads and one writes, so a slow consumer never
// stalls the socket. Methods are safe for concurrent use; Close must be
// called to release the connection.
type ListenStream struct {
	s         *socket
	requestID string
}

// Listen opens a streaming transcription. The options are checked before
// the connection is attempted; a refused handshake is an *Error with the
// status and message the service answered.
func (c *Client) Listen(ctx context.Context, opts ListenOptions) (*ListenStream, error) {
	if err := opts.CheckRequest(Streaming); err != nil {
		return nil, err
	}
	if err := c.endpoint.CheckModel(opts.Model); err != nil {
		return nil, err
	}
	s, rid, err := c.dial(ctx, PathListen, opts.Query())
	if err != nil {
		return nil, fmt.Errorf("open stream: %w", err)
	}
	return &ListenStream{s: s, requestID: rid}, nil
}

// RequestID returns the request id the service gave the connection, when
// it sent one in the handshake.
func (l *ListenStream) RequestID() string { return l.requestID }

// Send queues one frame of audio. An empty frame is refused with
// ErrEmptyAudio: the service would take it as a close. The stream keeps
// its own copy of audio.
func (l *ListenStream) Send(ctx context.Context, audio []byte) error {
	if len(audio) == 0 {
		return ErrEmptyAudio
	}
	return l.s.send(ctx, true, append([]byte(nil), audio...), false)
}

// KeepAlive sends a KeepAlive text frame, which keeps the connection open
// through silence (the service closes a stream after 10 s without data).
// It is never sent as a binary frame, which would delay transcription.
func (l *ListenStream) KeepAlive(ctx context.Context) error {
	return l.control(ctx, TypeKeepAlive)
}

// Ping waits for the service to answer a WebSocket ping: it is there,
// though it may be busy with the audio it was sent.
func (l *ListenStream) Ping(ctx context.Context) error { return l.s.ping(ctx) }

// Finalize asks the service to finish the audio sent so far; it answers
// with a final Results marked from_finalize.
func (l *ListenStream) Finalize(ctx context.Context) error {
	return l.control(ctx, TypeFinalize)
}

// CloseStream asks the service to finish: it sends the last Results, then
// Metadata, then closes. Keep calling Next until it returns io.EOF.
func (l *ListenStream) CloseStream(ctx context.Context) error {
	return l.control(ctx, TypeCloseStream)
}

func (l *ListenStream) control(ctx context.Context, typ string) error {
	b, err := json.Marshal(ControlMessage{Type: typ})
	if err != nil {
		return err
	}
	return l.s.send(ctx, false, b, true)
}

// Next returns the next message from the service. It returns io.EOF once
// the service has closed the stream normally, and otherwise the error that
// ended it (an *Error for a close frame with a reason, such as DATA-0000).
// A text frame that cannot be decoded is returned as an *UnknownMessage
// with an empty Type, so it can be shown; binary frames are not expected
// on this family and are skipped.
func (l *ListenStream) Next(ctx context.Context) (ListenMessage, error) {
	for {
		f, err := l.s.next(ctx)
		if err != nil {
			return nil, err
		}
		if f.binary {
			continue
		}
		msg, err := DecodeListenMessage(f.data)
		if err != nil {
			return &UnknownMessage{Raw: f.data}, nil
		}
		return msg, nil
	}
}

// Close closes the connection at once and releases its goroutines. It is
// idempotent. To end cleanly, call CloseStream and read to io.EOF first.
func (l *ListenStream) Close() error { return l.s.close() }
