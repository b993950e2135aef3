package audio

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// pairTone is seconds of a sine at hz, 16 kHz mono.
func pairTone(hz float64, seconds float64, amp float64) []int16 {
	out := make([]int16, int(seconds*SpeechRate))
	for i := range out {
		out[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/SpeechRate))
	}
	return out
}

func pairReplay(t *testing.T, pcm []int16, rate int) *Replay {
	t.Helper()
	r, err := NewReplay(Format{Encoding: EncodingLinear16, SampleRate: rate, Channels: 1}, pcm, ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readPair reads a pair to its end and splits its channels.
func readPair(t *testing.T, p *Pair) (first, second []int16) {
	t.Helper()
	for {
		f, err := p.Read(context.Background())
		if errors.Is(err, io.EOF) {
			return first, second
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(f); i += 2 {
			first, second = append(first, f[i]), append(second, f[i+1])
		}
	}
}

// TestPairSecondEnds: the first source is the pair's clock. When the
// second ends first (a short stream, or the computer's sound read faster
// than the microphone, as on a loaded machine), its channel goes silent
// and the pair runs on to the end of the first.
func TestPairSecondEnds(t *testing.T) {
	mic := pairReplay(t, pairTone(300, 1, 8000), SpeechRate)
	sys := pairReplay(t, pairTone(1000, 0.1, 8000), SpeechRate)
	p, err := NewPair(mic, sys, PairConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Wait for the second's reader to see its end before the first frame
	// is read: the order that ended the pair early.
	for {
		p.mu.Lock()
		ended := p.err != nil
		p.mu.Unlock()
		if ended {
			break
		}
		runtime.Gosched()
	}
	first, second := readPair(t, p)
	if len(first) != SpeechRate || len(second) != SpeechRate {
		t.Fatalf("%d and %d samples, want a second of each", len(first), len(second))
	}
	if pk := peak(second[SpeechRate/2:]); pk != 0 {
		t.Errorf("the second channel after its end peaks at %d, want silence", pk)
	}
}

// TestPairChannels: each source lands on its own channel, at 16 kHz,
// whatever its rate; the first is the clock.
func TestPairChannels(t *testing.T) {
	mic := pairReplay(t, pairTone(300, 1, 8000), SpeechRate)
	// The second at 48 kHz: resampled to 16 kHz.
	hi := make([]int16, 48000)
	for i := range hi {
		hi[i] = int16(8000 * math.Sin(2*math.Pi*1000*float64(i)/48000))
	}
	sys := pairReplay(t, hi, 48000)
	p, err := NewPair(mic, sys, PairConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if f := p.Format(); f.Channels != 2 || f.SampleRate != SpeechRate {
		t.Fatalf("format %+v", f)
	}
	first, second := readPair(t, p)
	if len(first) != SpeechRate || len(second) != SpeechRate {
		t.Fatalf("%d and %d samples, want a second of each", len(first), len(second))
	}
	// The first channel is the 300 Hz tone untouched.
	for i, v := range pairTone(300, 1, 8000) {
		if first[i] != v {
			t.Fatalf("first channel differs at %d: %d, want %d", i, first[i], v)
		}
	}
	// The second carries the 1 kHz tone (or silence where its reader had
	// not caught up, never the first's).
	if corr(first, second) > 0.1 {
		t.Error("the second channel carries the first source")
	}
}

// corr is the normalised correlation of a and b.
func corr(a, b []int16) float64 {
	var ab, aa, bb float64
	for i := range min(len(a), len(b)) {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return math.Abs(ab / math.Sqrt(aa*bb))
}

// TestPairEchoCancel: what the speakers play reaches the microphone
// delayed and weaker; with echo cancellation the first channel keeps the
// person's voice and loses most of the echo.
func TestPairEchoCancel(t *testing.T) {
	const seconds = 8
	rng := rand.New(rand.NewPCG(1, 2))
	// The others: noise shaped like speech's level, loud.
	played := make([]int16, seconds*SpeechRate)
	for i := range played {
		played[i] = int16(rng.NormFloat64() * 3000)
	}
	// The room: 40 ms later, a third as loud, with a short reflection.
	echo := make([]int16, len(played))
	for i := range echo {
		var v float64
		if j := i - 640; j >= 0 {
			v += 0.33 * float64(played[j])
		}
		if j := i - 900; j >= 0 {
			v += 0.1 * float64(played[j])
		}
		echo[i] = int16(v)
	}
	run := func(cancel bool) []int16 {
		// Both sources in step, as two devices recording the same
		// moments are: the first hands the second its frame as it reads
		// its own.
		ls := &lockstep{frames: make(chan []int16), asked: make(chan struct{}, 1)}
		p, err := NewPair(&feeder{pcm: echo, step: ls}, ls, PairConfig{EchoCancel: cancel})
		if err != nil {
			t.Fatal(err)
		}
		ls.pcm = played
		defer p.Close()
		first, _ := readPair(t, p)
		return first
	}
	raw, cleaned := run(false), run(true)
	// After four seconds to converge, the echo left is 20 dB and more
	// below what came in.
	from := 4 * SpeechRate
	erle := ERLE(raw[from:], cleaned[from:])
	t.Logf("echo return loss enhancement %.1f dB", erle)
	if erle < 20 {
		t.Errorf("the echo is %.1f dB weaker, want 20 dB and more", erle)
	}
}

// feeder is the first source of the echo test: it gives step the second
// source's frame before returning its own, so both stay in step.
type feeder struct {
	pcm  []int16
	pos  int
	step *lockstep
}

func (f *feeder) Format() Format {
	return Format{Encoding: EncodingLinear16, SampleRate: SpeechRate, Channels: 1}
}

func (f *feeder) Read(ctx context.Context) ([]int16, error) {
	if f.pos >= len(f.pcm) {
		return nil, io.EOF
	}
	end := min(f.pos+pairFrame, len(f.pcm))
	if err := f.step.give(ctx, f.pos, end); err != nil {
		return nil, err
	}
	out := f.pcm[f.pos:end]
	f.pos = end
	return out, nil
}

func (f *feeder) Close() error { return nil }

// lockstep is a second source that delivers a frame when the first
// hands it one.
type lockstep struct {
	pcm     []int16
	frames  chan []int16
	asked   chan struct{} // the pair came back for another frame
	started bool          // Read was called before
}

func (l *lockstep) give(ctx context.Context, from, to int) error {
	select {
	case l.frames <- l.pcm[from:to]:
	case <-ctx.Done():
		return ctx.Err()
	}
	// The pair asks for the next frame once it has queued this one.
	select {
	case <-l.asked:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (l *lockstep) Format() Format {
	return Format{Encoding: EncodingLinear16, SampleRate: SpeechRate, Channels: 1}
}

func (l *lockstep) Read(ctx context.Context) ([]int16, error) {
	if l.started {
		l.asked <- struct{}{}
	}
	l.started = true
	select {
	case f := <-l.frames:
		return f, nil
	case <-ctx.Done():
		return nil, ErrSourceClosed
	}
}

func (l *lockstep) Close() error { return nil }

// TestPairQuietOthers: while the computer plays nothing, the microphone
// goes as it came, untouched by the canceller.
func TestPairQuietOthers(t *testing.T) {
	you := pairTone(300, 1, 8000)
	ls := &lockstep{frames: make(chan []int16), asked: make(chan struct{}, 1), pcm: make([]int16, len(you))}
	p, err := NewPair(&feeder{pcm: you, step: ls}, ls, PairConfig{EchoCancel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, _ := readPair(t, p)
	for i := range you {
		if first[i] != you[i] {
			t.Fatalf("sample %d is %d, the microphone's %d", i, first[i], you[i])
		}
	}
}
