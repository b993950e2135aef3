package turn

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// blockSeconds is the engine's block: 2048 samples at 16 kHz.
const blockSeconds = 0.128

// utterance is speech in a simulated stream: words spoken evenly from
// start to end, then silence until the next utterance.
type utterance struct {
	start, end float64
	words      []string
}

// speaker simulates the evidence of a streaming recogniser over a script:
// the voice detector hears speech 0.1 s after it starts and ends an
// utterance 0.2 s after it stops, as the engine's detector does; the
// hypothesis of an utterance in progress holds the words begun so far.
type speaker struct {
	script []utterance
	at     float64
	cur    int // utterance the detector is in, or -1
	done   []bool
}

func newSpeaker(script ...utterance) *speaker {
	return &speaker{script: script, cur: -1, done: make([]bool, len(script))}
}

func (u utterance) wordsUntil(t float64) []Word {
	var out []Word
	step := (u.end - u.start) / float64(len(u.words))
	for i, w := range u.words {
		s := u.start + float64(i)*step
		if s >= t {
			break
		}
		out = append(out, Word{Text: w, Start: s, End: min(s+step, t), Confidence: 0.9})
	}
	return out
}

// next returns the evidence of the next block.
func (sp *speaker) next() Block {
	sp.at += blockSeconds
	b := Block{End: sp.at}
	if sp.cur >= 0 {
		u := sp.script[sp.cur]
		if sp.at >= u.end+0.2 {
			b.Ended, b.Final = true, u.wordsUntil(u.end)
			sp.done[sp.cur] = true
			sp.cur = -1
			return b
		}
		b.InSpeech, b.Partial = true, u.wordsUntil(sp.at)
		return b
	}
	for i, u := range sp.script {
		if !sp.done[i] && sp.at >= u.start+0.1 && sp.at < u.end+0.2 {
			sp.cur = i
			b.InSpeech, b.Partial = true, u.wordsUntil(sp.at)
			return b
		}
	}
	return b
}

// run feeds the detector until the given position and returns every
// message.
func run(t *testing.T, d *Detector, sp *speaker, until float64) []Message {
	t.Helper()
	var out []Message
	for sp.at < until {
		out = append(out, d.Block(sp.next())...)
	}
	return out
}

func events(ms []Message) []string {
	var out []string
	for _, m := range ms {
		s := string(m.Event)
		if m.Trigger != "" {
			s += "(" + string(m.Trigger) + ")"
		}
		if m.Event != Update {
			out = append(out, s)
		}
	}
	return out
}

