package audio

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mp3Speech encodes a second of speech with this package's LAME encoder at
// the given rate and bit rate, once per (rate, bit rate): 22050 Hz is
// MPEG-2, 8000 Hz MPEG-2.5.
func mp3Speech(t testing.TB, rate, bitRate int) []byte {
	t.Helper()
	key := [2]int{rate, bitRate}
	mp3Mu.Lock()
	defer mp3Mu.Unlock()
	if b, ok := mp3Cache[key]; ok {
		return b
	}
	var buf bytes.Buffer
	e, err := newMP3Encoder(&buf, EncodeSpec{Encoding: "mp3", SampleRate: rate, BitRate: bitRate})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.write(speechAt(t, 1, rate)); err != nil {
		e.abort()
		t.Fatal(err)
	}
	if err := e.finish(); err != nil {
		t.Fatal(err)
	}
	mp3Cache[key] = buf.Bytes()
	return buf.Bytes()
}

var (
	mp3Mu    sync.Mutex
	mp3Cache = map[[2]int][]byte{}
)

// id3Tag returns an ID3v2.4 tag with n bytes of body.
func id3Tag(n int) []byte {
	h := []byte{'I', 'D', '3', 4, 0, 0, byte(n >> 21 & 0x7F), byte(n >> 14 & 0x7F), byte(n >> 7 & 0x7F), byte(n & 0x7F)}
	return append(h, make([]byte, n)...)
}

