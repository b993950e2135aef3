// Package turn is the local engine's end-of-turn detector: the state
// machine behind the turn-aware /v2/listen interface. It knows nothing of
// sockets or of the recogniser; it is fed, once per block of decoded audio,
// the evidence a streaming recogniser has (does the voice detector hear
// speech, what words has it recognised, where did the last one end) and
// answers with the turn events of the interface: StartOfTurn, Update,
// EagerEndOfTurn, TurnResumed and EndOfTurn.
//
// # Turns
//
// A turn starts at the first block whose hypothesis holds a word: the voice
// detector alone also fires on noise, and a turn with no words would end
// with an empty transcript. While a turn is open an Update is emitted about
// every 0.25 s of audio (every second block of 128 ms), speech or silence,
// so a client sees both the growing transcript and the end-of-turn
// confidence rising through a pause. A turn ends:
//
//   - with trigger model, at the first block whose end-of-turn confidence
//     reaches the end-of-turn threshold;
//   - with trigger timeout, when the silence after the turn's last word
//     reaches the end-of-turn timeout, whatever the confidence;
//   - with trigger manual, when the client asks (Detector.ForceEnd).
//
// The turn index counts turns from 0 and increments after each EndOfTurn.
// With an eager threshold set, EagerEndOfTurn is emitted once per pause when
// the confidence reaches it; if speech then resumes before the turn ends,
// TurnResumed follows. An EndOfTurn by the model is always preceded by an
// EagerEndOfTurn when eager events are on (both in the same block when the
// confidence crosses both thresholds at once), and its transcript equals
// the eager one's, because the confidence only rises while nothing is
// heard.
//
// # End-of-turn confidence
//
// The confidence (Confidence) is a logistic function of the silence since
// the end of the turn's last recognised word, s seconds:
//
//	confidence = 1 / (1 + exp(-(s - m) / k))       capped at 0.999
//
// with the midpoint m (the silence at which the confidence is one half)
// and the width k set by three pieces of evidence:
//
//   - The decoder state. While the speaker is heard the silence is taken
//     as zero (confidence about 0.06): nobody ends a turn while talking.
//     The speaker is silent when the voice detector hears nothing (it ends
//     an utterance after 200 ms of silence in the engine) or when the
//     recogniser has extended no word for 0.3 s (wordless): room noise and
//     breath can keep the voice detector on long after a sentence, but
//     they make no words, while the words of speech grow every block.
//   - The last word. A turn rarely ends on a word that needs a sequel: an
//     article, a conjunction, a preposition, a possessive or an auxiliary
//     ("the", "and", "of", "his", "was"). After such a word m and k are
//     half as large again.
//   - The speaker's pauses. Every pause inside a turn after which speech
//     resumed is evidence of how long this speaker pauses without yielding
//     the floor. The typical pause (an exponential average over those
//     pauses, from a prior of 0.3 s, bounded to 1 s) moves m: m grows by
//     the typical pause's excess over the prior. A speaker who pauses long
//     mid-sentence needs a longer silence to end a turn.
//
// With the defaults (m = 0.34 s, k = 0.12 s) the confidence reaches the
// default threshold 0.7 after 0.44 s of silence following a sentence-final
// word, 0.9 after 0.6 s, and 0.99 after about 0.9 s; after "and" it takes
// 0.66 s to reach 0.7. A threshold of 1.0 is never reached, which leaves the
// timeout and ForceEndTurn, as the interface defines.
//
// Concurrency: a Detector is used by one goroutine at a time.
package turn

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Event names a turn event, as the interface spells it.
type Event string

// The turn events.
const (
	StartOfTurn    Event = "StartOfTurn"
	Update         Event = "Update"
	EagerEndOfTurn Event = "EagerEndOfTurn"
	TurnResumed    Event = "TurnResumed"
	EndOfTurn      Event = "EndOfTurn"
)

// Trigger tells what ended a turn.
type Trigger string

// The end-of-turn triggers.
const (
	TriggerModel   Trigger = "model"
	TriggerTimeout Trigger = "timeout"
	TriggerManual  Trigger = "manual"
)

// Defaults and bounds of the settings, those of the interface.
const (
	DefaultEOTThreshold = 0.7
	DefaultEOTTimeout   = 5 * time.Second
	MinEOTThreshold     = 0.5
	MaxEOTThreshold     = 1.0
	MinEagerThreshold   = 0.3
	MaxEagerThreshold   = 0.9
	MinEOTTimeout       = 500 * time.Millisecond
	MaxEOTTimeout       = 60 * time.Second
)

