package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os/exec"

	"github.com/hajimehoshi/go-mp3"
)

// mp3SearchLimit is how far past the tags the first frame header may be.
const mp3SearchLimit = 64 << 10

// mp3DecoderDelay is the delay, in samples, of the standard MP3 synthesis
// filterbank, which LAME's gapless information assumes decoders add.
const mp3DecoderDelay = 529

// mpegStream decodes what Detect calls MP3: MPEG layer III audio, possibly
// behind ID3v2 tags, or the FLAC stream that some taggers put behind an ID3
// tag. It skips the tags as they arrive, without buffering them (their
// declared size may be up to 256 MiB), holds back the bytes after them
// until the first frame header is in, and then hands the stream to the
// decoder that suits that header:
//
//   - MPEG-1 (32, 44.1 and 48 kHz): go-mp3, in a pullStream.
//   - MPEG-2 and MPEG-2.5 (8 to 24 kHz): FFmpeg, in an ffmpegStream. go-mp3
//     garbles these (hajimehoshi/go-mp3 issue 39), and they include the
//     22.05 kHz MP3 that the hosted speech service sends by default. Where
//     FFmpeg is not installed, MPEG-2 falls back to go-mp3, which sounds
//     worse but plays; MPEG-2.5, which go-mp3 cannot decode, is refused.
type mpegStream struct {
	skip     int64  // bytes of an ID3 tag still to discard
	head     []byte // bytes after the tags, held until a decoder is chosen
	searched int    // head offsets before this hold no frame header
	impl     streamImpl
}

func newMPEGStream() *mpegStream { return &mpegStream{} }

func (m *mpegStream) decode(dst []float32, p []byte) ([]float32, error) {
	if m.impl != nil {
		return m.impl.decode(dst, p)
	}
	if err := m.scan(p, false); err != nil || m.impl == nil {
		return dst, err
	}
	head := m.head
	m.head = nil
	return m.impl.decode(dst, head)
}

func (m *mpegStream) flush(dst []float32) ([]float32, error) {
	if m.impl == nil {
		if err := m.scan(nil, true); err != nil {
			return dst, err
		}
		head := m.head
		m.head = nil
		var err error
		if dst, err = m.impl.decode(dst, head); err != nil {
			return dst, err
		}
	}
	return m.impl.flush(dst)
}

func (m *mpegStream) Info() (Info, bool) {
	if m.impl == nil {
		return Info{}, false
	}
	return m.impl.Info()
}

func (m *mpegStream) close() {
	if m.impl != nil {
		m.impl.close()
	}
}

// scan takes the next bytes before a decoder is chosen: it discards ID3
// tags, looks for the first frame header and, once it has one, sets impl.
// atEOF says no more bytes will come, so a decision cannot wait.
func (m *mpegStream) scan(p []byte, atEOF bool) error {
	n := min(int64(len(p)), m.skip)
	m.skip -= n
	m.head = append(m.head, p[n:]...)
	if m.skip > 0 {
		if atEOF {
			return undecodable("stream ends inside its ID3 tag")
		}
		return nil
	}
	// Tags, one after another, are only looked for at the start.
	for m.searched == 0 && hasPrefix(m.head, "ID3") {
		if len(m.head) < 10 {
			if atEOF {
				return undecodable("stream ends inside its ID3 tag")
			}
			return nil
		}
		h := m.head
		size := int64(h[6]&0x7F)<<21 | int64(h[7]&0x7F)<<14 | int64(h[8]&0x7F)<<7 | int64(h[9]&0x7F)
		size += 10
		if h[5]&0x10 != 0 {
			size += 10 // footer
		}
		drop := min(size, int64(len(h)))
		m.head = append(h[:0], h[drop:]...)
		m.skip = size - drop
		if m.skip > 0 {
			if atEOF {
				return undecodable("stream ends inside its ID3 tag")
			}
			return nil
		}
	}
	if len(m.head) < 4 && !atEOF {
		return nil
	}
	if m.searched == 0 {
		if hasPrefix(m.head, "fLaC") {
			m.impl = newPullStream(func(r io.Reader, s *pullStream) error {
				return runFLAC(bufio.NewReader(r), s)
			})
			return nil
		}
		// A first frame of an unsupported kind (layer II, AAC behind a
		// tag) is named rather than skipped in search of a false sync.
		if b := m.head; len(b) >= 4 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 {
			if err := checkMPEGHeader(b); err != nil {
				return err
			}
		}
	}
	for ; m.searched+4 <= len(m.head) && m.searched < mp3SearchLimit; m.searched++ {
		if h, ok := parseMPEGHeader(m.head[m.searched:]); ok {
			if len(m.head)-m.searched < h.frameBytes && !atEOF {
				return nil // wait for the whole frame: it may hold the LAME tag
			}
			m.head = append(m.head[:0], m.head[m.searched:]...)
			return m.choose(h)
		}
	}
	if atEOF || m.searched >= mp3SearchLimit {
		return undecodable("no MP3 frame found")
	}
	return nil
}

