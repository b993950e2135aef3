package diarize

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func TestFFTMatchesDFT(t *testing.T) {
	for _, n := range []int{2, 8, 64, fftSize} {
		t.Run("", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			x := make([]complex128, n)
			for i := range x {
				x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
			}
			got := append([]complex128(nil), x...)
			newFFT(n).transform(got)
			for k := range n {
				var want complex128
				for j := range n {
					want += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
				}
				if cmplx.Abs(got[k]-want) > 1e-9*float64(n) {
					t.Fatalf("n=%d bin %d: got %v, want %v", n, k, got[k], want)
				}
			}
		})
	}
}

func TestMelScale(t *testing.T) {
	tests := []struct{ hz, mel float64 }{
		{0, 0},
		{700, 1127 * math.Log(2)},
		{1000, 1000}, // the mel scale is anchored at 1000 mel = 1 kHz
	}
	for _, tt := range tests {
		if got := hzToMel(tt.hz); math.Abs(got-tt.mel) > 0.5 {
			t.Errorf("hzToMel(%v) = %v, want %v", tt.hz, got, tt.mel)
		}
		if got := melToHz(hzToMel(tt.hz)); math.Abs(got-tt.hz) > 1e-9 {
			t.Errorf("melToHz(hzToMel(%v)) = %v", tt.hz, got)
		}
	}
}

func TestMelFilterbank(t *testing.T) {
	fb := melFilterbank(numMel, fftSize, SampleRate, melLowHz, melHighHz)
	if len(fb) != numMel {
		t.Fatalf("%d filters, want %d", len(fb), numMel)
	}
	binHz := float64(SampleRate) / fftSize
	prevPeak := -1.0
	for i, f := range fb {
		if len(f.weights) == 0 {
			t.Fatalf("filter %d is empty", i)
		}
		peak, at := 0.0, 0
		for j, w := range f.weights {
			if w < 0 || w > 1 {
				t.Fatalf("filter %d weight %v outside [0, 1]", i, w)
			}
			if w > peak {
				peak, at = w, j
			}
		}
		hz := float64(f.first+at) * binHz
		if hz <= prevPeak {
			t.Errorf("filter %d peaks at %v Hz, not above the previous %v Hz", i, hz, prevPeak)
		}
		prevPeak = hz
		if lo, hi := float64(f.first)*binHz, float64(f.first+len(f.weights)-1)*binHz; lo < melLowHz || hi > melHighHz {
			t.Errorf("filter %d spans %v..%v Hz, outside %v..%v", i, lo, hi, melLowHz, melHighHz)
		}
	}
	// Between the first and last centres, neighbouring triangles sum to 1.
	sum := make([]float64, fftSize/2+1)
	for _, f := range fb {
		for j, w := range f.weights {
			sum[f.first+j] += w
		}
	}
	for b := 20; b < 220; b++ { // 625 Hz to 6.9 kHz
		if math.Abs(sum[b]-1) > 1e-9 {
			t.Fatalf("bin %d (%v Hz): filters sum to %v, want 1", b, float64(b)*binHz, sum[b])
		}
	}
}

func TestDCTOrthonormal(t *testing.T) {
	m := newMFCC()
	for a := range numCeps {
		for b := range numCeps {
			var dot float64
			for j := range numMel {
				dot += m.dct[a][j] * m.dct[b][j]
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if math.Abs(dot-want) > 1e-12 {
				t.Fatalf("row %d · row %d = %v, want %v", a, b, dot, want)
			}
		}
	}
}

// tone is amplitude·sin(2πft) sampled at 16 kHz.
func tone(hz, amplitude float64, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(amplitude * math.Sin(2*math.Pi*hz*float64(i)/SampleRate))
	}
	return out
}

