package audio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Fuzz targets for every parser of outside input. Each checks that nothing
// panics (third-party decoders run behind recover), that failures are
// reported as ErrUndecodable or ErrTooLarge, and that decoding does not
// depend on how the input is chunked.

// seedFiles adds the start of each test file (small, to keep the corpus
// small) and a few hand-made inputs.
func seedFiles(f *testing.F, add func(b []byte)) {
	names, _ := filepath.Glob("testdata/speech*")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		add(b[:min(len(b), 1500)])
	}
	add(riffFile(riffChunk("fmt ", fmtBody(1, 2, 8000, 16)), riffChunk("data", []byte{1, 2, 3, 4, 5, 6, 7, 8})))
	add(riffFile(riffChunk("fmt ", fmtBody(3, 1, 8000, 32)), chunkWithSize("data", 0xFFFFFFFF, f32bytes(0.5, -0.25))))
	add(riffFile(riffChunk("fmt ", fmtBodyExtensible(1, 1, 8000, 24, 20)), riffChunk("data", []byte{1, 2, 3})))
	add([]byte("ID3\x03\x00\x00\x00\x00\x00\x02\x00\x00\xff\xfb\x90\x00"))
}

// fixOggCRC recomputes the checksum of every complete Ogg page in b, so
// that mutated Ogg input reaches the Vorbis and Opus decoders instead of
// stopping at the checksum.
func fixOggCRC(b []byte) []byte {
	b = slices.Clone(b)
	for off := 0; ; {
		h, err := parseOggHeader(b[off:])
		if err != nil {
			return b
		}
		end := off + h.headerLen + h.bodyLen
		if end > len(b) {
			return b
		}
		binary.LittleEndian.PutUint32(b[off+22:], oggCRC(b[off:end]))
		off = end
	}
}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrUndecodable) && !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v is neither ErrUndecodable nor ErrTooLarge", err)
	}
}

func checkBuffer(t *testing.T, b *Buffer) {
	t.Helper()
	if checkLayout(b.SampleRate, b.Channels) != nil {
		t.Fatalf("decoded with invalid layout %d Hz %d ch", b.SampleRate, b.Channels)
	}
	if len(b.Samples)%b.Channels != 0 {
		t.Fatalf("%d samples is not whole %d-channel frames", len(b.Samples), b.Channels)
	}
}

func FuzzDetect(f *testing.F) {
	seedFiles(f, func(b []byte) { f.Add(b[:min(len(b), 300)]) })
	f.Fuzz(func(t *testing.T, b []byte) {
		c := Detect(b)
		// A decision made on a prefix stands when more bytes arrive.
		for n := range min(len(b), 64) {
			if p := Detect(b[:n]); p != ContainerUnknown && p != c {
				t.Fatalf("first %d bytes detected as %v, all %d as %v", n, p, len(b), c)
			}
		}
		_, more, err := sniff(b, true)
		if more {
			checkDecodeError(t, err)
		}
	})
}

func FuzzWAV(f *testing.F) {
	seedFiles(f, func(b []byte) {
		if hasPrefix(b, "RIFF") {
			f.Add(b[12:], uint16(7))
		}
	})
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		file := append([]byte("RIFF\x00\x00\x00\x00WAVE"), body...)
		whole, err := Decode(context.Background(), bytes.NewReader(file))
		checkDecodeError(t, err)
		if err == nil {
			checkBuffer(t, whole)
		}
		// Split in two at an arbitrary point, then byte by byte.
		s := int(split) % (len(file) + 1)
		got, _, err2 := decodeChunks(t, Format{}, [][]byte{file[:s], file[s:]})
		if (err == nil) != (err2 == nil) || (err == nil && !slices.Equal(got, whole.Samples)) {
			t.Fatalf("split at %d: %v (%d samples); whole: %v", s, err2, len(got), err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	seedFiles(f, func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		if hasPrefix(b, "OggS") {
			b = fixOggCRC(b)
		}
		buf, err := Decode(context.Background(), bytes.NewReader(b))
		checkDecodeError(t, err)
		if err == nil {
			checkBuffer(t, buf)
		}
	})
}

func FuzzStreamDecoder(f *testing.F) {
	seedFiles(f, func(b []byte) { f.Add(b, uint64(1), uint8(0)) })
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVE"), uint64(2), uint8(1))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7}, uint64(3), uint8(1))
	f.Add([]byte{0x80, 0x7f, 0x00}, uint64(4), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64, mode uint8) {
		if hasPrefix(b, "OggS") {
			b = fixOggCRC(b)
		}
		// mode 0: containerised; 1..4: raw encodings with 1-2 channels.
		var format Format
		if e := Encoding(mode % 5); e != EncodingNone {
			format = Format{Encoding: e, SampleRate: 16000, Channels: 1 + int(mode/5)%2}
		}
		whole, _, err := decodeChunks(t, format, [][]byte{b})
		checkDecodeError(t, err)
		chunks := randomChunks(b, rand.New(rand.NewPCG(seed, seed)), 64)
		got, _, err2 := decodeChunks(t, format, chunks)
		checkDecodeError(t, err2)
		if errors.Is(err, ErrTooLarge) || errors.Is(err2, ErrTooLarge) {
			return // how much one call may return depends on the chunks
		}
		if (err == nil) != (err2 == nil) || (err == nil && !slices.Equal(got, whole)) {
			t.Fatalf("in %d chunks: %v (%d samples); whole: %v (%d samples)", len(chunks), err2, len(got), err, len(whole))
		}
	})
}
