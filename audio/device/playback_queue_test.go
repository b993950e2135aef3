package device

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/earshot-app/earshot/internal/leaktest"
)

// popSamples pops up to n samples from q as int16s.
func popSamples(q *playQueue, n int) []int16 {
	b := make([]byte, 2*n)
	got := q.popBytes(b)
	out := make([]int16, got)
	for i := range out {
		out[i] = int16(binary.NativeEndian.Uint16(b[2*i:]))
	}
	return out
}

// TestPlayQueueOrder: samples come out in order across block boundaries,
// whatever the sizes of the pushes and pops.
func TestPlayQueueOrder(t *testing.T) {
	tests := []struct {
		name       string
		push, pops int
	}{
		{"small", 7, 5},
		{"one block", segmentSamples, segmentSamples},
		{"straddling", segmentSamples - 1, 3*segmentSamples/2 + 1},
		{"many blocks per push", 5*segmentSamples + 3, 160},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newPlayQueue()
			next, want := 0, 0
			for round := range 12 {
				q.push(seq(next, tt.push))
				next += tt.push
				if got := q.queued(); got != uint64(next-want) {
					t.Fatalf("round %d: queued %d, want %d", round, got, next-want)
				}
				for {
					got := popSamples(q, tt.pops)
					if len(got) == 0 {
						break
					}
					if w := seq(want, len(got)); !slices.Equal(got, w) {
						t.Fatalf("round %d: popped %v..., want %v...", round, got[:1], w[:1])
					}
					want += len(got)
					if round%2 == 0 {
						break // let the queue grow on even rounds
					}
				}
			}
			for got := popSamples(q, 1000); len(got) > 0; got = popSamples(q, 1000) {
				if !slices.Equal(got, seq(want, len(got))) {
					t.Fatal("out of order while emptying")
				}
				want += len(got)
			}
			if want != next || q.queued() != 0 {
				t.Errorf("popped %d of %d; %d left", want, next, q.queued())
			}
		})
	}
}

// TestPlayQueueDiscard: discard drops exactly what was written before it,
// from the consumer's next call on, and reuses the drained blocks.
func TestPlayQueueDiscard(t *testing.T) {
	q := newPlayQueue()
	q.push(seq(0, 3*segmentSamples+10))
	popSamples(q, 100)
	q.discard()
	if q.queued() != 0 {
		t.Fatalf("%d queued after discard", q.queued())
	}
	q.push(seq(50000, 20)) // written after: kept
	if q.queued() != 20 {
		t.Fatalf("%d queued, want 20", q.queued())
	}
	if !q.skipDiscarded() || q.skipDiscarded() {
		t.Fatal("skipDiscarded should drop once")
	}
	if got := popSamples(q, 100); !slices.Equal(got, seq(50000, 20)) {
		t.Fatalf("popped %v after the discard", got)
	}
	if len(q.pool) != 3 {
		t.Errorf("%d blocks back in the pool, want the 3 drained", len(q.pool))
	}
}

// TestPlayQueueConcurrent: a producer pushing bursts of varied size and a
// consumer popping device periods, under the race detector; every sample
// arrives once, in order.
func TestPlayQueueConcurrent(t *testing.T) {
	leaktest.Check(t)
	const total = 400_000
	q := newPlayQueue()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for next, n := 0, 1; next < total; n = n*7%9973 + 1 {
			n = min(n, total-next)
			q.push(seq(next, n))
			next += n
			for q.queued() > 50_000 {
				runtime.Gosched()
			}
		}
	})
	b := make([]byte, 2*441)
	for want := 0; want < total; {
		n := q.popBytes(b)
		if n == 0 {
			runtime.Gosched()
			continue
		}
		for i := range n {
			if v := int16(binary.NativeEndian.Uint16(b[2*i:])); v != int16(want+i) {
				t.Fatalf("sample %d is %d", want+i, v)
			}
		}
		want += n
	}
}

// FuzzPlayQueue runs arbitrary sequences of pushes, pops and discards
// against a plain slice: the queue must agree with it and never panic.
func FuzzPlayQueue(f *testing.F) {
	f.Add([]byte{10, 200, 3, 0x80, 5, 0xc0, 7})
	f.Add([]byte{255, 255, 255, 255, 0x90, 0xc1, 0x8f, 0x8f})
	f.Add([]byte{0xc0, 0x80, 1, 0x81})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := newPlayQueue()
		var model []int16
		next := 0
		for _, op := range ops {
			n := int(op&0x3f) * 97 // up to 6111: crosses blocks
			switch op >> 6 {
			case 0, 1: // push
				s := seq(next, n)
				next += n
				q.push(s)
				model = append(model, s...)
			case 2: // pop
				got := popSamples(q, n)
				k := min(n, len(model))
				if !slices.Equal(got, model[:k]) {
					t.Fatalf("popped %d samples, want %d of the model's", len(got), k)
				}
				model = model[k:]
			case 3: // discard, then the consumer's next call
				q.discard()
				q.skipDiscarded()
				model = model[:0]
			}
			if q.queued() != uint64(len(model)) {
				t.Fatalf("queued %d, model %d", q.queued(), len(model))
			}
		}
	})
}
