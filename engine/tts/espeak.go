package tts

/*
#cgo pkg-config: espeak-ng
#include <stdlib.h>
#include <espeak-ng/speak_lib.h>
#include "esglue.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// espeakLib is the process-wide espeak-ng state. The library is one global
// synthesiser: it is initialised once and never terminated, and mu
// serialises everything that touches it. job is the sink of the synthesis
// in progress, read by the callback, which runs on the goroutine holding mu.
var espeakLib struct {
	once sync.Once
	err  error
	rate int

	mu  sync.Mutex
	job *espeakJob // guarded by mu
}

// espeakInit initialises espeak-ng with its data in dataPath ("" for the
// library's default). Only the first call's path counts.
func espeakInit(dataPath string) error {
	espeakLib.once.Do(func() {
		var cpath *C.char
		if dataPath != "" {
			cpath = C.CString(dataPath)
			defer C.free(unsafe.Pointer(cpath))
		}
		rate := int(C.es_init(cpath))
		if rate <= 0 {
			espeakLib.err = fmt.Errorf("%w: espeak_Initialize: %w", ErrInit, &LibraryError{Op: "espeak_Initialize", Code: rate})
			return
		}
		espeakLib.rate = rate
	})
	return espeakLib.err
}

// espeakSink receives one piece's audio and word events.
type espeakSink interface {
	// audio receives samples and the words that started in them (start
	// sample counted from the piece's start, character position and
	// length counted in characters from the piece's start, 0-based). It
	// returns false to stop synthesis.
	audio(pcm []int16, starts []espeakWord) bool
}

// espeakWord is a word-start event.
type espeakWord struct {
	sample int // sample at which the word starts
	char   int // 0-based character index of the word in the piece
	length int // length in characters
}

type espeakJob struct {
	sink  espeakSink
	rate  int
	stop  bool
	panic any
}

// Espeak parameter scales.
const (
	espeakNormalRate  = 175 // words per minute, espeakRATE_NORMAL
	espeakNormalRange = 50
	espeakNormalPitch = 50
)

// espeakSynth speaks text (one piece) with voice id (e.g. "es+f3"). It
// holds the espeak-ng lock for the whole piece.
func espeakSynth(id, text string, speed, rangeScale, pitch float64, sink espeakSink) error {
	espeakLib.mu.Lock()
	defer espeakLib.mu.Unlock()
	if espeakLib.err != nil {
		return espeakLib.err
	}
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	rate := clampInt(int(math.Round(espeakNormalRate*speed)), C.espeakRATE_MINIMUM, C.espeakRATE_MAXIMUM)
	rng := clampInt(int(math.Round(espeakNormalRange*rangeScale)), 0, 100)
	pit := clampInt(int(math.Round(espeakNormalPitch*pitch)), 0, 100)
	if rc := C.es_voice(cid, C.int(rate), C.int(rng), C.int(pit)); rc != 0 {
		return &LibraryError{Op: "espeak_SetVoiceByName " + id, Code: int(rc)}
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	job := &espeakJob{sink: sink, rate: espeakLib.rate}
	espeakLib.job = job
	defer func() { espeakLib.job = nil }()
	rc := C.es_synth(ctext, C.size_t(len(text)+1))
	if job.panic != nil {
		panic(job.panic)
	}
	if rc != C.EE_OK && !job.stop {
		return &LibraryError{Op: "espeak_Synth", Code: int(rc)}
	}
	return nil
}

func clampInt(x, lo, hi int) int { return max(lo, min(hi, x)) }

//export goEspeakAudio
func goEspeakAudio(wav *C.short, n C.int, events *C.espeak_EVENT) (abort C.int) {
	job := espeakLib.job
	if job == nil || job.stop || job.panic != nil {
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			job.panic = r
			abort = 1
		}
	}()
	var starts []espeakWord
	if events != nil {
		for ev := events; ev._type != C.espeakEVENT_LIST_TERMINATED; ev = (*C.espeak_EVENT)(unsafe.Add(unsafe.Pointer(ev), unsafe.Sizeof(*ev))) {
			if ev._type == C.espeakEVENT_WORD {
				starts = append(starts, espeakWord{
					sample: int(int64(ev.audio_position) * int64(job.rate) / 1000),
					char:   int(ev.text_position) - 1,
					length: int(ev.length),
				})
			}
		}
	}
	var pcm []int16
	if n > 0 && wav != nil {
		pcm = make([]int16, int(n))
		copy(pcm, unsafe.Slice((*int16)(unsafe.Pointer(wav)), int(n)))
	}
	if len(pcm) == 0 && len(starts) == 0 {
		return 0
	}
	if !job.sink.audio(pcm, starts) {
		job.stop = true
		return 1
	}
	return 0
}
