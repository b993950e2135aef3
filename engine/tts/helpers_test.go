package tts

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/earshot-app/earshot/internal/leaktest"
)

var shared struct {
	once sync.Once
	s    *Synthesizer
	err  error
}

// synth returns a Synthesizer shared by the whole test binary.
func synth(tb testing.TB) *Synthesizer {
	tb.Helper()
	shared.once.Do(func() { shared.s, shared.err = New(Config{}) })
	if shared.err != nil {
		tb.Fatalf("New: %v", shared.err)
	}
	return shared.s
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.s != nil {
		shared.s.Close()
	}
	if code == 0 {
		if r := leaktest.Report(); r != "" {
			os.Stderr.WriteString("goroutines left running:\n" + r + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// result is everything one Synthesize call emitted.
type result struct {
	pcm      []int16
	chunks   []Chunk
	textEnds []int
}

func (r result) seconds(rate int) float64 { return float64(len(r.pcm)) / float64(rate) }

// speak synthesises text and collects the audio.
func speak(t testing.TB, v Voice, text string, p Params) result {
	t.Helper()
	var r result
	err := synth(t).Synthesize(context.Background(), v, text, p, func(c Chunk) error {
		r.pcm = append(r.pcm, c.PCM...)
		r.chunks = append(r.chunks, c)
		r.textEnds = append(r.textEnds, c.TextEnd)
		return nil
	})
	if err != nil {
		t.Fatalf("Synthesize(%s): %v", v.Name, err)
	}
	return r
}

func mustVoice(t testing.TB, name string) Voice {
	t.Helper()
	v, ok := Lookup(name)
	if !ok {
		t.Fatalf("no voice %s", name)
	}
	return v
}

// rms is the root mean square level of samples.
func rms(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, x := range s {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// pitchTrack estimates F0 (Hz) every 10 ms over voiced, loud frames by
// normalised autocorrelation, between 60 and 400 Hz.
func pitchTrack(s []int16, rate int) []float64 {
	frame, hop := rate*40/1000, rate/50
	minLag, maxLag := rate/400, rate/60
	level := rms(s)
	var f0 []float64
	x := make([]float64, frame)
	for start := 0; start+frame+maxLag <= len(s); start += hop {
		var e float64
		for i := range frame {
			x[i] = float64(s[start+i])
			e += x[i] * x[i]
		}
		if math.Sqrt(e/float64(frame)) < level*0.5 {
			continue
		}
		corr := make([]float64, maxLag+2)
		best := 0.0
		for lag := minLag; lag <= maxLag+1; lag++ {
			var c, e2 float64
			for i := range frame {
				y := float64(s[start+i+lag])
				c += x[i] * y
				e2 += y * y
			}
			corr[lag] = c / math.Sqrt(e*e2+1)
			if lag <= maxLag {
				best = max(best, corr[lag])
			}
		}
		if best < 0.75 {
			continue
		}
		// The shortest lag whose peak is close to the best one: multiples
		// of the period correlate nearly as well (octave errors).
		for lag := minLag + 1; lag <= maxLag; lag++ {
			if corr[lag] >= 0.9*best && corr[lag] >= corr[lag-1] && corr[lag] >= corr[lag+1] {
				f0 = append(f0, float64(rate)/float64(lag))
				break
			}
		}
	}
	return f0
}

// semitoneSpread is the standard deviation of a pitch track in semitones.
func semitoneSpread(f0 []float64) float64 {
	if len(f0) < 2 {
		return 0
	}
	var mean float64
	st := make([]float64, len(f0))
	for i, f := range f0 {
		st[i] = 12 * math.Log2(f/100)
		mean += st[i]
	}
	mean /= float64(len(st))
	var v float64
	for _, x := range st {
		v += (x - mean) * (x - mean)
	}
	return math.Sqrt(v / float64(len(st)-1))
}
