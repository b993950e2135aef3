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
	"time"
)

// adts builds an ADTS header: profile 1 (LC), the given rate index,
// channel configuration and frame length, no CRC.
func adts(rateIndex, chanConfig, frameLen int) []byte {
	return []byte{
		0xFF, 0xF1,
		byte(1<<6 | rateIndex<<2 | chanConfig>>2),
		byte(chanConfig&3<<6 | frameLen>>11&3),
		byte(frameLen >> 3),
		byte(frameLen&7<<5 | 0x1F),
		0xFC,
	}
}

func TestDetectADTS(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want Container
		why  string // for an error from sniff at end of stream
	}{
		{"lc 22050 mono", adts(7, 1, 100), ContainerAAC, ""},
		{"lc 48000 stereo", adts(3, 2, 300), ContainerAAC, ""},
		{"8 channels", adts(4, 7, 300), ContainerAAC, ""},
		{"mpeg-2 id with crc", append([]byte{0xFF, 0xF8}, adts(7, 1, 100)[2:]...), ContainerAAC, ""},
		{"prefix", adts(7, 1, 100)[:5], ContainerUnknown, "ends inside its first AAC"},
		{"bad rate", adts(13, 1, 100), ContainerUnknown, "sample rate index 13"},
		{"pce layout", adts(7, 0, 100), ContainerUnknown, "program-defined channel layout"},
		{"short frame", adts(7, 1, 6), ContainerUnknown, "frame length 6"},
		{"ssr", append([]byte{0xFF, 0xF1, 2<<6 | 7<<2}, adts(7, 1, 100)[3:]...), ContainerUnknown, "Scalable Sample Rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.b); got != tt.want {
				t.Errorf("Detect = %v, want %v", got, tt.want)
			}
			_, _, err := sniff(tt.b, true)
			if tt.why == "" {
				if err != nil {
					t.Errorf("sniff: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("sniff error %v, want ErrUndecodable saying %q", err, tt.why)
			}
		})
	}
}

// aacSpeech returns a second of speech, and its ADTS AAC encoding by this
// package's encoder, made once for all the tests that need it.
func aacSpeech(t testing.TB) ([]byte, []int16) {
	t.Helper()
	needFFmpeg(t)
	aacOnce.Do(func() {
		aacPCM = speechAt(t, 1, 22050)
		aacEnc = encodeAll(t, EncodeSpec{Encoding: "aac"}, aacPCM, 2205)
	})
	if aacEnc == nil {
		t.Fatal("encoding the AAC test input failed")
	}
	return aacEnc, aacPCM
}

var (
	aacOnce sync.Once
	aacEnc  []byte
	aacPCM  []int16
)

func TestDecodeAACChunking(t *testing.T) {
	t.Parallel()
	enc, pcm := aacSpeech(t)
	whole, err := Decode(context.Background(), bytes.NewReader(enc))
	if err != nil {
		t.Fatal(err)
	}
	if whole.Container != ContainerAAC || whole.SampleRate != 22050 || whole.Channels != 1 {
		t.Fatalf("decoded as %v %d Hz %d ch", whole.Container, whole.SampleRate, whole.Channels)
	}
	if n := whole.Frames(); n < len(pcm) || n > len(pcm)+2048 {
		t.Fatalf("decoded %d samples from %d", n, len(pcm))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range []int{37, 5000} {
		got, info, err := decodeChunks(t, Format{}, randomChunks(enc, rng, size))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, whole.Samples) {
			t.Errorf("chunks of up to %d bytes: %d samples differ from the whole's %d", size, len(got), len(whole.Samples))
		}
		if info != (Info{ContainerAAC, 22050, 1}) {
			t.Errorf("info %+v", info)
		}
	}
}