// choose sets impl to the decoder for a stream whose first frame, at the
// start of head, has header h.
func (m *mpegStream) choose(h mpegHeader) error {
	ch := h.channels()
	if err := checkLayout(h.rate, ch); err != nil {
		return undecodable("MP3: %v", err)
	}
	if h.version != mpeg1 {
		f := &mp3FFmpegStream{trim: newMP3Trim(h, m.head, false)}
		err := f.start("MP3", "mp3", Info{Container: ContainerMP3, SampleRate: h.rate, Channels: ch})
		switch {
		case err == nil:
			if f.trim.info {
				// FFmpeg gets the stream without its metadata frame, so
				// without the gapless information that the trim applies
				// the same way for both decoders.
				m.head = m.head[min(h.frameBytes, len(m.head)):]
			}
			m.impl = f
			return nil
		case !errors.Is(err, exec.ErrNotFound):
			return err
		case h.version == mpeg25:
			return undecodable("MPEG-2.5 MP3 (8-12 kHz) needs the ffmpeg program, which is not installed")
		}
	}
	m.impl = newPullStream(func(r io.Reader, s *pullStream) error {
		return runMP3(bufio.NewReader(r), h, s)
	})
	return nil
}

// mp3FFmpegStream decodes MPEG-2 and MPEG-2.5 with FFmpeg and trims the
// output as the stream's LAME tag says.
type mp3FFmpegStream struct {
	ffmpegStream
	trim mp3Trim
}

func (f *mp3FFmpegStream) decode(dst []float32, p []byte) ([]float32, error) {
	n := len(dst)
	dst, err := f.ffmpegStream.decode(dst, p)
	return f.trim.apply(dst, n, f.info.Channels), err
}

func (f *mp3FFmpegStream) flush(dst []float32) ([]float32, error) {
	n := len(dst)
	dst, err := f.ffmpegStream.flush(dst)
	return f.trim.apply(dst, n, f.info.Channels), err
}

// mp3Trim removes what the LAME (or FFmpeg) gapless information says is
// not audio: the encoder's delay plus the decoder's at the start, the
// padding of the last frame at the end.
type mp3Trim struct {
	info bool  // the first frame is a Xing/Info metadata frame
	skip int64 // frames still to drop at the start
	left int64 // frames still to keep; -1 without a known total
}

// newMP3Trim reads the first frame, whose header is h. decodesInfo says
// the decoder outputs the metadata frame, as a frame of silence.
func newMP3Trim(h mpegHeader, first []byte, decodesInfo bool) mp3Trim {
	info, delay, padding, frames := h.gapless(first[:min(len(first), h.frameBytes)])
	t := mp3Trim{info: info, left: -1}
	if !info {
		return t
	}
	spf := int64(h.samplesPerFrame())
	if decodesInfo {
		t.skip = spf
	}
	if delay >= 0 {
		t.skip += int64(delay + mp3DecoderDelay)
		if frames > 0 {
			t.left = max(0, int64(frames)*spf-int64(delay)-int64(padding))
		}
	}
	return t
}

