package audio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fmtBody builds a plain fmt chunk body.
func fmtBody(tag uint16, ch, rate, bits int) []byte {
	b := make([]byte, 16)
	le := binary.LittleEndian
	le.PutUint16(b[0:], tag)
	le.PutUint16(b[2:], uint16(ch))
	le.PutUint32(b[4:], uint32(rate))
	align := ch * ((bits + 7) / 8)
	le.PutUint32(b[8:], uint32(rate*align))
	le.PutUint16(b[12:], uint16(align))
	le.PutUint16(b[14:], uint16(bits))
	return b
}

// fmtBodyExtensible builds a WAVE_FORMAT_EXTENSIBLE fmt chunk body.
func fmtBodyExtensible(sub uint16, ch, rate, bits, valid int) []byte {
	b := fmtBody(0xFFFE, ch, rate, bits)
	ext := make([]byte, 24)
	le := binary.LittleEndian
	le.PutUint16(ext[0:], 22)
	le.PutUint16(ext[2:], uint16(valid))
	le.PutUint32(ext[4:], 4) // front centre
	le.PutUint16(ext[8:], sub)
	copy(ext[10:], waveFormatExtensibleGUID)
	return append(b, ext...)
}

// riffChunk builds a chunk with its header and pad byte.
func riffChunk(id string, body []byte) []byte {
	b := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(body)))
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// chunkWithSize builds a chunk header declaring size, followed by body.
func chunkWithSize(id string, size uint32, body []byte) []byte {
	b := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], size)
	return append(b, body...)
}

func riffFile(chunks ...[]byte) []byte {
	body := []byte("WAVE")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(chunkWithSize("RIFF", uint32(len(body)), nil), body...)
}

func f32bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestWAVSampleFormats(t *testing.T) {
	f64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.125))
	f64 = binary.LittleEndian.AppendUint64(f64, math.Float64bits(-2e9))
	tests := []struct {
		name     string
		fmt      []byte
		data     []byte
		channels int
		want     []float32
	}{
		{"u8", fmtBody(1, 1, 8000, 8), []byte{0, 128, 255}, 1, []float32{-1, 0, 127.0 / 128}},
		{"s16", fmtBody(1, 1, 8000, 16), []byte{0x00, 0x80, 0xFF, 0x7F, 0x01, 0x00}, 1, []float32{-1, 32767.0 / 32768, 1.0 / 32768}},
		{"s16 stereo", fmtBody(1, 2, 8000, 16), []byte{0x00, 0x40, 0x00, 0xC0}, 2, []float32{0.5, -0.5}},
		{"12-bit in 16", fmtBody(1, 1, 8000, 12), []byte{0x10, 0x80}, 1, []float32{-32752.0 / 32768}},
		{"s24", fmtBody(1, 1, 8000, 24), []byte{0, 0, 0x80, 0xFF, 0xFF, 0x7F, 1, 0, 0}, 1, []float32{-1, 8388607.0 / 8388608, 1.0 / 8388608}},
		{"s32", fmtBody(1, 1, 8000, 32), []byte{0, 0, 0, 0x80, 0, 0, 0, 0x40}, 1, []float32{-1, 0.5}},
		{"float32", fmtBody(3, 1, 8000, 32), f32bytes(0.25, -0.5, float32(math.NaN())), 1, []float32{0.25, -0.5, 0}},
		{"float64", fmtBody(3, 1, 8000, 64), f64, 1, []float32{0.125, -1e6}},
		{"mulaw", fmtBody(7, 1, 8000, 8), []byte{0x80, 0xFF}, 1, []float32{32124.0 / 32768, 0}},
		{"alaw", fmtBody(6, 1, 8000, 8), []byte{0xD5, 0x2A}, 1, []float32{8.0 / 32768, -32256.0 / 32768}},
		{"extensible s24 with 20 valid bits", fmtBodyExtensible(1, 1, 8000, 24, 20), []byte{0x00, 0x10, 0x80}, 1, []float32{-0x7FF000 / 8388608.0}},
		{"extensible float", fmtBodyExtensible(3, 1, 8000, 32, 32), f32bytes(0.75), 1, []float32{0.75}},
		{"fmt with cbSize", append(fmtBody(1, 1, 8000, 16), 0, 0), []byte{0, 0x40}, 1, []float32{0.5}},
		{"odd fmt size", append(fmtBody(1, 1, 8000, 16), 0), []byte{0, 0x40}, 1, []float32{0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := riffFile(riffChunk("fmt ", tt.fmt), riffChunk("data", tt.data))
			checkWAV(t, file, 8000, tt.channels, tt.want)
		})
	}
}