// TestDecodeAACStreams checks that decoded audio comes out while the stream
// is still arriving, as playback of a fetched response needs.
func TestDecodeAACStreams(t *testing.T) {
	t.Parallel()
	enc, _ := aacSpeech(t)
	d, err := NewStreamDecoder(Format{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	early := 0
	body := enc[:len(enc)-500]
	for _, c := range randomChunks(body, rand.New(rand.NewPCG(7, 8)), 400) {
		out, err := d.Decode(c)
		if err != nil {
			t.Fatal(err)
		}
		early += len(out)
		time.Sleep(5 * time.Millisecond) // as a network would deliver it
	}
	// Poll until FFmpeg's output for what it was given arrives.
	for deadline := time.Now().Add(10 * time.Second); early == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		out, err := d.Decode(nil)
		if err != nil {
			t.Fatal(err)
		}
		early += len(out)
	}
	if early == 0 {
		t.Fatal("no audio before the end of the stream")
	}
	out, err := d.Decode(enc[len(body):])
	if err != nil {
		t.Fatal(err)
	}
	early += len(out)
	rest, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples while streaming, %d at the end", early, len(rest))
}

func TestDecodeAACErrors(t *testing.T) {
	needFFmpeg(t)
	enc, _ := aacSpeech(t)
	tests := []struct {
		name string
		b    []byte
	}{
		{"header only", adts(7, 1, 100)},
		{"garbage after a header", append(adts(7, 1, 100), bytes.Repeat([]byte{0x5A}, 3000)...)},
		{"truncated", enc[:len(enc)/2+3]},
		{"corrupt middle", func() []byte {
			b := slices.Clone(enc)
			for i := len(b) / 3; i < len(b)/2; i += 7 {
				b[i] ^= 0xA5
			}
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			buf, err := Decode(context.Background(), bytes.NewReader(tt.b))
			checkDecodeError(t, err)
			if err == nil {
				checkBuffer(t, buf)
			}
		})
	}
}

// TestDecodeAACClose checks that Close ends the FFmpeg subprocess mid-stream.
func TestDecodeAACClose(t *testing.T) {
	t.Parallel()
	enc, _ := aacSpeech(t)
	d, err := NewStreamDecoder(Format{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Decode(enc[:len(enc)/2]); err != nil {
		t.Fatal(err)
	}
	a, ok := d.impl.(*aacStream)
	if !ok || a.proc == nil {
		t.Fatalf("decoder is %T, want a running AAC subprocess", d.impl)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if a.proc.cmd.ProcessState == nil {
		t.Error("Close returned before the subprocess was reaped")
	}
	if _, err := d.Decode(enc); !errors.Is(err, ErrClosed) {
		t.Errorf("Decode after Close: %v, want ErrClosed", err)
	}
}

// FuzzADTS feeds ADTS-framed input to detection and to the FFmpeg-backed
// decoder: nothing may panic or hang, failures are ErrUndecodable or
// ErrTooLarge, and the result does not depend on the chunking.
func FuzzADTS(f *testing.F) {
	f.Add(adts(7, 1, 100)[2:], uint16(3))
	f.Add(append(adts(3, 2, 20)[2:], 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), uint16(9))
	if enc, _ := aacSeed(); enc != nil {
		f.Add(enc[2:min(len(enc), 1200)], uint16(100))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		b := append([]byte{0xFF, 0xF1}, body...)
		c, more, err := sniff(b, true)
		if more || (err == nil) != (c == ContainerAAC) {
			t.Fatalf("sniff: %v, more %v, %v", c, more, err)
		}
		checkDecodeError(t, err)
		if err != nil || len(b) > 4000 {
			return // each decode starts FFmpeg: keep the inputs small
		}
		needFFmpeg(t)
		checkSplitDecode(t, b, split)
	})
}

// aacSeed encodes a short tone as AAC for the fuzz corpus, or returns nil
// without ffmpeg.
func aacSeed() ([]byte, error) {
	var buf bytes.Buffer
	e, err := NewEncoder(context.Background(), &buf, EncodeSpec{Encoding: "aac"})
	if err != nil {
		return nil, err
	}
	pcm := squareTone(4410)
	if err := e.Write(pcm); err != nil {
		_ = e.Close()
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FuzzStreamedWAV decodes WAV files that start with the streaming headers
// the encoder writes (unknown sizes, linear16, mu-law and A-law): whatever
// follows, decoding must not panic, and chunking must not change it.
func FuzzStreamedWAV(f *testing.F) {
	for variant := range uint8(6) { // three encodings at two rates
		f.Add(variant, []byte{1, 2, 3, 4, 5}, uint16(3))
		f.Add(variant, append([]byte("LIST\x04\x00\x00\x00abcd"), 9, 8, 7), uint16(50))
	}
	f.Fuzz(func(t *testing.T, variant uint8, data []byte, split uint16) {
		encs := []Encoding{EncodingLinear16, EncodingMulaw, EncodingAlaw}
		e := encs[int(variant)%len(encs)]
		h := wavStreamHeader(e, 8000<<(variant/3%2))
		file := append(h, data...)
		whole, err := Decode(context.Background(), bytes.NewReader(file))
		if err != nil {
			t.Fatalf("streamed WAV header with %d bytes of data: %v", len(data), err)
		}
		checkBuffer(t, whole)
		// Everything after the header is samples: the size says "to the end".
		if want := len(data) / e.BytesPerSample(); whole.Frames() != want {
			t.Fatalf("%d samples from %d bytes of %v, want %d", whole.Frames(), len(data), e, want)
		}
		s := int(split) % (len(file) + 1)
		got, _, err := decodeChunks(t, Format{}, [][]byte{file[:s], file[s:]})
		if err != nil || !slices.Equal(got, whole.Samples) {
			t.Fatalf("split at %d: %v (%d samples), whole %d", s, err, len(got), len(whole.Samples))
		}
	})
}