// TestMP3DecoderChoice: MPEG-1 goes to go-mp3, MPEG-2 and 2.5 to FFmpeg,
// decided by the first frame even behind ID3 tags, and the decoded layout
// is the header's.
func TestMP3DecoderChoice(t *testing.T) {
	needFFmpeg(t)
	tests := []struct {
		name       string
		data       func(t *testing.T) []byte
		seconds    int
		rate, ch   int
		subprocess bool
	}{
		{"mpeg-1 44.1 kHz", func(t *testing.T) []byte { return readTestdata(t, "speech-44k-stereo.mp3") }, 3, 44100, 2, false},
		{"mpeg-2 16 kHz", func(t *testing.T) []byte { return readTestdata(t, "speech-16k-mono.mp3") }, 3, 16000, 1, true},
		{"mpeg-2 22.05 kHz", func(t *testing.T) []byte { return mp3Speech(t, 22050, 32000) }, 1, 22050, 1, true},
		{"mpeg-2.5 8 kHz", func(t *testing.T) []byte { return mp3Speech(t, 8000, 16000) }, 1, 8000, 1, true},
		{"mpeg-2.5 11.025 kHz", func(t *testing.T) []byte { return mp3Speech(t, 11025, 24000) }, 1, 11025, 1, true},
		{"mpeg-2 behind two tags", func(t *testing.T) []byte {
			return slices.Concat(id3Tag(5000), id3Tag(3), mp3Speech(t, 22050, 48000))
		}, 1, 22050, 1, true},
		{"mpeg-1 behind a tag", func(t *testing.T) []byte {
			return slices.Concat(id3Tag(700), readTestdata(t, "speech-44k-stereo.mp3"))
		}, 3, 44100, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := tt.data(t)
			d, err := NewStreamDecoder(Format{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := d.Decode(data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
			m, ok := d.impl.(*mpegStream)
			if !ok {
				t.Fatalf("decoder is %T, want *mpegStream", d.impl)
			}
			_, sub := m.impl.(*mp3FFmpegStream)
			_, pull := m.impl.(*pullStream)
			if sub != tt.subprocess || sub == pull {
				t.Errorf("decoded by %T, want FFmpeg: %v", m.impl, tt.subprocess)
			}
			buf, err := Decode(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if buf.Container != ContainerMP3 || buf.SampleRate != tt.rate || buf.Channels != tt.ch {
				t.Errorf("decoded as %v %d Hz %d ch, want mp3 %d Hz %d ch", buf.Container, buf.SampleRate, buf.Channels, tt.rate, tt.ch)
			}
			// The audio, plus at most the codec delay and a frame.
			want := tt.seconds * tt.rate
			if n := buf.Frames(); n < want || n > want+1105+1152 {
				t.Errorf("decoded %d frames, want about %d", n, want)
			}
		})
	}
}

// TestMP3Quality: the MPEG-2.5 round trip through our encoder and FFmpeg
// keeps the speech (MPEG-2 is judged by TestEncodeRoundTrip).
func TestMP3Quality(t *testing.T) {
	needFFmpeg(t)
	for _, tt := range []struct {
		rate, bitRate int
		minCorr       float64
	}{{8000, 16000, 0.97}, {11025, 24000, 0.98}} {
		enc := mp3Speech(t, tt.rate, tt.bitRate)
		buf, err := Decode(context.Background(), bytes.NewReader(enc))
		if err != nil {
			t.Fatal(err)
		}
		ref := toFloat64(Int16ToFloat32(nil, speechAt(t, 1, tt.rate)))
		dec := toFloat64(buf.Samples)
		lag, _ := bestLagIn(ref[:4000], dec, 0, 1105)
		c := correlation(ref, dec, lag)
		if c < tt.minCorr {
			t.Errorf("%d Hz %d bit/s: correlation %.4f at lag %d, want >= %.2f", tt.rate, tt.bitRate, c, lag, tt.minCorr)
		}
		t.Logf("%d Hz %d bit/s: correlation %.4f at lag %d", tt.rate, tt.bitRate, c, lag)
	}
}

// TestMP3StreamChunking: MPEG-2 and 2.5 pushed in odd chunk sizes, tags
// and frame headers straddling chunks, decode to exactly the whole-file
// result, through the StreamDecoder and through the SpeechDecoder.
func TestMP3StreamChunking(t *testing.T) {
	needFFmpeg(t)
	tests := []struct {
		name string
		data func(t *testing.T) []byte
	}{
		{"22050 32k", func(t *testing.T) []byte { return mp3Speech(t, 22050, 32000) }},
		{"22050 48k behind a tag", func(t *testing.T) []byte { return slices.Concat(id3Tag(333), mp3Speech(t, 22050, 48000)) }},
		{"8000 16k", func(t *testing.T) []byte { return mp3Speech(t, 8000, 16000) }},
		{"16k gapless", func(t *testing.T) []byte { return readTestdata(t, "speech-16k-mono.mp3") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := tt.data(t)
			whole, err := Decode(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			want16k, err := To16kMono(whole)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, uint64(len(data))))
			for i, size := range []int{61, 4099} {
				chunks := randomChunks(data, rng, size)
				got, info, err := decodeChunks(t, Format{}, chunks)
				if err != nil {
					t.Fatalf("chunks of up to %d bytes: %v", size, err)
				}
				if !slices.Equal(got, whole.Samples) {
					t.Errorf("chunks of up to %d bytes: %d samples differ from the whole's %d", size, len(got), len(whole.Samples))
				}
				if info != (Info{ContainerMP3, whole.SampleRate, whole.Channels}) {
					t.Errorf("info %+v", info)
				}
				if i > 0 {
					continue // the SpeechDecoder needs one pass
				}
				if got := speechChunks(t, chunks); !slices.Equal(got, want16k) {
					t.Errorf("speech decoder, chunks of up to %d bytes: %d samples differ from the whole's %d", size, len(got), len(want16k))
				}
			}
		})
	}
}

// speechChunks runs chunks through a SpeechDecoder.
func speechChunks(t *testing.T, chunks [][]byte) []int16 {
	t.Helper()
	d, err := NewSpeechDecoder(Format{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var all []int16
	for _, c := range chunks {
		out, err := d.Decode(c)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out...)
	}
	out, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return append(all, out...)
}

// TestMP3Hostile: broken MPEG-2 and 2.5 input fails with ErrUndecodable, or
// decodes what it can, and never panics, whole or byte by byte.
func TestMP3Hostile(t *testing.T) {
	needFFmpeg(t)
	enc := mp3Speech(t, 22050, 32000)
	gapless := readTestdata(t, "speech-16k-mono.mp3")
	h := mpegHeaderAt(t, gapless)
	corrupt := slices.Clone(enc)
	for i := len(corrupt) / 4; i < len(corrupt)/2; i += 5 {
		corrupt[i] ^= 0x5A
	}
	lying := slices.Clone(gapless[:4000])
	copy(lying[4+9+8:], []byte{0xFF, 0xFF, 0xFF, 0xFF}) // Xing frame count
	tests := []struct {
		name    string
		b       []byte
		wantErr string // "" when decoding may succeed
	}{
		{"mpeg-2 header only", enc[:4], "MP3"},
		{"mpeg-2.5 header only", []byte{0xFF, 0xE3, 0x18, 0xC4, 0, 0, 0, 0}, "MP3"},
		{"mpeg-2.5 behind id3, header only", []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xe3\x18\xc4\x00\x00"), "MP3"},
		{"garbage after a header", append(slices.Clone(enc[:4]), bytes.Repeat([]byte{0x5A}, 3000)...), "MP3"},
		{"info frame only", gapless[:h.frameBytes], "MP3"},
		{"tag cut short", slices.Concat(id3Tag(100)[:50]), "ID3 tag"},
		{"huge tag then nothing", []byte("ID3\x04\x00\x00\x7f\x7f\x7f\x7f\xff\xf3"), "ID3 tag"},
		{"truncated in the first frame", enc[:50], ""},
		{"truncated mid-stream", enc[:len(enc)/2+3], ""},
		{"corrupt middle", corrupt, ""},
		{"lying frame count", lying, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			buf, err := Decode(context.Background(), bytes.NewReader(tt.b))
			checkDecodeError(t, err)
			if err == nil {
				checkBuffer(t, buf)
			}
			if tt.wantErr != "" && (!errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want ErrUndecodable saying %q", err, tt.wantErr)
			}
			chunks := randomChunks(tt.b, rand.New(rand.NewPCG(1, 2)), 5)
			got, _, err2 := decodeChunks(t, Format{}, chunks)
			checkDecodeError(t, err2)
			if (err == nil) != (err2 == nil) || (err == nil && !slices.Equal(got, buf.Samples)) {
				t.Errorf("in %d chunks: %v (%d samples); whole: %v", len(chunks), err2, len(got), err)
			}
		})
	}
}

func mpegHeaderAt(t *testing.T, b []byte) mpegHeader {
	t.Helper()
	h, ok := parseMPEGHeader(b)
	if !ok {
		t.Fatalf("no MPEG header at % x", b[:4])
	}
	return h
}

// TestMP3WithoutFFmpeg: where FFmpeg is not installed, MPEG-2 still plays
// through go-mp3 and MPEG-2.5 is refused with the reason.
func TestMP3WithoutFFmpeg(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	buf, err := Decode(context.Background(), bytes.NewReader(readTestdata(t, "speech-16k-mono.mp3")))
	if err != nil {
		t.Fatal(err)
	}
	if buf.SampleRate != 16000 || buf.Frames() != 48000 {
		t.Errorf("decoded %d frames at %d Hz, want 48000 at 16000", buf.Frames(), buf.SampleRate)
	}
	_, err = Decode(context.Background(), bytes.NewReader(mp3Speech(t, 8000, 16000)))
	if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), "needs the ffmpeg program") {
		t.Errorf("MPEG-2.5 without ffmpeg: %v, want ErrUndecodable naming ffmpeg", err)
	}
}

// FuzzMPEG2 feeds input that starts with an MPEG-2 or 2.5 layer III header
// to the FFmpeg-backed decoder: nothing may panic or hang, failures are
// ErrUndecodable or ErrTooLarge, and the result does not depend on the
// chunking.
func FuzzMPEG2(f *testing.F) {
	f.Add(byte(0xF3), []byte{0x48, 0xC4, 1, 2, 3}, uint16(2))                      // MPEG-2 22.05 kHz
	f.Add(byte(0xE3), []byte{0x18, 0xC4, 0, 0, 0, 0}, uint16(3))                   // MPEG-2.5 8 kHz
	f.Add(byte(0xF2), append([]byte{0x48, 0xC4}, make([]byte, 200)...), uint16(9)) // with CRC
	var buf bytes.Buffer
	if e, err := newMP3Encoder(&buf, EncodeSpec{Encoding: "mp3", SampleRate: 22050, BitRate: 32000}); err == nil {
		pcm := squareTone(4410)
		if e.write(pcm) == nil && e.finish() == nil && buf.Len() > 2 {
			b := buf.Bytes()
			f.Add(b[1], b[2:min(len(b), 1200)], uint16(100))
		} else {
			e.abort()
		}
	}
	f.Fuzz(func(t *testing.T, b1 byte, body []byte, split uint16) {
		b := append([]byte{0xFF, b1&0x11 | 0xE2}, body...) // sync, MPEG-2 or 2.5, layer III
		if len(b) > 4000 {
			return // each decode starts FFmpeg: keep the inputs small
		}
		needFFmpeg(t)
		checkSplitDecode(t, b, split)
	})
}