func mustNew(t *testing.T, s Settings) *Detector {
	t.Helper()
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func words(s string) []string { return strings.Fields(s) }

func TestTurnsEndAtLongPausesOnly(t *testing.T) {
	sp := newSpeaker(
		utterance{0.5, 2.0, words("he was not an ill disposed young man")},
		// A 0.35 s pause inside the turn.
		utterance{2.35, 3.5, words("unless to be rather cold hearted")},
		// A 1.5 s pause: the turn ends.
		utterance{5.0, 6.0, words("he might even have been made amiable himself")},
	)
	d := mustNew(t, DefaultSettings())
	ms := run(t, d, sp, 8)
	want := []string{"StartOfTurn", "EndOfTurn(model)", "StartOfTurn", "EndOfTurn(model)"}
	if got := events(ms); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var ends []Message
	for _, m := range ms {
		if m.Event == EndOfTurn {
			ends = append(ends, m)
		}
	}
	if ends[0].TurnIndex != 0 || ends[1].TurnIndex != 1 || d.TurnIndex() != 2 {
		t.Errorf("turn indices %d, %d, next %d; want 0, 1, 2", ends[0].TurnIndex, ends[1].TurnIndex, d.TurnIndex())
	}
	if got := ends[0].Transcript(); got != "he was not an ill disposed young man unless to be rather cold hearted" {
		t.Errorf("first turn %q", got)
	}
	for i, end := range []float64{3.5, 6.0} {
		lat := ends[i].WindowEnd - end
		if lat < 0.3 || lat > 0.6 {
			t.Errorf("turn %d ended %.3f s after its last word; want 0.3 to 0.6 s", i, lat)
		}
		if ends[i].Confidence < DefaultEOTThreshold {
			t.Errorf("turn %d ended by the model with confidence %.3f", i, ends[i].Confidence)
		}
	}
	if d.TypicalPause() <= PriorPause {
		t.Errorf("typical pause %.3f after a 0.35 s pause: want it learned above the prior %.2f", d.TypicalPause(), PriorPause)
	}
}

func TestUpdatesEveryQuarterSecond(t *testing.T) {
	sp := newSpeaker(utterance{0.3, 3.3, words("and mister john dashwood had then leisure to consider")})
	d := mustNew(t, DefaultSettings())
	ms := run(t, d, sp, 5)
	prev := -1.0
	n := 0
	for _, m := range ms {
		if prev >= 0 {
			if gap := m.WindowEnd - prev; gap < 0.25 || gap > 0.26 {
				t.Errorf("%s %.3f s after the previous event; want every 0.256 s", m.Event, gap)
			}
		}
		if m.Event == Update {
			n++
		}
		prev = m.WindowEnd
	}
	if n < 10 {
		t.Errorf("%d Updates over 3 s of speech, want about 4 a second", n)
	}
	// The transcript grows and never shrinks.
	last := 0
	for _, m := range ms {
		if len(m.Words) < last {
			t.Errorf("%s has %d words after %d", m.Event, len(m.Words), last)
		}
		last = len(m.Words)
	}
}

func TestTimeoutWhenModelDisabled(t *testing.T) {
	s := DefaultSettings()
	s.EOTThreshold, s.EOTTimeout = 1.0, time.Second
	sp := newSpeaker(utterance{0.2, 1.2, words("hello there")}, utterance{4, 5, words("again")})
	d := mustNew(t, s)
	ms := run(t, d, sp, 7)
	want := []string{"StartOfTurn", "EndOfTurn(timeout)", "StartOfTurn", "EndOfTurn(timeout)"}
	if got := events(ms); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for _, m := range ms {
		if m.Event == EndOfTurn && m.WindowEnd < 2.2 {
			t.Errorf("timeout at %.3f, before 1 s of silence after 1.2", m.WindowEnd)
		}
		if m.Confidence >= 1 {
			t.Errorf("confidence %v: must stay below 1", m.Confidence)
		}
	}
}

func TestEagerEndOfTurn(t *testing.T) {
	s := DefaultSettings()
	s.EOTThreshold, s.EagerThreshold = 0.9, 0.4
	sp := newSpeaker(
		utterance{0.2, 1.5, words("he might even have been made amiable")},
		utterance{2.0, 2.6, words("himself")}, // a 0.5 s pause: eager, then resumed
		utterance{5.0, 5.5, words("yes")},
	)
	d := mustNew(t, s)
	ms := run(t, d, sp, 7)
	want := []string{"StartOfTurn", "EagerEndOfTurn", "TurnResumed", "EagerEndOfTurn", "EndOfTurn(model)",
		"StartOfTurn", "EagerEndOfTurn", "EndOfTurn(model)"}
	if got := events(ms); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var eager Message
	for _, m := range ms {
		switch m.Event {
		case EagerEndOfTurn:
			eager = m
			if m.Transcript() == "" {
				t.Error("EagerEndOfTurn with an empty transcript")
			}
		case EndOfTurn:
			if m.Transcript() != eager.Transcript() {
				t.Errorf("EndOfTurn %q, preceding EagerEndOfTurn %q: want the same", m.Transcript(), eager.Transcript())
			}
		}
	}
}

func TestForceEnd(t *testing.T) {
	d := mustNew(t, DefaultSettings())
	if ms, ok := d.ForceEnd(Block{End: 0.5}); ok || ms != nil {
		t.Fatalf("ForceEnd outside a turn: %v, %v; want nothing, false", ms, ok)
	}
	sp := newSpeaker(utterance{0.2, 3, words("one two three four five six")})
	run(t, d, sp, 1.0)
	if !d.InTurn() {
		t.Fatal("no turn open during speech")
	}
	final := []Word{{Text: "one", Start: 0.2, End: 0.6}, {Text: "two", Start: 0.6, End: 1.0}}
	ms, ok := d.ForceEnd(Block{End: 1.0, Ended: true, Final: final})
	if !ok || len(ms) != 1 || ms[0].Event != EndOfTurn || ms[0].Trigger != TriggerManual {
		t.Fatalf("ForceEnd in a turn: %+v, %v; want one EndOfTurn(manual)", ms, ok)
	}
	if ms[0].Transcript() != "one two" || ms[0].TurnIndex != 0 || d.TurnIndex() != 1 || d.InTurn() {
		t.Errorf("manual end %q index %d, next %d, in turn %v", ms[0].Transcript(), ms[0].TurnIndex, d.TurnIndex(), d.InTurn())
	}
	// Words the recogniser finishes only when told to end a turn that had
	// not yet started still make a turn, which ends at once.
	ms, ok = d.ForceEnd(Block{End: 1.2, Ended: true, Final: []Word{{Text: "yes", Start: 1.05, End: 1.2}}})
	if got := events(ms); !ok || !slices.Equal(got, []string{"StartOfTurn", "EndOfTurn(manual)"}) {
		t.Errorf("ForceEnd with words outside a turn: %v, %v", got, ok)
	}
}

func TestNoiseMakesNoTurn(t *testing.T) {
	d := mustNew(t, DefaultSettings())
	var ms []Message
	for i := 1; i <= 10; i++ {
		ms = append(ms, d.Block(Block{End: float64(i) * blockSeconds, InSpeech: i < 8})...)
	}
	ms = append(ms, d.Block(Block{End: 1.5, Ended: true})...)
	if len(ms) != 0 || d.InTurn() {
		t.Errorf("an utterance without words made events %v", events(ms))
	}
}

func TestSetSettings(t *testing.T) {
	d := mustNew(t, DefaultSettings())
	bad := Settings{EOTThreshold: 0.4, EOTTimeout: time.Second}
	if err := d.SetSettings(bad); !errors.Is(err, ErrSettings) {
		t.Errorf("SetSettings(%+v) = %v, want ErrSettings", bad, err)
	}
	if d.Settings() != DefaultSettings() {
		t.Errorf("a refused change changed the settings: %+v", d.Settings())
	}
	good := Settings{EOTThreshold: 0.9, EagerThreshold: 0.5, EOTTimeout: 2 * time.Second}
	if err := d.SetSettings(good); err != nil || d.Settings() != good {
		t.Errorf("SetSettings(%+v) = %v, settings %+v", good, err, d.Settings())
	}
}

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		ok   bool
	}{
		{"defaults", DefaultSettings(), true},
		{"bounds", Settings{EOTThreshold: 1, EagerThreshold: 0.9, EOTTimeout: MaxEOTTimeout}, true},
		{"low bounds", Settings{EOTThreshold: 0.5, EagerThreshold: 0.3, EOTTimeout: MinEOTTimeout}, true},
		{"threshold low", Settings{EOTThreshold: 0.49, EOTTimeout: time.Second}, false},
		{"threshold high", Settings{EOTThreshold: 1.01, EOTTimeout: time.Second}, false},
		{"threshold NaN", Settings{EOTThreshold: math.NaN(), EOTTimeout: time.Second}, false},
		{"eager low", Settings{EOTThreshold: 0.7, EagerThreshold: 0.2, EOTTimeout: time.Second}, false},
		{"eager above eot", Settings{EOTThreshold: 0.6, EagerThreshold: 0.7, EOTTimeout: time.Second}, false},
		{"eager NaN", Settings{EOTThreshold: 0.7, EagerThreshold: math.NaN(), EOTTimeout: time.Second}, false},
		{"timeout short", Settings{EOTThreshold: 0.7, EOTTimeout: 499 * time.Millisecond}, false},
		{"timeout long", Settings{EOTThreshold: 0.7, EOTTimeout: 61 * time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if (err == nil) != tt.ok {
				t.Errorf("Validate(%+v) = %v, want ok %v", tt.s, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrSettings) {
				t.Errorf("error %v does not match ErrSettings", err)
			}
			if _, err := New(tt.s); (err == nil) != tt.ok {
				t.Errorf("New(%+v) = %v, want ok %v", tt.s, err, tt.ok)
			}
		})
	}
}

