package device

import (
	"encoding/binary"
	"sync/atomic"
)

// ring is a preallocated single-producer single-consumer queue of int16
// samples between a device callback (the producer) and one reading
// goroutine (the consumer). The producer never blocks, locks or allocates:
// when the consumer falls behind, the producer drops the oldest unread
// audio, in whole multiples of align samples so interleaved channels stay
// aligned, and counts it.
//
// Positions are absolute sample counts that only grow, so there is no
// wraparound arithmetic on them: sample i lives at buf[i%size].
//
//   - w is the producer's: samples written. Published after the samples.
//   - r is shared: the next unread sample. The consumer advances it to claim
//     samples before copying them; the producer advances it to drop samples.
//     Both use compare-and-swap, so a sample is either read or dropped,
//     never both.
//   - reading is the consumer's: the start of the claim it is copying, or
//     idle. The producer checks it so it never overwrites samples being
//     copied.
//
// The buffer has room for limit samples of unread audio, one claim
// (maxRead), and limit more: that margin keeps the producer's writes away
// from a claim being copied even while the producer is dropping audio
// (each drop moves r, and so the writes, further past the claim). Only if
// the consumer stalled in the middle of one copy while the producer wrote
// more than limit samples could the producer catch up with it; it then
// drops the new audio instead (counted like any overrun, and in
// collisions).
type ring struct {
	buf     []int16
	size    uint64 // len(buf)
	limit   uint64 // most unread samples kept; a multiple of align
	maxRead uint64 // largest claim a read may make
	align   uint64 // drops and writes come in multiples of this

	w       atomic.Uint64
	r       atomic.Uint64
	reading atomic.Uint64

	overruns   atomic.Int64 // writes that had to drop audio
	dropped    atomic.Int64 // samples dropped
	collisions atomic.Int64 // writes dropped to spare a stalled copy

	// notify wakes a consumer waiting for audio. The producer's send never
	// blocks: one pending token is enough, since the consumer rechecks the
	// ring after every wakeup.
	notify chan struct{}
}

const ringIdle = ^uint64(0)

// newRing returns a ring that keeps up to limit unread samples (rounded up
// to a multiple of align) and serves reads of up to maxRead samples.
func newRing(limit, maxRead, align int) *ring {
	align = max(align, 1)
	lim := uint64((max(limit, align) + align - 1) / align * align)
	size := 2*lim + uint64(max(maxRead, 0))
	rb := &ring{
		buf:     make([]int16, size),
		size:    size,
		limit:   lim,
		maxRead: uint64(maxRead),
		align:   uint64(align),
		notify:  make(chan struct{}, 1),
	}
	rb.reading.Store(ringIdle)
	return rb
}

// write appends samples (producer only). A trailing partial group of align
// samples is ignored. It never blocks or allocates.
func (rb *ring) write(p []int16) {
	n := uint64(len(p)) / rb.align * rb.align
	skip, at, ok := rb.reserve(n)
	if !ok {
		return
	}
	p = p[skip:n]
	i := int(at % rb.size)
	c := copy(rb.buf[i:], p)
	copy(rb.buf, p[c:])
	rb.publish(at + uint64(len(p)))
}

// writeBytes appends 16-bit samples in the machine's byte order, as
// miniaudio delivers them (producer only). A trailing partial group is
// ignored. It never blocks or allocates.
func (rb *ring) writeBytes(p []byte) {
	n := uint64(len(p)) / 2 / rb.align * rb.align
	skip, at, ok := rb.reserve(n)
	if !ok {
		return
	}
	p = p[2*skip : 2*n]
	i := int(at % rb.size)
	for len(p) > 0 {
		dst := rb.buf[i:]
		k := min(len(dst), len(p)/2)
		for j := range dst[:k] {
			dst[j] = int16(binary.NativeEndian.Uint16(p[2*j:]))
		}
		p = p[2*k:]
		i = 0
	}
	rb.publish(at + (n - skip))
}

// reserve makes room for n new samples by dropping the oldest unread ones
// if need be. It returns how many leading samples of the input to skip
// (when the input alone exceeds the limit), the position to write at, and
// false if nothing is to be written.
func (rb *ring) reserve(n uint64) (skip, at uint64, ok bool) {
	if n == 0 {
		return 0, 0, false
	}
	var lost uint64
	if n > rb.limit {
		skip = n - rb.limit
		lost = skip
		n = rb.limit
	}
	w := rb.w.Load()
	for {
		r := rb.r.Load()
		excess := w - r + n
		if excess <= rb.limit {
			break
		}
		excess -= rb.limit
		if rb.r.CompareAndSwap(r, r+excess) {
			lost += excess
			break
		}
		// The consumer claimed samples meanwhile; recompute.
	}
	if c := rb.reading.Load(); c != ringIdle && w+n-c > rb.size {
		// The consumer is still copying samples this write would overwrite.
		rb.collisions.Add(1)
		lost += n
		n = 0
	}
	if lost > 0 {
		rb.overruns.Add(1)
		rb.dropped.Add(int64(lost))
	}
	return skip, w, n > 0
}

func (rb *ring) publish(w uint64) {
	rb.w.Store(w)
	select {
	case rb.notify <- struct{}{}:
	default:
	}
}

// read fills dst entirely with the oldest unread samples and reports true,
// or reports false and takes nothing if fewer than len(dst) are unread
// (consumer only). len(dst) must not exceed maxRead.
func (rb *ring) read(dst []int16) bool {
	n := uint64(len(dst))
	if n > rb.maxRead {
		return false
	}
	var r uint64
	for {
		r = rb.r.Load()
		if rb.w.Load()-r < n {
			return false
		}
		rb.reading.Store(r)
		if rb.r.CompareAndSwap(r, r+n) {
			break
		}
		// The producer dropped samples meanwhile; try again.
	}
	i := int(r % rb.size)
	c := copy(dst, rb.buf[i:])
	copy(dst[c:], rb.buf)
	rb.reading.Store(ringIdle)
	return true
}

// available returns the number of unread samples.
func (rb *ring) available() int {
	r := rb.r.Load()
	return int(rb.w.Load() - r)
}

// written returns the number of samples ever written, dropped or not.
func (rb *ring) written() int64 { return int64(rb.w.Load()) }
