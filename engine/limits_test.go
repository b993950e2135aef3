package engine

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// TestConnectionLimit checks section 8: the allowance counts open
// connections, diarization takes more of it, a refused handshake is a 429
// TOO_MANY_REQUESTS, and closing a stream frees its place.
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	const max = 3
	l := startEngine(t, Config{MaxConnections: max, Recognizer: RecognizerConfig{Warm: -1}})
	ctx := testContext(t, time.Minute)
	c := newClient(t, l)
	plain := linear16(api.ListenOptions{})
	diarized := linear16(api.ListenOptions{DiarizeModel: "latest"})

	open := func(o api.ListenOptions) *api.ListenStream {
		t.Helper()
		s, err := c.Listen(ctx, o)
		if err != nil {
			t.Fatalf("Listen: %v (in use %d of %d)", err, l.Engine.limit.inUse(), max)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	refused := func(o api.ListenOptions) {
		t.Helper()
		_, err := c.Listen(ctx, o)
		var e *api.Error
		if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Code != api.CodeTooManyRequests ||
			e.Message != "Too many requests. Please try again later" || !errors.Is(err, api.ErrRateLimited) {
			t.Fatalf("handshake over the limit: %v, want 429 TOO_MANY_REQUESTS", err)
		}
	}
	closeStream := func(s *api.ListenStream) {
		t.Helper()
		if err := s.CloseStream(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := drain(ctx, s); !errors.Is(err, io.EOF) {
			t.Fatalf("close: %v", err)
		}
		s.Close()
	}
	// waitFree waits until the engine has released what closed streams
	// held: the client sees the close before the handler has returned.
	waitFree := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for l.Engine.limit.inUse() != want {
			if time.Now().After(deadline) {
				t.Fatalf("in use %d, want %d", l.Engine.limit.inUse(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	var streams []*api.ListenStream
	for range max {
		streams = append(streams, open(plain))
	}
	refused(plain)
	// REST requests count against the same allowance.
	do(t, l, http.MethodGet, api.PathModels, tokenAuth(l), nil, nil).wantError(t, http.StatusTooManyRequests, api.CodeTooManyRequests, "")
	// Streams still work at the limit.
	if err := streams[0].Send(ctx, pcmBytes(silence(t, 3200))); err != nil {
		t.Fatal(err)
	}

	closeStream(streams[0])
	waitFree(max - 1)
	streams[0] = open(plain)
	refused(plain)

	// A diarized stream takes two places: with two plain streams closed it
	// fits beside the third, and then nothing else does.
	closeStream(streams[0])
	closeStream(streams[1])
	waitFree(1)
	d := open(diarized)
	if got := l.Engine.limit.inUse(); got != max {
		t.Errorf("in use %d with a plain and a diarized stream, want %d", got, max)
	}
	refused(plain)
	refused(diarized)
	closeStream(streams[2])
	waitFree(2)
	refused(diarized) // needs two, one is free
	open(plain)
	closeStream(d)
	waitFree(1)
	open(diarized)
	waitFree(max)
}

// TestBatchDiarizeWeight checks that batch diarization takes its extra
// place only while the request runs.
func TestBatchDiarizeWeight(t *testing.T) {
	t.Parallel()
	l := startEngine(t, Config{MaxConnections: 2, Recognizer: RecognizerConfig{Warm: -1}})
	ctx := testContext(t, time.Minute)
	c := newClient(t, l)
	s, err := c.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wav := wavBytes(t, clipSamples(t, "0880")[:16000], 16000, 1)
	// One place is free: a plain request fits, a diarized one does not.
	if _, err := c.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{}); err != nil {
		t.Fatalf("plain batch beside one stream: %v", err)
	}
	if _, err := c.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{DiarizeModel: "latest"}); !errors.Is(err, api.ErrRateLimited) {
		t.Fatalf("diarized batch beside one stream: %v, want 429", err)
	}
	if got := l.Engine.limit.inUse(); got != 1 {
		t.Errorf("in use %d after the requests, want 1", got)
	}
}

// TestEndpointingPools checks that streams with different endpointing
// values, each served by a pool of decoders of its own, can be open at
// once: more distinct values than the engine keeps pools for must still
// each get a decoder.
func TestEndpointingPools(t *testing.T) {
	t.Parallel()
	l := startEngine(t, Config{MaxConnections: 6, Recognizer: RecognizerConfig{Warm: -1}})
	ctx := testContext(t, time.Minute)
	c := newClient(t, l)
	var streams []*api.ListenStream
	for _, ms := range []api.Endpointing{100, 400, 600} {
		s, err := c.Listen(ctx, linear16(api.ListenOptions{Endpointing: ms}))
		if err != nil {
			t.Fatalf("endpointing=%d beside %d open streams: %v", ms, len(streams), err)
		}
		defer s.Close()
		streams = append(streams, s)
	}
	for i, s := range streams {
		if err := s.CloseStream(ctx); err != nil {
			t.Fatal(err)
		}
		if msgs, err := drain(ctx, s); !errors.Is(err, io.EOF) || len(msgs) == 0 {
			t.Errorf("stream %d: %v, %v", i, types(msgs), err)
		}
	}
	// Once they are closed, the pools beyond the bound are let go.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.Engine.asr.mu.Lock()
		n := len(l.Engine.asr.pools)
		l.Engine.asr.mu.Unlock()
		if n <= maxPools {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pools kept, want at most %d", n, maxPools)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
