package tts

/*
#cgo LDFLAGS: -lflite_usenglish -lflite_cmulex -lflite -lm -ldl
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
// once; each voice's library is opened and the voice registered the first
// time it speaks (flite's voices are static objects, registered once);
// mu serialises synthesis (see ft_synth) and guards voices.
var fliteLib struct {
	once   sync.Once
	err    error
	mu     sync.Mutex
	voices map[string]unsafe.Pointer // guarded by mu
}

// fliteInit initialises flite. It is idempotent and cheap: no voice is
// loaded until loadFliteVoice asks for it.
func fliteInit() error {
	fliteLib.once.Do(func() {
		C.ft_init()
		fliteLib.voices = map[string]unsafe.Pointer{}
	})
	return fliteLib.err
}

// loadFliteVoice returns the registered voice id ("cmu_us_slt"), loading its
// library the first time. fliteLib.mu must be held.
func loadFliteVoice(id string) (unsafe.Pointer, error) {
	if v := fliteLib.voices[id]; v != nil {
		return v, nil
	}
	name := C.CString(id)
	defer C.free(unsafe.Pointer(name))
	var why [256]C.char
	v := C.ft_voice(name, &why[0], C.size_t(len(why)))
	if v == nil {
		return nil, fmt.Errorf("%w: flite voice %s: %s", ErrInit, id, C.GoString(&why[0]))
	}
	fliteLib.voices[id] = v
	return v, nil
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
	if err := fliteInit(); err != nil {
		return err
	}
	v, err := loadFliteVoice(voice)
	if err != nil {
		return err
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
