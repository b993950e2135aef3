package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"github.com/hajimehoshi/go-mp3"
)

// mp3SearchLimit is how far past the tags the first frame header may be.
const mp3SearchLimit = 64 << 10

// mp3DecoderDelay is the delay, in samples, of the standard MP3 synthesis
// filterbank, which LAME's gapless information assumes decoders add.
const mp3DecoderDelay = 529

// runTagged decodes a stream that starts with ID3v2 tags or an MPEG frame:
// it skips the tags without buffering them (go-mp3 would allocate their
// declared size, up to 256 MiB), then decodes the MP3 behind them, or the
// FLAC stream that some taggers put behind an ID3 tag.
func runTagged(r io.Reader, s *pullStream) error {
	br := bufio.NewReaderSize(r, mp3SearchLimit+4)
	if err := skipID3(br); err != nil {
		return err
	}
	if b, _ := br.Peek(4); string(b) == "fLaC" {
		return runFLAC(br, s)
	}
	return runMP3(br, s)
}

// skipID3 discards any ID3v2 tags at the start of br.
func skipID3(br *bufio.Reader) error {
	for {
		h, err := br.Peek(10)
		if len(h) < 3 || string(h[:3]) != "ID3" {
			return nil
		}
		if err != nil {
			return undecodable("stream ends inside its ID3 tag")
		}
		size := int64(h[6]&0x7F)<<21 | int64(h[7]&0x7F)<<14 | int64(h[8]&0x7F)<<7 | int64(h[9]&0x7F)
		size += 10
		if h[5]&0x10 != 0 {
			size += 10 // footer
		}
		if _, err := io.CopyN(io.Discard, br, size); err != nil {
			if errors.Is(err, errStopped) {
				return err
			}
			return undecodable("stream ends inside its ID3 tag")
		}
	}
}

// mpegHeader is the part of an MPEG audio frame header that matters here.
type mpegHeader struct {
	mpeg1      bool
	mono       bool
	crc        bool
	rate       int
	frameBytes int
}

var (
	mp3Bitrates = [2][16]int{ // kbit/s, [mpeg1][index], layer III
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0},
	}
	mp3Rates = [2][3]int{{22050, 24000, 16000}, {44100, 48000, 32000}}
)

// parseMPEGHeader decodes a layer III header of MPEG-1 or MPEG-2, the
// variants go-mp3 decodes. ok is false for anything else.
func parseMPEGHeader(b []byte) (h mpegHeader, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return h, false
	}
	version, layer := (b[1]>>3)&3, (b[1]>>1)&3
	bi, ri := b[2]>>4, (b[2]>>2)&3
	if (version != 2 && version != 3) || layer != 1 || bi == 0 || bi == 15 || ri == 3 {
		return h, false
	}
	m1 := 0
	if version == 3 {
		m1 = 1
	}
	h.mpeg1 = m1 == 1
	h.mono = b[3]>>6 == 3
	h.crc = b[1]&1 == 0
	h.rate = mp3Rates[m1][ri]
	pad := int(b[2]>>1) & 1
	coef := 72
	if h.mpeg1 {
		coef = 144
	}
	h.frameBytes = coef*mp3Bitrates[m1][bi]*1000/h.rate + pad
	return h, true
}

func (h mpegHeader) samplesPerFrame() int {
	if h.mpeg1 {
		return 1152
	}
	return 576
}

