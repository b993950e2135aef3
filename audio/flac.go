package audio

import (
	"bufio"
	"errors"
	"io"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
)

// runFLAC decodes a FLAC stream with github.com/mewkiz/flac.
//
// That library fully parses the first metadata block, whatever its type, and
// a picture block there would make it allocate its declared size (up to 4
// GiB); so the first block is checked to be a STREAMINFO block of its fixed
// size first. Later metadata blocks are skipped by the library unparsed.
func runFLAC(br *bufio.Reader, s *pullStream) (err error) {
	defer recoverUndecodable("FLAC decoder", &err)
	h, err := br.Peek(8)
	if err != nil {
		if errors.Is(err, errStopped) {
			return err
		}
		return undecodable("FLAC stream ends inside its header")
	}
	if string(h[:4]) != "fLaC" {
		return undecodable("FLAC signature missing")
	}
	if h[4]&0x7F != 0 || h[5] != 0 || h[6] != 0 || h[7] != 34 {
		return undecodable("FLAC stream does not start with a STREAMINFO block")
	}
	stream, err := flac.New(br)
	if err != nil {
		if errors.Is(err, errStopped) {
			return err
		}
		return codecError("FLAC", err)
	}
	si := stream.Info
	rate, ch, bps := int(si.SampleRate), int(si.NChannels), int(si.BitsPerSample)
	if err := checkLayout(rate, ch); err != nil {
		return undecodable("FLAC: %v", err)
	}
	if bps < 4 || bps > 32 {
		return undecodable("FLAC: %d bits per sample is invalid", bps)
	}
	s.setInfo(Info{Container: ContainerFLAC, SampleRate: rate, Channels: ch})

	var samples []float32
	for {
		f, err := stream.Next()
		if err == nil {
			if f.BitsPerSample == 0 {
				f.BitsPerSample = uint8(bps) // "see STREAMINFO"
			}
			err = f.Parse()
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil // the end, or a stream cut off inside its last frame
		case errors.Is(err, errStopped):
			return err
		default:
			return codecError("FLAC", err)
		}
		if samples, err = interleaveFLAC(samples[:0], f, ch); err != nil {
			return err
		}
		if err := s.emit(samples); err != nil {
			return err
		}
	}
}

// interleaveFLAC appends the frame's samples, interleaved and scaled to full
// scale +-1, to dst.
func interleaveFLAC(dst []float32, f *frame.Frame, ch int) ([]float32, error) {
	if len(f.Subframes) != ch {
		return dst, undecodable("FLAC frame has %d channels, stream has %d", len(f.Subframes), ch)
	}
	n := int(f.BlockSize)
	for _, sf := range f.Subframes {
		if len(sf.Samples) != n {
			return dst, undecodable("FLAC subframe holds %d samples, frame %d", len(sf.Samples), n)
		}
	}
	if f.BitsPerSample < 1 || f.BitsPerSample > 32 {
		return dst, undecodable("FLAC frame has %d bits per sample", f.BitsPerSample)
	}
	scale := 1 / float64(uint64(1)<<(f.BitsPerSample-1))
	dst, out := grow(dst, n*ch)
	for c, sf := range f.Subframes {
		for i, v := range sf.Samples {
			out[i*ch+c] = float32(float64(v) * scale)
		}
	}
	return dst, nil
}
