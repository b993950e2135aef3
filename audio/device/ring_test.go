package device

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/earshot-app/earshot/internal/leaktest"
)

// seq returns n consecutive sample values starting at from (wrapping at
// 16 bits), so that any sample out of place shows.
func seq(from, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(from + i)
	}
	return out
}

func TestRingWraparound(t *testing.T) {
	rb := newRing(10, 4, 1) // 24 slots: positions wrap every 24 samples
	dst := make([]int16, 4)
	next, want := 0, 0
	for round := range 50 {
		n := 1 + round%4 // 1..4 samples per write, so writes straddle the end
		rb.write(seq(next, n))
		next += n
		for rb.read(dst) {
			if w := seq(want, 4); !slices.Equal(dst, w) {
				t.Fatalf("round %d: read %v, want %v", round, dst, w)
			}
			want += 4
		}
	}
	if rb.overruns.Load() != 0 || rb.dropped.Load() != 0 {
		t.Errorf("%d overruns, %d dropped; the reader kept up", rb.overruns.Load(), rb.dropped.Load())
	}
	if got := rb.available(); got != next-want {
		t.Errorf("available %d, want %d", got, next-want)
	}
}

func TestRingOverrun(t *testing.T) {
	tests := []struct {
		name        string
		limit       int
		align       int
		writes      []int // sizes written before reading
		wantDropped int64
		wantEvents  int64
		wantFirst   int // value of the first sample then read
		wantAvail   int
	}{
		{"fits", 8, 1, []int{4, 4}, 0, 0, 0, 8},
		{"one over", 8, 1, []int{4, 4, 1}, 1, 1, 1, 8},
		{"each write drops", 8, 1, []int{6, 4, 4}, 6, 2, 6, 8},
		{"write larger than the buffer", 8, 1, []int{3, 20}, 15, 1, 15, 8},
		{"stereo drops whole frames", 8, 2, []int{6, 4}, 2, 1, 2, 8},
		{"stereo ignores a partial frame", 8, 2, []int{5}, 0, 0, 0, 4},
		{"limit rounded to frames", 7, 2, []int{8, 2}, 2, 1, 2, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := newRing(tt.limit, 2, tt.align)
			next := 0
			for _, n := range tt.writes {
				rb.write(seq(next, n))
				next += n
			}
			if got := rb.dropped.Load(); got != tt.wantDropped {
				t.Errorf("dropped %d samples, want %d", got, tt.wantDropped)
			}
			if got := rb.overruns.Load(); got != tt.wantEvents {
				t.Errorf("%d overruns, want %d", got, tt.wantEvents)
			}
			if got := rb.available(); got != tt.wantAvail {
				t.Fatalf("available %d, want %d", got, tt.wantAvail)
			}
			dst := make([]int16, 2)
			if !rb.read(dst) || dst[0] != int16(tt.wantFirst) {
				t.Errorf("first sample read %v, want %d (the oldest kept)", dst, tt.wantFirst)
			}
		})
	}
}

// TestRingReadWholeFrames: read takes a frame only when all of it is there,
// and never more than maxRead.
func TestRingReadWholeFrames(t *testing.T) {
	rb := newRing(16, 4, 1)
	rb.write(seq(0, 3))
	if rb.read(make([]int16, 4)) {
		t.Fatal("read 4 samples out of 3")
	}
	rb.write(seq(3, 10))
	if rb.read(make([]int16, 5)) {
		t.Fatal("read more than maxRead")
	}
	dst := make([]int16, 4)
	if !rb.read(dst) || !slices.Equal(dst, seq(0, 4)) {
		t.Fatalf("read %v", dst)
	}
}

// TestRingWriteBytes: the device's bytes are samples in machine order.
func TestRingWriteBytes(t *testing.T) {
	want := []int16{0, 1, -1, 32767, -32768, 12345}
	b := make([]byte, 2*len(want)+1) // and a stray byte
	for i, v := range want {
		binary.NativeEndian.PutUint16(b[2*i:], uint16(v))
	}
	rb := newRing(7, 6, 1) // 20 slots
	dst := make([]int16, 6)
	for round := range 3 { // the third round wraps
		rb.writeBytes(b[:8])
		rb.writeBytes(b[8:])
		if !rb.read(dst) || !slices.Equal(dst, want) {
			t.Fatalf("round %d: read %v, want %v", round, dst, want)
		}
	}
	// Beyond the limit the oldest samples go.
	rb.writeBytes(b)
	rb.writeBytes(b)
	if got := rb.dropped.Load(); got != 5 {
		t.Errorf("dropped %d, want 5", got)
	}
	if w := append(want[5:6:6], want[:5]...); !rb.read(dst) || !slices.Equal(dst, w) {
		t.Fatalf("read %v, want %v", dst, w)
	}
}

