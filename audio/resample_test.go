package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func tone(freq float64, rate, frames int, amp float64) []float32 {
	out := make([]float32, frames)
	for i := range out {
		out[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return out
}

// toneError resamples a tone and compares it with the ideal tone at the
// output rate, away from the edges (where the input simply stops). It
// returns the error in dB relative to the tone.
func toneError(t *testing.T, freq float64, in, out int) float64 {
	t.Helper()
	const seconds = 0.5
	got, err := Resample(tone(freq, in, int(seconds*float64(in)), 0.5), in, out, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := tone(freq, out, int(seconds*float64(out)), 0.5)
	edge := out / 50 // 20 ms
	var sig, noise float64
	for i := edge; i < len(want)-edge; i++ {
		d := float64(got[i] - want[i])
		sig += float64(want[i]) * float64(want[i])
		noise += d * d
	}
	return 10 * math.Log10(noise/sig)
}

// rms in dB relative to full-scale sine amplitude 1, away from the edges.
func rmsDB(x []float32, edge int) float64 {
	var s float64
	x = x[edge : len(x)-edge]
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return 10 * math.Log10(s/float64(len(x))/0.5)
}

var commonRates = []int{8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000}

// TestResampleToneQuality: a 1 kHz tone survives conversion between 16 kHz
// and every common rate, both ways, with its phase (no delay) and an error
// below -95 dB.
func TestResampleToneQuality(t *testing.T) {
	for _, r := range commonRates {
		for _, pair := range [][2]int{{r, 16000}, {16000, r}} {
			t.Run(fmt.Sprintf("%d-%d", pair[0], pair[1]), func(t *testing.T) {
				e := toneError(t, 1000, pair[0], pair[1])
				t.Logf("error %.1f dB", e)
				if e > -95 {
					t.Errorf("1 kHz tone error %.1f dB, want below -95 dB", e)
				}
			})
		}
	}
}

// TestResampleAntiAlias: content above the new Nyquist frequency is
// removed rather than folded back into the band; content well inside the
// band keeps its level.
func TestResampleAntiAlias(t *testing.T) {
	tests := []struct {
		in, out int
		freq    float64
		maxDB   float64 // output level, dB relative to the input tone
		minDB   float64
	}{
		{44100, 16000, 9000, -95, math.Inf(-1)},  // would alias to 7 kHz
		{48000, 16000, 8050, -95, math.Inf(-1)},  // just above Nyquist
		{48000, 16000, 15000, -95, math.Inf(-1)}, // would alias to 1 kHz
		{44100, 8000, 5000, -95, math.Inf(-1)},
		{48000, 16000, 6000, 0.05, -0.05}, // passband: level kept
		{44100, 16000, 3000, 0.05, -0.05},
		{16000, 48000, 7000, 0.05, -0.05},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d-%gHz", tt.in, tt.out, tt.freq), func(t *testing.T) {
			got, err := Resample(tone(tt.freq, tt.in, tt.in/2, 1), tt.in, tt.out, 1)
			if err != nil {
				t.Fatal(err)
			}
			db := rmsDB(got, tt.out/50)
			t.Logf("output level %.2f dB", db)
			if db > tt.maxDB || db < tt.minDB {
				t.Errorf("output level %.2f dB, want %g..%g", db, tt.minDB, tt.maxDB)
			}
		})
	}
}

// TestResampleNoImages: upsampling must not create images of the input
// spectrum above the old Nyquist frequency (a 7 kHz tone at 16 kHz has its
// first image at 9 kHz).
func TestResampleNoImages(t *testing.T) {
	got, err := Resample(tone(7000, 16000, 8000, 1), 16000, 48000, 1)
	if err != nil {
		t.Fatal(err)
	}
	edge := 960
	x := got[edge : len(got)-edge]
	if db := goertzelDB(x, 9000, 48000); db > -85 {
		t.Errorf("9 kHz image at %.1f dB", db)
	}
	if db := goertzelDB(x, 7000, 48000); math.Abs(db) > 0.1 {
		t.Errorf("7 kHz tone at %.1f dB", db)
	}
}

// goertzelDB is the level of one frequency in x, in dB relative to a
// full-scale sine.
func goertzelDB(x []float32, freq float64, rate int) float64 {
	w := 2 * math.Pi * freq / float64(rate)
	var re, im float64
	for i, v := range x {
		// Hann window against leakage from the strong tone.
		h := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(len(x)-1))
		re += float64(v) * h * math.Cos(w*float64(i))
		im -= float64(v) * h * math.Sin(w*float64(i))
	}
	amp := 2 * math.Hypot(re, im) / (0.5 * float64(len(x)))
	return 20 * math.Log10(amp)
}

