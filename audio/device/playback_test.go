package device

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// openNullPlayback opens a playback on the null backend, which takes audio
// in real time with no sound hardware, skipping the test if this
// environment cannot.
func openNullPlayback(t testing.TB, cfg PlaybackConfig) *Playback {
	t.Helper()
	cfg.Backends = nullBackend
	return openedOnNull(t, "OpenPlayback", func() (*Playback, error) { return OpenPlayback(context.Background(), cfg) })
}

// tone returns d of a quiet sawtooth in format f: audio that is not
// silence.
func tone(f audio.Format, d time.Duration) []int16 {
	frames := int(int64(d) * int64(f.SampleRate) / int64(time.Second))
	out := make([]int16, frames*f.Channels)
	for i := range out {
		out[i] = int16(i%200*20 - 2000)
	}
	return out
}

// waitUntil polls cond every millisecond until it holds or limit passes,
// and reports whether it held.
func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// TestPlaybackRealTime: audio written faster than real time is played at
// real-time pace, Played advances with it, and the stream starts within a
// period or two of its first Write.
func TestPlaybackRealTime(t *testing.T) {
	leaktest.Check(t)
	const length = 400 * time.Millisecond
	tests := []struct {
		name string
		cfg  PlaybackConfig
		want audio.Format
	}{
		{"defaults", PlaybackConfig{}, audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}},
		{"24k TTS", PlaybackConfig{SampleRate: 24000}, audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 24000, Channels: 1}},
		{"48k stereo", PlaybackConfig{SampleRate: 48000, Channels: 2}, audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 48000, Channels: 2}},
		{"22.05k 5ms period", PlaybackConfig{SampleRate: 22050, Period: 5 * time.Millisecond}, audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 22050, Channels: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openNullPlayback(t, tt.cfg)
			period := cmp.Or(tt.cfg.Period, DefaultPeriod)
			if p.Format() != tt.want {
				t.Fatalf("format %+v, want %+v", p.Format(), tt.want)
			}
			pcm := tone(p.Format(), length)
			start := time.Now()
			// Synthesized speech comes in chunks, faster than real time.
			for chunk := range slices.Chunk(pcm, 1000*tt.want.Channels) {
				if err := p.Write(context.Background(), chunk); err != nil {
					t.Fatal(err)
				}
			}
			if q := p.Queued(); q <= 0 || q > length {
				t.Errorf("%v queued right after writing %v", q, length)
			}
			time.Sleep(length / 2)
			mid := p.Played()
			elapsedMid := time.Since(start)
			// The device takes audio ahead of time to fill its own buffer
			// of a few periods (three, miniaudio's default).
			ahead := 4 * period
			// A loaded machine (-race, parallel builds) delays the device
			// thread; BenchmarkPlaybackStart measures the latency.
			const slack = 500 * time.Millisecond
			if mid <= 0 || mid > elapsedMid+ahead {
				t.Errorf("played %v after %v: want some, and no more than real time", mid, elapsedMid)
			}
			if err := p.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			if elapsed < length-ahead || elapsed > length+slack {
				t.Errorf("%v of audio played in %v", length, elapsed)
			}
			if got := p.Played(); got < length-time.Millisecond || got > length {
				t.Errorf("played %v of %v", got, length)
			}
			if p.Queued() != 0 || p.Underruns() != 0 {
				t.Errorf("queued %v, %d underruns after Drain", p.Queued(), p.Underruns())
			}
			fw, st := p.FirstWrite(), p.Started()
			if fw.IsZero() || st.IsZero() || st.Before(fw) {
				t.Fatalf("first write %v, started %v", fw, st)
			}
			if d := st.Sub(fw); d > slack {
				t.Errorf("playback started %v after the first write", d)
			}
			t.Logf("started %v after the first write; played %v in %v", st.Sub(fw), length, elapsed)
		})
	}
}

