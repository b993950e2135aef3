package audio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// OpenFileReplay opens the recording at path as a Replay (paced or not,
// as cfg says) that decodes it as it is read, so that memory holds a
// piece of it whatever its length: a conversation from a file. A file in
// a container of video and meetings (MP4, MOV, WebM, MKV) gives its first
// audio track at 16 kHz mono, decoded by FFmpeg (see DecodeFile); any
// other file (WAV, MP3, FLAC, Ogg, AAC) its own rate and channels, as
// Decode gives them. ctx bounds the decoding. A file that holds no audio
// this build reads matches ErrUndecodable.
func OpenFileReplay(ctx context.Context, path string, cfg ReplayConfig) (*Replay, error) {
	var head [64]byte
	n, err := readHead(path, head[:])
	if err != nil {
		return nil, err
	}
	if c := Detect(head[:n]); c == ContainerMP4 || c == ContainerMatroska {
		if _, err := ProbeFile(ctx, path); err != nil {
			return nil, err
		}
		d, err := DecodeFile(ctx, path)
		if err != nil {
			return nil, err
		}
		r, err := NewReplayReader(Format{Encoding: EncodingLinear16, SampleRate: SpeechRate, Channels: 1}, d, cfg)
		if err != nil {
			d.Close()
			return nil, err
		}
		return r, nil
	}
	s, err := openFileStream(ctx, path)
	if err != nil {
		return nil, err
	}
	r, err := NewReplayReader(s.format, s, cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	return r, nil
}

// fileStreamPiece is how much of a file is decoded at a time: what it
// decodes to is held at once, and a kilobyte of FLAC of digital silence
// is some 350,000 samples (a larger piece, proportionally more).
const fileStreamPiece = 1 << 10

// fileStream decodes a file in a format a StreamDecoder reads, a piece at
// a time as its samples are read. It is a SampleReader; it is not safe
// for concurrent use.
type fileStream struct {
	ctx    context.Context
	f      *os.File
	dec    *StreamDecoder
	format Format
	piece  [fileStreamPiece]byte
	out    []float32 // decoded and not yet read
	keep   []float32 // out's storage
	ended  bool      // the file was read to its end and the decoder flushed
	err    error     // sticky: io.EOF once out is read, or the failure
}

// openFileStream opens the file at path and decodes its start, until its
// format is known.
func openFileStream(ctx context.Context, path string) (*fileStream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	dec, err := NewStreamDecoder(Format{})
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &fileStream{ctx: ctx, f: f, dec: dec}
	for {
		if info, ok := dec.Info(); ok {
			s.format = Format{Encoding: EncodingLinear16, SampleRate: info.SampleRate, Channels: info.Channels}
			if err := s.format.Validate(); err != nil {
				s.Close()
				return nil, undecodable("%v", err)
			}
			return s, nil
		}
		if s.ended {
			s.Close()
			return nil, undecodable("no audio could be decoded from the file")
		}
		if err := s.more(); err != nil {
			s.Close()
			return nil, err
		}
	}
}

// more decodes the next piece of the file into out, or, at the file's
// end, what the decoder holds back.
func (s *fileStream) more() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	n, rerr := s.f.Read(s.piece[:])
	var (
		samples []float32
		err     error
	)
	switch {
	case n > 0:
		samples, err = s.dec.Decode(s.piece[:n])
	case errors.Is(rerr, io.EOF):
		samples, err = s.dec.Flush()
		s.ended = true
	case rerr != nil:
		return fmt.Errorf("read the file: %w", rerr)
	}
	s.keep = append(s.keep[:0], samples...)
	s.out = s.keep
	return err
}

// Read fills pcm with the next samples, interleaved.
func (s *fileStream) Read(pcm []int16) (int, error) {
	for len(s.out) == 0 {
		switch {
		case s.err != nil:
			return 0, s.err
		case s.ended:
			s.err = io.EOF
		default:
			if err := s.more(); err != nil {
				s.err = err
			}
		}
	}
	n := min(len(pcm), len(s.out))
	Float32ToInt16(pcm[:0], s.out[:n])
	s.out = s.out[n:]
	return n, nil
}

// Close closes the decoder and the file; it may be called more than once.
func (s *fileStream) Close() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		s.err = ErrClosed
	}
	_ = s.dec.Close()
	return s.f.Close()
}
