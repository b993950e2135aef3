package audio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// oggPages splits a file into its pages.
func oggPages(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var pages [][]byte
	for len(b) > 0 {
		h, err := parseOggHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		n := h.headerLen + h.bodyLen
		pages = append(pages, b[:n])
		b = b[n:]
	}
	return pages
}

// withSerial returns a copy of page with another serial number and a
// recomputed checksum.
func withSerial(page []byte, serial uint32) []byte {
	p := slices.Clone(page)
	binary.LittleEndian.PutUint32(p[14:], serial)
	binary.LittleEndian.PutUint32(p[22:], oggCRC(p))
	return p
}

// bigPacketPages carries one packet over as many pages as it needs, with
// the continuation flag on all but the first.
func bigPacketPages(serial uint32, packet []byte) []byte {
	var out []byte
	flags := byte(0)
	for first := true; first || len(packet) > 0; first = false {
		n := min(len(packet), 255*255)
		body := packet[:n]
		packet = packet[n:]
		var lacing []byte
		rest := len(body)
		for rest >= 255 {
			lacing = append(lacing, 255)
			rest -= 255
		}
		if len(packet) == 0 { // the packet ends on this page
			lacing = append(lacing, byte(rest))
		}
		h := make([]byte, oggHeaderLen)
		copy(h, "OggS")
		h[5] = flags
		binary.LittleEndian.PutUint64(h[6:], ^uint64(0))
		binary.LittleEndian.PutUint32(h[14:], serial)
		h[26] = byte(len(lacing))
		page := append(append(h, lacing...), body...)
		binary.LittleEndian.PutUint32(page[22:], oggCRC(page))
		out = append(out, page...)
		flags = oggContinued
	}
	return out
}

func decodeBytes(t *testing.T, b []byte) (*Buffer, error) {
	t.Helper()
	return Decode(context.Background(), bytes.NewReader(b))
}

func TestOggStructures(t *testing.T) {
	for _, name := range []string{"speech.opus", "speech.ogg"} {
		t.Run(name, func(t *testing.T) {
			file := readTestdata(t, name)
			want, err := decodeBytes(t, file)
			if err != nil {
				t.Fatal(err)
			}
			pages := oggPages(t, file)
			serial := binary.LittleEndian.Uint32(pages[0][14:])

			// Chained: the same stream again under another serial number.
			chained := slices.Clone(file)
			for _, p := range pages {
				chained = append(chained, withSerial(p, serial+1)...)
			}
			b, err := decodeBytes(t, chained)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.Samples, append(slices.Clone(want.Samples), want.Samples...)) {
				t.Errorf("chained: %d samples, want twice %d", len(b.Samples), len(want.Samples))
			}

			// Multiplexed with an Ogg Skeleton track, whose pages come
			// first and in between.
			fishead := oggPage(oggBOS, 0, 99, append([]byte("fishead\x00\x03\x00\x00\x00"), make([]byte, 52)...))
			muxed := slices.Concat(fishead, pages[0], oggPage(oggEOS, 0, 99))
			for _, p := range pages[1:] {
				muxed = append(muxed, p...)
			}
			if got := Detect(muxed); got != want.Container {
				t.Errorf("multiplexed stream detected as %v", got)
			}
			if b, err := decodeBytes(t, muxed); err != nil || !slices.Equal(b.Samples, want.Samples) {
				t.Errorf("multiplexed: %v", err)
			}

			// A 3 MiB comment header (cover art) over 50 pages: skipped
			// without being buffered, though larger than maxOggPacket.
			// The header pages (granule 0) are rebuilt around it.
			headers := 1
			for headers < len(pages) && binary.LittleEndian.Uint64(pages[headers][6:]) == 0 {
				headers++
			}
			packets := oggPacketsOf(pages[1:headers])
			comment := append(slices.Clone(packets[0][:8]), make([]byte, 3<<20)...)
			big := slices.Concat(pages[0], bigPacketPages(serial, comment))
			for _, p := range packets[1:] {
				big = append(big, bigPacketPages(serial, p)...)
			}
			for _, p := range pages[headers:] {
				big = append(big, p...)
			}
			if b, err := decodeBytes(t, big); err != nil || !slices.Equal(b.Samples, want.Samples) {
				t.Errorf("big comment: %v", err)
			}
		})
	}
}

