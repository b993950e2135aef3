package audio

import (
	"math"
	"sync"
	"time"
)

// Acoustic echo cancellation: the microphone's signal, less what the
// speaker played and the room sent back (speexdsp's canceller, with its
// preprocessor suppressing the residue).

// EchoFrame is the canceller's frame: 20 ms.
const EchoFrame = 20 * time.Millisecond

// DefaultEchoTail is the longest echo path the canceller models: the
// delay from the speaker to the microphone plus the room's reverberation.
const DefaultEchoTail = 300 * time.Millisecond

// EchoFilter cancels from the microphone the echo of what the speaker
// played. The reference is aligned by the player's playhead: each
// microphone frame is matched with the audio the speaker played while it
// was recorded, so that a player that runs dry, or starts late, does not
// shift the echo path the canceller has learnt. It is safe for
// concurrent use.
type EchoFilter struct {
	mu     sync.Mutex
	c      *EchoCanceller
	ref    []int16 // the stream's audio at the microphone's rate, from base on
	base   int64   // stream position of ref[0]
	played int64   // stream position played when the last frame was taken
	in     []int16 // microphone samples not yet a whole frame
	out    []int16 // cleaned samples not yet returned
	fIn    []int16
	fRef   []int16
	fOut   []int16
}

// NewEchoFilter returns a filter for a microphone at rate.
func NewEchoFilter(rate int) (*EchoFilter, error) {
	c, err := NewEchoCanceller(rate, DefaultEchoTail)
	if err != nil {
		return nil, err
	}
	n := c.FrameLen()
	return &EchoFilter{c: c, fIn: make([]int16, n), fRef: make([]int16, n), fOut: make([]int16, n)}, nil
}

// Played adds audio written to the speaker (at the microphone's rate) to
// the stream's reference.
func (f *EchoFilter) Played(pcm []int16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ref = append(f.ref, pcm...)
}

// Stopped starts a new stream: the player was stopped (barge-in), and its
// playhead starts again from zero.
func (f *EchoFilter) Stopped() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ref, f.base, f.played = f.ref[:0], 0, 0
}

// Capture cancels the echo from microphone samples recorded while the
// speaker's playhead reached playhead (in samples of the stream at the
// microphone's rate). It returns as many cleaned samples as came in
// (delayed by up to one frame).
func (f *EchoFilter) Capture(mic []int16, playhead int64) []int16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.in = append(f.in, mic...)
	n := f.c.FrameLen()
	// What the speaker played since the last frames were taken, spread
	// over the frames now whole: the last of it with the last frame.
	frames := len(f.in) / n
	head := max(playhead, f.played)
	for k := range frames {
		copy(f.fIn, f.in[k*n:(k+1)*n])
		// This frame heard the audio up to end.
		end := head - int64(frames-1-k)*int64(n)
		clear(f.fRef)
		for i := range n {
			pos := end - int64(n) + int64(i)
			if pos >= f.played && pos >= f.base && pos-f.base < int64(len(f.ref)) {
				f.fRef[i] = f.ref[pos-f.base]
			}
		}
		if err := f.c.Process(f.fOut, f.fIn, f.fRef); err != nil {
			copy(f.fOut, f.fIn)
		}
		f.out = append(f.out, f.fOut...)
	}
	f.in = f.in[frames*n:]
	f.played = head
	// Forget the reference played more than a tail ago.
	if drop := min(int64(len(f.ref)), f.played-f.base-int64(4*n)); drop > 0 {
		f.ref = f.ref[drop:]
		f.base += drop
	}
	k := min(len(mic), len(f.out))
	res := append([]int16(nil), f.out[:k]...)
	f.out = f.out[k:]
	if k < len(mic) {
		// The first frames: silence until a frame is whole.
		res = append(make([]int16, len(mic)-k), res...)
	}
	return res
}

// Close frees the filter.
func (f *EchoFilter) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c.Close()
}

// ERLE is the echo return loss enhancement, in dB: how much weaker the
// echo left in out is than the echo in mic.
func ERLE(mic, out []int16) float64 {
	var pm, po float64
	for i := range min(len(mic), len(out)) {
		pm += float64(mic[i]) * float64(mic[i])
		po += float64(out[i]) * float64(out[i])
	}
	if po == 0 {
		po = 1
	}
	if pm == 0 {
		return 0
	}
	return 10 * math.Log10(pm/po)
}
