package tts

/*
#cgo LDFLAGS: -lflite_cmu_us_slt -lflite_cmu_us_rms -lflite_cmu_us_awb -lflite_cmu_us_kal16 -lflite_cmu_us_kal -lflite_usenglish -lflite_cmulex -lflite -lm
#include <stdlib.h>
#include "ftglue.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// fliteLib is the process-wide flite state: the library is initialised
// once, each voice is registered once (flite's voices are static objects),
// and mu serialises synthesis (see ft_synth).
var fliteLib struct {
	once   sync.Once
	err    error
	mu     sync.Mutex
	voices map[string]unsafe.Pointer // guarded by mu after once
}

// fliteInit initialises flite and registers every voice the catalogue
// uses. It is idempotent.
func fliteInit() error {
	fliteLib.once.Do(func() {
		C.ft_init()
		fliteLib.voices = map[string]unsafe.Pointer{}
		for _, v := range catalogue {
			if v.backend != flite || fliteLib.voices[v.id] != nil {
				continue
			}
			name := C.CString(v.id)
			p := C.ft_voice(name)
			C.free(unsafe.Pointer(name))
			if p == nil {
				fliteLib.err = fmt.Errorf("%w: flite voice %s", ErrInit, v.id)
				return
			}
			fliteLib.voices[v.id] = p
		}
	})
	return fliteLib.err
}

// fliteSink receives one utterance's audio from the streaming callback.
type fliteSink interface {
	// audio receives samples; words is non-nil on the first call only and
	// holds, per word, its end time in seconds and its token's position.
	// It returns false to stop synthesis.
	audio(pcm []int16, rate int, words []fliteWord) bool
}

// fliteWord is one word of an utterance as flite timed it.
type fliteWord struct {
	end float64 // seconds from the start of the utterance's audio
	pos int     // flite's file_pos of the word's token
}

// fliteJob ties a C ft_job to its Go sink.
type fliteJob struct {
	c     *C.ft_job
	sink  fliteSink
	sent  bool // words handed over
	panic any  // a panic of the sink, re-raised after the C call
}

// fliteSynth speaks text (one utterance) with the named voice. It holds
// the flite lock for the whole utterance.
func fliteSynth(voice, text string, stretch, f0Scale, pitch float64, sink fliteSink) error {
	fliteLib.mu.Lock()
	defer fliteLib.mu.Unlock()
	v := fliteLib.voices[voice]
	if v == nil {
		return fmt.Errorf("%w: flite voice %s", ErrUnknownVoice, voice)
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	cj := (*C.ft_job)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ft_job{}))))
	if cj == nil {
		return fmt.Errorf("%w: out of memory", ErrInit)
	}
	defer C.free(unsafe.Pointer(cj))
	defer C.ft_job_clear(cj)
	job := &fliteJob{c: cj, sink: sink}
	h := cgo.NewHandle(job)
	defer h.Delete()
	cj.handle = C.uintptr_t(h)
	rc := C.ft_synth(v, ctext, C.float(stretch), C.float(f0Scale), C.float(pitch), cj)
	if job.panic != nil {
		panic(job.panic)
	}
	if rc != 0 {
		return &LibraryError{Op: "flite utt_synth", Code: int(rc)}
	}
	return nil
}

//export goFliteAudio
func goFliteAudio(h C.uintptr_t, samples *C.short, n C.int, last C.int) (stop C.int) {
	job := cgo.Handle(h).Value().(*fliteJob)
	if job.panic != nil {
		return 1
	}
	// A panic must not unwind through flite's C frames.
	defer func() {
		if r := recover(); r != nil {
			job.panic = r
			stop = 1
		}
	}()
	var ws []fliteWord
	if !job.sent {
		job.sent = true
		nw := int(job.c.nwords)
		ws = make([]fliteWord, 0, nw)
		if nw > 0 && job.c.ends != nil && job.c.pos != nil {
			ends := unsafe.Slice(job.c.ends, nw)
			pos := unsafe.Slice(job.c.pos, nw)
			for i := range nw {
				ws = append(ws, fliteWord{end: float64(ends[i]), pos: int(pos[i])})
			}
		}
	}
	pcm := make([]int16, int(n))
	copy(pcm, unsafe.Slice((*int16)(unsafe.Pointer(samples)), int(n)))
	if !job.sink.audio(pcm, int(job.c.rate), ws) {
		return 1
	}
	return 0
}
