// Package sphinx is the speech recognition core of Earshot's local engine: a
// small cgo wrapper of the pocketsphinx 5prealpha library (Debian packages
// libpocketsphinx-dev and pocketsphinx-en-us).
//
// The package reproduces exactly what `pocketsphinx_continuous -infile` does
// with the same default model: audio is fed to the library in fixed blocks of
// BlockSamples samples, the library's voice activity detector decides where
// utterances start and end, and each utterance is ended with ps_end_utt. Results
// therefore match the command-line tool word for word, and they never depend on
// how a caller chunks its audio.
//
// On top of that the package adds what a speech-to-text service needs:
// streaming with interim (partial) hypotheses, forced finalisation, word
// timings that are absolute in the stream even though the library's front end
// drops silence, word confidences, and a bounded pool of warm decoders.
//
// The library's own logging is switched off for the whole process the first
// time a Decoder is created (the library has a single global log sink).
//
// Concurrency: Config, Result, Word and Event are plain values. A Decoder and
// the Stream it serves must be used by one goroutine at a time. A Pool is safe
// for concurrent use.
package sphinx

import (
	"errors"
	"fmt"
)

// Audio format and processing constants of the engine.
const (
	// SampleRate is the only sample rate the acoustic model accepts (Hz).
	SampleRate = 16000
	// BlockSamples is the number of samples fed to the library per call, the
	// block size pocketsphinx_continuous reads from a file. Utterance
	// boundaries are only decided at block ends, so this fixes both the
	// segmentation and the partial-result cadence (128 ms at 16 kHz).
	BlockSamples = 2048
	// FrameRate is the number of feature frames per second; VAD settings are
	// counted in frames.
	FrameRate = 100
)

// Default model locations of the Debian package pocketsphinx-en-us.
const (
	DefaultHMM  = "/usr/share/pocketsphinx/model/en-us/en-us"
	DefaultLM   = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"
	DefaultDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
)

// Library defaults of the voice activity detector (5prealpha -vad_* options).
const (
	DefaultVADPreSpeech   = 20
	DefaultVADStartSpeech = 10
	DefaultVADPostSpeech  = 50
	DefaultVADThreshold   = 2.0
)

// Errors reported by the package. Check them with errors.Is.
var (
	// ErrClosed is returned when a Decoder, Stream or Pool is used after Close
	// (or a Stream after End, or after its Decoder was reset or reused).
	ErrClosed = errors.New("sphinx: closed")
	// ErrStreamActive is returned by NewStream while the Decoder still serves
	// another Stream.
	ErrStreamActive = errors.New("sphinx: decoder already serves a stream")
	// ErrInit is returned when the library cannot build a decoder from the
	// configuration (for instance a corrupt model file).
	ErrInit = errors.New("sphinx: decoder initialisation failed")
	// ErrInvalidConfig is returned for a Config that fails validation.
	ErrInvalidConfig = errors.New("sphinx: invalid config")
)

// LibraryError reports a pocketsphinx call that returned a failure code.
type LibraryError struct {
	Op   string // the library function, e.g. "ps_process_raw"
	Code int    // its return value
}

func (e *LibraryError) Error() string {
	return fmt.Sprintf("sphinx: %s failed (code %d)", e.Op, e.Code)
}
