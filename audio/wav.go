package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// WAV (RIFF WAVE) decoding, push-based: a state machine that accepts the file
// in chunks of any size. Header fields never size an allocation: skipped
// chunks are counted down, the fmt chunk is capped, and samples are decoded
// as they arrive.

const maxFmtChunk = 1024

type wavState int

const (
	wavRIFF  wavState = iota // reading the 12-byte RIFF header
	wavChunk                 // reading an 8-byte chunk header
	wavFmt                   // reading the fmt chunk body
	wavSkip                  // skipping a chunk body (or a pad byte)
	wavData                  // decoding samples
)

type wavStream struct {
	state    wavState
	hdr      []byte // header bytes gathered so far for the current state
	need     int    // bytes hdr must reach
	skip     int64  // bytes left to skip in wavSkip
	fmtPad   int    // pad byte after an odd-sized fmt chunk
	dataLeft int64  // bytes left in the data chunk; -1: to end of stream
	dataPad  int64
	pcm      pcmStream
	info     Info
	hasInfo  bool
	sawData  bool
}

func newWAVStream() *wavStream {
	return &wavStream{state: wavRIFF, need: 12, hdr: make([]byte, 0, 64)}
}

func (w *wavStream) Info() (Info, bool) { return w.info, w.hasInfo }

func (w *wavStream) close() {}

func (w *wavStream) flush(dst []float32) ([]float32, error) {
	if !w.sawData {
		return dst, undecodable("WAV stream ends before its data chunk")
	}
	return dst, nil // a partial final frame, or a truncated chunk, is dropped
}

// gather appends bytes from p to hdr until it holds need bytes. It returns
// the rest of p and whether hdr is complete.
func (w *wavStream) gather(p []byte) ([]byte, bool) {
	take := min(w.need-len(w.hdr), len(p))
	w.hdr = append(w.hdr, p[:take]...)
	return p[take:], len(w.hdr) == w.need
}

func (w *wavStream) decode(dst []float32, p []byte) ([]float32, error) {
	for len(p) > 0 {
		var done bool
		switch w.state {
		case wavRIFF:
			if p, done = w.gather(p); !done {
				continue
			}
			if err := checkRIFF(w.hdr); err != nil {
				return dst, err
			}
			w.expectChunk()
		case wavChunk:
			if p, done = w.gather(p); !done {
				continue
			}
			if err := w.chunk(); err != nil {
				return dst, err
			}
		case wavFmt:
			if p, done = w.gather(p); !done {
				continue
			}
			if err := w.parseFmt(w.hdr); err != nil {
				return dst, err
			}
			w.skipBytes(int64(w.fmtPad))
		case wavSkip:
			n := min(w.skip, int64(len(p)))
			p = p[n:]
			if w.skip -= n; w.skip == 0 {
				w.expectChunk()
			}
		case wavData:
			n := len(p)
			if w.dataLeft >= 0 {
				n = int(min(w.dataLeft, int64(n)))
				w.dataLeft -= int64(n)
			}
			dst = w.pcm.decode(dst, p[:n])
			p = p[n:]
			if w.dataLeft == 0 {
				// Chunks after the data (LIST, id3, ...) are skipped.
				w.skipBytes(w.dataPad)
			}
		}
	}
	return dst, nil
}

func (w *wavStream) expectChunk() {
	w.state, w.need, w.hdr = wavChunk, 8, w.hdr[:0]
}

func (w *wavStream) skipBytes(n int64) {
	if n == 0 {
		w.expectChunk()
		return
	}
	w.state, w.skip = wavSkip, n
}

// chunk acts on a complete chunk header in hdr.
func (w *wavStream) chunk() error {
	id := string(w.hdr[:4])
	size := binary.LittleEndian.Uint32(w.hdr[4:])
	switch id {
	case "fmt ":
		if w.hasInfo {
			return undecodable("WAV file has two fmt chunks")
		}
		if size < 16 || size > maxFmtChunk {
			return undecodable("WAV fmt chunk of %d bytes is invalid", size)
		}
		w.state, w.need, w.hdr = wavFmt, int(size), w.hdr[:0]
		w.fmtPad = int(size & 1)
	case "data":
		if !w.hasInfo {
			return undecodable("WAV data chunk comes before the fmt chunk")
		}
		if w.sawData {
			w.skipBytes(int64(size) + int64(size&1)) // only the first data chunk is audio
			return nil
		}
		w.sawData = true
		w.state = wavData
		// Streaming writers cannot know the size when they write the
		// header and put 0 or 0xFFFFFFFF: the data runs to the end.
		if size == 0 || size == 0xFFFFFFFF {
			w.dataLeft, w.dataPad = -1, 0
		} else {
			w.dataLeft, w.dataPad = int64(size), int64(size&1)
		}
	default:
		w.skipBytes(int64(size) + int64(size&1)) // chunks are padded to even sizes
	}
	return nil
}

