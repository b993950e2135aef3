package sphinx

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Pool keeps up to a fixed number of decoders of one Config, so requests do
// not pay the model-loading second. Get hands out an idle decoder, builds a
// new one while under the bound, or waits for a Put.
//
// A Pool is safe for concurrent use. The decoders it hands out are not: each
// belongs to the goroutine that got it until it is Put back.
type Pool struct {
	cfg Config
	max int

	mu     sync.Mutex // guards the fields below
	idle   []*Decoder
	live   int           // decoders built and not yet closed (idle or out)
	wake   chan struct{} // closed and replaced when a decoder may be available
	closed bool
}

// NewPool returns a pool of at most size decoders built from cfg. It builds
// none yet; call Warm to load some ahead of the first request.
func NewPool(cfg Config, size int) (*Pool, error) {
	if size < 1 {
		return nil, fmt.Errorf("%w: pool size %d", ErrInvalidConfig, size)
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Pool{cfg: cfg, max: size, wake: make(chan struct{})}, nil
}

// Config returns the configuration of the pool's decoders.
func (p *Pool) Config() Config { return p.cfg }

// Size returns the pool's bound.
func (p *Pool) Size() int { return p.max }

// Live returns how many decoders the pool holds, idle, in use or being
// built.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// Warm builds decoders until n are idle (capped by the bound), loading them
// in parallel. It returns when they are ready or the first load fails.
func (p *Pool) Warm(ctx context.Context, n int) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	want := min(n-len(p.idle), p.max-p.live)
	if want <= 0 {
		p.mu.Unlock()
		return nil
	}
	p.live += want
	p.mu.Unlock()

	errs := make([]error, want)
	var wg sync.WaitGroup
	for i := range want {
		wg.Go(func() {
			d, err := NewDecoder(ctx, p.cfg)
			if err != nil {
				errs[i] = err
				p.release()
				return
			}
			d.pool = p
			p.putIdle(d)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("warming pool: %w", err)
	}
	return nil
}

// Get returns a decoder for the caller's exclusive use until Put. It waits
// while all decoders are in use, and fails with the context's error if ctx
// ends first, or with ErrClosed after Close.
func (p *Pool) Get(ctx context.Context) (*Decoder, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if n := len(p.idle); n > 0 {
			d := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			d.idle = false
			p.mu.Unlock()
			return d, nil
		}
		if p.live < p.max {
			p.live++
			p.mu.Unlock()
			d, err := NewDecoder(ctx, p.cfg)
			if err != nil {
				p.release()
				return nil, err
			}
			d.pool = p
			return d, nil
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

// Put returns a decoder got from this pool. Any stream it still serves is
// abandoned and the decoder is reset, so the next user gets the state of a
// freshly loaded decoder. Putting nil, or a decoder that is already back in
// the pool, does nothing; a decoder that was closed, or whose reset failed,
// is dropped and its slot freed; a decoder from elsewhere is closed. After
// Close, Put closes the decoder.
func (p *Pool) Put(d *Decoder) {
	if d == nil {
		return
	}
	if d.pool != p {
		// Not ours: do not let it count against this pool's bound.
		_ = d.Close()
		return
	}
	p.mu.Lock()
	idle := d.idle
	p.mu.Unlock()
	if idle {
		return
	}
	if !d.reset() {
		_ = d.Close()
		p.release()
		return
	}
	p.putIdle(d)
}

// putIdle adds a usable decoder to the idle list and wakes a waiter.
func (p *Pool) putIdle(d *Decoder) {
	p.mu.Lock()
	if p.closed {
		p.live--
		p.mu.Unlock()
		_ = d.Close()
		return
	}
	if d.idle {
		p.mu.Unlock()
		return
	}
	d.idle = true
	p.idle = append(p.idle, d)
	p.broadcastLocked()
	p.mu.Unlock()
}

// release frees the slot of a decoder that was never built or is gone.
func (p *Pool) release() {
	p.mu.Lock()
	p.live--
	p.broadcastLocked()
	p.mu.Unlock()
}

func (p *Pool) broadcastLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
}

// Close closes the idle decoders and makes Get fail with ErrClosed.
// Decoders in use are closed when they are Put back. Close is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.broadcastLocked()
	p.mu.Unlock()
	var errs []error
	for _, d := range idle {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}
