package audio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"gopkg.in/hraban/opus.v2"
)

// Ogg Opus output (RFC 7845): libopus through gopkg.in/hraban/opus.v2
// encodes 20 ms packets of mono 48 kHz audio, and the muxer below frames
// them in Ogg pages.

const (
	// opusFrame is the packet duration in samples at 48 kHz: 20 ms, the
	// usual choice for speech.
	opusFrame = 960
	// opusPreSkip is the encoder's look-ahead at 48 kHz (2.5 ms of analysis
	// plus 4 ms of delay compensation, libopus's value for every
	// application mode), which decoders drop from the start. The binding
	// offers no OPUS_GET_LOOKAHEAD, so the constant is used.
	opusPreSkip = 312
	// opusMaxPacket bounds one encoded packet; libopus never needs more
	// than 1275 bytes per frame.
	opusMaxPacket = 4000
	// oggMaxPagePackets caps the packets on one page (1 s of audio), so a
	// page stays well under the 255 lacing values of the Ogg format.
	oggMaxPagePackets = 50
	// opusVendor names the encoder in the OpusTags header.
	opusVendor = "earshot (libopus)"
)

// oggOpusEncoder streams Ogg Opus: the two header pages at once, then a
// page at the end of every Write with the packets it completed, and the
// final page, with the end-of-stream flag and the exact length in its
// granule position, at Close.
type oggOpusEncoder struct {
	w       io.Writer
	enc     *opus.Encoder
	serial  uint32
	seq     uint32
	pending []int16 // samples of the next packet, fewer than opusFrame
	packets [][]byte
	pktBuf  []byte
	page    []byte
	encoded int64 // samples in the packets so far: the granule position
	input   int64 // samples received
}

func newOggOpusEncoder(w io.Writer, spec EncodeSpec) (*oggOpusEncoder, error) {
	enc, err := opus.NewEncoder(opusRate, 1, opus.AppAudio)
	if err != nil {
		return nil, fmt.Errorf("libopus: %w", err)
	}
	// libopus clamps rates above what it can use (512 kbit/s for mono),
	// so the service's full range is accepted.
	if err := enc.SetBitrate(min(spec.BitRate, 512000)); err != nil {
		return nil, fmt.Errorf("libopus: set bit rate %d: %w", spec.BitRate, err)
	}
	o := &oggOpusEncoder{
		w:      w,
		enc:    enc,
		serial: rand.Uint32(),
		pktBuf: make([]byte, opusMaxPacket),
	}
	if err := o.writePage(oggBOS, 0, [][]byte{opusHead(spec.SampleRate)}); err != nil {
		return nil, err
	}
	tags := binary.LittleEndian.AppendUint32([]byte("OpusTags"), uint32(len(opusVendor)))
	tags = append(tags, opusVendor...)
	tags = binary.LittleEndian.AppendUint32(tags, 0) // no user comments
	if err := o.writePage(0, 0, [][]byte{tags}); err != nil {
		return nil, err
	}
	return o, nil
}

// opusHead returns the identification header of a mono stream with channel
// mapping family 0 and no output gain.
func opusHead(inputRate int) []byte {
	h := append([]byte("OpusHead"), 1, 1) // version 1, one channel
	h = binary.LittleEndian.AppendUint16(h, opusPreSkip)
	h = binary.LittleEndian.AppendUint32(h, uint32(inputRate))
	h = binary.LittleEndian.AppendUint16(h, 0) // output gain
	return append(h, 0)                        // mapping family 0
}

func (o *oggOpusEncoder) write(pcm []int16) error {
	for len(pcm) > 0 {
		n := min(len(pcm), opusFrame-len(o.pending))
		o.pending = append(o.pending, pcm[:n]...)
		pcm = pcm[n:]
		o.input += int64(n)
		if len(o.pending) == opusFrame {
			if err := o.encodePending(); err != nil {
				return err
			}
		}
		if len(o.packets) == oggMaxPagePackets {
			if err := o.flushPage(0); err != nil {
				return err
			}
		}
	}
	return o.flushPage(0)
}

// encodePending encodes one full packet from pending.
func (o *oggOpusEncoder) encodePending() error {
	n, err := o.enc.Encode(o.pending, o.pktBuf)
	if err != nil {
		return fmt.Errorf("libopus: %w", err)
	}
	o.packets = append(o.packets, append([]byte(nil), o.pktBuf[:n]...))
	o.pending = o.pending[:0]
	o.encoded += opusFrame
	return nil
}

// flushPage writes the buffered packets as one page, if there are any or
// the page must carry flags.
func (o *oggOpusEncoder) flushPage(flags byte) error {
	if len(o.packets) == 0 && flags == 0 {
		return nil
	}
	granule := o.encoded
	if flags&oggEOS != 0 {
		// The last page's granule position gives the exact length: the
		// pre-skip plus the samples actually received (RFC 7845 4.4).
		granule = opusPreSkip + o.input
	}
	err := o.writePage(flags, granule, o.packets)
	o.packets = o.packets[:0]
	return err
}

// writePage writes whole packets as one Ogg page.
func (o *oggOpusEncoder) writePage(flags byte, granule int64, packets [][]byte) error {
	p := o.page[:0]
	p = append(p, "OggS"...)
	p = append(p, 0, flags)
	p = binary.LittleEndian.AppendUint64(p, uint64(granule))
	p = binary.LittleEndian.AppendUint32(p, o.serial)
	p = binary.LittleEndian.AppendUint32(p, o.seq)
	p = append(p, 0, 0, 0, 0, 0) // CRC, then the segment count
	for _, pk := range packets {
		n := len(pk)
		for ; n >= 255; n -= 255 {
			p = append(p, 255)
		}
		p = append(p, byte(n))
	}
	if segs := len(p) - oggHeaderLen; segs > 255 {
		return fmt.Errorf("ogg page of %d segments", segs)
	} else {
		p[26] = byte(segs)
	}
	for _, pk := range packets {
		p = append(p, pk...)
	}
	binary.LittleEndian.PutUint32(p[22:], oggCRC(p))
	o.page = p
	o.seq++
	if _, err := o.w.Write(p); err != nil {
		return err
	}
	return nil
}

// finish pads the input with silence until the encoder's look-ahead has
// been pushed through, so every received sample is in a packet, and writes
// the last page.
func (o *oggOpusEncoder) finish() error {
	for o.encoded < opusPreSkip+o.input {
		o.pending = append(o.pending, make([]int16, opusFrame-len(o.pending))...)
		if err := o.encodePending(); err != nil {
			return err
		}
		if len(o.packets) == oggMaxPagePackets {
			if err := o.flushPage(0); err != nil {
				return err
			}
		}
	}
	return o.flushPage(oggEOS)
}

func (o *oggOpusEncoder) abort() {}
