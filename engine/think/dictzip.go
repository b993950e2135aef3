package think

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A dictzip file (dictd's .dict.dz) is a gzip file whose header carries
// an "RA" extra subfield: a version (1), the length of the chunks the
// text was cut into before compressing, their count, and the compressed
// size of each. Each chunk was compressed on its own and ends on a byte
// boundary, so a part of the text is read by inflating only the chunks
// that hold it. Without that subfield it is an ordinary gzip file, read
// from the start.

// maxRead bounds one read of a dictzip file: a dictionary entry is a few
// kilobytes; a larger request comes from a corrupt index.
const maxRead = 1 << 20

// maxChunksRead bounds how many chunks one read inflates.
const maxChunksRead = 64

// maxWholeRead bounds how far into a gzip file without chunks a read
// may reach.
const maxWholeRead = 256 << 20

// gzip header flags.
const (
	gzipHeaderCRC = 1 << 1
	gzipExtra     = 1 << 2
	gzipName      = 1 << 3
	gzipComment   = 1 << 4
)

// dictzip reads parts of a dictzip file.
type dictzip struct {
	r    io.ReaderAt
	size int64
	// chunkLen is the uncompressed length of each chunk but the last;
	// zero when the file has no chunks.
	chunkLen int64
	// starts holds each chunk's compressed offset in the file, and the
	// end of the last.
	starts []int64
}

// openDictzip reads a dictzip (or plain gzip) file's header.
func openDictzip(r io.ReaderAt, size int64) (*dictzip, error) {
	d := &dictzip{r: r, size: size}
	head := make([]byte, 10)
	if _, err := r.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("dictzip header: %w", err)
	}
	if head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 {
		return nil, errors.New("dictzip header: not a gzip file")
	}
	flags := head[3]
	pos := int64(len(head))
	var extra []byte
	if flags&gzipExtra != 0 {
		var n [2]byte
		if _, err := r.ReadAt(n[:], pos); err != nil {
			return nil, fmt.Errorf("dictzip extra field: %w", err)
		}
		extra = make([]byte, binary.LittleEndian.Uint16(n[:]))
		if _, err := r.ReadAt(extra, pos+2); err != nil {
			return nil, fmt.Errorf("dictzip extra field: %w", err)
		}
		pos += 2 + int64(len(extra))
	}
	for _, flag := range []byte{gzipName, gzipComment} {
		if flags&flag == 0 {
			continue
		}
		var err error
		if pos, err = skipZeroTerminated(r, pos, size); err != nil {
			return nil, fmt.Errorf("dictzip header: %w", err)
		}
	}
	if flags&gzipHeaderCRC != 0 {
		pos += 2
	}
	ra, ok := raSubfield(extra)
	if !ok {
		return d, nil
	}
	chunkLen, sizes, err := parseRA(ra)
	if err != nil {
		return nil, err
	}
	d.chunkLen = chunkLen
	d.starts = make([]int64, 0, len(sizes)+1)
	d.starts = append(d.starts, pos)
	for _, n := range sizes {
		pos += n
		if pos > size {
			return nil, errors.New("dictzip chunks: beyond the end of the file")
		}
		d.starts = append(d.starts, pos)
	}
	return d, nil
}

// skipZeroTerminated gives the offset after the zero byte that ends the
// string at pos.
func skipZeroTerminated(r io.ReaderAt, pos, size int64) (int64, error) {
	buf := make([]byte, 256)
	for pos < size {
		n, err := r.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		if n == 0 || err != nil && err != io.EOF {
			break
		}
		pos += int64(n)
	}
	return 0, errors.New("unterminated string")
}

// raSubfield finds the "RA" subfield's data in a gzip extra field.
func raSubfield(extra []byte) ([]byte, bool) {
	for len(extra) >= 4 {
		n := int(binary.LittleEndian.Uint16(extra[2:4]))
		if len(extra) < 4+n {
			return nil, false
		}
		if extra[0] == 'R' && extra[1] == 'A' {
			return extra[4 : 4+n], true
		}
		extra = extra[4+n:]
	}
	return nil, false
}

