package sphinx

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// Decoder is one pocketsphinx decoder (one ps_decoder_t with its model in
// memory). Building one takes about a second, so a service keeps them warm in
// a Pool.
//
// A Decoder is not safe for concurrent use: it and the Stream it serves must
// be used by one goroutine at a time. Its methods still take an internal lock
// so that misuse cannot corrupt the library's memory, but interleaving calls
// from several goroutines gives meaningless results.
type Decoder struct {
	cfg Config

	mu      sync.Mutex // guards everything below and serialises C calls
	h       *handle    // nil once closed
	cleanup runtime.Cleanup
	stream  *Stream // the stream being served, or nil

	pool *Pool // the pool the decoder belongs to, or nil; set before sharing
	idle bool  // in pool.idle; guarded by pool.mu
}

// NewDecoder loads the model named by cfg and returns a decoder ready to
// serve streams. The context is checked before loading starts; loading itself
// cannot be interrupted.
func NewDecoder(ctx context.Context, cfg Config) (*Decoder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := newHandle(cfg)
	if err != nil {
		return nil, err
	}
	d := &Decoder{cfg: cfg, h: h}
	// A decoder that is dropped without Close still frees its C memory.
	d.cleanup = runtime.AddCleanup(d, func(h *handle) { h.free() }, h)
	return d, nil
}

// Config returns the decoder's configuration with every default filled in.
func (d *Decoder) Config() Config { return d.cfg }

// Close releases the decoder's C memory. A stream it serves is closed too.
// Close is idempotent.
func (d *Decoder) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return nil
	}
	d.detachLocked()
	d.cleanup.Stop()
	d.h.free()
	d.h = nil
	return nil
}

// detachLocked closes the stream being served, if any.
func (d *Decoder) detachLocked() {
	if d.stream != nil {
		d.stream.done = true
		d.stream = nil
	}
}

// NewStream starts a stream on the decoder. The decoder is first reset to the
// state of a freshly loaded one, so every stream gives the same results it
// would on a new decoder. Only one stream can be served at a time: End or
// Close the previous one first.
func (d *Decoder) NewStream(opts StreamOptions) (*Stream, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return nil, ErrClosed
	}
	if d.stream != nil {
		return nil, ErrStreamActive
	}
	d.h.startStream()
	if err := d.h.startUtt(); err != nil {
		return nil, fmt.Errorf("starting stream: %w", err)
	}
	s := &Stream{d: d, opts: opts}
	d.stream = s
	return s, nil
}

// reset abandons any stream and ends an open library utterance, leaving the
// decoder idle. It reports whether the decoder is still usable.
func (d *Decoder) reset() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return false
	}
	if s := d.stream; s != nil {
		d.detachLocked()
		if _, _, err := d.h.endUtt(); err != nil {
			return false
		}
	}
	return true
}

// Transcribe decodes a whole recording of 16 kHz mono samples and returns
// the final result of every utterance, exactly as a Stream fed the same
// samples would. The context is checked between blocks.
func (d *Decoder) Transcribe(ctx context.Context, samples []int16) ([]Result, error) {
	s, err := d.NewStream(StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var finals []Result
	collect := func(evs []Event) {
		for _, ev := range evs {
			if ev.Kind == Final {
				finals = append(finals, ev.Result)
			}
		}
	}
	for len(samples) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(len(samples), BlockSamples)
		evs, err := s.Push(samples[:n])
		if err != nil {
			return nil, err
		}
		collect(evs)
		samples = samples[n:]
	}
	evs, err := s.End()
	if err != nil {
		return nil, err
	}
	collect(evs)
	return finals, nil
}
