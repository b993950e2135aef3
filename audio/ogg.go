package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Ogg framing (RFC 3533), push-based: bytes go in as they arrive, complete
// pages come out, packets are reassembled and handed to a Vorbis or Opus
// packet decoder. Nothing here blocks or needs a goroutine.

const (
	oggContinued = 0x01
	oggBOS       = 0x02
	oggEOS       = 0x04

	oggHeaderLen = 27
	maxOggPage   = oggHeaderLen + 255 + 255*255
	// maxOggPacket caps a reassembled packet. Audio packets are at most a
	// few kilobytes and a Vorbis setup header tens of kilobytes; the one
	// large packet of real files, the comment header (which may hold cover
	// art), is skipped without being buffered.
	maxOggPacket = 1 << 20
)

type oggHeader struct {
	flags     byte
	granule   int64
	serial    uint32
	crc       uint32
	lacing    []byte
	headerLen int
	bodyLen   int
}

// parseOggHeader parses the page header at the start of b. It returns
// errNeedMore if b ends inside the header (the body may still be missing).
func parseOggHeader(b []byte) (oggHeader, error) {
	var h oggHeader
	if len(b) < oggHeaderLen {
		if !hasPrefix([]byte("OggS"), string(b[:min(len(b), 4)])) {
			return h, undecodable("Ogg stream lost page sync")
		}
		return h, errNeedMore
	}
	if string(b[:4]) != "OggS" {
		return h, undecodable("Ogg stream lost page sync")
	}
	if b[4] != 0 {
		return h, undecodable("Ogg version %d is not supported", b[4])
	}
	h.flags = b[5]
	h.granule = int64(binary.LittleEndian.Uint64(b[6:]))
	h.serial = binary.LittleEndian.Uint32(b[14:])
	h.crc = binary.LittleEndian.Uint32(b[22:])
	nseg := int(b[26])
	h.headerLen = oggHeaderLen + nseg
	if len(b) < h.headerLen {
		return h, errNeedMore
	}
	h.lacing = b[oggHeaderLen:h.headerLen]
	for _, l := range h.lacing {
		h.bodyLen += int(l)
	}
	return h, nil
}

var oggCRCTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04C11DB7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

// oggCRC computes the page checksum: CRC-32 with polynomial 0x04C11DB7, no
// reflection, zero initial value, over the page with its CRC field zeroed.
func oggCRC(page []byte) uint32 {
	var crc uint32
	for i, c := range page {
		if i >= 22 && i < 26 {
			c = 0
		}
		crc = crc<<8 ^ oggCRCTable[byte(crc>>24)^c]
	}
	return crc
}

// packetDecoder decodes the packets of one logical Ogg stream.
type packetDecoder interface {
	// headerPackets is the number of header packets before audio.
	headerPackets() int
	// readHeader takes header packet i. Packet 1 (the comment header of both
	// Vorbis and Opus) arrives as nil: it is skipped unbuffered.
	readHeader(i int, p []byte) error
	// layout returns the rate and channels; valid after header 0.
	layout() (rate, channels int)
	// decode appends the frames of an audio packet to dst.
	decode(dst []float32, p []byte) ([]float32, error)
	// trim returns how many frames to drop from the start of the stream and
	// the granule position that corresponds to zero decoded frames.
	trim() (skip int, granuleBase int64)
}

// oggStream decodes an Ogg Vorbis or Ogg Opus stream pushed in chunks.
type oggStream struct {
	buf []byte // unconsumed input, less than one page unless a chunk was large

	dec      packetDecoder
	kind     Container
	serial   uint32
	active   bool // a logical stream is selected and not yet ended
	npackets int  // packets completed in the current logical stream
	packet   []byte
	skipping bool  // the current packet is being discarded unbuffered
	partial  bool  // a packet is under way
	skip     int   // frames still to drop at the start
	emitted  int64 // frames emitted in the current logical stream

	info    Info
	hasInfo bool
}

func newOggStream() *oggStream { return &oggStream{} }

func (s *oggStream) Info() (Info, bool) { return s.info, s.hasInfo }

func (s *oggStream) decode(dst []float32, p []byte) ([]float32, error) {
	data := p
	if len(s.buf) > 0 {
		s.buf = append(s.buf, p...)
		data = s.buf
	}
	off := 0
	var err error
	for {
		h, herr := parseOggHeader(data[off:])
		if errors.Is(herr, errNeedMore) {
			break
		}
		if herr != nil {
			err = herr
			break
		}
		end := off + h.headerLen + h.bodyLen
		if end > len(data) {
			break
		}
		if dst, err = s.page(dst, h, data[off:end]); err != nil {
			break
		}
		off = end
	}
	// Keep the unconsumed tail (at most one page) for the next call.
	rest := data[off:]
	if len(s.buf) > 0 {
		s.buf = append(s.buf[:0], rest...)
	} else {
		s.buf = append(s.buf, rest...)
	}
	return dst, err
}

func (s *oggStream) flush(dst []float32) ([]float32, error) {
	switch {
	case len(s.buf) > 0:
		return dst, undecodable("Ogg stream ends inside a page")
	case !s.hasInfo, s.active && s.npackets < s.dec.headerPackets():
		return dst, undecodable("Ogg stream ends before its audio headers")
	}
	return dst, nil
}

func (s *oggStream) close() {}