// parseRA reads the RA subfield: the chunks' uncompressed length and
// each one's compressed size.
func parseRA(ra []byte) (chunkLen int64, sizes []int64, err error) {
	if len(ra) < 6 {
		return 0, nil, errors.New("dictzip RA field: too short")
	}
	if v := binary.LittleEndian.Uint16(ra[0:2]); v != 1 {
		return 0, nil, fmt.Errorf("dictzip RA field: version %d", v)
	}
	chunkLen = int64(binary.LittleEndian.Uint16(ra[2:4]))
	count := int(binary.LittleEndian.Uint16(ra[4:6]))
	if chunkLen == 0 {
		return 0, nil, errors.New("dictzip RA field: chunks of length zero")
	}
	if len(ra) < 6+2*count {
		return 0, nil, fmt.Errorf("dictzip RA field: %d chunks in %d bytes", count, len(ra))
	}
	sizes = make([]int64, count)
	for i := range sizes {
		sizes[i] = int64(binary.LittleEndian.Uint16(ra[6+2*i:]))
	}
	return chunkLen, sizes, nil
}

// read gives n bytes of the uncompressed text from off; fewer at its
// end.
func (d *dictzip) read(off, n int64) ([]byte, error) {
	return d.readWith(off, n, d.chunk)
}

// readWith reads as read does, getting each chunk from chunk.
func (d *dictzip) readWith(off, n int64, chunk func(i int64) ([]byte, error)) ([]byte, error) {
	if off < 0 || n < 0 || n > maxRead {
		return nil, fmt.Errorf("dictzip: a read of %d bytes at %d", n, off)
	}
	if n == 0 {
		return nil, nil
	}
	if d.chunkLen == 0 {
		return d.readWhole(off, n)
	}
	first, last := off/d.chunkLen, (off+n-1)/d.chunkLen
	count := int64(len(d.starts) - 1)
	if first >= count {
		return nil, fmt.Errorf("dictzip: offset %d beyond the text", off)
	}
	last = min(last, count-1)
	if last-first >= maxChunksRead {
		return nil, fmt.Errorf("dictzip: a read of %d bytes over %d chunks", n, last-first+1)
	}
	var text []byte
	for i := first; i <= last; i++ {
		b, err := chunk(i)
		if err != nil {
			return nil, err
		}
		text = append(text, b...)
	}
	skip := off - first*d.chunkLen
	if skip >= int64(len(text)) {
		return nil, fmt.Errorf("dictzip: offset %d beyond the text", off)
	}
	text = text[skip:]
	return text[:min(n, int64(len(text)))], nil
}

// chunk inflates chunk i.
func (d *dictzip) chunk(i int64) ([]byte, error) {
	start, end := d.starts[i], d.starts[i+1]
	fr := flate.NewReader(io.NewSectionReader(d.r, start, end-start))
	defer fr.Close()
	// A chunk but the last ends on a sync flush, not on a final block:
	// the inflater reads all of it and then finds the input ended.
	text, err := io.ReadAll(io.LimitReader(fr, d.chunkLen))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("dictzip chunk %d: %w", i, err)
	}
	if int64(len(text)) < d.chunkLen && i < int64(len(d.starts))-2 {
		return nil, fmt.Errorf("dictzip chunk %d: %d bytes, not %d", i, len(text), d.chunkLen)
	}
	return text, nil
}

// readWhole reads a gzip file without chunks from its start.
func (d *dictzip) readWhole(off, n int64) ([]byte, error) {
	if off > maxWholeRead {
		return nil, fmt.Errorf("dictzip: offset %d too far into a file without chunks", off)
	}
	zr, err := gzip.NewReader(io.NewSectionReader(d.r, 0, d.size))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	defer zr.Close()
	if _, err := io.CopyN(io.Discard, zr, off); err != nil {
		return nil, fmt.Errorf("gzip: offset %d: %w", off, err)
	}
	text, err := io.ReadAll(io.LimitReader(zr, n))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return text, nil
}
