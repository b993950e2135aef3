package think

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Sorted text files, WordNet's index and exception files and dictd's
// index, are searched in place: a binary search over byte offsets reads
// a few dozen lines, never the whole file.

// maxLine bounds one line of a searched file; a longer one means the
// file is not what it should be.
const maxLine = 1 << 16

// errLongLine is a line longer than maxLine.
var errLongLine = errors.New("line too long")

// lineFile is a text file of lines sorted by a key.
type lineFile struct {
	r    io.ReaderAt
	size int64
}

// lineAt reads the line that starts at off, without its newline, and
// gives the offset of the line after it (the file's size after the
// last line).
func (f lineFile) lineAt(off int64) (line []byte, next int64, err error) {
	if off < 0 || off >= f.size {
		return nil, f.size, nil
	}
	buf := make([]byte, 0, 512)
	for pos := off; pos < f.size; {
		n := min(int64(cap(buf)-len(buf)), f.size-pos)
		start := len(buf)
		buf = buf[:start+int(n)]
		if got, err := f.r.ReadAt(buf[start:], pos); got < int(n) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, fmt.Errorf("read at %d: %w", pos, err)
		}
		if i := bytes.IndexByte(buf[start:], '\n'); i >= 0 {
			end := start + i
			return buf[:end], off + int64(end) + 1, nil
		}
		pos += n
		if len(buf) >= maxLine {
			return nil, 0, fmt.Errorf("at %d: %w", off, errLongLine)
		}
		buf = slices.Grow(buf, len(buf))
	}
	return buf, f.size, nil
}

// nextStart gives the offset of the first line that starts at or after
// off.
func (f lineFile) nextStart(off int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	_, next, err := f.lineAt(off - 1)
	return next, err
}

// search returns up to limit lines whose key, as keyOf reads it from a
// line, is key; the file's lines ascend by that key as bytes.Compare
// orders them. An unsorted file gives wrong answers, never a hang.
//
// It searches the offsets p of the file for the first whose next line
// (the first line that starts at p or after) is not less than key: each
// probe reads a line or two, whatever the lengths of the lines.
func (f lineFile) search(key []byte, keyOf func(line []byte) []byte, limit int) ([][]byte, error) {
	lo, hi := int64(0), f.size
	for lo < hi {
		mid := lo + (hi-lo)/2
		s, err := f.nextStart(mid)
		if err != nil {
			return nil, err
		}
		if s >= f.size {
			hi = mid
			continue
		}
		line, _, err := f.lineAt(s)
		if err != nil {
			return nil, err
		}
		if bytes.Compare(keyOf(line), key) >= 0 {
			hi = mid
		} else {
			lo = max(mid+1, s+1) // every offset up to s is followed by this line
		}
	}
	off, err := f.nextStart(lo)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for off < f.size && len(out) < limit {
		line, next, err := f.lineAt(off)
		if err != nil {
			return out, err
		}
		if !bytes.Equal(keyOf(line), key) {
			break
		}
		out = append(out, line)
		off = next
	}
	return out, nil
}

// keyBefore is the part of line before the first sep: the whole line
// when there is none.
func keyBefore(sep byte) func(line []byte) []byte {
	return func(line []byte) []byte {
		if i := bytes.IndexByte(line, sep); i >= 0 {
			return line[:i]
		}
		return line
	}
}