// TestPlaybackJitterBuffer: a stream does not start until the jitter
// buffer is full, unless End says no more is coming.
func TestPlaybackJitterBuffer(t *testing.T) {
	leaktest.Check(t)
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
	tests := []struct {
		name   string
		first  time.Duration // written at once
		then   func(p *Playback) error
		starts bool // before then
	}{
		{"under the threshold waits, then fills", 10 * time.Millisecond,
			func(p *Playback) error { return p.Write(context.Background(), tone(f, 15*time.Millisecond)) }, false},
		{"under the threshold waits, then End", 10 * time.Millisecond,
			func(p *Playback) error { p.End(); return nil }, false},
		{"at the threshold starts", 20 * time.Millisecond, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openNullPlayback(t, PlaybackConfig{})
			if err := p.Write(context.Background(), tone(f, tt.first)); err != nil {
				t.Fatal(err)
			}
			if !tt.starts {
				time.Sleep(80 * time.Millisecond) // eight periods
				if !p.Started().IsZero() || p.Played() != 0 || p.Queued() != tt.first {
					t.Fatalf("started %v, played %v, queued %v: the jitter buffer is not full",
						p.Started(), p.Played(), p.Queued())
				}
				if p.Underruns() != 0 {
					t.Errorf("%d underruns before the stream started", p.Underruns())
				}
				if err := tt.then(p); err != nil {
					t.Fatal(err)
				}
			}
			if !waitUntil(time.Second, func() bool { return !p.Started().IsZero() }) {
				t.Fatal("the stream did not start")
			}
		})
	}
}

