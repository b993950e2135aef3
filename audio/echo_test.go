package audio

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// librivoxLine is a real recording of a person reading, at 16 kHz.
const librivoxLine = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"

// speech16k returns about 8 s of real speech at 16 kHz (a reading,
// repeated).
func speech16k(t testing.TB) []int16 {
	t.Helper()
	f, err := os.Open(librivoxLine)
	if err != nil {
		t.Fatalf("test speech missing (scripts/setup installs pocketsphinx-testdata): %v", err)
	}
	defer f.Close()
	b, err := Decode(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	pcm := Float32ToInt16(nil, b.Samples)
	var out []int16
	for len(out) < 8*16000 {
		out = append(out, pcm...)
	}
	return out
}

// Room is a simulated room between a speaker and a microphone: the sound
// arrives after Delay, Gain weaker, followed by a short reverberation
// (decaying echoes over Reverb).
type Room struct {
	Delay  time.Duration
	Gain   float64
	Reverb time.Duration
	taps   []float64
}

// impulse builds the room's impulse response at rate.
func (r *Room) impulse(rate int) []float64 {
	if r.taps != nil {
		return r.taps
	}
	d := int(int64(rate) * int64(r.Delay) / int64(time.Second))
	n := int(int64(rate) * int64(r.Reverb) / int64(time.Second))
	h := make([]float64, d+n+1)
	h[d] = r.Gain
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 1; k <= n; k++ {
		decay := r.Gain * 0.3 * (1 - float64(k)/float64(n+1)) * (1 - float64(k)/float64(n+1))
		h[d+k] = decay * (rng.Float64()*2 - 1)
	}
	r.taps = h
	return h
}

// Echo is what the microphone hears of played, in the room.
func (r *Room) Echo(played []int16, rate int) []int16 {
	h := r.impulse(rate)
	out := make([]int16, len(played))
	for i := range out {
		var s float64
		for k, c := range h {
			if c != 0 && i-k >= 0 {
				s += c * float64(played[i-k])
			}
		}
		out[i] = int16(max(-32768, min(32767, s)))
	}
	return out
}

// TestEchoCancellation: speech played into rooms with echo paths of 30
// to 150 ms comes back at least 20 dB weaker once the canceller has
// converged (its first 4 s are not counted: the longer the echo path,
// the longer the adaptive filter takes).
func TestEchoCancellation(t *testing.T) {
	played := speech16k(t)
	for _, delay := range []time.Duration{30 * time.Millisecond, 90 * time.Millisecond, 150 * time.Millisecond} {
		room := &Room{Delay: delay, Gain: 0.5, Reverb: 60 * time.Millisecond}
		mic := room.Echo(played, 16000)
		f, err := NewEchoFilter(16000)
		if err != nil {
			t.Fatal(err)
		}
		var out []int16
		const step = 320
		f.Played(played)
		for i := 0; i+step <= len(mic); i += step {
			// The speaker played up to i+step as the microphone
			// recorded this frame.
			out = append(out, f.Capture(mic[i:i+step], int64(i+step))...)
		}
		f.Close()
		skip := 4 * 16000
		erle := ERLE(mic[skip:len(out)], out[skip:])
		t.Logf("room delay %v: ERLE %.1f dB", delay, erle)
		if erle < 20 {
			t.Errorf("room delay %v: ERLE %.1f dB, want at least 20", delay, erle)
		}
	}
}

// TestEchoKeepsTheVoice: the person's own voice, with no echo, passes
// through the canceller nearly whole.
func TestEchoKeepsTheVoice(t *testing.T) {
	voice := speech16k(t)
	f, err := NewEchoFilter(16000)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int16
	for i := 0; i+320 <= len(voice); i += 320 {
		out = append(out, f.Capture(voice[i:i+320], 0)...)
	}
	// Delayed by one frame at most; compare powers.
	if loss := ERLE(voice[:len(out)], out); loss > 3 {
		t.Errorf("the voice alone lost %.1f dB", loss)
	}
}

func TestEchoCancellerArguments(t *testing.T) {
	if _, err := NewEchoCanceller(4000, DefaultEchoTail); err == nil {
		t.Error("4 kHz accepted")
	}
	if _, err := NewEchoCanceller(16000, time.Millisecond); err == nil {
		t.Error("a 1 ms tail accepted")
	}
	c, err := NewEchoCanceller(16000, DefaultEchoTail)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Process(make([]int16, 10), make([]int16, 10), make([]int16, 10)); err == nil {
		t.Error("a short frame accepted")
	}
	c.Close()
	c.Close()
	if err := c.Process(make([]int16, 320), make([]int16, 320), make([]int16, 320)); err == nil {
		t.Error("a closed canceller processed")
	}
}
