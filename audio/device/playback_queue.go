package device

import (
	"encoding/binary"
	"sync/atomic"
)

// segmentSamples is the size of one block of a playQueue: 8 KiB, a quarter
// of a second of 16 kHz mono.
const segmentSamples = 4096

// segmentPool is how many drained segments a playQueue keeps for reuse, so
// that steady playback allocates nothing; the rest go to the collector.
const segmentPool = 16

// segment is one block of a playQueue's linked list.
type segment struct {
	buf  [segmentSamples]int16
	next atomic.Pointer[segment]
}

// playQueue is an unbounded single-producer single-consumer queue of int16
// samples between the goroutine writing audio to play (the producer) and
// the device callback (the consumer). It is a linked list of fixed-size
// segments: the producer appends and links new segments as it needs them,
// the consumer walks the list and hands drained segments back through a
// small pool. The consumer never blocks, locks or allocates; the producer
// allocates only when the pool is empty. Bounding the queue is the
// caller's business (Playback blocks its writer).
//
// Positions are absolute sample counts that only grow:
//
//   - w is the producer's: samples written. Published after the samples
//     (and any new segment's link), so a consumer that sees w sees them.
//   - r is the consumer's: samples consumed or discarded.
//   - discardTo is set by whoever wants the queue emptied (Stop): the
//     consumer skips everything before it on its next call. The queue's
//     length is w - max(r, discardTo) from the moment it is set.
//
// head/headOff belong to the consumer and tail/tailOff to the producer;
// when the queue is empty they may point into the same segment, at the
// same offset.
type playQueue struct {
	w         atomic.Uint64
	r         atomic.Uint64
	discardTo atomic.Uint64

	tail    *segment // producer only
	tailOff int
	tailPos uint64   // producer only: samples copied, published or not
	head    *segment // consumer only
	headOff int

	pool chan *segment
}

func newPlayQueue() *playQueue {
	s := new(segment)
	return &playQueue{tail: s, head: s, pool: make(chan *segment, segmentPool)}
}

// push appends p (producer only) and publishes it.
func (q *playQueue) push(p []int16) {
	if len(p) == 0 {
		return
	}
	for len(p) > 0 {
		if q.tailOff == segmentSamples {
			var s *segment
			select {
			case s = <-q.pool:
				s.next.Store(nil)
			default:
				s = new(segment)
			}
			q.tail.next.Store(s)
			q.tail, q.tailOff = s, 0
		}
		n := copy(q.tail.buf[q.tailOff:], p)
		q.tailOff += n
		q.tailPos += uint64(n)
		p = p[n:]
	}
	q.w.Store(q.tailPos)
}

// written returns the samples written in all.
func (q *playQueue) written() uint64 { return q.w.Load() }

// queued returns how many samples are waiting to be played.
func (q *playQueue) queued() uint64 {
	w := q.w.Load()
	start := max(q.r.Load(), q.discardTo.Load())
	if start > w {
		return 0
	}
	return w - start
}

// discard asks the consumer to drop everything written so far (the caller
// must keep the producer from writing meanwhile).
func (q *playQueue) discard() { q.discardTo.Store(q.w.Load()) }

// skipDiscarded drops what discard asked to drop (consumer only) and
// reports whether it dropped anything.
func (q *playQueue) skipDiscarded() bool {
	r := q.r.Load()
	d := q.discardTo.Load()
	if d <= r {
		return false
	}
	q.advance(d-r, nil)
	q.r.Store(d)
	return true
}

// popBytes fills the start of out with up to len(out)/2 queued samples in
// the machine's byte order, as miniaudio takes them, and returns how many
// samples it took (consumer only). It never blocks or allocates.
func (q *playQueue) popBytes(out []byte) int {
	r := q.r.Load()
	n := min(q.w.Load()-r, uint64(len(out)/2))
	if n == 0 {
		return 0
	}
	q.advance(n, out)
	q.r.Store(r + n)
	return int(n)
}

// advance moves the consumer n samples on, copying them into out (in
// native byte order) unless out is nil. The caller has checked that n
// samples are published.
func (q *playQueue) advance(n uint64, out []byte) {
	for n > 0 {
		if q.headOff == segmentSamples {
			next := q.head.next.Load() // published before the samples in it
			old := q.head
			q.head, q.headOff = next, 0
			select {
			case q.pool <- old:
			default:
			}
		}
		k := min(int(min(n, uint64(segmentSamples))), segmentSamples-q.headOff)
		if out != nil {
			src := q.head.buf[q.headOff : q.headOff+k]
			for i, v := range src {
				binary.NativeEndian.PutUint16(out[2*i:], uint16(v))
			}
			out = out[2*k:]
		}
		q.headOff += k
		n -= uint64(k)
	}
}
