package sphinx

import (
	"context"
	"errors"
	"github.com/earshot-app/earshot/internal/leaktest"
	"reflect"
	"testing"
	"time"
)

// TestPoolReuse checks that a decoder coming back from the pool behaves
// exactly like a freshly loaded one, even after a stream was abandoned in
// the middle of an utterance.
func TestPoolReuse(t *testing.T) {
	ctx := context.Background()
	p, err := NewPool(Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Warm(ctx, 1); err != nil {
		t.Fatal(err)
	}
	a := readClip(t, clipPath("0930"))
	b := readClip(t, clipPath("0880"))

	d, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := transcribe(t, d, b) // first use: a fresh decoder
	// Change all the state a decode leaves behind (noise estimate, cepstral
	// means), then abandon a stream mid-utterance.
	transcribe(t, d, a)
	s, err := d.NewStream(StreamOptions{Partials: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(a[:len(a)/2]); err != nil {
		t.Fatal(err)
	}
	p.Put(d)
	if _, err := s.Push(a[:10]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Push on a stream whose decoder went back to the pool: %v", err)
	}

	d2, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d2 != d {
		t.Fatalf("pool of one built a second decoder")
	}
	if reused := transcribe(t, d2, b); !reflect.DeepEqual(reused, fresh) {
		t.Fatalf("reused decoder differs from fresh\nreused: %+v\n fresh: %+v", reused, fresh)
	}
	p.Put(d2)
	p.Put(d2) // a second Put must not list it twice
	d3, err := p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if d4, err := p.Get(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("double Put handed the decoder out twice: %p %p %v", d3, d4, err)
	}
	p.Put(d3)
}

// TestPoolBound checks that Get waits when every decoder is out, honours its
// context, and wakes up on Put; and that Close ends the pool.
func TestPoolBound(t *testing.T) {
	ctx := context.Background()
	if _, err := NewPool(Config{}, 0); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("NewPool(size 0): %v", err)
	}
	p, err := NewPool(Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Size() != 1 || p.Config() != DefaultConfig() {
		t.Fatalf("Size %d Config %+v", p.Size(), p.Config())
	}
	d, err := p.Get(ctx) // built on demand
	if err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Get(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get on an exhausted pool: %v", err)
	}
	if err := p.Warm(ctx, 1); err != nil { // nothing to build: at the bound
		t.Fatalf("Warm at the bound: %v", err)
	}

	got := make(chan *Decoder)
	go func() {
		d, err := p.Get(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	leaktest.WaitParked(t, 1, "sphinx.(*Pool).Get")
	p.Put(d)
	select {
	case d2 := <-got:
		if d2 != d {
			t.Errorf("waiting Get got a different decoder")
		}
		p.Put(d2)
	case <-time.After(10 * time.Second):
		t.Fatal("waiting Get not woken by Put")
	}

	// Putting a closed decoder frees its slot; the next Get builds anew.
	d, err = p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := d.NewStream(StreamOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewStream on closed decoder: %v", err)
	}
	p.Put(d)
	d, err = p.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A decoder from elsewhere is closed, not adopted.
	foreign, err := NewDecoder(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.Put(foreign)
	if _, err := foreign.NewStream(StreamOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("foreign decoder still open after Put: %v", err)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := p.Get(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := p.Warm(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Warm after Close: %v", err)
	}
	p.Put(d) // closes it
	if _, err := d.NewStream(StreamOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("decoder put after Close still open: %v", err)
	}
}

// TestPoolConcurrent has several goroutines share a pool of two decoders.
func TestPoolConcurrent(t *testing.T) {
	ctx := context.Background()
	p, err := NewPool(Config{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Warm(ctx, 2); err != nil {
		t.Fatal(err)
	}
	clip := readClip(t, clipPath("0880"))[:SampleRate/2]
	const users = 4
	errs := make(chan error, users)
	for range users {
		go func() {
			d, err := p.Get(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer p.Put(d)
			_, err = d.Transcribe(ctx, clip)
			errs <- err
		}()
	}
	for range users {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