// UpdateInterval is how much audio passes between two events of a turn
// before an Update is emitted.
const UpdateInterval = 0.25

// Parameters of the confidence model (seconds).
const (
	baseMidpoint = 0.34
	baseWidth    = 0.12
	// continuationFactor stretches the model after a word that needs a
	// sequel.
	continuationFactor = 1.5
	// PriorPause is the typical pause inside a turn before any is heard.
	PriorPause = 0.3
	// maxTypicalPause bounds what a few long pauses can teach.
	maxTypicalPause = 1.0
	// minPause is the shortest silence counted as a pause: shorter gaps
	// are the detector's own hangover, not a speaker's choice.
	minPause = 0.15
	// pauseLearning is the weight of each new pause in the average.
	pauseLearning = 0.3
	// maxConfidence keeps the confidence below 1, so that a threshold of
	// 1.0 disables the model's end of turn.
	maxConfidence = 0.999
)

// ErrSettings is matched by the errors of Settings.Validate.
var ErrSettings = errors.New("turn: invalid settings")

// Settings are the end-of-turn settings of a stream. They can change
// between blocks (a Configure message).
type Settings struct {
	// EOTThreshold is the confidence at which the model ends a turn, 0.5
	// to 1.0; 1.0 disables it.
	EOTThreshold float64
	// EagerThreshold, when not zero (0.3 to 0.9, at most EOTThreshold),
	// enables EagerEndOfTurn and TurnResumed.
	EagerThreshold float64
	// EOTTimeout ends a turn after this much silence, 0.5 s to 60 s.
	EOTTimeout time.Duration
}

// DefaultSettings returns the interface's defaults: threshold 0.7, no
// eager events, timeout 5 s.
func DefaultSettings() Settings {
	return Settings{EOTThreshold: DefaultEOTThreshold, EOTTimeout: DefaultEOTTimeout}
}

// Validate checks the settings against the interface's ranges.
func (s Settings) Validate() error {
	switch {
	case !(s.EOTThreshold >= MinEOTThreshold && s.EOTThreshold <= MaxEOTThreshold):
		return fmt.Errorf("%w: end-of-turn threshold %g outside %g to %g", ErrSettings, s.EOTThreshold, MinEOTThreshold, MaxEOTThreshold)
	case s.EagerThreshold != 0 && !(s.EagerThreshold >= MinEagerThreshold && s.EagerThreshold <= MaxEagerThreshold):
		return fmt.Errorf("%w: eager threshold %g outside %g to %g", ErrSettings, s.EagerThreshold, MinEagerThreshold, MaxEagerThreshold)
	case s.EagerThreshold > s.EOTThreshold:
		return fmt.Errorf("%w: eager threshold %g above the end-of-turn threshold %g", ErrSettings, s.EagerThreshold, s.EOTThreshold)
	case s.EOTTimeout < MinEOTTimeout || s.EOTTimeout > MaxEOTTimeout:
		return fmt.Errorf("%w: end-of-turn timeout %v outside %v to %v", ErrSettings, s.EOTTimeout, MinEOTTimeout, MaxEOTTimeout)
	}
	return nil
}

// Word is a recognised word. Times are seconds from the start of the
// stream.
type Word struct {
	Text       string
	Start, End float64
	// Confidence is the recogniser's confidence in the word, passed
	// through to the events.
	Confidence float64
}

// Block is the evidence of one block of decoded audio.
type Block struct {
	// End is the stream position, in seconds, at the end of the block.
	End float64
	// InSpeech reports whether the voice detector hears speech at the end
	// of the block.
	InSpeech bool
	// Final holds the final words of an utterance the recogniser ended in
	// this block (nil if none ended). It is set with Ended.
	Final []Word
	// Ended reports that an utterance ended in this block.
	Ended bool
	// Partial is the hypothesis of the utterance in progress at the end of
	// the block (nil when none is in progress or it has no words yet).
	Partial []Word
}

// Message is a turn event to send.
type Message struct {
	Event     Event
	TurnIndex int
	// WindowStart and WindowEnd bound the audio of the turn so far.
	WindowStart, WindowEnd float64
	Words                  []Word
	// Confidence is the end-of-turn confidence at WindowEnd.
	Confidence float64
	// Trigger is set on EndOfTurn only.
	Trigger Trigger
}

