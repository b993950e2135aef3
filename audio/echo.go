package audio

// #cgo pkg-config: speexdsp
// #include <stdlib.h>
// #include <speex/speex_echo.h>
// #include <speex/speex_preprocess.h>
//
// static int earshot_echo_rate(SpeexEchoState *st, int rate) {
//   return speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
// }
// static int earshot_pp_echo(SpeexPreprocessState *pp, SpeexEchoState *st) {
//   return speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_STATE, st);
// }
// static int earshot_pp_off(SpeexPreprocessState *pp) {
//   int off = 0;
//   (void)0; /* denoise stays on: the residual echo suppression works through it */
//   speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_AGC, &off);
//   return speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_DEREVERB, &off);
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"
)

// Acoustic echo cancellation: the microphone's signal, less what the
// speaker played and the room sent back (speexdsp's canceller, with its
// preprocessor suppressing the residue).

// EchoFrame is the canceller's frame: 20 ms.
const EchoFrame = 20 * time.Millisecond

// DefaultEchoTail is the longest echo path the canceller models: the
// delay from the speaker to the microphone plus the room's reverberation.
const DefaultEchoTail = 300 * time.Millisecond

// EchoCanceller removes from a microphone signal the echo of a reference
// (what the speaker played), frame by frame, at one sample rate. It is
// not safe for concurrent use.
type EchoCanceller struct {
	st    *C.SpeexEchoState
	pp    *C.SpeexPreprocessState
	frame int
	rec   *C.spx_int16_t // C buffers of one frame
	play  *C.spx_int16_t
	out   *C.spx_int16_t
}

// NewEchoCanceller returns a canceller of frames of EchoFrame at rate,
// modelling echo paths up to tail.
func NewEchoCanceller(rate int, tail time.Duration) (*EchoCanceller, error) {
	if rate < 8000 || rate > 48000 {
		return nil, fmt.Errorf("audio: echo cancellation at %d Hz: the rate must be 8000 to 48000", rate)
	}
	if tail < EchoFrame || tail > 2*time.Second {
		return nil, fmt.Errorf("audio: echo tail %v must be %v to 2s", tail, EchoFrame)
	}
	frame := int(int64(rate) * int64(EchoFrame) / int64(time.Second))
	filter := int(int64(rate) * int64(tail) / int64(time.Second))
	st := C.speex_echo_state_init(C.int(frame), C.int(filter))
	if st == nil {
		return nil, errors.New("audio: the echo canceller could not start")
	}
	C.earshot_echo_rate(st, C.int(rate))
	pp := C.speex_preprocess_state_init(C.int(frame), C.int(rate))
	if pp == nil {
		C.speex_echo_state_destroy(st)
		return nil, errors.New("audio: the echo suppressor could not start")
	}
	C.earshot_pp_off(pp)
	C.earshot_pp_echo(pp, st)
	size := C.size_t(frame) * C.size_t(unsafe.Sizeof(C.spx_int16_t(0)))
	return &EchoCanceller{st: st, pp: pp, frame: frame,
		rec:  (*C.spx_int16_t)(C.malloc(size)),
		play: (*C.spx_int16_t)(C.malloc(size)),
		out:  (*C.spx_int16_t)(C.malloc(size)),
	}, nil
}

// FrameLen is the samples of one frame.
func (e *EchoCanceller) FrameLen() int { return e.frame }

// Process cancels the echo of played (what the speaker played as mic was
// recorded) from mic, both one frame long, into out.
func (e *EchoCanceller) Process(out, mic, played []int16) error {
	if e.st == nil {
		return errors.New("audio: the echo canceller is closed")
	}
	if len(mic) != e.frame || len(played) != e.frame || len(out) != e.frame {
		return fmt.Errorf("audio: echo frames are %d samples, not %d/%d/%d", e.frame, len(mic), len(played), len(out))
	}
	rec := unsafe.Slice((*int16)(unsafe.Pointer(e.rec)), e.frame)
	play := unsafe.Slice((*int16)(unsafe.Pointer(e.play)), e.frame)
	o := unsafe.Slice((*int16)(unsafe.Pointer(e.out)), e.frame)
	copy(rec, mic)
	copy(play, played)
	C.speex_echo_cancellation(e.st, e.rec, e.play, e.out)
	C.speex_preprocess_run(e.pp, e.out)
	copy(out, o)
	return nil
}

// Close frees the canceller.
func (e *EchoCanceller) Close() {
	if e.st == nil {
		return
	}
	C.speex_preprocess_state_destroy(e.pp)
	C.speex_echo_state_destroy(e.st)
	C.free(unsafe.Pointer(e.rec))
	C.free(unsafe.Pointer(e.play))
	C.free(unsafe.Pointer(e.out))
	e.st, e.pp = nil, nil
}

// EchoFilter aligns what is played with what the microphone records, and
// cancels the echo. Played audio is placed on the microphone's timeline
// where it will sound: after what the player had queued before it, plus
// the output's latency. It is safe for concurrent use.
type EchoFilter struct {
	mu      sync.Mutex
	c       *EchoCanceller
	rate    int
	latency int     // output latency, in samples
	ref     []int16 // reference from micPos on
	micPos  int64   // samples of microphone processed
	in      []int16 // microphone samples not yet a whole frame
	out     []int16 // cleaned samples not yet returned
	frameIn []int16
	frameRf []int16
	frameOu []int16
}

// NewEchoFilter returns a filter for a microphone at rate; latency is the
// output's delay beyond what the player reports queued.
func NewEchoFilter(rate int, latency time.Duration) (*EchoFilter, error) {
	c, err := NewEchoCanceller(rate, DefaultEchoTail)
	if err != nil {
		return nil, err
	}
	n := c.FrameLen()
	return &EchoFilter{c: c, rate: rate, latency: int(int64(rate) * int64(latency) / int64(time.Second)),
		frameIn: make([]int16, n), frameRf: make([]int16, n), frameOu: make([]int16, n)}, nil
}

// Played records pcm (at the microphone's rate) as played after queued
// more audio: it sounds that much later.
func (f *EchoFilter) Played(pcm []int16, queued time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := int(int64(f.rate)*int64(queued)/int64(time.Second)) + f.latency
	// The player plays in order: new audio goes after what is there.
	if at < len(f.ref) {
		at = len(f.ref)
	}
	if need := at + len(pcm); need > len(f.ref) {
		f.ref = append(f.ref, make([]int16, need-len(f.ref))...)
	}
	copy(f.ref[at:], pcm)
}

// Stopped forgets the reference that will not be played (barge-in).
func (f *EchoFilter) Stopped() {
	f.mu.Lock()
	defer f.mu.Unlock()
	// What the room still echoes dies within the tail; the rest never
	// sounds.
	keep := min(len(f.ref), f.latency+f.c.FrameLen())
	f.ref = f.ref[:keep]
}

// Capture cancels the echo from microphone samples; it returns the
// cleaned samples, as many as came in (delayed by up to one frame).
func (f *EchoFilter) Capture(mic []int16) []int16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.in = append(f.in, mic...)
	n := f.c.FrameLen()
	for len(f.in) >= n {
		copy(f.frameIn, f.in[:n])
		f.in = f.in[n:]
		clear(f.frameRf)
		m := copy(f.frameRf, f.ref)
		f.ref = f.ref[m:]
		if err := f.c.Process(f.frameOu, f.frameIn, f.frameRf); err != nil {
			copy(f.frameOu, f.frameIn)
		}
		f.out = append(f.out, f.frameOu...)
		f.micPos += int64(n)
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
