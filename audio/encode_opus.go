package audio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
)

// Ogg Opus output (RFC 7845): libopus through gopkg.in/hraban/opus.v2
// (libopus.go) encodes 20 ms packets, and the muxer below frames them in Ogg pages.
// Encode's opus output is mono at 48 kHz; OggOpusWriter takes the rates
// libopus encodes directly and one or two channels (a meeting's sides).

const (
	// opusPreSkip is the encoder's look-ahead at 48 kHz (2.5 ms of analysis
	// plus 4 ms of delay compensation, libopus's value for every
	// application mode and input rate), which decoders drop from the
	// start. The binding offers no OPUS_GET_LOOKAHEAD, so the constant is
	// used.
	opusPreSkip = 312
	// opusMaxPacket bounds one encoded packet; libopus never needs more
	// than 1275 bytes per frame.
	opusMaxPacket = 4000
	// oggMaxPagePackets caps the packets on one page (1 s of audio).
	oggMaxPagePackets = 50
	// oggMaxSegments is the most lacing values a page holds.
	oggMaxSegments = 255
	// opusVendor names the encoder in the OpusTags header.
	opusVendor = "earshot (libopus)"
)

// opusEncoder encodes one frame of interleaved samples into a packet;
// newOpusEncoder makes one with libopus, in the builds that have it.
type opusEncoder interface {
	Encode(pcm []int16, packet []byte) (int, error)
}

// oggOpusEncoder streams Ogg Opus: the two header pages at once, then
// pages of packets (at the end of every write when pagePerWrite, else
// when a page is full), and the final page, with the end-of-stream flag
// and the exact length in its granule position, at finish.
type oggOpusEncoder struct {
	w            io.Writer
	enc          opusEncoder
	channels     int
	frame        int   // samples (every channel) of one 20 ms packet
	scale        int64 // 48 kHz granules per input frame
	pagePerWrite bool
	serial       uint32
	seq          uint32
	pending      []int16 // interleaved samples of the next packet
	packets      [][]byte
	segments     int // lacing values the packets take
	pktBuf       []byte
	page         []byte
	encoded      int64 // 48 kHz granules in the packets so far
	input        int64 // frames received
}

// newOggOpusEncoder is Encode's opus: mono 48 kHz, a page a write, the
// header naming spec's input rate.
func newOggOpusEncoder(w io.Writer, spec EncodeSpec) (*oggOpusEncoder, error) {
	// libopus clamps rates above what it can use (512 kbit/s for mono),
	// so the service's full range is accepted.
	return newOggOpus(w, opusRate, 1, min(spec.BitRate, 512000), spec.SampleRate, true)
}

// newOggOpus encodes interleaved audio of channels channels at rate (one
// of libopus's 8, 12, 16, 24 or 48 kHz) at bitRate bits a second, the
// header naming headRate as the input's rate.
func newOggOpus(w io.Writer, rate, channels, bitRate, headRate int, pagePerWrite bool) (*oggOpusEncoder, error) {
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("ogg opus: %d channels; one or two are written", channels)
	}
	switch rate {
	case 8000, 12000, 16000, 24000, 48000:
	default:
		return nil, fmt.Errorf("ogg opus: %d Hz; libopus takes 8, 12, 16, 24 or 48 kHz", rate)
	}
	enc, err := newOpusEncoder(rate, channels, bitRate)
	if err != nil {
		return nil, err
	}
	o := &oggOpusEncoder{
		w:            w,
		enc:          enc,
		channels:     channels,
		frame:        rate / 50 * channels,
		scale:        int64(opusRate / rate),
		pagePerWrite: pagePerWrite,
		serial:       rand.Uint32(),
		pktBuf:       make([]byte, opusMaxPacket),
	}
	if err := o.writePage(oggBOS, 0, [][]byte{opusHead(channels, headRate)}); err != nil {
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

// opusHead returns the identification header of a mono or stereo stream
// (channel mapping family 0) with no output gain.
func opusHead(channels, inputRate int) []byte {
	h := append([]byte("OpusHead"), 1, byte(channels)) // version 1
	h = binary.LittleEndian.AppendUint16(h, opusPreSkip)
	h = binary.LittleEndian.AppendUint32(h, uint32(inputRate))
	h = binary.LittleEndian.AppendUint16(h, 0) // output gain
	return append(h, 0)                        // mapping family 0
}

// write takes interleaved samples, whole frames.
func (o *oggOpusEncoder) write(pcm []int16) error {
	o.input += int64(len(pcm) / o.channels)
	for len(pcm) > 0 {
		n := min(len(pcm), o.frame-len(o.pending))
		o.pending = append(o.pending, pcm[:n]...)
		pcm = pcm[n:]
		if len(o.pending) == o.frame {
			if err := o.encodePending(); err != nil {
				return err
			}
		}
	}
	if o.pagePerWrite {
		return o.flushPage(0)
	}
	return nil
}

// encodePending encodes one full packet from pending, writing the page
// before it first when the packet would not fit on it.
func (o *oggOpusEncoder) encodePending() error {
	n, err := o.enc.Encode(o.pending, o.pktBuf)
	if err != nil {
		return fmt.Errorf("libopus: %w", err)
	}
	if o.segments+n/255+1 > oggMaxSegments {
		if err := o.flushPage(0); err != nil {
			return err
		}
	}
	o.packets = append(o.packets, append([]byte(nil), o.pktBuf[:n]...))
	o.segments += n/255 + 1
	o.pending = o.pending[:0]
	o.encoded += int64(o.frame/o.channels) * o.scale
	if len(o.packets) == oggMaxPagePackets {
		return o.flushPage(0)
	}
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
		granule = opusPreSkip + o.input*o.scale
	}
	err := o.writePage(flags, granule, o.packets)
	o.packets, o.segments = o.packets[:0], 0
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
	for o.encoded < opusPreSkip+o.input*o.scale {
		o.pending = append(o.pending, make([]int16, o.frame-len(o.pending))...)
		if err := o.encodePending(); err != nil {
			return err
		}
	}
	return o.flushPage(oggEOS)
}

func (o *oggOpusEncoder) abort() {}

// OggOpusWriter encodes 16-bit audio to Ogg Opus as it comes, so that
// memory holds only the compressed stream: at 8, 12, 16, 24 or 48 kHz
// without resampling, mono or two channels interleaved, in pages of up to
// a second. Close ends the stream; the last page gives its exact length.
// It is not safe for concurrent use.
type OggOpusWriter struct {
	o *oggOpusEncoder
}

// NewOggOpusWriter writes to w audio of channels channels at rate Hz,
// encoded at bitRate bits a second for the whole stream.
func NewOggOpusWriter(w io.Writer, rate, channels, bitRate int) (*OggOpusWriter, error) {
	o, err := newOggOpus(w, rate, channels, bitRate, rate, false)
	if err != nil {
		return nil, err
	}
	return &OggOpusWriter{o: o}, nil
}

// Write encodes interleaved samples; a frame of several channels must
// not be split between two calls.
func (x *OggOpusWriter) Write(pcm []int16) error { return x.o.write(pcm) }

// Close pushes the encoder's look-ahead through and writes the last page.
func (x *OggOpusWriter) Close() error { return x.o.finish() }
