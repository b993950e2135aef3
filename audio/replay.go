package audio

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// ReplayConfig configures a Replay.
type ReplayConfig struct {
	// FrameDuration is the length of the frames Read returns, 1 ms to 1 s;
	// 0 means DefaultFrameDuration.
	FrameDuration time.Duration
	// Paced makes Read deliver audio no faster than real time, like a
	// microphone: each frame becomes available once its last sample would
	// have been recorded, counting from the first Read. Frames a slow
	// reader missed are then delivered at once, so nothing is lost and the
	// pace does not drift. Without Paced, Read returns frames as fast as
	// they are read.
	Paced bool
	// Loop starts the audio over at its end instead of ending with io.EOF;
	// frames run on across the seam.
	Loop bool
	// Clock paces the replay; nil means SystemClock. Tests inject a fake.
	Clock Clock
}

// Replay is a Source over PCM held in memory, such as a decoded recording,
// or read as it is delivered from a decoder (NewReplayReader): for a
// conversation from a file, tests, screenshots and live-caption
// demonstrations without a microphone. Format and Close are safe for
// concurrent use; Read must be called from one goroutine at a time.
type Replay struct {
	format  Format
	samples []int16 // not modified; unused when src is set
	cfg     ReplayConfig
	clock   Clock
	frame   []int16 // returned by Read, reused

	// src gives the samples when they are not held: read a frame ahead
	// of what is delivered, into pending. srcMu is held while src is
	// read or closed, so that Close does not close it under a Read.
	srcMu     sync.Mutex
	src       SampleReader
	srcErr    error // how src ended: io.EOF, or its failure
	srcClosed bool
	pending   []int16

	pos       int   // next sample of samples to deliver
	delivered int64 // sample frames delivered so far
	start     time.Time
	started   bool

	done      chan struct{}
	closeOnce sync.Once
}

// NewReplay returns a Source that delivers samples, interleaved PCM in
// format f (which must be linear16), in frames of cfg.FrameDuration. The
// samples are not copied and must not be modified while the Replay is in
// use.
func NewReplay(f Format, samples []int16, cfg ReplayConfig) (*Replay, error) {
	if err := checkSourceFormat(f); err != nil {
		return nil, fmt.Errorf("audio: replay: %w", err)
	}
	if len(samples)%f.Channels != 0 {
		return nil, fmt.Errorf("audio: replay: %d samples are not whole %d-channel frames", len(samples), f.Channels)
	}
	if cfg.Loop && len(samples) == 0 {
		return nil, fmt.Errorf("audio: replay: nothing to loop")
	}
	if cfg.FrameDuration == 0 {
		cfg.FrameDuration = DefaultFrameDuration
	}
	frames, err := FrameLen(cfg.FrameDuration, f.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("audio: replay: %w", err)
	}
	clock := cfg.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	return &Replay{
		format:  f,
		samples: samples,
		cfg:     cfg,
		clock:   clock,
		frame:   make([]int16, frames*f.Channels),
		done:    make(chan struct{}),
	}, nil
}

// SampleReader gives interleaved 16-bit samples a piece at a time, as a
// decoder does: Read fills pcm with the next ones and returns how many,
// io.EOF after the last. A FileDecoder is one.
type SampleReader interface {
	Read(pcm []int16) (int, error)
}

// NewReplayReader returns a Replay of the samples src gives, interleaved
// PCM in format f (which must be linear16), read as they are delivered:
// memory holds a frame of them whatever the recording's length. It
// cannot loop. Close closes src when it is an io.Closer; a failure of
// src is returned by Read once the samples before it are delivered.
func NewReplayReader(f Format, src SampleReader, cfg ReplayConfig) (*Replay, error) {
	if cfg.Loop {
		return nil, fmt.Errorf("audio: replay: a recording read as it plays cannot loop")
	}
	r, err := NewReplay(f, nil, cfg)
	if err != nil {
		return nil, err
	}
	r.src = src
	r.pending = make([]int16, 0, 2*len(r.frame))
	return r, nil
}