// TestRingProducerNeverOverwritesACopy: while the consumer is stalled
// copying a claim, a producer that has dropped its way all round the buffer
// drops its new audio rather than overwrite the samples being copied.
func TestRingProducerNeverOverwritesACopy(t *testing.T) {
	rb := newRing(8, 4, 1) // 20 slots
	rb.write(seq(0, 8))
	// Simulate a consumer that claimed samples 0..3 and stalled copying.
	rb.reading.Store(0)
	rb.r.Store(4)
	next := 8
	for range 4 {
		rb.write(seq(next, 4))
		next += 4
		if got := rb.buf[:4]; !slices.Equal(got, seq(0, 4)) {
			t.Fatalf("after writing up to %d, samples under copy overwritten: %v", next, got)
		}
	}
	// Writes 2-4 each dropped the 4 oldest samples; write 4 would have
	// landed on the claim, so it was dropped too.
	if rb.collisions.Load() != 1 || rb.dropped.Load() != 16 || rb.written() != 20 {
		t.Errorf("%d collisions, %d dropped, %d written; want 1, 16, 20",
			rb.collisions.Load(), rb.dropped.Load(), rb.written())
	}
	rb.reading.Store(ringIdle)
	rb.write(seq(next, 4))
	if rb.written() != 24 || !slices.Equal(rb.buf[:4], seq(next, 4)) {
		t.Errorf("written %d after the copy ended, want 24", rb.written())
	}
}

// TestRingConcurrent runs a producer that writes bursts of varied size
// against a consumer that reads frames and sometimes pauses, under the race
// detector. Every frame must hold consecutive samples (no torn or
// overwritten data), and every sample must be read or counted as dropped.
func TestRingConcurrent(t *testing.T) {
	leaktest.Check(t)
	const (
		align = 2
		frame = 64
		total = 100_000
	)
	rb := newRing(512, frame, align)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // also when the test fails early
	wg.Go(func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(1, 2))
		burst := 0
		for next := 0; next < total; {
			n := min(align*(1+rng.IntN(100)), total-next)
			rb.write(seq(next, n))
			next += n
			// Mostly let the consumer keep up, like a device callback
			// that waits for the next period; now and then burst on and
			// overrun.
			if burst > 0 {
				burst--
			} else if rng.IntN(50) == 0 {
				burst = 2 // at most 400 samples, less than the limit
			} else {
				for rb.available() > 256 {
					runtime.Gosched()
				}
			}
		}
	})
	dst := make([]int16, frame)
	var read int64
	prevEnd := -1
	rng := rand.New(rand.NewPCG(3, 4))
	finished := false
	for !finished {
		select {
		case <-done:
			finished = true
		default:
		}
		for rb.read(dst) {
			for i := 1; i < frame; i++ {
				if dst[i] != dst[i-1]+1 {
					t.Fatalf("frame not consecutive at %d: %v", i, dst)
				}
			}
			start := int(uint16(dst[0]))
			if prevEnd >= 0 && (start-prevEnd)%align != 0 {
				t.Fatalf("frame starts %d samples after the last one ended: channels out of line", start-prevEnd)
			}
			prevEnd = int(uint16(dst[frame-1]) + 1)
			read += frame
			if rng.IntN(64) == 0 {
				// A slow consumer: let the producer overrun.
				for range rng.IntN(20) {
					runtime.Gosched()
				}
				break
			}
		}
	}
	wg.Wait()
	if c := rb.collisions.Load(); c != 0 {
		t.Errorf("%d writes collided with a copy; the margin should prevent it", c)
	}
	rest := int64(rb.available())
	if got := read + rb.dropped.Load() + rest; got != total {
		t.Errorf("read %d + dropped %d + left %d = %d, want %d", read, rb.dropped.Load(), rest, got, total)
	}
	if rest > 512 {
		t.Errorf("%d samples left, more than the limit", rest)
	}
	t.Logf("read %d, dropped %d in %d overruns", read, rb.dropped.Load(), rb.overruns.Load())
}

// TestRingWriteAllocationFree: the device callback's path allocates
// nothing, whether the audio fits, wraps or overruns.
func TestRingWriteAllocationFree(t *testing.T) {
	rb := newRing(16000*2, 320, 1)
	b := make([]byte, 2*480) // 30 ms at 16 kHz: never a multiple of the size
	s := make([]int16, 480)
	dst := make([]int16, 320)
	allocs := testing.AllocsPerRun(1000, func() {
		rb.writeBytes(b)
		rb.write(s)
		rb.read(dst)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per callback", allocs)
	}
	if rb.overruns.Load() == 0 {
		t.Error("the test meant to exercise overruns too")
	}
}

// BenchmarkCaptureCallback measures the device callback: one 20 ms period
// of 16 kHz mono (or 48 kHz stereo) copied into the ring, with a reader
// keeping up.
func BenchmarkCaptureCallback(b *testing.B) {
	for _, bc := range []struct {
		name           string
		rate, channels int
	}{{"16k-mono", 16000, 1}, {"48k-stereo", 48000, 2}} {
		b.Run(bc.name, func(b *testing.B) {
			n := bc.rate / 50 * bc.channels
			c := &Capture{ring: newRing(2*bc.rate*bc.channels, n, bc.channels)}
			in := make([]byte, 2*n)
			dst := make([]int16, n)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				c.onData(nil, in, uint32(n/bc.channels))
				c.ring.read(dst)
			}
		})
	}
}
