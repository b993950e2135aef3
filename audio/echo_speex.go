//go:build !noengine

package audio

// #cgo pkg-config: speexdsp
// #include <stdlib.h>
// #include <speex/speex_echo.h>
// #include <speex/speex_preprocess.h>
//
// static int earshot_echo_rate(SpeexEchoState *st, int rate) {
//   return speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
// }
// static int earshot_pp_echo(SpeexPreprocessState *pp, SpeexEchoState *st, int suppress, int active) {
//   speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, &suppress);
//   speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, &active);
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
	"time"
	"unsafe"
)

// EchoCancellation: this build cancels echo (NewEchoCanceller works).
const EchoCancellation = true

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
	// The residue the filter leaves is suppressed by up to 60 dB, 45 dB
	// while the speaker plays (speexdsp's defaults are 40 and 15): the
	// agent's voice detector must not take it for speech.
	C.earshot_pp_echo(pp, st, -60, -45)
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
