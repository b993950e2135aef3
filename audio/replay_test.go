package audio

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/leaktest"
)

var mono16k = Format{Encoding: EncodingLinear16, SampleRate: 16000, Channels: 1}

// readAll reads a finite source to the end and returns the frame lengths
// and all samples.
func readAll(t *testing.T, s Source) (lens []int, all []int16) {
	t.Helper()
	for range 100_000 {
		f, err := s.Read(context.Background())
		if errors.Is(err, io.EOF) {
			return lens, all
		}
		if err != nil {
			t.Fatal(err)
		}
		lens = append(lens, len(f))
		all = append(all, f...)
	}
	t.Fatal("source did not end")
	return nil, nil
}

func TestReplayFrames(t *testing.T) {
	tests := []struct {
		name     string
		f        Format
		samples  int
		frameDur time.Duration
		wantLens []int
	}{
		{"whole frames", mono16k, 960, 0, []int{320, 320, 320}},
		{"short last frame", mono16k, 1000, 0, []int{320, 320, 320, 40}},
		{"shorter than a frame", mono16k, 5, 0, []int{5}},
		{"empty", mono16k, 0, 0, nil},
		{"stereo 10 ms", Format{EncodingLinear16, 8000, 2}, 400, 10 * time.Millisecond, []int{160, 160, 80}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := seq(0, tt.samples)
			r, err := NewReplay(tt.f, in, ReplayConfig{FrameDuration: tt.frameDur})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != tt.f {
				t.Errorf("format %+v", r.Format())
			}
			lens, all := readAll(t, r)
			if !slices.Equal(lens, tt.wantLens) || !slices.Equal(all, in) {
				t.Errorf("frames %v (want %v), audio equal to input: %v", lens, tt.wantLens, slices.Equal(all, in))
			}
			// It stays ended.
			if _, err := r.Read(context.Background()); !errors.Is(err, io.EOF) {
				t.Errorf("Read after the end: %v", err)
			}
		})
	}
}

