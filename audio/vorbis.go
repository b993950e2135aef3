package audio

import (
	"encoding/binary"
	"math"

	"github.com/jfreymuth/vorbis"
)

// vorbisPackets decodes Vorbis packets with github.com/jfreymuth/vorbis.
//
// That decoder trusts its headers: a setup header of a few bytes can ask it
// for terabytes (codebook sizes are multiplied unchecked, and reads past the
// end of a packet return zeros), and a comment header can declare four
// billion comments. So the identification and setup headers are validated
// here first, with the allocations they imply added up and capped, and the
// comment header is replaced by an empty one.
type vorbisPackets struct {
	dec      vorbis.Decoder
	rate     int
	channels int
	buf      []float32
}

// vorbisSetupBudget caps the memory the codebooks of a setup header may
// imply. Real encoders use well under a megabyte.
const vorbisSetupBudget = 32 << 20

// emptyVorbisComment is a valid comment header with no vendor and no
// comments, fed to the decoder in place of the real one.
var emptyVorbisComment = []byte("\x03vorbis\x00\x00\x00\x00\x00\x00\x00\x00\x01")

func (v *vorbisPackets) headerPackets() int { return 3 }

func (v *vorbisPackets) layout() (int, int) { return v.rate, v.channels }

func (v *vorbisPackets) trim() (int, int64) { return 0, 0 }

func (v *vorbisPackets) readHeader(i int, p []byte) (err error) {
	defer recoverUndecodable("Vorbis", &err)
	switch i {
	case 0:
		if err := checkVorbisID(p); err != nil {
			return err
		}
		if err := v.dec.ReadHeader(p); err != nil {
			return codecError("Vorbis identification header", err)
		}
		v.rate, v.channels = v.dec.SampleRate(), v.dec.Channels()
	case 1:
		if err := v.dec.ReadHeader(emptyVorbisComment); err != nil {
			return codecError("Vorbis comment header", err)
		}
	case 2:
		if err := checkVorbisSetup(p); err != nil {
			return err
		}
		if err := v.dec.ReadHeader(p); err != nil {
			return codecError("Vorbis setup header", err)
		}
		v.buf = make([]float32, v.dec.BufferSize())
	}
	return nil
}

func (v *vorbisPackets) decode(dst []float32, p []byte) (out []float32, err error) {
	defer recoverUndecodable("Vorbis", &err)
	s, err := v.dec.DecodeInto(p, v.buf)
	if err != nil {
		return dst, codecError("Vorbis", err)
	}
	return append(dst, s...), nil
}

// checkVorbisID validates an identification header against the Vorbis I
// specification (section 4.2.2), including the rule that block sizes are
// 64..8192, which bounds every buffer the decoder sizes from them.
func checkVorbisID(p []byte) error {
	if len(p) < 30 || string(p[:7]) != "\x01vorbis" {
		return undecodable("Vorbis identification header is truncated")
	}
	if v := binary.LittleEndian.Uint32(p[7:]); v != 0 {
		return undecodable("Vorbis version %d is not supported", v)
	}
	ch := int(p[11])
	rate := binary.LittleEndian.Uint32(p[12:])
	if rate > maxSampleRate {
		return undecodable("Vorbis sample rate %d Hz is out of range", rate)
	}
	if err := checkLayout(int(rate), ch); err != nil {
		return undecodable("Vorbis: %v", err)
	}
	b0, b1 := p[28]&0xF, p[28]>>4
	if b0 < 6 || b1 > 13 || b0 > b1 {
		return undecodable("Vorbis block sizes 2^%d and 2^%d are invalid", b0, b1)
	}
	if p[29]&1 == 0 {
		return undecodable("Vorbis identification header lacks its framing bit")
	}
	return nil
}

// checkVorbisSetup walks the codebooks of a setup header (Vorbis I spec
// section 3.2.1) and rejects it if they are truncated or would make the
// decoder allocate more than vorbisSetupBudget. The rest of the setup header
// only sizes small tables.
func checkVorbisSetup(p []byte) error {
	if len(p) < 8 || string(p[:7]) != "\x05vorbis" {
		return undecodable("Vorbis setup header is malformed")
	}
	r := lsbBits{data: p[7:]}
	books := r.read(8) + 1
	var cost uint64
	for range books {
		if r.read(24) != 0x564342 {
			return undecodable("Vorbis codebook lacks its sync pattern")
		}
		dims := uint64(r.read(16))
		entries := uint64(r.read(24))
		if entries == 0 {
			return undecodable("Vorbis codebook has no entries")
		}
		if r.read(1) == 0 { // not ordered
			sparse := r.read(1) == 1
			for i := uint64(0); i < entries && !r.eof(); i++ {
				if !sparse || r.read(1) == 1 {
					r.read(5)
				}
			}
		} else {
			length := r.read(5) + 1
			for cur := uint64(0); cur < entries; {
				num := uint64(r.read(ilog(entries - cur)))
				if r.eof() || length > 32 || cur+num > entries {
					return undecodable("Vorbis codebook lengths are corrupt")
				}
				cur += num
				length++
			}
		}
		// Huffman tree (two words per entry) plus its helper table.
		cost += entries*8 + entries/2
		switch lookup := r.read(4); lookup {
		case 0:
		case 1, 2:
			r.read(32)
			r.read(32)
			bits := uint64(r.read(4) + 1)
			r.read(1)
			if dims == 0 {
				return undecodable("Vorbis codebook has zero dimensions")
			}
			values := entries * dims
			if lookup == 1 {
				values = uint64(lookup1Values(entries, dims))
			}
			if values > uint64(len(p))*8 {
				return undecodable("Vorbis codebook is truncated")
			}
			r.skip(values * bits)
			cost += values*4 + entries*dims*4
		default:
			return undecodable("Vorbis codebook lookup type %d is invalid", lookup)
		}
		if r.eof() {
			return undecodable("Vorbis setup header is truncated")
		}
		if cost > vorbisSetupBudget {
			return undecodable("Vorbis codebooks are implausibly large")
		}
	}
	return nil
}

// lookup1Values is the largest r with r^dims <= entries (spec 9.2.3).
func lookup1Values(entries, dims uint64) uint64 {
	r := uint64(math.Floor(math.Pow(float64(entries), 1/float64(dims))))
	for r > 0 && pow(r, dims) > entries {
		r--
	}
	for pow(r+1, dims) <= entries {
		r++
	}
	return r
}

// pow returns b^e, saturating at 1<<62.
func pow(b, e uint64) uint64 {
	v := uint64(1)
	for range e {
		if b != 0 && v > (1<<62)/b {
			return 1 << 62
		}
		v *= b
	}
	return v
}

func ilog(x uint64) uint {
	n := uint(0)
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

// lsbBits reads a Vorbis bitstream: least significant bit first.
type lsbBits struct {
	data []byte
	pos  uint64 // bit position
}

func (r *lsbBits) eof() bool { return r.pos > uint64(len(r.data))*8 }

func (r *lsbBits) read(n uint) uint32 {
	var v uint32
	for i := uint(0); i < n; i++ {
		byteIdx := r.pos >> 3
		if byteIdx < uint64(len(r.data)) && r.data[byteIdx]>>(r.pos&7)&1 == 1 {
			v |= 1 << i
		}
		r.pos++
	}
	return v
}

func (r *lsbBits) skip(n uint64) { r.pos += n }
