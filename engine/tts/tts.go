// Package tts is the speech synthesis core of Earshot's local engine:
// flite 2.2 through cgo (English voices) and the espeak-ng 1.51 program
// (Spanish, German, Dutch, French, Italian, Japanese), behind the voice
// names the hosted service uses (aura-*, aura-2-*, flux-*).
//
// espeak-ng runs out of process, one espeak-ng process per piece: its
// library, 1.51 as Debian 12 ships it, carries state from call to call and
// now and then crashes inside espeak_Synth, which would take the desktop
// app down with it. A crash of the program only fails the text it was
// speaking.
//
// Synthesis streams. A text is cut into pieces (sentences, and long
// sentences at clause boundaries, with a short first piece so that audio
// starts quickly); each piece is synthesised by flite while its audio
// streaming callback hands samples over, or by espeak-ng while its WAV
// output is read from a pipe, and the caller's emit function receives the
// samples as they come, not after the whole text. Silence at the seams
// between pieces is trimmed and replaced by a pause that depends on the
// punctuation, so the joined audio sounds like one reading. Every Chunk says
// how far into the text the audio emitted so far has spoken, which is what
// an interrupted turn reports as text_spoken and text_remaining: word by
// word for flite voices (all turn-based voices are flite voices), piece by
// piece for espeak-ng voices, whose program reports no word events.
//
// The package produces 16-bit mono PCM at the voice's native rate only;
// resampling and encoding belong to package audio.
//
// Concurrency: Voice, Params and Chunk are plain values. A Synthesizer is
// safe for concurrent use. flite keeps process-wide state (the jump buffer
// it uses to report errors), so it is driven by one synthesis at a time,
// one piece (a sentence or less) at a time: concurrent texts interleave
// piece by piece. espeak-ng processes run in parallel, each Synthesize
// call running at most one, and a Synthesizer a bounded number at once.
package tts

import (
	"errors"
	"fmt"
)

// Errors reported by the package. Check them with errors.Is.
var (
	// ErrClosed is returned by Synthesize after Close.
	ErrClosed = errors.New("tts: synthesizer closed")
	// ErrUnknownVoice is returned for a Voice that is not in the catalogue.
	ErrUnknownVoice = errors.New("tts: unknown voice")
	// ErrInvalidParams is returned for a speed or expressivity out of range.
	ErrInvalidParams = errors.New("tts: invalid parameters")
	// ErrInit is returned by New when a library cannot be initialised.
	ErrInit = errors.New("tts: initialisation failed")
)

// LibraryError reports a synthesis library call that failed.
type LibraryError struct {
	Op   string // the library function, e.g. "flite utt_synth"
	Code int    // its return value
}

func (e *LibraryError) Error() string {
	return fmt.Sprintf("tts: %s failed (code %d)", e.Op, e.Code)
}

// Parameter ranges. The service allows speed 0.5 to 1.5 on /v2/speak and
// 0.7 to 1.5 on /v1/speak; the endpoints enforce their own range, the
// synthesizer accepts the union.
const (
	MinSpeed        = 0.5
	MaxSpeed        = 1.5
	MinExpressivity = -2
	MaxExpressivity = 2
)

// Params are the per-request prosody controls.
type Params struct {
	// Speed is the speaking rate relative to the voice's normal rate: 1 is
	// normal, 1.5 is 50 % faster (durations 1/1.5). Zero means 1.
	Speed float64
	// Expressivity widens (positive) or narrows (negative) the pitch range,
	// from -2 (nearly monotone) to 2; 0 is the voice's own range. It is
	// meant for the turn-based voices, which are flite voices; espeak-ng
	// voices ignore it, as the espeak-ng program has no pitch-range option.
	Expressivity int
}

func (p Params) withDefaults() Params {
	if p.Speed == 0 {
		p.Speed = 1
	}
	return p
}

func (p Params) validate() error {
	if !(p.Speed >= MinSpeed && p.Speed <= MaxSpeed) { // also rejects NaN
		return fmt.Errorf("%w: speed %v outside [%v, %v]", ErrInvalidParams, p.Speed, MinSpeed, MaxSpeed)
	}
	if p.Expressivity < MinExpressivity || p.Expressivity > MaxExpressivity {
		return fmt.Errorf("%w: expressivity %d outside [%d, %d]", ErrInvalidParams, p.Expressivity, MinExpressivity, MaxExpressivity)
	}
	return nil
}

// pitchScale maps expressivity to a factor on the voice's pitch variation
// (flite's F0 standard deviation).
func pitchScale(expressivity int) float64 {
	return [...]float64{0.3, 0.6, 1, 1.5, 2}[expressivity-MinExpressivity]
}

// Chunk is a piece of synthesised audio.
type Chunk struct {
	// PCM is 16-bit mono audio at the voice's NativeRate. The slice is the
	// receiver's: the synthesizer does not touch it after emit returns.
	PCM []int16
	// TextEnd is the byte offset in the synthesised text up to which the
	// audio emitted so far, this chunk included, has spoken: text[:TextEnd]
	// is spoken, text[TextEnd:] is not (yet). It never decreases, moves at
	// word boundaries, and equals len(text) on the last chunk of a text
	// that was synthesised completely. With espeak-ng voices it moves at
	// piece ends only (sentence or clause ends, see Split).
	TextEnd int
}
