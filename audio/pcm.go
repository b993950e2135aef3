package audio

import (
	"encoding/binary"
	"math"
)

// sampleCodec is one way of storing a PCM sample: everything raw streams and
// WAV files use.
type sampleCodec int

const (
	codecU8 sampleCodec = iota + 1
	codecS16
	codecS24
	codecS32
	codecF32
	codecF64
	codecMulaw
	codecAlaw
)

func (c sampleCodec) size() int {
	switch c {
	case codecU8, codecMulaw, codecAlaw:
		return 1
	case codecS16:
		return 2
	case codecS24:
		return 3
	case codecS32, codecF32:
		return 4
	case codecF64:
		return 8
	}
	return 0
}

func codecOf(e Encoding) sampleCodec {
	switch e {
	case EncodingLinear16:
		return codecS16
	case EncodingLinear32:
		return codecS32
	case EncodingMulaw:
		return codecMulaw
	case EncodingAlaw:
		return codecAlaw
	}
	return 0
}

// decodeSamples appends the samples in src (whole samples only) to dst.
func decodeSamples(dst []float32, src []byte, c sampleCodec) []float32 {
	n := len(src) / c.size()
	dst, out := grow(dst, n)
	switch c {
	case codecU8:
		for i := range out {
			out[i] = float32(int(src[i])-128) * (1.0 / 128)
		}
	case codecS16:
		for i := range out {
			out[i] = float32(int16(binary.LittleEndian.Uint16(src[2*i:]))) * (1.0 / 32768)
		}
	case codecS24:
		for i := range out {
			b := src[3*i : 3*i+3]
			v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			out[i] = float32(v) * (1.0 / 8388608)
		}
	case codecS32:
		for i := range out {
			out[i] = float32(float64(int32(binary.LittleEndian.Uint32(src[4*i:]))) * (1.0 / 2147483648))
		}
	case codecF32:
		for i := range out {
			out[i] = sanitize(math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:])))
		}
	case codecF64:
		for i := range out {
			out[i] = sanitize(float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))))
		}
	case codecMulaw:
		for i := range out {
			out[i] = mulawFloat[src[i]]
		}
	case codecAlaw:
		for i := range out {
			out[i] = alawFloat[src[i]]
		}
	}
	return dst
}

// sanitize keeps NaN and infinities in float input from poisoning the
// resampler and every sample after them.
func sanitize(v float32) float32 {
	switch {
	case v != v:
		return 0
	case v > 1e6:
		return 1e6
	case v < -1e6:
		return -1e6
	}
	return v
}

// pcmStream decodes interleaved PCM that arrives in arbitrary chunks. It
// keeps a partial frame between calls so that every call returns whole
// frames.
type pcmStream struct {
	codec     sampleCodec
	frameSize int
	carry     []byte // a partial frame, len < frameSize
}

func newPCMStream(c sampleCodec, channels int) pcmStream {
	fs := c.size() * channels
	return pcmStream{codec: c, frameSize: fs, carry: make([]byte, 0, fs)}
}

func (s *pcmStream) decode(dst []float32, p []byte) []float32 {
	if len(s.carry) > 0 {
		take := min(s.frameSize-len(s.carry), len(p))
		s.carry = append(s.carry, p[:take]...)
		p = p[take:]
		if len(s.carry) < s.frameSize {
			return dst
		}
		dst = decodeSamples(dst, s.carry, s.codec)
		s.carry = s.carry[:0]
	}
	n := len(p) - len(p)%s.frameSize
	dst = decodeSamples(dst, p[:n], s.codec)
	s.carry = append(s.carry, p[n:]...)
	return dst
}
