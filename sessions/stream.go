package sessions

import (
	"context"

	"github.com/earshot-app/earshot/api"
)

// Streamer opens /v1/listen streams. ClientStreamer adapts *api.Client;
// tests use fakes.
type Streamer interface {
	Listen(ctx context.Context, opts api.ListenOptions) (ListenStream, error)
}

// ListenStream is an open /v1/listen stream; *api.ListenStream implements it.
type ListenStream interface {
	Send(ctx context.Context, audio []byte) error
	KeepAlive(ctx context.Context) error
	Finalize(ctx context.Context) error
	CloseStream(ctx context.Context) error
	Ping(ctx context.Context) error
	Next(ctx context.Context) (api.ListenMessage, error)
	Close() error
}

// ClientStreamer opens streams with an API client.
type ClientStreamer struct{ Client *api.Client }

// Listen implements Streamer.
func (c ClientStreamer) Listen(ctx context.Context, opts api.ListenOptions) (ListenStream, error) {
	s, err := c.Client.Listen(ctx, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}