func checkRIFF(h []byte) error {
	switch string(h[:4]) {
	case "RIFF":
	case "RIFX":
		return undecodable("big-endian (RIFX) WAV files are not supported")
	case "RF64":
		return undecodable("RF64 WAV files are not supported")
	default:
		return undecodable("WAV file lacks its RIFF header")
	}
	if string(h[8:12]) != "WAVE" {
		return undecodable("RIFF file of type %q is not WAVE audio", printable(h[8:12]))
	}
	return nil
}

// waveFormatExtensibleGUID is the tail shared by the KSDATAFORMAT_SUBTYPE
// GUIDs; their first two bytes are the plain format tag.
const waveFormatExtensibleGUID = "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"

var wavTagNames = map[uint16]string{
	0x0002: "Microsoft ADPCM",
	0x0011: "IMA ADPCM",
	0x0031: "GSM 6.10",
	0x0050: "MPEG",
	0x0055: "MP3",
	0x0161: "Windows Media Audio",
	0x1610: "AAC",
}

func (w *wavStream) parseFmt(f []byte) error {
	le := binary.LittleEndian
	tag := le.Uint16(f[0:])
	ch := int(le.Uint16(f[2:]))
	rate := le.Uint32(f[4:])
	align := int(le.Uint16(f[12:]))
	bits := int(le.Uint16(f[14:]))
	if tag == 0xFFFE {
		if len(f) < 40 || le.Uint16(f[16:]) < 22 {
			return undecodable("WAVE_FORMAT_EXTENSIBLE fmt chunk is truncated")
		}
		if string(f[26:40]) != waveFormatExtensibleGUID {
			return undecodable("WAVE_FORMAT_EXTENSIBLE sub-format is not a known PCM type")
		}
		// Valid bits (f[18:]) may be fewer than the container's; samples
		// are left-justified, so decoding the container is exact.
		tag = le.Uint16(f[24:])
	}
	if rate > maxSampleRate {
		return undecodable("WAV sample rate %d Hz is out of range", rate)
	}
	if err := checkLayout(int(rate), ch); err != nil {
		return undecodable("WAV: %v", err)
	}
	var c sampleCodec
	switch tag {
	case 1: // integer PCM; odd widths are stored left-justified in whole bytes
		switch {
		case bits < 1:
		case bits <= 8:
			c = codecU8
		case bits <= 16:
			c = codecS16
		case bits <= 24:
			c = codecS24
		case bits <= 32:
			c = codecS32
		}
	case 3:
		switch bits {
		case 32:
			c = codecF32
		case 64:
			c = codecF64
		}
	case 6:
		if bits == 8 {
			c = codecAlaw
		}
	case 7:
		if bits == 8 {
			c = codecMulaw
		}
	default:
		if name, ok := wavTagNames[tag]; ok {
			return undecodable("WAV files with %s audio (format 0x%04X) are not supported", name, tag)
		}
		return undecodable("WAV format 0x%04X is not supported", tag)
	}
	if c == 0 {
		return undecodable("WAV format 0x%04X with %d bits per sample is not supported", tag, bits)
	}
	if align != 0 && align != c.size()*ch {
		return undecodable("WAV block align %d does not match %d channels of %d-byte samples", align, ch, c.size())
	}
	w.pcm = newPCMStream(c, ch)
	w.info = Info{Container: ContainerWAV, SampleRate: int(rate), Channels: ch}
	w.hasInfo = true
	return nil
}

// EncodeWAV writes samples (interleaved, channels per frame) as a 16-bit PCM
// WAV file with a complete header.
func EncodeWAV(w io.Writer, samples []int16, rate, channels int) error {
	if err := checkLayout(rate, channels); err != nil {
		return fmt.Errorf("audio: encode wav: %w", err)
	}
	if len(samples)%channels != 0 {
		return fmt.Errorf("audio: encode wav: %d samples is not a whole number of %d-channel frames", len(samples), channels)
	}
	size := int64(len(samples)) * 2
	if size > 0xFFFFFFFF-36 {
		return fmt.Errorf("audio: encode wav: %d bytes of samples do not fit a WAV file", size)
	}
	if _, err := w.Write(wavHeader(rate, channels, uint32(size))); err != nil {
		return fmt.Errorf("audio: encode wav: %w", err)
	}
	return writeInt16s(w, samples)
}

