package audio

import (
	"encoding/binary"
	"math"
)

// opusRate is the rate Opus streams are decoded at: Opus always runs at 48
// kHz internally, and pre-skip and granule positions count 48 kHz samples.
const opusRate = 48000

// opusMaxFrames is the longest packet Opus allows: 120 ms at 48 kHz.
const opusMaxFrames = 5760

// opusDecoder decodes one Opus packet into interleaved float32 samples;
// newOpusDecoder makes one with libopus, in the builds that have it.
type opusDecoder interface {
	DecodeFloat32(packet []byte, pcm []float32) (int, error)
}

// opusPackets decodes Ogg Opus (RFC 7845) packets with libopus through
// gopkg.in/hraban/opus.v2 (libopus.go). Mono and stereo streams (channel mapping family 0,
// or family 1 with one stream) are supported; surround streams need the
// multistream decoder, which that binding does not offer.
type opusPackets struct {
	dec      opusDecoder
	channels int
	preSkip  int
	gain     float32 // linear output gain from the header, 1 when none
	buf      []float32
}

func (o *opusPackets) headerPackets() int { return 2 }

func (o *opusPackets) layout() (int, int) { return opusRate, o.channels }

func (o *opusPackets) trim() (int, int64) { return o.preSkip, int64(o.preSkip) }

func (o *opusPackets) readHeader(i int, p []byte) error {
	if i != 0 {
		return nil // OpusTags: nothing needed from it
	}
	if len(p) < 19 || string(p[:8]) != "OpusHead" {
		return undecodable("Opus header is truncated")
	}
	if p[8]>>4 != 0 {
		return undecodable("Opus header version %d is not supported", p[8])
	}
	ch := int(p[9])
	o.preSkip = int(binary.LittleEndian.Uint16(p[10:]))
	gainQ8 := int16(binary.LittleEndian.Uint16(p[16:]))
	family := p[18]
	switch {
	case ch == 0:
		return undecodable("Opus header declares no channels")
	case family == 0 && ch <= 2:
	case family == 1 && ch <= 2 && opusSimpleMapping(p[19:], ch):
	default:
		return undecodable("Opus with %d channels (mapping family %d) is not supported, only mono and stereo", ch, family)
	}
	dec, err := newOpusDecoder(opusRate, ch)
	if err != nil {
		return codecError("Opus", err)
	}
	o.dec, o.channels = dec, ch
	o.gain = float32(math.Pow(10, float64(gainQ8)/(20*256)))
	o.buf = make([]float32, opusMaxFrames*ch)
	return nil
}

// opusSimpleMapping reports whether a family-1 channel mapping table
// describes one plain mono or stereo stream, which the single-stream decoder
// can handle.
func opusSimpleMapping(t []byte, ch int) bool {
	if len(t) < 2+ch || t[0] != 1 {
		return false
	}
	if ch == 1 {
		return t[1] == 0 && t[2] == 0
	}
	return t[1] == 1 && t[2] == 0 && t[3] == 1
}

func (o *opusPackets) decode(dst []float32, p []byte) (out []float32, err error) {
	defer recoverUndecodable("Opus", &err)
	n, err := o.dec.DecodeFloat32(p, o.buf)
	if err != nil {
		return dst, codecError("Opus", err)
	}
	s := o.buf[:n*o.channels]
	if o.gain != 1 {
		for i := range s {
			s[i] *= o.gain
		}
	}
	return append(dst, s...), nil
}