// fill reads src until a frame of n samples is pending or src has ended.
func (r *Replay) fill(n int) {
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	for len(r.pending) < n && r.srcErr == nil {
		if r.srcClosed {
			r.srcErr = ErrSourceClosed
			return
		}
		m, err := r.src.Read(r.pending[len(r.pending):cap(r.pending)])
		r.pending = r.pending[:len(r.pending)+m]
		if err != nil {
			r.srcErr = err
		}
	}
}

// NewReplayBuffer returns a Replay of a decoded recording at its own rate
// and channel count, converted to int16 (see Float32ToInt16).
func NewReplayBuffer(b *Buffer, cfg ReplayConfig) (*Replay, error) {
	f := Format{Encoding: EncodingLinear16, SampleRate: b.SampleRate, Channels: b.Channels}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("audio: replay: %w", err)
	}
	whole := len(b.Samples) - len(b.Samples)%b.Channels
	return NewReplay(f, Float32ToInt16(nil, b.Samples[:whole]), cfg)
}

// NewSilence returns an endless Source of silence in format f (which must be
// linear16): a microphone in a quiet room, for tests and demonstrations.
// cfg.Loop is implied.
func NewSilence(f Format, cfg ReplayConfig) (*Replay, error) {
	if err := checkSourceFormat(f); err != nil {
		return nil, fmt.Errorf("audio: silence: %w", err)
	}
	if cfg.FrameDuration == 0 {
		cfg.FrameDuration = DefaultFrameDuration
	}
	frames, err := FrameLen(cfg.FrameDuration, f.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("audio: silence: %w", err)
	}
	cfg.Loop = true
	return NewReplay(f, make([]int16, frames*f.Channels), cfg)
}

// Format returns the format of the frames Read returns.
func (r *Replay) Format() Format { return r.format }

// Read returns the next frame, after waiting for it to be due when the
// replay is paced. The slice is reused by the next Read. A Read that
// returns an error delivers nothing: the next Read returns the same frame.
func (r *Replay) Read(ctx context.Context) ([]int16, error) {
	select {
	case <-r.done:
		return nil, ErrSourceClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(r.frame)
	switch {
	case r.src != nil:
		r.fill(n)
		n = min(n, len(r.pending))
		n -= n % r.format.Channels
		if n == 0 {
			return nil, r.srcErr
		}
	case !r.cfg.Loop:
		n = min(n, len(r.samples)-r.pos)
		if n == 0 {
			return nil, io.EOF
		}
	}
	if r.cfg.Paced {
		if !r.started {
			r.start, r.started = r.clock.Now(), true
		}
		due := r.start.Add(FramesDuration(r.delivered+int64(n/r.format.Channels), r.format.SampleRate))
		if err := r.wait(ctx, due); err != nil {
			return nil, err
		}
	}
	out := r.frame[:n]
	if r.src != nil {
		copy(out, r.pending)
		r.pending = r.pending[:copy(r.pending, r.pending[n:])]
		r.delivered += int64(n / r.format.Channels)
		return out, nil
	}
	for filled := 0; filled < n; {
		c := copy(out[filled:], r.samples[r.pos:])
		filled += c
		r.pos += c
		if r.pos == len(r.samples) && r.cfg.Loop {
			r.pos = 0
		}
	}
	r.delivered += int64(n / r.format.Channels)
	return out, nil
}

// wait blocks until the clock reaches due, ctx ends or the replay is
// closed.
func (r *Replay) wait(ctx context.Context, due time.Time) error {
	for {
		d := due.Sub(r.clock.Now())
		if d <= 0 {
			return nil
		}
		t := r.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-r.done:
			t.Stop()
			return ErrSourceClosed
		}
	}
}

// Close ends the replay: a Read blocked in another goroutine returns
// ErrSourceClosed at once, and so does every later Read. A replay read
// from a decoder closes it (once a Read that is reading it has). It is
// idempotent and always returns nil.
func (r *Replay) Close() error {
	r.closeOnce.Do(func() {
		close(r.done)
		if r.src == nil {
			return
		}
		r.srcMu.Lock()
		defer r.srcMu.Unlock()
		r.srcClosed = true
		if c, ok := r.src.(io.Closer); ok {
			_ = c.Close()
		}
	})
	return nil
}