func TestMFCCToneEnergyInItsBand(t *testing.T) {
	m := newMFCC()
	var c [numCeps]float64
	for _, hz := range []float64{300, 1000, 2500, 5000} {
		t.Run("", func(t *testing.T) {
			m.frame(tone(hz, 0.5, 2*frameLen), frameLen/2, c[:])
			best := 0
			for i := range m.logMel {
				if m.logMel[i] > m.logMel[best] {
					best = i
				}
			}
			// The loudest band is the one whose centre is nearest the tone.
			near, nearDist := 0, math.Inf(1)
			lo, hi := hzToMel(melLowHz), hzToMel(melHighHz)
			for i := range numMel {
				centre := melToHz(lo + (hi-lo)*float64(i+1)/float64(numMel+1))
				if d := math.Abs(centre - hz); d < nearDist {
					near, nearDist = i, d
				}
			}
			if abs(best-near) > 1 {
				t.Errorf("%v Hz: loudest band %d, want %d (±1)", hz, best, near)
			}
		})
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// A gain multiplies every band's energy alike, which adds a constant to
// the log-mel vector: only c0 changes, by sqrt(numMel)·log(gain²).
func TestMFCCGainOnlyMovesC0(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, 4*frameLen)
	for i := range x {
		x[i] = float32(0.1 * rng.NormFloat64())
	}
	y := make([]float32, len(x))
	for i := range x {
		y[i] = 4 * x[i]
	}
	m := newMFCC()
	var a, b [numCeps]float64
	m.frame(x, frameLen, a[:])
	m.frame(y, frameLen, b[:])
	if want := math.Sqrt(numMel) * math.Log(16); math.Abs(b[0]-a[0]-want) > 1e-6 {
		t.Errorf("c0 moved by %v, want %v", b[0]-a[0], want)
	}
	for k := 1; k < numCeps; k++ {
		if math.Abs(a[k]-b[k]) > 1e-6 {
			t.Errorf("c%d changed with gain: %v -> %v", k, a[k], b[k])
		}
	}
}

func TestMFCCSilenceIsFinite(t *testing.T) {
	m := newMFCC()
	var c [numCeps]float64
	m.frame(make([]float32, frameLen), 0, c[:])
	for k, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("c%d = %v on digital silence", k, v)
		}
	}
}

// c1 measures spectral tilt: the first DCT row weighs low bands positively
// and high bands negatively, so a low tone gives a positive c1 and a high
// tone a negative one.
func TestMFCCTiltFollowsSpectrum(t *testing.T) {
	low := tone(200, 0.5, 2*frameLen)
	high := tone(5000, 0.5, 2*frameLen)
	m := newMFCC()
	var a, b [numCeps]float64
	m.frame(low, frameLen/2, a[:])
	m.frame(high, frameLen/2, b[:])
	if !(a[1] > 0 && b[1] < 0) {
		t.Errorf("c1 = %v for 200 Hz and %v for 5 kHz; want positive then negative", a[1], b[1])
	}
}

func TestFrameRange(t *testing.T) {
	tests := []struct {
		name       string
		start, end float64
		total      int
		lo, hi     int
	}{
		// Frame f is centred at (160f + 200)/16000 s: 0.0125 s, 0.0225 s, ...
		{"first frames", 0, 0.03, 100, 0, 2},
		{"one second", 1, 2, 1000, 99, 199},
		{"clamped to audio", 0.5, 10, 60, 49, 60},
		{"after audio", 5, 6, 60, 60, 60},
		{"negative start", -1, 0.03, 100, 0, 2},
		{"empty", 1, 1, 1000, 0, 0},
		{"reversed", 2, 1, 1000, 0, 0},
		{"nan", math.NaN(), 1, 1000, 0, 0},
		{"infinite end", 0, math.Inf(1), 50, 0, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := frameRange(tt.start, tt.end, tt.total)
			if lo != tt.lo || hi != tt.hi {
				t.Errorf("frameRange(%v, %v, %d) = %d, %d; want %d, %d", tt.start, tt.end, tt.total, lo, hi, tt.lo, tt.hi)
			}
		})
	}
	for _, n := range []struct{ samples, frames int }{{0, 0}, {399, 0}, {400, 1}, {559, 1}, {560, 2}, {16000, 98}} {
		if got := numFrames(n.samples); got != n.frames {
			t.Errorf("numFrames(%d) = %d, want %d", n.samples, got, n.frames)
		}
	}
}

func BenchmarkMFCCFrame(b *testing.B) {
	m := newMFCC()
	x := tone(440, 0.3, 2*frameLen)
	var c [numCeps]float64
	for b.Loop() {
		m.frame(x, frameLen/2, c[:])
	}
}