// gapless reads the Xing/Info frame that LAME and FFmpeg put first. It
// reports whether the first frame is such a metadata frame (its decoded
// output is silence that must be dropped) and, from the LAME tag, the
// encoder delay and padding in samples (-1 when absent) and the audio frame
// count (0 when absent).
func (h mpegHeader) gapless(frame []byte) (info bool, delay, padding, frames int) {
	side := 17
	switch {
	case h.mpeg1 && !h.mono:
		side = 32
	case !h.mpeg1 && h.mono:
		side = 9
	}
	off := 4 + side
	if h.crc {
		off += 2
	}
	if len(frame) < off+8 {
		return false, -1, -1, 0
	}
	tag := string(frame[off : off+4])
	if tag != "Xing" && tag != "Info" {
		return false, -1, -1, 0
	}
	flags := binary.BigEndian.Uint32(frame[off+4:])
	p := off + 8
	if flags&1 != 0 && len(frame) >= p+4 {
		frames = int(binary.BigEndian.Uint32(frame[p:]))
		p += 4
	}
	if flags&2 != 0 {
		p += 4
	}
	if flags&4 != 0 {
		p += 100
	}
	if flags&8 != 0 {
		p += 4
	}
	if len(frame) < p+24 {
		return true, -1, -1, frames
	}
	enc := string(frame[p : p+4])
	if enc != "LAME" && enc != "Lavc" && enc != "Lavf" {
		return true, -1, -1, frames
	}
	d := frame[p+21:]
	return true, int(d[0])<<4 | int(d[1])>>4, int(d[1]&0xF)<<8 | int(d[2]), frames
}

func runMP3(br *bufio.Reader, s *pullStream) (err error) {
	defer recoverUndecodable("MP3 decoder", &err)
	// A first frame of an unsupported kind (MPEG 2.5, layer II, AAC) is
	// named rather than skipped in search of a false sync.
	if b, _ := br.Peek(4); len(b) == 4 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 {
		if err := checkMPEGHeader(b); err != nil {
			return err
		}
	}
	// Find the first frame header and read what it says.
	var h mpegHeader
	found := false
	for i := 0; i < mp3SearchLimit; i++ {
		b, err := br.Peek(i + 4)
		if len(b) < i+4 {
			if errors.Is(err, errStopped) {
				return err
			}
			break
		}
		if h, found = parseMPEGHeader(b[i:]); found {
			if _, err := br.Discard(i); err != nil {
				return err
			}
			break
		}
	}
	if !found {
		return undecodable("no MP3 frame found")
	}
	first, _ := br.Peek(h.frameBytes)
	info, delay, padding, frames := h.gapless(first)

	spf := h.samplesPerFrame()
	skip, total := 0, int64(-1)
	if info {
		skip = spf // the metadata frame decodes to silence
		if delay >= 0 {
			skip += delay + mp3DecoderDelay
			if frames > 0 {
				total = int64(frames)*int64(spf) - int64(delay) - int64(padding)
			}
		}
	}

	dec, err := mp3.NewDecoder(br) // br is no io.Seeker: go-mp3 will not pre-scan
	if err != nil {
		if errors.Is(err, errStopped) {
			return err
		}
		return codecError("MP3", err)
	}
	ch := 2
	if h.mono {
		ch = 1
	}
	if err := checkLayout(dec.SampleRate(), ch); err != nil {
		return undecodable("MP3: %v", err)
	}
	s.setInfo(Info{Container: ContainerMP3, SampleRate: dec.SampleRate(), Channels: ch})

	raw := make([]byte, 4*1152)
	samples := make([]float32, 0, 2*1152)
	var emitted int64
	for {
		// One Read returns one decoded frame, so audio is emitted as soon
		// as its frame has arrived.
		n, err := dec.Read(raw)
		n -= n % 4
		frames := n / 4
		samples = samples[:0]
		for i := 0; i < frames; i++ {
			if skip > 0 {
				skip--
				continue
			}
			if total >= 0 && emitted >= total {
				break
			}
			l := float32(int16(binary.LittleEndian.Uint16(raw[4*i:]))) * (1.0 / 32768)
			samples = append(samples, l)
			if ch == 2 {
				samples = append(samples, float32(int16(binary.LittleEndian.Uint16(raw[4*i+2:])))*(1.0/32768))
			}
			emitted++
		}
		if e := s.emit(samples); e != nil {
			return e
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errStopped):
			return err
		default:
			return codecError("MP3", err)
		}
	}
}
