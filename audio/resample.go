package audio

import (
	"fmt"
	"math"
	"sync"
)

// Resampling by band-limited interpolation with a Kaiser-windowed sinc
// (polyphase when the rate ratio reduces to at most maxExactPhases phases,
// which covers every pair of the usual rates).
//
// Output sample n sits exactly at input time n*inRate/outRate (kept as an
// exact fraction), so the output has no delay, its length is
// ceil(frames*outRate/inRate), and it does not depend on how the input was
// chunked: each output is computed only once all the input it needs has
// arrived, from the same samples in the same order.
//
// The filter is designed for 90 dB of stopband attenuation. Its passband
// reaches 90% of the lower of the two Nyquist frequencies and its stopband
// starts at that Nyquist frequency, so nothing above the output's Nyquist
// frequency aliases into the output.
const (
	resampleAtten      = 90.0 // dB
	resamplePassband   = 0.90 // passband edge, fraction of the lower Nyquist
	maxExactPhases     = 1024
	interpolatedPhases = 512
)

// kernel is an immutable table of filter coefficients, shared by every
// Resampler with the same reduced rate ratio.
type kernel struct {
	width  int // taps per output sample (even)
	phases int // rows in coef (plus one extra row when interpolated)
	exact  bool
	coef   []float32
}

var kernels struct {
	sync.Mutex
	m map[[2]int64]*kernel
}

func kernelFor(up, down int64) *kernel {
	kernels.Lock()
	defer kernels.Unlock()
	key := [2]int64{up, down}
	if k, ok := kernels.m[key]; ok {
		return k
	}
	if kernels.m == nil {
		kernels.m = make(map[[2]int64]*kernel)
	}
	k := newKernel(up, down)
	kernels.m[key] = k
	return k
}