// checkWAV decodes file whole and one byte at a time and compares both with
// want.
func checkWAV(t *testing.T, file []byte, rate, channels int, want []float32) {
	t.Helper()
	b, err := Decode(context.Background(), bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if b.Container != ContainerWAV || b.SampleRate != rate || b.Channels != channels {
		t.Errorf("got %v %d Hz %d ch", b.Container, b.SampleRate, b.Channels)
	}
	if !slices.Equal(b.Samples, want) {
		t.Errorf("samples %v, want %v", b.Samples, want)
	}
	var bytewise [][]byte
	for i := range file {
		bytewise = append(bytewise, file[i:i+1])
	}
	got, _, err := decodeChunks(t, Format{}, bytewise)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("byte by byte: %v, %v; want %v", got, err, want)
	}
}

func TestWAVChunkLayouts(t *testing.T) {
	fmt16 := riffChunk("fmt ", fmtBody(1, 1, 16000, 16))
	pcm := []byte{0, 0x40, 0, 0xC0, 0, 0x20} // 0.5, -0.5, 0.25
	want := []float32{0.5, -0.5, 0.25}
	list := riffChunk("LIST", []byte("INFOISFT\x05\x00\x00\x00Lavf\x00"))
	tests := []struct {
		name string
		file []byte
		want []float32
	}{
		{"odd chunk before fmt", riffFile(riffChunk("junk", []byte{1, 2, 3}), fmt16, riffChunk("data", pcm)), want},
		{"chunks between fmt and data", riffFile(fmt16, riffChunk("fact", []byte{3, 0, 0, 0}), list, riffChunk("data", pcm)), want},
		{"chunk after data is not audio", riffFile(fmt16, riffChunk("data", pcm), list), want},
		{"odd data chunk then a chunk", riffFile(riffChunk("fmt ", fmtBody(1, 1, 16000, 8)), riffChunk("data", []byte{255, 0, 128}), list),
			[]float32{127.0 / 128, -1, 0}},
		{"second data chunk ignored", riffFile(fmt16, riffChunk("data", pcm), riffChunk("data", []byte{1, 2})), want},
		{"data size 0 means to end", append(riffFile(fmt16, chunkWithSize("data", 0, nil)), pcm...), want},
		{"data size 0xFFFFFFFF means to end", append(riffFile(fmt16, chunkWithSize("data", 0xFFFFFFFF, nil)), pcm...), want},
		{"truncated data", riffFile(fmt16, chunkWithSize("data", 1000, pcm)), want},
		{"partial last frame dropped", riffFile(fmt16, chunkWithSize("data", 1000, append(slices.Clone(pcm), 7))), want},
		{"huge data size, truncated", riffFile(fmt16, chunkWithSize("data", 0xFFFFFFF0, pcm)), want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkWAV(t, tt.file, 16000, 1, tt.want)
		})
	}
}