func TestReplayLoop(t *testing.T) {
	in := seq(0, 500) // 1.5625 frames: frames run across the seam
	r, err := NewReplay(mono16k, in, ReplayConfig{Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var all []int16
	for range 10 {
		f, err := r.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(f) != 320 {
			t.Fatalf("frame of %d samples", len(f))
		}
		all = append(all, f...)
	}
	for i, v := range all {
		if v != int16(i%500) {
			t.Fatalf("sample %d is %d, want %d", i, v, i%500)
		}
	}
}

// TestReplayPaced: with a fake clock, each frame comes only once its audio
// would have been recorded, measured from the first Read; a late reader
// gets the frames it missed at once, and the pace does not drift.
func TestReplayPaced(t *testing.T) {
	leaktest.Check(t)
	clock := newFakeClock()
	// 44.1 kHz in 10 ms frames is 441 samples: exact. 30 ms is 1323.
	f := Format{EncodingLinear16, 44100, 1}
	r, err := NewReplay(f, seq(0, 441*10), ReplayConfig{FrameDuration: 10 * time.Millisecond, Paced: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type result struct {
		at  time.Time
		err error
	}
	results := make(chan result)
	read := func() {
		go func() {
			_, err := r.Read(context.Background())
			results <- result{clock.Now(), err}
		}()
	}
	start := clock.Now()

	// Frame 1 is due at 10 ms.
	read()
	clock.waitTimer(t)
	clock.Advance(9 * time.Millisecond)
	select {
	case res := <-results:
		t.Fatalf("frame delivered at %v, before it was due", res.at.Sub(start))
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Millisecond)
	if res := <-results; res.err != nil || res.at.Sub(start) != 10*time.Millisecond {
		t.Fatalf("frame 1 at %v, %v; want at 10ms", res.at.Sub(start), res.err)
	}

	// The reader comes back 25 ms later: frames 2 and 3 (due at 20 and
	// 30 ms) are there; frame 4 is due at 40 ms, 5 ms on, not 10.
	clock.Advance(25 * time.Millisecond)
	for i := 2; i <= 3; i++ {
		if _, err := r.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := clock.pending(); n != 0 {
		t.Fatalf("%d timers pending after reading frames already due", n)
	}
	read()
	clock.waitTimer(t)
	clock.Advance(5 * time.Millisecond)
	if res := <-results; res.err != nil || res.at.Sub(start) != 40*time.Millisecond {
		t.Fatalf("frame 4 at %v, %v; want at 40ms", res.at.Sub(start), res.err)
	}

	// A Read waiting for its frame returns when its context ends; the frame
	// is not lost.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := r.Read(ctx)
		errc <- err
	}()
	clock.waitTimer(t)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Read returned %v", err)
	}
	clock.Advance(10 * time.Millisecond)
	frame, err := r.Read(context.Background())
	if err != nil || frame[0] != 441*4 {
		t.Fatalf("after a cancelled Read got frame starting %d, %v; want frame 5 (starting %d)", frame[0], err, 441*4)
	}

	// Close wakes a waiting Read.
	go func() {
		_, err := r.Read(context.Background())
		errc <- err
	}()
	clock.waitTimer(t)
	r.Close()
	if err := <-errc; !errors.Is(err, ErrSourceClosed) {
		t.Fatalf("Read woken by Close returned %v", err)
	}
	if _, err := r.Read(context.Background()); !errors.Is(err, ErrSourceClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// TestReplayPacedSystemClock: with the real clock, half a second of audio
// takes half a second to read.
func TestReplayPacedSystemClock(t *testing.T) {
	r, err := NewReplay(mono16k, make([]int16, 8000), ReplayConfig{Paced: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	readAll(t, r)
	if d := time.Since(start); d < 500*time.Millisecond || d > 900*time.Millisecond {
		t.Errorf("0.5 s of audio read in %v", d)
	}
}

func TestReplayBufferAndSilence(t *testing.T) {
	b := &Buffer{Samples: []float32{0.5, -0.5, 0.25, -1, 0.125}, SampleRate: 8000, Channels: 2}
	r, err := NewReplayBuffer(b, ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format() != (Format{EncodingLinear16, 8000, 2}) {
		t.Errorf("format %+v", r.Format())
	}
	_, all := readAll(t, r)
	if want := []int16{16384, -16384, 8192, -32768}; !slices.Equal(all, want) {
		t.Errorf("replayed %v, want %v (the partial frame dropped)", all, want)
	}

	s, err := NewSilence(Format{EncodingLinear16, 48000, 2}, ReplayConfig{FrameDuration: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f, err := s.Read(context.Background())
		if err != nil || len(f) != 480 || slices.ContainsFunc(f, func(v int16) bool { return v != 0 }) {
			t.Fatalf("silence frame of %d samples, %v", len(f), err)
		}
	}
	s.Close()
}

func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name    string
		f       Format
		samples []int16
		cfg     ReplayConfig
	}{
		{"not linear16", Format{EncodingMulaw, 8000, 1}, nil, ReplayConfig{}},
		{"no rate", Format{EncodingLinear16, 0, 1}, nil, ReplayConfig{}},
		{"partial frame", Format{EncodingLinear16, 8000, 2}, make([]int16, 3), ReplayConfig{}},
		{"loop of nothing", mono16k, nil, ReplayConfig{Loop: true}},
		{"frame too long", mono16k, nil, ReplayConfig{FrameDuration: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewReplay(tt.f, tt.samples, tt.cfg); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := NewSilence(Format{EncodingAlaw, 8000, 1}, ReplayConfig{}); err == nil {
		t.Error("NewSilence accepted A-law")
	}
	if _, err := NewReplayBuffer(&Buffer{}, ReplayConfig{}); err == nil {
		t.Error("NewReplayBuffer accepted an empty Buffer without a rate")
	}
}

// seq returns n samples counting up from from.
func seq(from, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(from + i)
	}
	return out
}
