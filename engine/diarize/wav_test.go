package diarize

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// errWAV reports a WAV file the test reader cannot take.
var errWAV = errors.New("unsupported or malformed WAV")

// readWAV decodes a RIFF WAV of 16 kHz mono audio, 16-bit PCM or 8-bit
// mu-law (the two formats of the fixtures), into float32 samples in [-1, 1].
func readWAV(data []byte) ([]float32, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: no RIFF/WAVE header", errWAV)
	}
	var format, channels, bits uint16
	var rate uint32
	haveFmt := false
	p := data[12:]
	for len(p) >= 8 {
		id := string(p[0:4])
		size := binary.LittleEndian.Uint32(p[4:8])
		p = p[8:]
		if uint64(size) > uint64(len(p)) {
			return nil, fmt.Errorf("%w: chunk %q overruns the file", errWAV, id)
		}
		body := p[:size]
		switch id {
		case "fmt ":
			if size < 16 {
				return nil, fmt.Errorf("%w: short fmt chunk", errWAV)
			}
			format = binary.LittleEndian.Uint16(body[0:2])
			channels = binary.LittleEndian.Uint16(body[2:4])
			rate = binary.LittleEndian.Uint32(body[4:8])
			bits = binary.LittleEndian.Uint16(body[14:16])
			if format == 0xFFFE && size >= 26 { // WAVE_FORMAT_EXTENSIBLE
				format = binary.LittleEndian.Uint16(body[24:26])
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("%w: data before fmt", errWAV)
			}
			if channels != 1 || rate != SampleRate {
				return nil, fmt.Errorf("%w: %d channels at %d Hz", errWAV, channels, rate)
			}
			switch {
			case format == 1 && bits == 16:
				out := make([]float32, len(body)/2)
				for i := range out {
					out[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
				}
				return out, nil
			case format == 7 && bits == 8:
				out := make([]float32, len(body))
				for i, b := range body {
					out[i] = float32(ulaw(b)) / 32768
				}
				return out, nil
			default:
				return nil, fmt.Errorf("%w: format %d with %d bits", errWAV, format, bits)
			}
		}
		p = p[size:]
		if size%2 == 1 && len(p) > 0 {
			p = p[1:]
		}
	}
	return nil, fmt.Errorf("%w: no data chunk", errWAV)
}

// ulaw expands one G.711 mu-law byte to a 16-bit linear sample.
func ulaw(b byte) int16 {
	b = ^b
	t := (int(b&0x0F) << 3) + 0x84
	t <<= (b & 0x70) >> 4
	if b&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

func FuzzReadWAV(f *testing.F) {
	for _, name := range []string{"two_fm.wav"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:4096])
	}
	f.Add(pcm16WAV([]int16{0, 1000, -1000, 32767, -32768}))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := readWAV(data)
		if err != nil {
			if !errors.Is(err, errWAV) {
				t.Fatalf("error %v is not errWAV", err)
			}
			return
		}
		for _, s := range samples {
			if s < -1 || s > 1 || math.IsNaN(float64(s)) {
				t.Fatalf("sample %v out of range", s)
			}
		}
	})
}

// pcm16WAV encodes samples as a 16 kHz mono 16-bit WAV.
func pcm16WAV(samples []int16) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	_ = binary.Write(&b, le, uint32(36+2*len(samples)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(SampleRate), uint32(2 * SampleRate), uint16(2), uint16(16)} {
		_ = binary.Write(&b, le, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, le, uint32(2*len(samples)))
	_ = binary.Write(&b, le, samples)
	return b.Bytes()
}

func TestReadWAVFormats(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []float32
		err  bool
	}{
		{"pcm16", pcm16WAV([]int16{0, 16384, -32768}), []float32{0, 0.5, -1}, false},
		{"not riff", []byte("RIFX0000WAVE"), nil, true},
		{"no data", []byte("RIFF\x04\x00\x00\x00WAVE"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readWAV(tt.data)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d samples, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("sample %d = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
	// mu-law: 0xFF is +0, 0x80 is the largest positive, 0x00 the largest
	// negative value (G.711).
	for b, want := range map[byte]int16{0xFF: 0, 0x7F: 0, 0x80: 32124, 0x00: -32124} {
		if got := ulaw(b); got != want {
			t.Errorf("ulaw(%#x) = %d, want %d", b, got, want)
		}
	}
}

// loadWAV reads a WAV fixture or fails the test.
func loadWAV(t testing.TB, path string) []float32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (the LibriVox clips come with the Debian package pocketsphinx-testdata)", err)
	}
	s, err := readWAV(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// loadWords reads a NAME.words fixture ("word start end confidence").
func loadWords(t testing.TB, path string) []api.Word {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var words []api.Word
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		var v [3]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		words = append(words, api.Word{Word: f[0], Start: v[0], End: v[1], Confidence: v[2]})
	}
	return words
}

// turn is one ground-truth speaker turn of a generated clip.
type turn struct {
	start, end float64
	speaker    int
}

// loadTurns reads a NAME.turns fixture ("start end speaker").
func loadTurns(t testing.TB, path string) []turn {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var turns []turn
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr turn
		if _, err := fmt.Sscan(line, &tr.start, &tr.end, &tr.speaker); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		turns = append(turns, tr)
	}
	return turns
}

// truth gives the true speaker of each word: that of the turn holding the
// word's midpoint, or of the nearest turn.
func truth(words []api.Word, turns []turn) []int {
	out := make([]int, len(words))
	for i, w := range words {
		mid := (w.Start + w.End) / 2
		best, bestDist := 0, math.Inf(1)
		for _, tr := range turns {
			d := math.Max(tr.start-mid, mid-tr.end)
			if d < bestDist {
				best, bestDist = tr.speaker, d
			}
		}
		out[i] = best
	}
	return out
}
