package sphinx

import (
	"fmt"
	"strings"
)

// EventKind tells what an Event reports.
type EventKind int

// Kinds of events a Stream reports, in the order they occur for one
// utterance: SpeechStarted once, Partial any number of times, Final once.
const (
	// SpeechStarted: the detector found speech; Result.Start is where the
	// utterance begins (pre-speech frames included).
	SpeechStarted EventKind = iota + 1
	// Partial: the words recognised so far in the utterance in progress.
	Partial
	// Final: the utterance ended; Result is its final hypothesis.
	Final
)

func (k EventKind) String() string {
	switch k {
	case SpeechStarted:
		return "SpeechStarted"
	case Partial:
		return "Partial"
	case Final:
		return "Final"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// EndReason tells why an utterance ended.
type EndReason int

// Reasons an utterance ends.
const (
	// EndSilence: the detector heard VADPostSpeech frames of silence (an
	// endpoint), as in pocketsphinx_continuous.
	EndSilence EndReason = iota + 1
	// EndFinalize: the caller asked for it with Stream.Finalize.
	EndFinalize
	// EndOfStream: the stream ended with Stream.End.
	EndOfStream
)

func (r EndReason) String() string {
	switch r {
	case EndSilence:
		return "EndSilence"
	case EndFinalize:
		return "EndFinalize"
	case EndOfStream:
		return "EndOfStream"
	}
	return fmt.Sprintf("EndReason(%d)", int(r))
}

// Word is one recognised word. Times are in seconds from the start of the
// stream: the silence the detector removed is accounted for.
type Word struct {
	// Text is the dictionary word without its alternate-pronunciation
	// marker ("was", not "was(2)").
	Text string
	// Start and End bound the word; End is the end of its last frame.
	Start, End float64
	// Confidence is the word's posterior probability in [0,1]. The library
	// computes posteriors only for final results; in a Partial every word
	// has Confidence 1.
	Confidence float64
}

// Result is the hypothesis for one utterance.
type Result struct {
	// Index numbers the utterances of a stream from 0.
	Index int
	// Text is the library's hypothesis string (fillers removed), exactly
	// what pocketsphinx_continuous prints. It may be empty.
	Text string
	// Words are the words of Text with their timings; fillers such as <s>,
	// <sil> and [NOISE] are left out.
	Words []Word
	// Start and End bound the audio the decoder searched for this
	// utterance, in seconds from the start of the stream.
	Start, End float64
	// Final is true for a final result.
	Final bool
	// Reason tells why a final utterance ended; zero for other results.
	Reason EndReason
}

// Event is something a Stream reports while it decodes.
type Event struct {
	Kind EventKind
	// At is the stream position, in seconds, of the audio decoded when the
	// event was produced.
	At float64
	// Result is the utterance the event is about. For SpeechStarted only
	// Index and Start are set.
	Result Result
}

// StreamOptions tune a Stream.
type StreamOptions struct {
	// Partials asks for a Partial event after every block (128 ms of audio)
	// in which the hypothesis of the utterance in progress changed.
	Partials bool
}

// Stream decodes one stream of 16 kHz mono 16-bit audio. Audio can be pushed
// in chunks of any size: it is decoded in blocks of BlockSamples, so results
// do not depend on the chunking. A Stream is not safe for concurrent use; it
// shares its Decoder's goroutine contract.
type Stream struct {
	d    *Decoder
	opts StreamOptions

	// Guarded by d.mu.
	done       bool
	pending    []int16 // samples not yet decoded, fewer than BlockSamples
	pos        int64   // samples decoded so far
	index      int     // index of the current utterance
	uttStarted bool    // the detector reported speech in this utterance
	uttBase    int64   // stream sample where the library utterance started
	kept       []int   // utterance-relative indices of the frames kept
	partial    string  // text of the last Partial event
	segs       []segment
	mapErrors  int // hypotheses whose segmentation did not fit the frames kept
	gaps       int // utterances whose kept frames were not contiguous
}

// Push decodes samples and returns the events they produced, if any.
func (s *Stream) Push(samples []int16) ([]Event, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.done {
		return nil, ErrClosed
	}
	var evs []Event
	var err error
	if len(s.pending) > 0 {
		n := min(BlockSamples-len(s.pending), len(samples))
		s.pending = append(s.pending, samples[:n]...)
		samples = samples[n:]
		if len(s.pending) < BlockSamples {
			return nil, nil
		}
		if evs, err = s.block(s.pending, evs); err != nil {
			return evs, s.fail(err)
		}
		s.pending = s.pending[:0]
	}
	for len(samples) >= BlockSamples {
		if evs, err = s.block(samples[:BlockSamples], evs); err != nil {
			return evs, s.fail(err)
		}
		samples = samples[BlockSamples:]
	}
	if s.pending == nil {
		s.pending = make([]int16, 0, BlockSamples)
	}
	s.pending = append(s.pending, samples...)
	return evs, nil
}

// Finalize decodes the audio pushed so far and ends the utterance in
// progress now, as a client's Finalize asks. Its Final event has Reason
// EndFinalize. If no speech is in progress it only decodes what was pending.
// Audio pushed afterwards starts a new block, so from here on blocks no
// longer line up with those of an uninterrupted run.
func (s *Stream) Finalize() ([]Event, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.done {
		return nil, ErrClosed
	}
	evs, err := s.flush(nil)
	if err != nil {
		return evs, s.fail(err)
	}
	if s.uttStarted {
		if evs, err = s.endUtt(EndFinalize, evs, true); err != nil {
			return evs, s.fail(err)
		}
	}
	return evs, nil
}

// End decodes the remaining audio, ends the stream and returns the last
// events; the final utterance has Reason EndOfStream. Like
// pocketsphinx_continuous at the end of a file, it reports a Final only if
// speech was detected. The decoder is then free for another stream.
func (s *Stream) End() ([]Event, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.done {
		return nil, ErrClosed
	}
	evs, err := s.flush(nil)
	if err != nil {
		return evs, s.fail(err)
	}
	// The flush may itself end an utterance (its last block holds the
	// silence that ends it); that final is kept. Only the utterance End
	// closes now is dropped, when no speech was detected in it.
	flushed := len(evs)
	started := s.uttStarted
	evs, err = s.endUtt(EndOfStream, evs, false)
	s.d.detachLocked()
	if err != nil {
		return evs, err
	}
	if !started {
		evs = evs[:flushed]
	}
	return evs, nil
}

// Close abandons the stream without decoding what is pending. It is
// idempotent and does nothing after End.
func (s *Stream) Close() error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.done {
		return nil
	}
	s.d.detachLocked()
	if s.d.h == nil {
		return nil
	}
	if _, _, err := s.d.h.endUtt(); err != nil {
		return fmt.Errorf("closing stream: %w", err)
	}
	return nil
}

// Partial returns the hypothesis of the utterance in progress, as decoded up
// to the last complete block. ok is false when no speech is in progress.
func (s *Stream) Partial() (r Result, ok bool, err error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.done {
		return Result{}, false, ErrClosed
	}
	if !s.uttStarted {
		return Result{}, false, nil
	}
	return s.result(false, 0), true, nil
}

// fail closes the stream after an error from the library: its state is no
// longer trustworthy.
func (s *Stream) fail(err error) error {
	s.d.detachLocked()
	if s.d.h != nil {
		_, _, _ = s.d.h.endUtt()
	}
	return err
}

// flush decodes the pending samples as one short block.
func (s *Stream) flush(evs []Event) ([]Event, error) {
	if len(s.pending) == 0 {
		return evs, nil
	}
	evs, err := s.block(s.pending, evs)
	s.pending = s.pending[:0]
	return evs, err
}

// block decodes one block the way pocketsphinx_continuous does: process it,
// then look at the detector to start or end the utterance.
func (s *Stream) block(samples []int16, evs []Event) ([]Event, error) {
	h := s.d.h
	if h == nil {
		return evs, ErrClosed
	}
	kept, inSpeech, err := h.process(samples, s.kept)
	s.kept = kept
	s.pos += int64(len(samples))
	if err != nil {
		return evs, err
	}
	if inSpeech && !s.uttStarted {
		s.uttStarted = true
		evs = append(evs, Event{
			Kind:   SpeechStarted,
			At:     s.seconds(s.pos),
			Result: Result{Index: s.index, Start: s.frameStart(0)},
		})
	}
	if inSpeech && s.uttStarted && s.opts.Partials {
		r := s.result(false, 0)
		if r.Text != s.partial {
			s.partial = r.Text
			evs = append(evs, Event{Kind: Partial, At: s.seconds(s.pos), Result: r})
		}
	}
	if !inSpeech && s.uttStarted {
		return s.endUtt(EndSilence, evs, true)
	}
	return evs, nil
}

// endUtt ends the library utterance, reports its final result and, if
// restart is set, starts the next one.
func (s *Stream) endUtt(reason EndReason, evs []Event, restart bool) ([]Event, error) {
	h := s.d.h
	if h == nil {
		return evs, ErrClosed
	}
	last, next, err := h.endUtt()
	if err != nil {
		return evs, err
	}
	if last {
		s.kept = append(s.kept, next)
	}
	r := s.result(true, reason)
	evs = append(evs, Event{Kind: Final, At: s.seconds(s.pos), Result: r})
	if n := len(s.kept); n > 0 && s.kept[n-1]-s.kept[0] != n-1 {
		s.gaps++
	}
	s.index++
	s.uttStarted = false
	s.partial = ""
	s.kept = s.kept[:0]
	s.uttBase = s.pos
	if restart {
		if err := h.startUtt(); err != nil {
			return evs, err
		}
	}
	return evs, nil
}

// result builds a Result from the library's current hypothesis.
func (s *Stream) result(final bool, reason EndReason) Result {
	text, segs := s.d.h.hypothesis(s.segs[:0])
	s.segs = segs
	r := Result{
		Index: s.index,
		Text:  text,
		Final: final,
	}
	if final {
		r.Reason = reason
	}
	// The decoder searches the frames the detector kept, in order, except
	// that it may drop the last few when an utterance ends in silence (the
	// feature window is not flushed then): so its frame r is kept[r].
	searched := min(s.d.h.nFrames()-1, len(s.kept))
	if searched > 0 {
		r.Start = s.frameStart(0)
		r.End = s.frameEnd(searched - 1)
	}
	if len(segs) == 0 {
		return r
	}
	// The library numbers frames from its own estimate of where the
	// utterance began; every segmentation starts at the utterance's first
	// frame, so subtracting the first segment's start gives r.
	base := segs[0].sf
	if last := segs[len(segs)-1].ef - base; last >= searched || (final && last != searched-1) {
		// The segmentation does not fit the frames searched: the
		// assumptions above are broken. Tests watch this counter.
		s.mapErrors++
	}
	for _, sg := range segs {
		if isFiller(sg.word) {
			continue
		}
		r.Words = append(r.Words, Word{
			Text:       stripAltPron(sg.word),
			Start:      s.frameStart(sg.sf - base),
			End:        s.frameEnd(sg.ef - base),
			Confidence: clamp01(sg.conf),
		})
	}
	return r
}

// frameStart is the stream time, in seconds, where the i-th kept frame of the
// current utterance begins.
func (s *Stream) frameStart(i int) float64 {
	return s.seconds(s.frameSample(i))
}

// frameEnd is the stream time where the i-th kept frame's 10 ms step ends.
func (s *Stream) frameEnd(i int) float64 {
	return s.seconds(s.frameSample(i) + int64(s.d.h.frameShift))
}

func (s *Stream) frameSample(i int) int64 {
	if len(s.kept) == 0 {
		return s.uttBase
	}
	i = min(max(i, 0), len(s.kept)-1)
	return s.uttBase + int64(s.kept[i])*int64(s.d.h.frameShift)
}

func (s *Stream) seconds(sample int64) float64 {
	return float64(sample) / float64(s.d.cfg.SampleRate)
}

// isFiller reports whether a dictionary word is a filler: sentence markers,
// silence and noise words such as <s>, </s>, <sil>, [NOISE] or ++LAUGH++.
func isFiller(w string) bool {
	return w == "" || w[0] == '<' || w[0] == '[' || strings.HasPrefix(w, "++")
}

// stripAltPron removes an alternate-pronunciation marker: "was(2)" -> "was".
func stripAltPron(w string) string {
	i := strings.LastIndexByte(w, '(')
	if i <= 0 || !strings.HasSuffix(w, ")") {
		return w
	}
	for _, c := range w[i+1 : len(w)-1] {
		if c < '0' || c > '9' {
			return w
		}
	}
	if i+1 == len(w)-1 {
		return w
	}
	return w[:i]
}

func clamp01(x float64) float64 {
	switch {
	case x < 0 || x != x:
		return 0
	case x > 1:
		return 1
	}
	return x
}