func newKernel(up, down int64) *kernel {
	ratio := math.Min(1, float64(up)/float64(down)) // output/input bandwidth
	nyq := 0.5 * ratio                              // lower Nyquist, cycles per input sample
	fc := nyq * (1 + resamplePassband) / 2          // -6 dB point, mid transition band
	transition := nyq * (1 - resamplePassband)
	n := (resampleAtten - 7.95) / (2.285 * 2 * math.Pi * transition)
	half := int(math.Ceil(n/2)) + 1
	beta := 0.1102 * (resampleAtten - 8.7)
	i0beta := besselI0(beta)

	k := &kernel{width: 2 * half}
	rows := int(up)
	if up > maxExactPhases {
		rows = interpolatedPhases
	} else {
		k.exact = true
	}
	k.phases = rows
	k.coef = make([]float32, (rows+1)*k.width)
	for p := 0; p <= rows; p++ {
		frac := float64(p) / float64(rows)
		row := k.coef[p*k.width : (p+1)*k.width]
		for j := range row {
			d := frac + float64(half-1-j) // distance from the output instant
			x := d / float64(half)
			if x <= -1 || x >= 1 {
				continue
			}
			w := besselI0(beta*math.Sqrt(1-x*x)) / i0beta
			row[j] = float32(2 * fc * sinc(2*fc*d) * w)
		}
	}
	return k
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the modified Bessel function of the first kind, order zero.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 200; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// Resampler converts interleaved audio from one sample rate to another,
// statefully, for streaming. Output is identical however the input is cut
// into chunks. A Resampler is not safe for concurrent use.
type Resampler struct {
	channels int
	up, down int64 // outRate/g and inRate/g
	k        *kernel
	half     int

	hist    [][]float32 // per channel: input from absolute index base on
	base    int64
	in      int64 // input frames received
	n       int64 // next output frame
	partial []float32
	flushed bool
}

// NewResampler returns a resampler from inRate to outRate for interleaved
// audio of the given channel count. Rates are in Hz, 1000..768000.
func NewResampler(inRate, outRate, channels int) (*Resampler, error) {
	if err := checkLayout(inRate, channels); err != nil {
		return nil, fmt.Errorf("audio: resampler: input %w", err)
	}
	if err := checkLayout(outRate, channels); err != nil {
		return nil, fmt.Errorf("audio: resampler: output %w", err)
	}
	g := gcd(int64(inRate), int64(outRate))
	r := &Resampler{channels: channels, up: int64(outRate) / g, down: int64(inRate) / g}
	if r.up != r.down {
		r.k = kernelFor(r.up, r.down)
		r.half = r.k.width / 2
	}
	r.Reset()
	return r, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Reset forgets all input, as if the resampler were new.
func (r *Resampler) Reset() {
	if r.hist == nil {
		r.hist = make([][]float32, r.channels)
	}
	for c := range r.hist {
		// Half a filter of zeros before the first sample lets output 0 be
		// centred on input 0.
		r.hist[c] = append(r.hist[c][:0], make([]float32, max(r.half-1, 0))...)
	}
	r.base = -int64(max(r.half-1, 0))
	r.in, r.n = 0, 0
	r.partial = r.partial[:0]
	r.flushed = false
}

// Process appends to dst the output made possible by src (interleaved; a
// trailing partial frame is kept for the next call) and returns it. After
// Flush, Process starts a new stream only after Reset; until then it
// returns dst unchanged.
func (r *Resampler) Process(dst, src []float32) []float32 {
	if r.flushed {
		return dst
	}
	ch := r.channels
	if len(r.partial) > 0 {
		take := min(ch-len(r.partial), len(src))
		r.partial = append(r.partial, src[:take]...)
		src = src[take:]
		if len(r.partial) < ch {
			return dst
		}
		dst = r.process(dst, r.partial)
		r.partial = r.partial[:0]
	}
	whole := len(src) - len(src)%ch
	dst = r.process(dst, src[:whole])
	r.partial = append(r.partial, src[whole:]...)
	return dst
}

func (r *Resampler) process(dst, src []float32) []float32 {
	if len(src) == 0 {
		return dst
	}
	if r.k == nil { // same rate
		return append(dst, src...)
	}
	ch := r.channels
	frames := len(src) / ch
	if ch == 1 {
		r.hist[0] = append(r.hist[0], src...)
	} else {
		for c := range r.hist {
			h, tail := grow(r.hist[c], frames)
			for i := range tail {
				tail[i] = src[i*ch+c]
			}
			r.hist[c] = h
		}
	}
	r.in += int64(frames)
	return r.produce(dst, r.in-1)
}

// produce computes every output whose input window ends at or before
// absolute input index last, then drops input no longer needed.
func (r *Resampler) produce(dst []float32, last int64) []float32 {
	k, half, ch := r.k, r.half, r.channels
	w := k.width
	for {
		num := r.n * r.down
		i := num / r.up
		if i+int64(half) > last {
			break
		}
		start := int(i - int64(half) + 1 - r.base)
		rem := num % r.up
		var row, next []float32
		var a float32
		if k.exact {
			row = k.coef[int(rem)*w : int(rem+1)*w]
		} else {
			pos := float64(rem) / float64(r.up) * float64(k.phases)
			p := int(pos)
			a = float32(pos - float64(p))
			row = k.coef[p*w : (p+1)*w]
			next = k.coef[(p+1)*w : (p+2)*w]
		}
		for c := 0; c < ch; c++ {
			x := r.hist[c][start : start+w]
			v := dot(x, row)
			if next != nil {
				v += a * (dot(x, next) - v)
			}
			dst = append(dst, v)
		}
		r.n++
	}
	// Keep input from the first sample the next output needs.
	keep := (r.n*r.down)/r.up - int64(half) + 1
	if drop := int(keep - r.base); drop > 4096 && drop > len(r.hist[0])/2 {
		for c := range r.hist {
			r.hist[c] = append(r.hist[c][:0], r.hist[c][drop:]...)
		}
		r.base += int64(drop)
	}
	return dst
}

// dot is the inner product of two equally long slices, with four
// accumulators so the additions pipeline.
func dot(x, h []float32) float32 {
	x = x[:len(h)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(h); i += 4 {
		s0 += x[i] * h[i]
		s1 += x[i+1] * h[i+1]
		s2 += x[i+2] * h[i+2]
		s3 += x[i+3] * h[i+3]
	}
	for ; i < len(h); i++ {
		s0 += x[i] * h[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Flush appends the output still owed for the input so far (the stream's
// tail, which needed input from beyond its end: zeros) and returns it. The
// total output is then ceil(inputFrames*outRate/inRate) frames. Call Reset
// to start a new stream.
func (r *Resampler) Flush(dst []float32) []float32 {
	if r.flushed || r.k == nil {
		r.flushed = true
		return dst
	}
	r.flushed = true
	for c := range r.hist {
		r.hist[c], _ = grow(r.hist[c], r.half+1)
		clear(r.hist[c][len(r.hist[c])-r.half-1:])
	}
	total := (r.in*r.up + r.down - 1) / r.down
	for r.n < total {
		before := r.n
		dst = r.produce(dst, r.in+int64(r.half))
		if r.n == before {
			break
		}
	}
	if over := r.n - total; over > 0 {
		dst = dst[:len(dst)-int(over)*r.channels]
		r.n = total
	}
	return dst
}

// Resample converts a whole interleaved signal from inRate to outRate.
func Resample(samples []float32, inRate, outRate, channels int) ([]float32, error) {
	r, err := NewResampler(inRate, outRate, channels)
	if err != nil {
		return nil, err
	}
	est := int64(len(samples))*int64(outRate)/int64(inRate) + int64(channels)
	out := make([]float32, 0, est)
	out = r.Process(out, samples)
	return r.Flush(out), nil
}

// MixToMono appends to dst the average of each frame of the interleaved src
// and returns it; a trailing partial frame is ignored. With one channel it
// copies.
func MixToMono(dst, src []float32, channels int) []float32 {
	if channels <= 1 {
		return append(dst, src...)
	}
	frames := len(src) / channels
	dst, out := grow(dst, frames)
	scale := 1 / float32(channels)
	if channels == 2 {
		for i := range out {
			out[i] = (src[2*i] + src[2*i+1]) * 0.5
		}
		return dst
	}
	for i := range out {
		var s float32
		for _, v := range src[i*channels : (i+1)*channels] {
			s += v
		}
		out[i] = s * scale
	}
	return dst
}