// page handles one complete page.
func (s *oggStream) page(dst []float32, h oggHeader, page []byte) ([]float32, error) {
	if got := oggCRC(page); got != h.crc {
		return dst, undecodable("Ogg page checksum mismatch (corrupt data)")
	}
	body := page[h.headerLen:]
	if h.flags&oggBOS != 0 {
		if s.active || (s.dec != nil && h.serial == s.serial) {
			return dst, nil // another track multiplexed with ours, or a repeat
		}
		return dst, s.begin(h, body)
	}
	if !s.active || h.serial != s.serial {
		if s.dec == nil {
			return dst, undecodable("Ogg stream holds no Vorbis or Opus track")
		}
		return dst, nil // other tracks, or pages after our track ended
	}

	// Frames this page may still emit when it ends the stream: the granule
	// position of the last page gives the exact length (RFC 7845 4.4,
	// Vorbis I spec A.2), trimming the encoder's padding.
	limit := int64(-1)
	if h.flags&oggEOS != 0 && h.granule >= 0 {
		_, base := s.dec.trim()
		limit = h.granule - base
	}
	if h.flags&oggContinued == 0 && s.partial {
		return dst, undecodable("Ogg packet is cut off by the next page")
	}
	if h.flags&oggContinued != 0 && !s.partial {
		// The start of this packet was never seen: skip its tail.
		s.skipping, s.partial = true, true
	}
	var err error
	pos := 0
	for _, l := range h.lacing {
		seg := body[pos : pos+int(l)]
		pos += int(l)
		if !s.partial {
			s.partial = true
			s.skipping = s.npackets == 1 // comment header: may be huge, unneeded
			s.packet = s.packet[:0]
		}
		if !s.skipping {
			if len(s.packet)+len(seg) > maxOggPacket {
				return dst, undecodable("Ogg packet larger than %d bytes", maxOggPacket)
			}
			s.packet = append(s.packet, seg...)
		}
		if l == 255 {
			continue // packet goes on
		}
		s.partial = false
		if dst, err = s.packetDone(dst, limit); err != nil {
			return dst, err
		}
	}
	if h.flags&oggEOS != 0 {
		s.active = false
		s.partial = false
	}
	return dst, nil
}

// begin starts a logical stream from its begin-of-stream page.
func (s *oggStream) begin(h oggHeader, body []byte) error {
	c, name, _ := oggCodec(body)
	if c == ContainerUnknown {
		return nil // another kind of track; a later BOS page may carry audio
	}
	var dec packetDecoder
	if c == ContainerOggOpus {
		dec = &opusPackets{}
	} else {
		dec = &vorbisPackets{}
	}
	if s.dec != nil && c != s.kind {
		return undecodable("chained Ogg stream changes codec from %s to %s", s.kind, c)
	}
	s.dec, s.kind, s.serial, s.active = dec, c, h.serial, true
	s.npackets, s.partial, s.skipping, s.emitted = 0, false, false, 0
	s.packet = s.packet[:0]
	// The BOS page carries exactly the identification header.
	if len(h.lacing) == 0 || h.lacing[len(h.lacing)-1] == 255 {
		return undecodable("Ogg %s identification header does not fit its page", name)
	}
	if len(h.lacing) != 1 {
		return undecodable("Ogg %s first page holds more than the identification header", name)
	}
	if err := dec.readHeader(0, body); err != nil {
		return err
	}
	s.npackets = 1
	rate, ch := dec.layout()
	if err := checkLayout(rate, ch); err != nil {
		return undecodable("Ogg %s: %v", name, err)
	}
	if s.hasInfo && (rate != s.info.SampleRate || ch != s.info.Channels) {
		return undecodable("chained Ogg stream changes format from %d Hz %d ch to %d Hz %d ch",
			s.info.SampleRate, s.info.Channels, rate, ch)
	}
	s.info = Info{Container: c, SampleRate: rate, Channels: ch}
	s.hasInfo = true
	s.skip, _ = dec.trim()
	return nil
}

// packetDone handles a packet that has just been completed.
func (s *oggStream) packetDone(dst []float32, limit int64) ([]float32, error) {
	i := s.npackets
	s.npackets++
	if s.skipping {
		s.skipping = false
		if i == 1 {
			return dst, s.dec.readHeader(1, nil)
		}
		return dst, nil
	}
	if i < s.dec.headerPackets() {
		return dst, s.dec.readHeader(i, s.packet)
	}
	if len(s.packet) == 0 {
		return dst, nil // zero-length packets carry no audio
	}
	if len(dst) > chunkLimit {
		return dst, errChunkTooLarge()
	}
	n0 := len(dst)
	dst, err := s.dec.decode(dst, s.packet)
	if err != nil {
		return dst[:n0], err
	}
	_, ch := s.dec.layout()
	frames := (len(dst) - n0) / ch
	// Drop the pre-skip at the start.
	if s.skip > 0 {
		d := min(s.skip, frames)
		copy(dst[n0:], dst[n0+d*ch:])
		dst = dst[:len(dst)-d*ch]
		frames -= d
		s.skip -= d
	}
	if limit >= 0 && s.emitted+int64(frames) > limit {
		keep := max(limit-s.emitted, 0)
		dst = dst[:n0+int(keep)*ch]
		frames = int(keep)
	}
	s.emitted += int64(frames)
	return dst, nil
}

// codecError wraps an error from a third-party codec so that it matches
// ErrUndecodable and names the codec.
func codecError(codec string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrUndecodable, codec, err)
}