func TestConfidence(t *testing.T) {
	tests := []struct {
		name           string
		silence        float64
		word           string
		pause          float64
		atLeast, below float64
	}{
		{"speech", 0, "man", PriorPause, 0, 0.1},
		{"detector hangover", 0.25, "man", PriorPause, 0, 0.4},
		{"threshold reached", 0.45, "man", PriorPause, 0.7, 0.8},
		{"after and", 0.45, "and", PriorPause, 0, 0.5},
		{"after The,", 0.45, "The,", PriorPause, 0, 0.5},
		{"long pauser", 0.45, "man", 0.6, 0, 0.2},
		{"long silence", 1.5, "man", PriorPause, 0.99, 1},
		{"very long silence", 100, "and", maxTypicalPause, 0.99, 1},
		{"negative", -1, "man", PriorPause, 0, 0.1},
		{"NaN", math.NaN(), "man", PriorPause, 0, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Confidence(tt.silence, tt.word, tt.pause)
			if !(c >= tt.atLeast && c < tt.below) {
				t.Errorf("Confidence(%v, %q, %v) = %.4f, want in [%v, %v)", tt.silence, tt.word, tt.pause, c, tt.atLeast, tt.below)
			}
		})
	}
	prev := 0.0
	for s := 0.0; s < 3; s += 0.01 {
		c := Confidence(s, "man", PriorPause)
		if c < prev {
			t.Fatalf("confidence falls from %v to %v at %.2f s of silence", prev, c, s)
		}
		prev = c
	}
}