// TestPlaybackStop: Stop empties the queue at once, the device goes
// silent within a period or two, a blocked Write gives up, and the next
// Write begins a new stream.
func TestPlaybackStop(t *testing.T) {
	leaktest.Check(t)
	p := openNullPlayback(t, PlaybackConfig{MaxQueued: time.Second})
	f := p.Format()
	// 3 s into a queue of 1 s: the writer blocks with 2 s to go.
	errc := make(chan error, 1)
	go func() { errc <- p.Write(context.Background(), tone(f, 3*time.Second)) }()
	if !waitUntil(time.Second, func() bool { return p.Played() >= 100*time.Millisecond }) {
		t.Fatalf("played only %v", p.Played())
	}
	firstStream := p.FirstWrite()
	p.Stop()
	if q := p.Queued(); q != 0 {
		t.Errorf("%v still queued after Stop", q)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("blocked Write returned %v, want ErrInterrupted", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Stop did not release the blocked Write")
	}
	// Once the device thread has taken the Stop, no callback that began
	// before it is still running: nothing more plays.
	if !waitUntil(time.Second, func() bool { return p.q.r.Load() >= p.q.discardTo.Load() }) {
		t.Fatal("the device did not take the Stop")
	}
	at := p.Played()
	time.Sleep(100 * time.Millisecond)
	if got := p.Played(); got != at {
		t.Errorf("played %v after Stop (was %v)", got, at)
	}
	if q := p.Queued(); q != 0 {
		t.Errorf("%v queued after Stop", q)
	}
	// Nothing more to drain.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.Drain(ctx); err != nil {
		t.Errorf("Drain after Stop: %v", err)
	}

	// The next Write is a new stream with its own clock and playhead.
	if err := p.Write(context.Background(), tone(f, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !p.FirstWrite().After(firstStream) {
		t.Errorf("new stream's first write %v is not after the old one's %v", p.FirstWrite(), firstStream)
	}
	if got := p.Played(); got > 20*time.Millisecond {
		t.Errorf("the new stream's playhead starts at %v", got)
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Played(); got != 100*time.Millisecond {
		t.Errorf("the new stream played %v, want 100ms", got)
	}
	if p.Underruns() != 0 {
		t.Errorf("%d underruns", p.Underruns())
	}
}

// TestPlaybackDrain: Drain waits for the audio to be played, and returns
// early when its context ends or Stop discards the audio.
func TestPlaybackDrain(t *testing.T) {
	leaktest.Check(t)
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
	tests := []struct {
		name      string
		interrupt func(p *Playback, cancel context.CancelFunc)
		want      error // nil: drains
		minWait   time.Duration
	}{
		{"waits", func(*Playback, context.CancelFunc) {}, nil, 250 * time.Millisecond},
		{"context", func(_ *Playback, cancel context.CancelFunc) { cancel() }, context.Canceled, 0},
		{"stop", func(p *Playback, _ context.CancelFunc) { p.Stop() }, ErrInterrupted, 0},
		{"close", func(p *Playback, _ context.CancelFunc) { p.Close() }, ErrPlaybackClosed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openNullPlayback(t, PlaybackConfig{})
			// 10 ms, under the jitter buffer: Drain must start it.
			if err := p.Write(context.Background(), tone(f, 10*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if err := p.Write(context.Background(), tone(f, 290*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(50*time.Millisecond, func() { tt.interrupt(p, cancel) })
			start := time.Now()
			err := p.Drain(ctx)
			d := time.Since(start)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if d < tt.minWait || p.Queued() != 0 || p.Played() != 300*time.Millisecond {
					t.Errorf("Drain returned after %v with %v queued and %v played", d, p.Queued(), p.Played())
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Drain returned %v, want %v", err, tt.want)
			}
			if d > 500*time.Millisecond {
				t.Errorf("Drain returned %v after the interruption", d-50*time.Millisecond)
			}
		})
	}
}

// TestPlaybackWriteWakes: a Write blocked on a full queue returns when its
// context ends or the playback closes; what it queued stays queued.
func TestPlaybackWriteWakes(t *testing.T) {
	leaktest.Check(t)
	tests := []struct {
		name      string
		interrupt func(p *Playback, cancel context.CancelFunc)
		want      error
	}{
		{"context", func(_ *Playback, cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"close", func(p *Playback, _ context.CancelFunc) { p.Close() }, ErrPlaybackClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openNullPlayback(t, PlaybackConfig{MaxQueued: time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(100*time.Millisecond, func() { tt.interrupt(p, cancel) })
			start := time.Now()
			err := p.Write(ctx, tone(p.Format(), 5*time.Second))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Write returned %v, want %v", err, tt.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Write returned after %v", d)
			}
			if q := p.Queued(); tt.want == context.Canceled && (q < 800*time.Millisecond || q > time.Second) {
				t.Errorf("%v queued; the queue should still be about full", q)
			}
			ended, cancel2 := context.WithCancel(context.Background())
			cancel2()
			if err := p.Write(ended, tone(p.Format(), time.Millisecond)); !errors.Is(err, context.Canceled) {
				t.Errorf("Write with an ended context: %v", err)
			}
		})
	}
}

// TestPlaybackUnderrun: a stream that runs dry before End plays silence,
// counts one underrun, and waits for the jitter buffer again; a stream
// that runs out after End finishes without one.
func TestPlaybackUnderrun(t *testing.T) {
	leaktest.Check(t)
	p := openNullPlayback(t, PlaybackConfig{})
	f := p.Format()
	if err := p.Write(context.Background(), tone(f, 50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := p.Underruns(); got != 1 {
		t.Fatalf("%d underruns after running dry once, want 1", got)
	}
	if got := p.Played(); got != 50*time.Millisecond {
		t.Errorf("played %v, want 50ms", got)
	}
	// Less than the jitter buffer: waits.
	if err := p.Write(context.Background(), tone(f, 10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if got := p.Played(); got != 50*time.Millisecond {
		t.Errorf("played %v after an underrun with 10 ms queued; want it to wait for the jitter buffer", got)
	}
	// The same stream continues; ending it is no underrun.
	started := p.Started()
	if err := p.Write(context.Background(), tone(f, 40*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Played(); got != 100*time.Millisecond {
		t.Errorf("played %v, want 100ms", got)
	}
	if !p.Started().Equal(started) {
		t.Errorf("the stream's start moved from %v to %v", started, p.Started())
	}
	time.Sleep(50 * time.Millisecond)
	if got := p.Underruns(); got != 1 {
		t.Errorf("%d underruns, want still 1", got)
	}
}

// TestPlaybackPause: while paused the playhead holds and nothing is lost.
func TestPlaybackPause(t *testing.T) {
	leaktest.Check(t)
	p := openNullPlayback(t, PlaybackConfig{})
	if err := p.Write(context.Background(), tone(p.Format(), 200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(time.Second, func() bool { return p.Played() >= 50*time.Millisecond }) {
		t.Fatal("did not start")
	}
	p.Pause()
	if !p.Paused() {
		t.Fatal("not paused")
	}
	at := p.Played()
	time.Sleep(100 * time.Millisecond)
	// A callback under way when Pause was called may finish its period.
	if got := p.Played(); got-at > DefaultPeriod {
		t.Errorf("played %v while paused (was %v)", got, at)
	}
	if p.Underruns() != 0 {
		t.Errorf("%d underruns while paused", p.Underruns())
	}
	p.Resume()
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Played(); got != 200*time.Millisecond {
		t.Errorf("played %v, want all 200ms", got)
	}
}

// TestPlaybackStreams: a Write after a finished stream begins a new one;
// a Write after End but before the end was played continues the stream.
func TestPlaybackStreams(t *testing.T) {
	leaktest.Check(t)
	p := openNullPlayback(t, PlaybackConfig{})
	f := p.Format()
	if !p.FirstWrite().IsZero() || !p.Started().IsZero() || p.Played() != 0 {
		t.Fatal("a fresh playback reports a stream")
	}
	if err := p.Write(context.Background(), tone(f, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	p.End()
	first := p.FirstWrite()
	// Continues: the end has not been played yet.
	if err := p.Write(context.Background(), tone(f, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !p.FirstWrite().Equal(first) {
		t.Error("a Write after End but before its end was played began a new stream")
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Played(); got != 200*time.Millisecond {
		t.Errorf("played %v of one 200 ms stream", got)
	}
	// A new stream.
	if err := p.Write(context.Background(), tone(f, 50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !p.FirstWrite().After(first) {
		t.Error("a Write after the stream finished continued it")
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.Played(); got != 50*time.Millisecond {
		t.Errorf("the new stream played %v, want 50ms", got)
	}
	if p.Underruns() != 0 {
		t.Errorf("%d underruns", p.Underruns())
	}
}

// TestPlaybackConcurrentClose: Close racing with Write, Drain, Stop and
// itself, under the race detector.
func TestPlaybackConcurrentClose(t *testing.T) {
	leaktest.Check(t)
	for range 3 {
		p := openNullPlayback(t, PlaybackConfig{MaxQueued: time.Second})
		f := p.Format()
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				err := p.Write(context.Background(), tone(f, 300*time.Millisecond))
				if errors.Is(err, ErrPlaybackClosed) {
					return
				}
				if err != nil && !errors.Is(err, ErrInterrupted) {
					t.Errorf("Write: %v", err)
					return
				}
			}
		})
		wg.Go(func() {
			for {
				err := p.Drain(context.Background())
				if errors.Is(err, ErrPlaybackClosed) {
					return
				}
				if err != nil && !errors.Is(err, ErrInterrupted) {
					t.Errorf("Drain: %v", err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
		wg.Go(func() {
			for range 5 {
				time.Sleep(10 * time.Millisecond)
				p.Stop()
				_ = p.Played() + p.Queued()
			}
		})
		time.Sleep(80 * time.Millisecond)
		wg.Go(func() { p.Close() })
		wg.Go(func() { p.Close() })
		wg.Wait()
		p.Stop() // after Close: no effect, no panic
		p.End()
	}
}

// TestPlaybackWriteFrames: a Write must hold whole frames.
func TestPlaybackWriteFrames(t *testing.T) {
	p := openNullPlayback(t, PlaybackConfig{Channels: 2})
	if err := p.Write(context.Background(), make([]int16, 3)); err == nil {
		t.Error("accepted 3 samples of stereo")
	}
	if err := p.Write(context.Background(), nil); err != nil || !p.FirstWrite().IsZero() {
		t.Errorf("an empty Write: %v, first write %v", err, p.FirstWrite())
	}
}

func TestOutputDevicesNullBackend(t *testing.T) {
	devs, err := OutputDevices(context.Background(), nullBackend...)
	if errors.Is(err, ErrNoAudioBackend) {
		t.Skipf("miniaudio's null backend does not start here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].ID == "" || devs[0].Name == "" || !devs[0].Default {
		t.Fatalf("null backend lists %+v, want one default device", devs)
	}
	p := openNullPlayback(t, PlaybackConfig{DeviceID: devs[0].ID})
	if err := p.Write(context.Background(), tone(p.Format(), 30*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Errorf("Drain on device %q: %v", devs[0].ID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OutputDevices(ctx, nullBackend...); !errors.Is(err, context.Canceled) {
		t.Errorf("OutputDevices with an ended context: %v", err)
	}
}

func TestOpenPlaybackErrors(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []openErrorCase[PlaybackConfig]{
		{"unknown device", context.Background(), PlaybackConfig{DeviceID: "no-such-speaker"}, ErrNoOutputDevice},
		{"invalid device ID", context.Background(), PlaybackConfig{DeviceID: "hex:zz"}, nil},
		{"rate", context.Background(), PlaybackConfig{SampleRate: 100}, nil},
		{"channels", context.Background(), PlaybackConfig{Channels: 64}, nil},
		{"jitter buffer", context.Background(), PlaybackConfig{JitterBuffer: 3 * time.Second}, nil},
		{"period", context.Background(), PlaybackConfig{Period: time.Second}, nil},
		{"short period", context.Background(), PlaybackConfig{Period: time.Microsecond}, nil},
		{"queue bound", context.Background(), PlaybackConfig{MaxQueued: time.Millisecond}, nil},
		{"queue under the jitter buffer", context.Background(), PlaybackConfig{MaxQueued: time.Second, JitterBuffer: 2 * time.Second}, nil},
		{"ended context", ended, PlaybackConfig{}, context.Canceled},
		{"custom backend", context.Background(), PlaybackConfig{Backends: []malgo.Backend{malgo.BackendNull}}, ErrNoAudioBackend},
	}
	checkOpenErrors(t, tests, func(ctx context.Context, cfg PlaybackConfig) (*Playback, error) {
		if cfg.Backends == nil {
			cfg.Backends = nullBackend
		}
		return OpenPlayback(ctx, cfg)
	})
}

// TestOpenPlaybackDefaultBackends: with the platform's backends, either a
// real output opens or the error is one of the plain-words errors; the
// null backend is never picked silently.
func TestOpenPlaybackDefaultBackends(t *testing.T) {
	p, err := OpenPlayback(context.Background(), PlaybackConfig{})
	if err == nil {
		defer p.Close()
		t.Log("a real output device opened")
		return
	}
	t.Logf("no output device here: %v", err)
	if !errors.Is(err, ErrNoAudioBackend) && !errors.Is(err, ErrNoOutputDevice) && !errors.Is(err, ErrOutputUnavailable) {
		t.Errorf("error %q matches none of the plain-words errors", err)
	}
}

// TestPlaybackCallbackAllocationFree: the device callback's path, playing,
// running dry, discarding and crossing blocks, allocates nothing.
func TestPlaybackCallbackAllocationFree(t *testing.T) {
	p := &Playback{
		format:    audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1},
		threshold: 320,
		q:         newPlayQueue(),
		kick:      make(chan struct{}, 1),
	}
	p.endPos.Store(-1)
	in := make([]int16, 3*segmentSamples)
	more := make([]int16, 9*segmentSamples) // more than the runs below take
	// Fill the segment pool.
	for range 3 {
		p.q.push(in)
		for p.q.popBytes(make([]byte, 1000)) > 0 {
		}
	}
	out := make([]byte, 2*160)
	p.q.push(more)
	allocs := testing.AllocsPerRun(200, func() { p.onData(out, nil, 160) })
	if allocs != 0 {
		t.Errorf("%.1f allocations per callback while playing", allocs)
	}
	p.q.discard()
	allocs = testing.AllocsPerRun(200, func() { p.onData(out, nil, 160) })
	if allocs != 0 {
		t.Errorf("%.1f allocations per callback while discarding or idle", allocs)
	}
	if p.underruns.Load() != 0 {
		t.Errorf("%d underruns: the test meant to play continuously", p.underruns.Load())
	}
}

// BenchmarkPlaybackStart measures the latency from a stream's first Write
// to the device taking its first sample, on the null backend with the
// default jitter buffer and period: "burst" writes 200 ms at once, as a
// synthesizer faster than real time does; "realtime" writes 10 ms chunks
// at real-time pace. It reports the median and the 90th percentile.
func BenchmarkPlaybackStart(b *testing.B) {
	for _, bc := range []struct {
		name  string
		chunk time.Duration
		pace  bool
	}{{"burst", 200 * time.Millisecond, false}, {"realtime", 10 * time.Millisecond, true}} {
		b.Run(bc.name, func(b *testing.B) {
			p := openNullPlayback(b, PlaybackConfig{SampleRate: 24000})
			chunk := tone(p.Format(), bc.chunk)
			var lat []time.Duration
			for b.Loop() {
				for i := 0; p.Started().IsZero() || i == 0; i++ {
					if err := p.Write(context.Background(), chunk); err != nil {
						b.Fatal(err)
					}
					if !bc.pace {
						waitUntil(time.Second, func() bool { return !p.Started().IsZero() })
						break
					}
					time.Sleep(bc.chunk)
				}
				if p.Started().IsZero() {
					b.Fatal("did not start")
				}
				lat = append(lat, p.Started().Sub(p.FirstWrite()))
				p.Stop()
				// Let the callback take the Stop, so the next Write
				// begins a fresh stream at an arbitrary phase of the
				// device's period.
				time.Sleep(time.Duration(len(lat)%7+10) * time.Millisecond)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "ms-median")
			b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "ms-p90")
		})
	}
}

// ExampleOutputDevices lists the outputs of the null backend, the one that
// needs no sound hardware.
func ExampleOutputDevices() {
	devs, err := OutputDevices(context.Background(), NullBackend)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		fmt.Printf("%s %q default=%v\n", d.ID, d.Name, d.Default)
	}
	// Output: hex:00 "NULL Playback Device" default=true
}