func TestWAVErrors(t *testing.T) {
	fmt16 := riffChunk("fmt ", fmtBody(1, 1, 16000, 16))
	data := riffChunk("data", []byte{0, 0})
	badGUID := fmtBodyExtensible(1, 1, 8000, 16, 16)
	badGUID[30] ^= 0xFF
	misaligned := fmtBody(1, 2, 8000, 16)
	misaligned[12] = 3
	tests := []struct {
		name string
		file []byte
		why  string
	}{
		{"rifx", append([]byte("RIFX"), riffFile(fmt16, data)[4:]...), "RIFX"},
		{"rf64", append([]byte("RF64"), riffFile(fmt16, data)[4:]...), "RF64"},
		{"data before fmt", riffFile(data, fmt16), "before the fmt chunk"},
		{"ima adpcm", riffFile(riffChunk("fmt ", fmtBody(0x11, 1, 8000, 4)), data), "IMA ADPCM"},
		{"unknown tag", riffFile(riffChunk("fmt ", fmtBody(0x1234, 1, 8000, 16)), data), "0x1234"},
		{"16-bit float", riffFile(riffChunk("fmt ", fmtBody(3, 1, 8000, 16)), data), "16 bits"},
		{"zero bits", riffFile(riffChunk("fmt ", fmtBody(1, 1, 8000, 0)), data), "0 bits"},
		{"block align", riffFile(riffChunk("fmt ", misaligned), data), "block align"},
		{"extensible guid", riffFile(riffChunk("fmt ", badGUID), data), "sub-format"},
		{"huge fmt", riffFile(chunkWithSize("fmt ", 1<<30, nil)), "fmt chunk"},
		{"short fmt", riffFile(riffChunk("fmt ", make([]byte, 8)), data), "fmt chunk"},
		{"no channels", riffFile(riffChunk("fmt ", fmtBody(1, 0, 8000, 16)), data), "channel"},
		{"zero rate", riffFile(riffChunk("fmt ", fmtBody(1, 1, 0, 16)), data), "sample rate"},
		{"two fmt", riffFile(fmt16, fmt16, data), "two fmt"},
		{"ends in header", riffFile(fmt16)[:30], "before its data chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(context.Background(), bytes.NewReader(tt.file))
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("err = %v, want ErrUndecodable saying %q", err, tt.why)
			}
		})
	}
}

func TestEncodeWAV(t *testing.T) {
	samples := []int16{0, 1, -1, 32767, -32768, 1234, -4321, 7}
	tests := []struct {
		name     string
		channels int
		samples  []int16
		wantErr  bool
	}{
		{"mono", 1, samples, false},
		{"stereo", 2, samples, false},
		{"empty", 1, nil, false},
		{"partial frame", 3, samples, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := EncodeWAV(&buf, tt.samples, 22050, tt.channels)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if buf.Len() != 44+2*len(tt.samples) {
				t.Errorf("file of %d bytes", buf.Len())
			}
			b, err := Decode(context.Background(), &buf)
			if len(tt.samples) == 0 {
				// A data chunk of size 0 means "to end of stream"; here the
				// stream ends at once: no samples.
				if err != nil || len(b.Samples) != 0 {
					t.Fatalf("empty file: %v, %v", b, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := Float32ToInt16(nil, b.Samples); !slices.Equal(got, tt.samples) || b.SampleRate != 22050 || b.Channels != tt.channels {
				t.Errorf("round trip gave %v at %d Hz %d ch", got, b.SampleRate, b.Channels)
			}
		})
	}
	if err := EncodeWAV(&bytes.Buffer{}, samples, 0, 1); err == nil {
		t.Error("rate 0 accepted")
	}
}

// TestWAVWriter writes in pieces to a file (sizes patched on Close) and to
// a pipe-like writer (sizes left as "to end of stream"); both decode.
func TestWAVWriter(t *testing.T) {
	samples := []int16{1, 2, 3, 4, 5, 6, -7, -8, 9, 10}
	path := filepath.Join(t.TempDir(), "rec.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var unseekable bytes.Buffer
	for _, w := range []struct {
		name string
		dst  interface{ Write([]byte) (int, error) }
	}{{"file", f}, {"buffer", &unseekable}} {
		ww, err := NewWAVWriter(w.dst, 8000, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range [][]int16{samples[:3], samples[3:3], samples[3:]} {
			if err := ww.WriteSamples(part); err != nil {
				t.Fatal(err)
			}
		}
		if err := ww.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ww.Close(); err != nil {
			t.Errorf("%s: second Close: %v", w.name, err)
		}
		if err := ww.WriteSamples(samples); !errors.Is(err, ErrWAVClosed) {
			t.Errorf("%s: write after close: %v", w.name, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fromFile, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(fromFile[40:]); got != 20 {
		t.Errorf("file data size %d, want 20", got)
	}
	if got := binary.LittleEndian.Uint32(unseekable.Bytes()[40:]); got != 0xFFFFFFFF {
		t.Errorf("stream data size %#x, want 0xFFFFFFFF", got)
	}
	for name, file := range map[string][]byte{"file": fromFile, "buffer": unseekable.Bytes()} {
		b, err := Decode(context.Background(), bytes.NewReader(file))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := Float32ToInt16(nil, b.Samples); !slices.Equal(got, samples) || b.Channels != 2 {
			t.Errorf("%s: decoded %v", name, got)
		}
	}
}
