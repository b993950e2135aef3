package audio

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash"
	"io"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// flacBlock is the samples per FLAC frame: 4096, the reference encoder's
// default, bounds the output delay to 85 ms at 48 kHz.
const flacBlock = 4096

// flacEncoder streams mono 16-bit FLAC with github.com/mewkiz/flac, which
// picks a constant, fixed-predictor or verbatim subframe per frame. The
// STREAMINFO block is written first with the total length and MD5 unknown
// (0), which the format allows for streams; each frame is written as soon
// as its block of samples is complete, the short last one at Close. When
// the destination can seek (a file, a SeekBuffer), Close goes back and
// writes the sample count and MD5 into STREAMINFO, as a file on disk must
// have them for players to know its length.
type flacEncoder struct {
	w     io.Writer
	enc   *flac.Encoder
	buf   bytes.Buffer // one encoded frame, written to w in one call
	block []int32
	frame *frame.Frame

	seeker  io.WriteSeeker // w, when it can seek
	start   int64          // where the stream starts in seeker
	samples uint64         // samples written
	sum     hash.Hash      // MD5 of the samples, 16-bit little-endian
	raw     []byte
}

// writerOnly hides a destination's Close and Seek from the FLAC library,
// whose Close would close it and seek to rewrite STREAMINFO.
type writerOnly struct{ w io.Writer }

func (o writerOnly) Write(p []byte) (int, error) { return o.w.Write(p) }

func newFLACEncoder(w io.Writer, spec EncodeSpec) (_ *flacEncoder, err error) {
	defer recoverEncoder("FLAC", &err)
	f := &flacEncoder{w: w, block: make([]int32, 0, flacBlock), sum: md5.New()}
	if ws, ok := w.(io.WriteSeeker); ok {
		if at, err := ws.Seek(0, io.SeekCurrent); err == nil {
			f.seeker, f.start = ws, at
		}
	}
	info := &meta.StreamInfo{
		BlockSizeMin:  flacBlock,
		BlockSizeMax:  flacBlock,
		SampleRate:    uint32(spec.SampleRate),
		NChannels:     1,
		BitsPerSample: 16,
	}
	enc, err := flac.NewEncoder(writerOnly{&f.buf}, info)
	if err != nil {
		return nil, fmt.Errorf("flac: %w", err)
	}
	f.enc = enc
	f.frame = &frame.Frame{
		Header: frame.Header{
			HasFixedBlockSize: true,
			SampleRate:        uint32(spec.SampleRate),
			Channels:          frame.ChannelsMono,
			BitsPerSample:     16,
		},
		Subframes: []*frame.Subframe{{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}}},
	}
	if err := f.drain(); err != nil {
		return nil, err
	}
	return f, nil
}

// drain writes what the library produced to the destination.
func (f *flacEncoder) drain() error {
	if f.buf.Len() == 0 {
		return nil
	}
	_, err := f.w.Write(f.buf.Bytes())
	f.buf.Reset()
	return err
}

func (f *flacEncoder) write(pcm []int16) error {
	f.samples += uint64(len(pcm))
	f.raw = Int16ToBytes(f.raw[:0], pcm)
	f.sum.Write(f.raw)
	for len(pcm) > 0 {
		n := min(len(pcm), flacBlock-len(f.block))
		for _, v := range pcm[:n] {
			f.block = append(f.block, int32(v))
		}
		pcm = pcm[n:]
		if len(f.block) == flacBlock {
			if err := f.writeFrame(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFrame encodes the block as one frame.
func (f *flacEncoder) writeFrame() (err error) {
	defer recoverEncoder("FLAC", &err)
	sf := f.frame.Subframes[0]
	// The library's analysis rewrites the subframe header: start afresh.
	sf.SubHeader = frame.SubHeader{Pred: frame.PredVerbatim}
	sf.Samples, sf.NSamples = f.block, len(f.block)
	f.frame.BlockSize = uint16(len(f.block))
	if err := f.enc.WriteFrame(f.frame); err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	f.block = f.block[:0]
	return f.drain()
}

func (f *flacEncoder) finish() error {
	if len(f.block) > 0 {
		if err := f.writeFrame(); err != nil {
			return err
		}
	}
	if err := f.enc.Close(); err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	if err := f.drain(); err != nil {
		return err
	}
	return f.patchStreamInfo()
}

// streamInfoCount is where, after "fLaC", the block's 4-byte header and
// 10 bytes of frame sizes, STREAMINFO's sample rate (20 bits), channels
// less one (3), bits per sample less one (5) and sample count (36) share 8
// bytes; the MD5 of the samples follows them.
const streamInfoCount = 4 + 4 + 10

// patchStreamInfo writes the sample count and MD5 into STREAMINFO when the
// destination can seek; a stream keeps "unknown" (0).
func (f *flacEncoder) patchStreamInfo() error {
	if f.seeker == nil || f.samples >= 1<<36 {
		return nil
	}
	end, err := f.seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	// The rate, channels and bits are known from the start: rebuild the
	// 8 bytes rather than read them back.
	const mono, bits16 = 0, 15
	v := uint64(f.frame.Header.SampleRate)<<44 | mono<<41 | bits16<<36 | f.samples
	var b [8 + md5.Size]byte
	binary.BigEndian.PutUint64(b[:8], v)
	f.sum.Sum(b[8:8])
	if _, err := f.seeker.Seek(f.start+streamInfoCount, io.SeekStart); err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	if _, err := f.seeker.Write(b[:]); err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	if _, err := f.seeker.Seek(end, io.SeekStart); err != nil {
		return fmt.Errorf("flac: %w", err)
	}
	return nil
}

func (f *flacEncoder) abort() {}
