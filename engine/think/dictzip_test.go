package think

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeDictzip compresses text as dictzip does: chunks of chunkLen bytes,
// each deflated on its own and ended with a flush (the last with the
// final block), their compressed sizes in the gzip header's RA
// subfield. With chunkLen 0 it writes a gzip file without chunks.
func makeDictzip(t testing.TB, text []byte, chunkLen int) []byte {
	t.Helper()
	var body bytes.Buffer
	var sizes []int
	if chunkLen == 0 {
		fw, _ := flate.NewWriter(&body, flate.BestCompression)
		fw.Write(text)
		fw.Close()
	}
	for start := 0; chunkLen > 0 && (start < len(text) || start == 0); start += chunkLen {
		end := min(start+chunkLen, len(text))
		before := body.Len()
		fw, err := flate.NewWriter(&body, flate.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(text[start:end])
		if end == len(text) {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, body.Len()-before)
		if end == len(text) {
			break
		}
	}
	var out bytes.Buffer
	flags := byte(gzipName)
	if chunkLen > 0 {
		flags |= gzipExtra
	}
	out.Write([]byte{0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 2, 3})
	if chunkLen > 0 {
		ra := binary.LittleEndian.AppendUint16(nil, 1)
		ra = binary.LittleEndian.AppendUint16(ra, uint16(chunkLen))
		ra = binary.LittleEndian.AppendUint16(ra, uint16(len(sizes)))
		for _, n := range sizes {
			if n > 0xffff {
				t.Fatalf("a chunk of %d compressed bytes", n)
			}
			ra = binary.LittleEndian.AppendUint16(ra, uint16(n))
		}
		extra := append([]byte{'R', 'A'}, binary.LittleEndian.AppendUint16(nil, uint16(len(ra)))...)
		extra = append(extra, ra...)
		out.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(extra))))
		out.Write(extra)
	}
	out.WriteString("test.dict\x00")
	out.Write(body.Bytes())
	out.Write(binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(text)))
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(text))))
	return out.Bytes()
}

// dictzipDir is a copy of testdata/dictd with each .dict compressed to a
// .dict.dz in chunks of chunkLen bytes.
func dictzipDir(t *testing.T, chunkLen int) string {
	t.Helper()
	dir := t.TempDir()
	names, err := filepath.Glob("testdata/dictd/*")
	if err != nil || len(names) == 0 {
		t.Fatalf("testdata/dictd: %v", err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(name)
		if strings.HasSuffix(base, ".dict") {
			b, base = makeDictzip(t, b, chunkLen), base+".dz"
		}
		if err := os.WriteFile(filepath.Join(dir, base), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sampleText() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 5000; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), i%7+1))
		b.WriteString(" entry\n")
	}
	return b.Bytes()
}

func TestDictzipRead(t *testing.T) {
	text := sampleText()
	for _, chunkLen := range []int{0, 31, 97, 1000, 58315} {
		file := makeDictzip(t, text, chunkLen)
		// The file is a gzip file, whole, as gzip reads it.
		zr, err := gzip.NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		whole, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(whole, text) {
			t.Fatalf("chunks of %d: gzip reads %d bytes, %v", chunkLen, len(whole), err)
		}
		dz, err := openDictzip(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			t.Fatalf("chunks of %d: %v", chunkLen, err)
		}
		if int(dz.chunkLen) != chunkLen {
			t.Errorf("chunk length %d, want %d", dz.chunkLen, chunkLen)
		}
		for _, r := range [][2]int64{{0, 10}, {95, 10}, {96, 2}, {97, 1}, {990, 30}, {0, 5000}, {4990, 100}, {int64(len(text)) - 1, 1}, {1234, 0}} {
			if r[1] > int64(chunkLen*maxChunksRead) && chunkLen > 0 {
				continue
			}
			got, err := dz.read(r[0], r[1])
			want := text[r[0]:min(r[0]+r[1], int64(len(text)))]
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("chunks of %d: read(%d, %d) = %q, %v; want %q", chunkLen, r[0], r[1], got, err, want)
			}
		}
		if _, err := dz.read(int64(len(text))+10, 5); err == nil && chunkLen > 0 {
			t.Errorf("chunks of %d: a read beyond the text gave no error", chunkLen)
		}
		if _, err := dz.read(0, maxRead+1); err == nil {
			t.Errorf("chunks of %d: a read of more than maxRead gave no error", chunkLen)
		}
	}
}

func TestDictzipCorrupt(t *testing.T) {
	text := sampleText()
	good := makeDictzip(t, text, 500)
	for name, file := range map[string][]byte{
		"empty":           nil,
		"not gzip":        []byte("plain text, not compressed at all"),
		"header only":     good[:12],
		"truncated extra": good[:20],
		"truncated body":  good[:len(good)/2],
	} {
		dz, err := openDictzip(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			continue
		}
		if _, err := dz.read(0, int64(len(text))); err == nil && name != "header only" {
			t.Errorf("%s: read gave no error", name)
		}
	}
	// A chunk's bytes damaged: an error or some text, never a panic
	// (deflate has no checksum of its own).
	bad := bytes.Clone(good)
	for i := len(bad) / 2; i < len(bad)/2+40; i++ {
		bad[i] ^= 0x5a
	}
	if dz, err := openDictzip(bytes.NewReader(bad), int64(len(bad))); err == nil {
		for off := int64(0); off < int64(len(text)); off += 500 {
			dz.read(off, 500)
		}
	}
}

func FuzzDictzip(f *testing.F) {
	text := sampleText()
	f.Add(makeDictzip(f, text, 300), int64(10), int64(700))
	f.Add(makeDictzip(f, text, 0), int64(4000), int64(100))
	f.Add(makeDictzip(f, []byte("x"), 1), int64(0), int64(1))
	f.Add([]byte{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0, 10, 0, 'R', 'A', 6, 0, 1, 0, 0, 0, 0, 0}, int64(0), int64(1))
	f.Fuzz(func(t *testing.T, file []byte, off, n int64) {
		dz, err := openDictzip(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			return
		}
		got, err := dz.read(off, n)
		if err == nil && int64(len(got)) > n {
			t.Fatalf("read(%d, %d) gave %d bytes", off, n, len(got))
		}
	})
}