// writeInt16s writes samples as linear16 through a fixed-size buffer.
func writeInt16s(w io.Writer, samples []int16) error {
	var buf [8192]byte
	for len(samples) > 0 {
		n := min(len(samples), len(buf)/2)
		b := Int16ToBytes(buf[:0], samples[:n])
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("audio: write wav samples: %w", err)
		}
		samples = samples[n:]
	}
	return nil
}

// wavHeader returns the 44-byte header of a 16-bit PCM WAV file with
// dataSize bytes of samples; 0xFFFFFFFF means "unknown, to end of stream".
func wavHeader(rate, channels int, dataSize uint32) []byte {
	le := binary.LittleEndian
	h := make([]byte, 44)
	copy(h[0:], "RIFF")
	riff := dataSize
	if dataSize != 0xFFFFFFFF {
		riff = dataSize + 36
	}
	le.PutUint32(h[4:], riff)
	copy(h[8:], "WAVEfmt ")
	le.PutUint32(h[16:], 16)
	le.PutUint16(h[20:], 1)
	le.PutUint16(h[22:], uint16(channels))
	le.PutUint32(h[24:], uint32(rate))
	le.PutUint32(h[28:], uint32(rate*channels*2))
	le.PutUint16(h[32:], uint16(channels*2))
	le.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	le.PutUint32(h[40:], dataSize)
	return h
}

// WAVWriter writes a 16-bit PCM WAV file whose length is not known in
// advance, such as a recording in progress. The header is written first with
// the sizes set to 0xFFFFFFFF ("to end of stream", which this package and
// most readers accept); Close patches the real sizes when the destination is
// an io.WriteSeeker, such as an *os.File. A WAVWriter is not safe for
// concurrent use.
type WAVWriter struct {
	w        io.Writer
	channels int
	bytes    int64
	closed   bool
}

// ErrWAVClosed is returned by WAVWriter methods called after Close.
var ErrWAVClosed = errors.New("audio: wav writer closed")

// NewWAVWriter writes the header to w and returns a writer for the samples.
func NewWAVWriter(w io.Writer, rate, channels int) (*WAVWriter, error) {
	if err := checkLayout(rate, channels); err != nil {
		return nil, fmt.Errorf("audio: wav writer: %w", err)
	}
	if _, err := w.Write(wavHeader(rate, channels, 0xFFFFFFFF)); err != nil {
		return nil, fmt.Errorf("audio: wav writer: %w", err)
	}
	return &WAVWriter{w: w, channels: channels}, nil
}

// WriteSamples appends interleaved samples. Frames may be split across
// calls.
func (ww *WAVWriter) WriteSamples(samples []int16) error {
	if ww.closed {
		return ErrWAVClosed
	}
	if ww.bytes+2*int64(len(samples)) > 0xFFFFFFFF-36 {
		return fmt.Errorf("audio: wav writer: file would exceed 4 GiB")
	}
	if err := writeInt16s(ww.w, samples); err != nil {
		return err
	}
	ww.bytes += 2 * int64(len(samples))
	return nil
}

// Close finishes the file: if the destination can seek, it rewrites the two
// size fields and seeks back to the end. It does not close the destination.
// Calling Close again does nothing.
func (ww *WAVWriter) Close() error {
	if ww.closed {
		return nil
	}
	ww.closed = true
	ws, ok := ww.w.(io.WriteSeeker)
	if !ok {
		return nil
	}
	var b [4]byte
	patch := func(off int64, v uint32) error {
		if _, err := ws.Seek(off, io.SeekStart); err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(b[:], v)
		_, err := ws.Write(b[:])
		return err
	}
	if err := patch(4, uint32(ww.bytes+36)); err != nil {
		return fmt.Errorf("audio: wav writer: patch header: %w", err)
	}
	if err := patch(40, uint32(ww.bytes)); err != nil {
		return fmt.Errorf("audio: wav writer: patch header: %w", err)
	}
	if _, err := ws.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("audio: wav writer: %w", err)
	}
	return nil
}
