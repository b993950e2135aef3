package audio

import (
	"errors"
	"io"
)

// SeekBuffer is an in-memory file: an io.WriteSeeker whose bytes can be
// read back. Encoders that learn a file's length only at its end (the
// sizes of a WAV header, the sample count and MD5 of a FLAC STREAMINFO)
// go back and write it when their destination can seek; encoding into a
// SeekBuffer gives a file with its real sizes even when it then goes to a
// destination that cannot seek. The zero value is an empty buffer. It is
// not safe for concurrent use.
type SeekBuffer struct {
	b   []byte
	off int
}

// Write writes p at the current offset, growing the buffer as needed.
func (s *SeekBuffer) Write(p []byte) (int, error) {
	end := s.off + len(p)
	if end > len(s.b) {
		s.b = append(s.b, make([]byte, end-len(s.b))...)
	}
	copy(s.b[s.off:], p)
	s.off = end
	return len(p), nil
}

// Seek sets the offset of the next Write. Seeking past the end is allowed;
// a Write there fills the gap with zeros.
func (s *SeekBuffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(s.off)
	case io.SeekEnd:
		base = int64(len(s.b))
	default:
		return 0, errors.New("audio: SeekBuffer.Seek: invalid whence")
	}
	n := base + offset
	if n < 0 || n > int64(^uint(0)>>1) {
		return 0, errors.New("audio: SeekBuffer.Seek: offset out of range")
	}
	s.off = int(n)
	return n, nil
}

// Bytes returns the buffer's contents. It aliases the buffer until the
// next Write.
func (s *SeekBuffer) Bytes() []byte { return s.b }

// Len returns the length of the contents.
func (s *SeekBuffer) Len() int { return len(s.b) }
