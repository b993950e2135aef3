package diarize

import (
	"math"
	"math/cmplx"
)

// Front-end constants. They follow the common speech front end (HTK and
// Kaldi use the same values): 25 ms Hamming frames every 10 ms, a 512-point
// FFT, 40 triangular mel filters between 20 Hz and 7.6 kHz, and 20 cepstra.
const (
	// SampleRate is the only sample rate the diariser accepts, in Hz.
	SampleRate = 16000

	frameLen    = 400 // 25 ms
	frameHop    = 160 // 10 ms
	fftSize     = 512
	numMel      = 40
	numCeps     = 20
	melLowHz    = 20.0
	melHighHz   = 7600.0
	preEmphasis = 0.97
	// logFloor keeps the log of an empty (digital silence) band finite.
	logFloor = 1e-10
)

// hzToMel converts a frequency to the mel scale (O'Shaughnessy's formula,
// the one HTK uses).
func hzToMel(hz float64) float64 { return 1127 * math.Log(1+hz/700) }

// melToHz is the inverse of hzToMel.
func melToHz(mel float64) float64 { return 700 * (math.Exp(mel/1127) - 1) }

// fft is a precomputed radix-2 complex FFT of one fixed size.
type fft struct {
	n       int
	twiddle []complex128 // exp(-2πik/n) for k < n/2
	rev     []int        // bit-reversal permutation
}

func newFFT(n int) *fft {
	bits := 0
	for 1<<bits < n {
		bits++
	}
	f := &fft{n: n, twiddle: make([]complex128, n/2), rev: make([]int, n)}
	for k := range f.twiddle {
		f.twiddle[k] = cmplx.Exp(complex(0, -2*math.Pi*float64(k)/float64(n)))
	}
	for i := range f.rev {
		r := 0
		for b := 0; b < bits; b++ {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		f.rev[i] = r
	}
	return f
}

// transform computes the forward DFT of x in place; len(x) must be f.n.
func (f *fft) transform(x []complex128) {
	for i, r := range f.rev {
		if i < r {
			x[i], x[r] = x[r], x[i]
		}
	}
	for size := 2; size <= f.n; size <<= 1 {
		half := size / 2
		step := f.n / size
		for start := 0; start < f.n; start += size {
			for k := 0; k < half; k++ {
				t := f.twiddle[k*step] * x[start+k+half]
				u := x[start+k]
				x[start+k] = u + t
				x[start+k+half] = u - t
			}
		}
	}
}

// melFilter is one triangular filter over the power spectrum bins
// [first, first+len(weights)).
type melFilter struct {
	first   int
	weights []float64
}

// mfcc turns 16 kHz samples into mel-frequency cepstral coefficients. It
// holds scratch buffers, so one value must not be used by two goroutines at
// once; create one per call.
type mfcc struct {
	window  []float64
	filters []melFilter
	dct     [][]float64 // numCeps x numMel, orthonormal DCT-II rows
	fft     *fft
	buf     []complex128
	power   []float64
	logMel  []float64
}

func newMFCC() *mfcc {
	m := &mfcc{
		window: make([]float64, frameLen),
		fft:    newFFT(fftSize),
		buf:    make([]complex128, fftSize),
		power:  make([]float64, fftSize/2+1),
		logMel: make([]float64, numMel),
	}
	for i := range m.window {
		m.window[i] = 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(frameLen-1))
	}
	m.filters = melFilterbank(numMel, fftSize, SampleRate, melLowHz, melHighHz)
	m.dct = make([][]float64, numCeps)
	for k := range m.dct {
		row := make([]float64, numMel)
		scale := math.Sqrt(2 / float64(numMel))
		if k == 0 {
			scale = math.Sqrt(1 / float64(numMel))
		}
		for j := range row {
			row[j] = scale * math.Cos(math.Pi*float64(k)*(float64(j)+0.5)/float64(numMel))
		}
		m.dct[k] = row
	}
	return m
}

// melFilterbank builds n triangular filters equally spaced in mel between
// lowHz and highHz over the bins of a size-point FFT at rate Hz. Each
// filter peaks at 1 at its centre frequency.
func melFilterbank(n, size, rate int, lowHz, highHz float64) []melFilter {
	lo, hi := hzToMel(lowHz), hzToMel(highHz)
	edges := make([]float64, n+2) // in Hz
	for i := range edges {
		edges[i] = melToHz(lo + (hi-lo)*float64(i)/float64(n+1))
	}
	binHz := float64(rate) / float64(size)
	filters := make([]melFilter, n)
	for i := range filters {
		left, centre, right := edges[i], edges[i+1], edges[i+2]
		first := int(math.Ceil(left / binHz))
		var w []float64
		for b := first; float64(b)*binHz < right && b <= size/2; b++ {
			f := float64(b) * binHz
			var v float64
			if f <= centre {
				v = (f - left) / (centre - left)
			} else {
				v = (right - f) / (right - centre)
			}
			w = append(w, math.Max(v, 0))
		}
		filters[i] = melFilter{first: first, weights: w}
	}
	return filters
}

// numFrames is the number of whole frames in n samples.
func numFrames(n int) int {
	if n < frameLen {
		return 0
	}
	return 1 + (n-frameLen)/frameHop
}

// frame computes the cepstra of the frame starting at sample start of
// samples into out (length numCeps). The sample before start, when there is
// one, feeds the pre-emphasis so that framing a long signal equals
// pre-emphasising it first.
func (m *mfcc) frame(samples []float32, start int, out []float64) {
	seg := samples[start : start+frameLen]
	var mean float64
	for _, s := range seg {
		mean += float64(s)
	}
	mean /= frameLen
	prev := float64(seg[0])
	if start > 0 {
		prev = float64(samples[start-1])
	}
	prev -= mean
	for i, s := range seg {
		cur := float64(s) - mean
		m.buf[i] = complex((cur-preEmphasis*prev)*m.window[i], 0)
		prev = cur
	}
	for i := frameLen; i < fftSize; i++ {
		m.buf[i] = 0
	}
	m.fft.transform(m.buf)
	for i := range m.power {
		c := m.buf[i]
		m.power[i] = real(c)*real(c) + imag(c)*imag(c)
	}
	for i, f := range m.filters {
		var e float64
		for j, w := range f.weights {
			e += w * m.power[f.first+j]
		}
		m.logMel[i] = math.Log(math.Max(e, logFloor))
	}
	for k, row := range m.dct {
		var c float64
		for j, w := range row {
			c += w * m.logMel[j]
		}
		out[k] = c
	}
}
