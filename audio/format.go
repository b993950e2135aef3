package audio

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Encoding is a raw (uncontainerised) sample encoding, as named by the
// service's encoding query parameter.
type Encoding int

// The raw encodings of the service. EncodingNone, the zero value, means "no
// encoding given": the audio is containerised and its format is detected.
const (
	EncodingNone     Encoding = iota
	EncodingLinear16          // signed 16-bit little-endian PCM
	EncodingLinear32          // signed 32-bit little-endian PCM
	EncodingMulaw             // G.711 mu-law, 8 bits
	EncodingAlaw              // G.711 A-law, 8 bits
)

// ParseEncoding maps the service's names ("linear16", "linear32", "mulaw",
// "alaw") to an Encoding. The empty string is EncodingNone. Any other name is
// an error, so a misspelt parameter is caught rather than guessed.
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "":
		return EncodingNone, nil
	case "linear16":
		return EncodingLinear16, nil
	case "linear32":
		return EncodingLinear32, nil
	case "mulaw":
		return EncodingMulaw, nil
	case "alaw":
		return EncodingAlaw, nil
	}
	return EncodingNone, fmt.Errorf("audio: unknown raw encoding %q (want linear16, linear32, mulaw or alaw)", s)
}

// String returns the service's name for e, or "" for EncodingNone.
func (e Encoding) String() string {
	switch e {
	case EncodingNone:
		return ""
	case EncodingLinear16:
		return "linear16"
	case EncodingLinear32:
		return "linear32"
	case EncodingMulaw:
		return "mulaw"
	case EncodingAlaw:
		return "alaw"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// BytesPerSample returns the size of one sample of one channel, or 0 for
// EncodingNone and unknown values.
func (e Encoding) BytesPerSample() int {
	switch e {
	case EncodingLinear16:
		return 2
	case EncodingLinear32:
		return 4
	case EncodingMulaw, EncodingAlaw:
		return 1
	}
	return 0
}

// Format describes raw PCM: how samples are encoded, how many per second per
// channel, and how many interleaved channels.
type Format struct {
	Encoding   Encoding
	SampleRate int
	Channels   int
}

// Validate reports whether f describes raw PCM this package can handle.
func (f Format) Validate() error {
	if f.Encoding.BytesPerSample() == 0 {
		return fmt.Errorf("audio: format needs a raw encoding, got %q", f.Encoding)
	}
	if err := checkLayout(f.SampleRate, f.Channels); err != nil {
		return fmt.Errorf("audio: %w", err)
	}
	return nil
}

// FrameSize returns the bytes in one frame (one sample of every channel).
func (f Format) FrameSize() int { return f.Encoding.BytesPerSample() * f.Channels }

// DecodePCM appends to dst the len(src)/e.BytesPerSample() samples encoded
// in src as float32 with full scale at +-1, and returns the extended slice.
// A trailing partial sample is ignored; callers that receive arbitrary
// chunks keep it for the next call (StreamDecoder does). EncodingNone
// decodes nothing.
func DecodePCM(dst []float32, src []byte, e Encoding) []float32 {
	c := codecOf(e)
	if c == 0 {
		return dst
	}
	return decodeSamples(dst, src[:len(src)-len(src)%c.size()], c)
}

// EncodePCM appends src encoded as e to dst and returns the extended slice.
// Samples are rounded to the nearest step and clipped to the encoding's
// range. EncodingNone encodes nothing.
func EncodePCM(dst []byte, src []float32, e Encoding) []byte {
	bps := e.BytesPerSample()
	dst, out := growBytes(dst, bps*len(src))
	switch e {
	case EncodingLinear16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(floatToInt16(v)))
		}
	case EncodingLinear32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(floatToInt32(v)))
		}
	case EncodingMulaw:
		for i, v := range src {
			out[i] = MulawEncode(floatToInt16(v))
		}
	case EncodingAlaw:
		for i, v := range src {
			out[i] = AlawEncode(floatToInt16(v))
		}
	}
	return dst
}

// Int16ToFloat32 appends src scaled to [-1, 1) (divided by 32768) to dst.
// The conversion is exact and Float32ToInt16 inverts it exactly.
func Int16ToFloat32(dst []float32, src []int16) []float32 {
	dst, out := grow(dst, len(src))
	for i, v := range src {
		out[i] = float32(v) * (1.0 / 32768)
	}
	return dst
}

// Float32ToInt16 appends src scaled by 32768, rounded to nearest and clipped
// to [-32768, 32767], to dst.
func Float32ToInt16(dst []int16, src []float32) []int16 {
	n := len(dst)
	if cap(dst)-n < len(src) {
		dst = append(dst, make([]int16, len(src))...)
	} else {
		dst = dst[:n+len(src)]
	}
	out := dst[n:]
	for i, v := range src {
		out[i] = floatToInt16(v)
	}
	return dst
}

// Int16ToBytes appends src as linear16 (little-endian) bytes to dst.
func Int16ToBytes(dst []byte, src []int16) []byte {
	dst, out := growBytes(dst, 2*len(src))
	for i, v := range src {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
	}
	return dst
}

// BytesToInt16 appends the len(src)/2 linear16 (little-endian) samples in src
// to dst; a trailing odd byte is ignored.
func BytesToInt16(dst []int16, src []byte) []int16 {
	n := len(src) / 2
	m := len(dst)
	if cap(dst)-m < n {
		dst = append(dst, make([]int16, n)...)
	} else {
		dst = dst[:m+n]
	}
	out := dst[m:]
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(src[2*i:]))
	}
	return dst
}

func floatToInt16(v float32) int16 {
	x := math.Round(float64(v) * 32768)
	switch {
	case x >= 32767:
		return 32767
	case x <= -32768:
		return -32768
	case x != x: // NaN
		return 0
	}
	return int16(x)
}

func floatToInt32(v float32) int32 {
	x := math.Round(float64(v) * 2147483648)
	switch {
	case x >= 2147483647:
		return 2147483647
	case x <= -2147483648:
		return -2147483648
	case x != x:
		return 0
	}
	return int32(x)
}

// grow extends dst by n elements and returns the extended slice and the new
// tail, reusing spare capacity when there is enough.
func grow(dst []float32, n int) (all, tail []float32) {
	m := len(dst)
	if cap(dst)-m < n {
		dst = append(dst[:m:m], make([]float32, n)...)
	} else {
		dst = dst[:m+n]
	}
	return dst, dst[m:]
}

func growBytes(dst []byte, n int) (all, tail []byte) {
	m := len(dst)
	if cap(dst)-m < n {
		dst = append(dst[:m:m], make([]byte, n)...)
	} else {
		dst = dst[:m+n]
	}
	return dst, dst[m:]
}