// oggPacketsOf reassembles the packets carried by pages.
func oggPacketsOf(pages [][]byte) [][]byte {
	var packets [][]byte
	var cur []byte
	for _, p := range pages {
		h, _ := parseOggHeader(p)
		body := p[h.headerLen:]
		for _, l := range h.lacing {
			cur = append(cur, body[:l]...)
			body = body[l:]
			if l < 255 {
				packets = append(packets, cur)
				cur = nil
			}
		}
	}
	return packets
}

func TestOggErrors(t *testing.T) {
	file := readTestdata(t, "speech.opus")
	pages := oggPages(t, file)
	corrupt := slices.Clone(file)
	corrupt[len(corrupt)-10] ^= 0x40
	head := slices.Clone(pages[0])
	head[oggHeaderLen+1+9] = 6 // six channels
	head[oggHeaderLen+1+18] = 1
	binary.LittleEndian.PutUint32(head[22:], oggCRC(head))
	tests := []struct {
		name string
		data []byte
		why  string
	}{
		{"checksum", corrupt, "checksum"},
		{"lost sync", slices.Concat(pages[0], pages[1], []byte("junk"), pages[2]), "sync"},
		{"ends inside a page", file[:len(file)-5], "inside a page"},
		{"ends before audio headers", pages[0][:len(pages[0])], "before"},
		{"surround opus", slices.Concat(head, pages[1]), "6 channels"},
		{"version", slices.Concat([]byte("OggS\x01"), pages[0][5:]), "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeBytes(t, tt.data)
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("err = %v, want ErrUndecodable saying %q", err, tt.why)
			}
		})
	}
}

// lsbWriter writes a Vorbis bitstream (least significant bit first).
type lsbWriter struct {
	b []byte
	n uint
}

func (w *lsbWriter) write(v uint32, bits uint) {
	for i := uint(0); i < bits; i++ {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>i&1 == 1 {
			w.b[len(w.b)-1] |= 1 << (w.n % 8)
		}
		w.n++
	}
}

// TestVorbisSetupBombs: setup headers of a few bytes that would make the
// Vorbis library allocate gigabytes are refused before it sees them.
func TestVorbisSetupBombs(t *testing.T) {
	codebook := func(dims, entries uint32, lookup uint32) []byte {
		w := &lsbWriter{}
		w.write(0, 8) // one codebook
		w.write(0x564342, 24)
		w.write(dims, 16)
		w.write(entries, 24)
		w.write(1, 1)        // ordered
		w.write(0, 5)        // first length 1
		w.write(entries, 25) // all entries at that length
		w.write(lookup, 4)
		if lookup != 0 {
			w.write(0, 32)
			w.write(0, 32)
			w.write(0, 4)
			w.write(0, 1)
		}
		return append([]byte("\x05vorbis"), w.b...)
	}
	tests := []struct {
		name   string
		packet []byte
	}{
		{"16M-entry huffman tree", codebook(1, 1<<24-1, 0)},
		{"values overflow", codebook(65535, 1<<24-1, 1)},
		{"truncated", []byte("\x05vorbis\x00BCV")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkVorbisSetup(tt.packet); !errors.Is(err, ErrUndecodable) {
				t.Errorf("checkVorbisSetup = %v", err)
			}
		})
	}
	// Through the whole decoder: the real identification header, then the
	// bomb as setup header.
	pages := oggPages(t, readTestdata(t, "speech.ogg"))
	serial := binary.LittleEndian.Uint32(pages[0][14:])
	stream := slices.Concat(pages[0], oggPage(0, 0, serial, []byte("\x03vorbis\x00\x00\x00\x00\x00\x00\x00\x00\x01"), codebook(1, 1<<24-1, 0)))
	if _, err := decodeBytes(t, stream); !errors.Is(err, ErrUndecodable) {
		t.Errorf("decoding a setup bomb: %v", err)
	}
	// The real setup header passes.
	var setup []byte
	for _, p := range pages[1:3] {
		h, _ := parseOggHeader(p)
		setup = append(setup, p[h.headerLen:]...)
	}
	if i := bytes.Index(setup, []byte("\x05vorbis")); i < 0 || checkVorbisSetup(setup[i:]) != nil {
		t.Errorf("real setup header refused: %v", checkVorbisSetup(setup[max(i, 0):]))
	}
}