// apply trims the frames of ch channels that follow the first n samples
// of dst.
func (t *mp3Trim) apply(dst []float32, n, ch int) []float32 {
	frames := int64((len(dst) - n) / ch)
	drop := min(t.skip, frames)
	t.skip -= drop
	keep := frames - drop
	if t.left >= 0 {
		keep = min(keep, t.left)
		t.left -= keep
	}
	copy(dst[n:], dst[n+int(drop)*ch:n+int(drop+keep)*ch])
	return dst[:n+int(keep)*ch]
}

// mpegVersion is the version field of an MPEG audio frame header.
type mpegVersion byte

const (
	mpeg25 mpegVersion = 0 // unofficial extension to 8-12 kHz
	mpeg2  mpegVersion = 2 // ISO/IEC 13818-3, 16-24 kHz
	mpeg1  mpegVersion = 3 // ISO/IEC 11172-3, 32-48 kHz
)

// mpegHeader is the part of an MPEG audio frame header that matters here.
type mpegHeader struct {
	version    mpegVersion
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
	mp3Rates = map[mpegVersion][3]int{
		mpeg25: {11025, 12000, 8000},
		mpeg2:  {22050, 24000, 16000},
		mpeg1:  {44100, 48000, 32000},
	}
)

// parseMPEGHeader decodes a layer III header of MPEG-1, MPEG-2 or
// MPEG-2.5 that gives its bit rate. ok is false for anything else.
func parseMPEGHeader(b []byte) (h mpegHeader, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return h, false
	}
	version, layer := mpegVersion((b[1]>>3)&3), (b[1]>>1)&3
	bi, ri := b[2]>>4, (b[2]>>2)&3
	if version == 1 || layer != 1 || bi == 0 || bi == 15 || ri == 3 {
		return h, false
	}
	h.version = version
	h.mono = b[3]>>6 == 3
	h.crc = b[1]&1 == 0
	h.rate = mp3Rates[version][ri]
	pad := int(b[2]>>1) & 1
	m1, coef := 0, 72
	if version == mpeg1 {
		m1, coef = 1, 144
	}
	h.frameBytes = coef*mp3Bitrates[m1][bi]*1000/h.rate + pad
	return h, true
}

func (h mpegHeader) channels() int {
	if h.mono {
		return 1
	}
	return 2
}

func (h mpegHeader) samplesPerFrame() int {
	if h.version == mpeg1 {
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
	case h.version == mpeg1 && !h.mono:
		side = 32
	case h.version != mpeg1 && h.mono:
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

// runMP3 decodes with go-mp3 an MPEG-1 or MPEG-2 stream that starts with
// a frame whose header is h.
func runMP3(br *bufio.Reader, h mpegHeader, s *pullStream) (err error) {
	defer recoverUndecodable("MP3 decoder", &err)
	first, _ := br.Peek(h.frameBytes)
	trim := newMP3Trim(h, first, true)

	dec, err := mp3.NewDecoder(br) // br is no io.Seeker: go-mp3 will not pre-scan
	if err != nil {
		if errors.Is(err, errStopped) {
			return err
		}
		return codecError("MP3", err)
	}
	ch := h.channels()
	if err := checkLayout(dec.SampleRate(), ch); err != nil {
		return undecodable("MP3: %v", err)
	}
	s.setInfo(Info{Container: ContainerMP3, SampleRate: dec.SampleRate(), Channels: ch})

	raw := make([]byte, 4*1152) // go-mp3 always outputs 16-bit stereo
	samples := make([]float32, 0, 2*1152)
	for {
		// One Read returns one decoded frame, so audio is emitted as soon
		// as its frame has arrived.
		n, err := dec.Read(raw)
		samples = samples[:0]
		for i := 0; i+4 <= n; i += 4 {
			samples = append(samples, float32(int16(binary.LittleEndian.Uint16(raw[i:])))*(1.0/32768))
			if ch == 2 {
				samples = append(samples, float32(int16(binary.LittleEndian.Uint16(raw[i+2:])))*(1.0/32768))
			}
		}
		samples = trim.apply(samples, 0, ch)
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