// TestResampleChunkingInvariant feeds one signal whole and in random chunks
// (including empty ones and partial frames) and requires identical output,
// for exact polyphase ratios, an interpolated one and multichannel audio.
func TestResampleChunkingInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tests := []struct{ in, out, ch int }{
		{48000, 16000, 1},
		{44100, 16000, 1},
		{16000, 44100, 1},
		{8000, 16000, 1},
		{22050, 16000, 2},
		{44100, 47999, 1}, // 47999 is prime: interpolated phases
		{16000, 16000, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d-%dch", tt.in, tt.out, tt.ch), func(t *testing.T) {
			sig := make([]float32, tt.ch*(tt.in/3+17))
			for i := range sig {
				sig[i] = float32(rng.NormFloat64() * 0.3)
			}
			whole, err := Resample(sig, tt.in, tt.out, tt.ch)
			if err != nil {
				t.Fatal(err)
			}
			frames := len(sig) / tt.ch
			if want := (frames*tt.out + tt.in - 1) / tt.in * tt.ch; len(whole) != want {
				t.Errorf("%d output samples, want %d", len(whole), want)
			}
			r, err := NewResampler(tt.in, tt.out, tt.ch)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second round checks Reset
				var got []float32
				for rest := sig; len(rest) > 0; {
					n := min(len(rest), rng.IntN(3000))
					got = r.Process(got, rest[:n])
					rest = rest[n:]
				}
				got = r.Flush(got)
				if !slices.Equal(got, whole) {
					t.Fatalf("chunked output (%d samples) differs from whole (%d)", len(got), len(whole))
				}
				r.Reset()
			}
		})
	}
}

func TestResampleDCAndErrors(t *testing.T) {
	dc := make([]float32, 20000)
	for i := range dc {
		dc[i] = 0.5
	}
	got, err := Resample(dc, 44100, 16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 500; i < len(got)-500; i++ {
		if math.Abs(float64(got[i])-0.5) > 1e-4 {
			t.Fatalf("DC gain wrong at %d: %v", i, got[i])
		}
	}
	for _, bad := range [][3]int{{0, 16000, 1}, {16000, 0, 1}, {16000, 8000, 0}, {16000, 8000, 99}} {
		if _, err := NewResampler(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("NewResampler%v accepted", bad)
		}
	}
}

func TestMixToMono(t *testing.T) {
	tests := []struct {
		name string
		in   []float32
		ch   int
		want []float32
	}{
		{"mono copies", []float32{1, 2}, 1, []float32{1, 2}},
		{"stereo", []float32{1, 0, 0.5, -0.5, 1}, 2, []float32{0.5, 0}},
		{"three", []float32{0.3, 0.6, 0.9}, 3, []float32{0.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MixToMono(nil, tt.in, tt.ch)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if math.Abs(float64(got[i]-tt.want[i])) > 1e-6 {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// BenchmarkResample48kTo16k converts 60 s of 48 kHz mono speech-band noise
// to 16 kHz in 20 ms chunks and reports the fraction of real time used.
func BenchmarkResample48kTo16k(b *testing.B) {
	benchmarkResample(b, 48000, 16000)
}

func BenchmarkResample44kTo16k(b *testing.B) {
	benchmarkResample(b, 44100, 16000)
}

func BenchmarkResample16kTo48k(b *testing.B) {
	benchmarkResample(b, 16000, 48000)
}

func benchmarkResample(b *testing.B, in, out int) {
	rng := rand.New(rand.NewPCG(1, 1))
	sig := make([]float32, 60*in)
	for i := range sig {
		sig[i] = float32(rng.NormFloat64() * 0.1)
	}
	r, err := NewResampler(in, out, 1)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 0, 2*out/50+64)
	chunk := in / 50
	b.ReportAllocs()
	for b.Loop() {
		for s := sig; len(s) > 0; {
			n := min(chunk, len(s))
			dst = r.Process(dst[:0], s[:n])
			s = s[n:]
		}
		dst = r.Flush(dst[:0])
		r.Reset()
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perRun/60, "realtime-fraction")
}