// Transcript joins the message's words with spaces.
func (m Message) Transcript() string {
	parts := make([]string, len(m.Words))
	for i, w := range m.Words {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

// Detector is the turn state machine of one stream.
type Detector struct {
	set Settings

	index       int
	inTurn      bool
	turnStart   float64
	committed   []Word // final words of the turn's ended utterances
	partial     []Word // hypothesis of the utterance in progress
	lastWordEnd float64
	inSpeech    bool
	lastMsgAt   float64 // audio position of the turn's last event
	eagerSent   bool    // an EagerEndOfTurn was sent in this pause
	pauseMax    float64 // longest silence of the current pause
	at          float64 // position of the last block

	typicalPause float64
}

// New returns a detector with the given settings.
func New(s Settings) (*Detector, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Detector{set: s, typicalPause: PriorPause}, nil
}

// Settings returns the settings in force.
func (d *Detector) Settings() Settings { return d.set }

// SetSettings replaces the settings from the next block on. Invalid
// settings are refused and change nothing.
func (d *Detector) SetSettings(s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	d.set = s
	return nil
}

// InTurn reports whether a turn is open.
func (d *Detector) InTurn() bool { return d.inTurn }

// TurnIndex is the index of the current turn, or of the next one when none
// is open.
func (d *Detector) TurnIndex() int { return d.index }

// TypicalPause is the typical pause inside a turn learned so far, in
// seconds.
func (d *Detector) TypicalPause() float64 { return d.typicalPause }

// Block feeds the evidence of one block and returns the events it caused,
// in order.
func (d *Detector) Block(b Block) []Message {
	wasQuiet := d.quiet()
	d.at = max(d.at, b.End)
	d.observe(b)
	if !d.inTurn {
		if len(d.committed)+len(d.partial) == 0 {
			d.committed = nil // an utterance of noise: no turn
			return nil
		}
		d.inTurn = true
		d.turnStart = d.words()[0].Start
		d.eagerSent, d.pauseMax = false, 0
		d.lastMsgAt = d.at
		return []Message{d.message(StartOfTurn, "")}
	}

	var out []Message
	silence := d.silence()
	if !d.quiet() && wasQuiet {
		// Speech resumed inside the turn: the pause did not end it.
		d.learnPause()
		if d.eagerSent {
			d.eagerSent = false
			d.lastMsgAt = d.at
			out = append(out, d.message(TurnResumed, ""))
		}
	}
	if d.quiet() {
		d.pauseMax = max(d.pauseMax, silence)
		conf := d.confidence()
		eager := d.set.EagerThreshold
		if eager > 0 && !d.eagerSent && conf >= eager {
			d.eagerSent = true
			d.lastMsgAt = d.at
			out = append(out, d.message(EagerEndOfTurn, ""))
		}
		switch {
		case conf >= d.set.EOTThreshold:
			return append(out, d.end(TriggerModel))
		case silence >= d.set.EOTTimeout.Seconds():
			return append(out, d.end(TriggerTimeout))
		}
	}
	if d.at-d.lastMsgAt >= UpdateInterval-1e-9 {
		d.lastMsgAt = d.at
		out = append(out, d.message(Update, ""))
	}
	return out
}

// ForceEnd ends the open turn at once, as ForceEndTurn asks. b carries the
// words the recogniser finished when it was told to end its utterance
// (Final, Ended), and the position. ok is false when no turn is open and b
// holds no words: then nothing happens.
func (d *Detector) ForceEnd(b Block) (msgs []Message, ok bool) {
	b.InSpeech, b.Partial = false, nil
	if !d.inTurn {
		if len(b.Final) == 0 {
			return nil, false
		}
		msgs = d.Block(b) // the words start a turn
	} else {
		d.at = max(d.at, b.End)
		d.observe(b)
	}
	return append(msgs, d.end(TriggerManual)), true
}

// observe takes in a block's words and voice-detector state.
func (d *Detector) observe(b Block) {
	if b.Ended {
		d.committed = append(d.committed, b.Final...)
		d.partial = nil
	}
	if len(b.Partial) > 0 {
		d.partial = append(d.partial[:0], b.Partial...)
	} else if !b.Ended && !b.InSpeech {
		d.partial = nil
	}
	d.inSpeech = b.InSpeech
	for _, ws := range [][]Word{b.Final, b.Partial} {
		if n := len(ws); n > 0 {
			d.lastWordEnd = max(d.lastWordEnd, ws[n-1].End)
		}
	}
}

// end closes the turn with trigger.
func (d *Detector) end(t Trigger) Message {
	m := d.message(EndOfTurn, t)
	d.index++
	d.inTurn = false
	d.committed, d.partial = nil, nil
	d.eagerSent, d.pauseMax = false, 0
	return m
}

// learnPause folds the pause that just ended into the typical pause.
func (d *Detector) learnPause() {
	if d.pauseMax >= minPause {
		p := min(d.pauseMax, maxTypicalPause)
		d.typicalPause = min((1-pauseLearning)*d.typicalPause+pauseLearning*p, maxTypicalPause)
		d.typicalPause = max(d.typicalPause, PriorPause)
	}
	d.pauseMax = 0
}

// silence is the silence since the turn's last word, zero in speech.
func (d *Detector) silence() float64 {
	if !d.quiet() {
		return 0
	}
	return max(d.at-d.lastWordEnd, 0)
}

// wordless is how long the recogniser may go without extending a word
// before the detector takes the audio for a pause even though the voice
// detector still hears sound: room noise and breath keep the voice
// detector on for a second or more after a sentence, but they make no
// words, while the words of speech grow with every block.
const wordless = 0.3

// quiet reports whether the speaker is silent: the voice detector hears
// nothing, or the recogniser has heard no word for wordless seconds.
func (d *Detector) quiet() bool {
	return !d.inSpeech || d.at-d.lastWordEnd >= wordless
}

func (d *Detector) confidence() float64 {
	last := ""
	if ws := d.words(); len(ws) > 0 {
		last = ws[len(ws)-1].Text
	}
	return Confidence(d.silence(), last, d.typicalPause)
}

// words are the turn's words so far: the committed ones, then the
// hypothesis of the utterance in progress.
func (d *Detector) words() []Word {
	if len(d.partial) == 0 {
		return d.committed
	}
	out := make([]Word, 0, len(d.committed)+len(d.partial))
	return append(append(out, d.committed...), d.partial...)
}

func (d *Detector) message(e Event, t Trigger) Message {
	ws := d.words()
	return Message{
		Event:       e,
		TurnIndex:   d.index,
		WindowStart: d.turnStart,
		WindowEnd:   max(d.at, d.turnStart),
		Words:       append([]Word(nil), ws...),
		Confidence:  d.confidence(),
		Trigger:     t,
	}
}

// Confidence is the end-of-turn confidence after silence seconds of
// silence following lastWord, for a speaker whose typical pause inside a
// turn is typicalPause seconds. It is documented in the package comment.
func Confidence(silence float64, lastWord string, typicalPause float64) float64 {
	if math.IsNaN(silence) || silence < 0 {
		silence = 0
	}
	m, k := baseMidpoint, baseWidth
	if Continues(lastWord) {
		m, k = m*continuationFactor, k*continuationFactor
	}
	if typicalPause > PriorPause {
		m += min(typicalPause, maxTypicalPause) - PriorPause
	}
	c := 1 / (1 + math.Exp(-(silence-m)/k))
	return min(c, maxConfidence)
}

// continuationWords need a sequel: a turn seldom ends on one.
var continuationWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but nor so because if than that which who whose whom
		of to in on at by for with from into onto about as like through over under between after before
		my your his her its our their this these those
		is are was were be been being am will would shall should can could may might must do does did has have had
		i we you he she they it's i'm there's not very more most`) {
		continuationWords[w] = true
	}
}

// Continues reports whether a turn is unlikely to end on word: an
// article, conjunction, preposition, possessive or auxiliary.
func Continues(word string) bool {
	return continuationWords[strings.ToLower(strings.Trim(word, ".,;:!?\"'"))]
}

// Last takes in the evidence of the last audio of a stream that ends
// without ending its turn (CloseStream) and returns an Update of the open
// turn over all of it; no end of turn is decided. ok is false when no turn
// is open.
func (d *Detector) Last(b Block) (m Message, ok bool) {
	d.at = max(d.at, b.End)
	d.observe(b)
	if !d.inTurn {
		return Message{}, false
	}
	return d.message(Update, ""), true
}
