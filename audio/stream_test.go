package audio

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStreamRawChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pcm := make([]byte, 9001) // odd: the last byte is half a sample
	for i := range pcm {
		pcm[i] = byte(rng.IntN(256))
	}
	pcm[0] = 'O' // not a container signature, though it starts like one
	tests := []Format{
		{EncodingLinear16, 16000, 1},
		{EncodingLinear16, 44100, 2},
		{EncodingLinear32, 8000, 1},
		{EncodingMulaw, 8000, 1},
		{EncodingAlaw, 8000, 3},
	}
	for _, f := range tests {
		t.Run(f.Encoding.String(), func(t *testing.T) {
			n := len(pcm) - len(pcm)%f.FrameSize()
			want := DecodePCM(nil, pcm[:n], f.Encoding)
			for _, chunks := range [][][]byte{{pcm}, randomChunks(pcm, rng, 7), randomChunks(pcm, rng, 700)} {
				got, info, err := decodeChunks(t, f, chunks)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%d chunks: %d samples differ from the whole's %d", len(chunks), len(got), len(want))
				}
				if info != (Info{ContainerNone, f.SampleRate, f.Channels}) {
					t.Errorf("info %+v", info)
				}
			}
		})
	}
}

// TestStreamRawRefusesContainers: raw mode whose first bytes are a
// container signature is undecodable, even when the signature is split
// across chunks; bytes that only begin like one are audio.
func TestStreamRawRefusesContainers(t *testing.T) {
	f := Format{EncodingLinear16, 16000, 1}
	tests := []struct {
		name    string
		chunks  [][]byte
		refused bool
	}{
		{"ogg", [][]byte{[]byte("OggS\x00\x02")}, true},
		{"ogg split", [][]byte{[]byte("O"), []byte("g"), nil, []byte("gS\x00\x02")}, true},
		{"riff", [][]byte{[]byte("RIFF\x24\x00\x00\x00WAVE")}, true},
		{"flac", [][]byte{[]byte("fL"), []byte("aC\x00\x00")}, true},
		{"id3", [][]byte{[]byte("ID3\x04\x00")}, true},
		{"ogg-like pcm", [][]byte{[]byte("Ogg!\x00\x00")}, false},
		{"three bytes then flush", [][]byte{[]byte("Ogg")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeChunks(t, f, tt.chunks)
			if tt.refused != errors.Is(err, ErrUndecodable) {
				t.Fatalf("err = %v, refused want %v", err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "encoding must match the audio actually sent") {
				t.Errorf("error %q does not explain the mismatch", err)
			}
		})
	}
}

func TestStreamContainerErrors(t *testing.T) {
	d, err := NewStreamDecoder(Format{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Decode([]byte("R")); err != nil {
		t.Fatalf("a prefix of RIFF: %v", err)
	}
	if _, ok := d.Info(); ok {
		t.Error("info known before any header")
	}
	_, err = d.Decode([]byte("IFX and more"))
	if !errors.Is(err, ErrUndecodable) {
		t.Fatalf("RIFX: err = %v", err)
	}
	// Errors are sticky.
	if _, err2 := d.Decode([]byte("more")); !errors.Is(err2, ErrUndecodable) {
		t.Errorf("after an error: %v", err2)
	}
	if _, err2 := d.Flush(); !errors.Is(err2, ErrUndecodable) {
		t.Errorf("flush after an error: %v", err2)
	}
}

func TestStreamLifecycle(t *testing.T) {
	if _, err := NewStreamDecoder(Format{EncodingLinear16, 0, 1}); err == nil {
		t.Error("invalid format accepted")
	}
	d, err := NewStreamDecoder(Format{EncodingLinear16, 16000, 1})
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := d.Info(); !ok || info.SampleRate != 16000 {
		t.Errorf("raw info %+v %v", info, ok)
	}
	if _, err := d.Decode([]byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Decode([]byte{1, 2}); !errors.Is(err, ErrClosed) {
		t.Errorf("decode after flush: %v", err)
	}
	if _, err := d.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("second flush: %v", err)
	}
	for range 2 { // Close is idempotent
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// TestStreamInfoAndEarlyOutput: the format is reported as soon as the header
// is in, and audio comes out before the stream ends.
func TestStreamInfoAndEarlyOutput(t *testing.T) {
	for _, name := range []string{"speech-16k-mono.mp3", "speech.flac", "speech.ogg", "speech.opus", "speech-24bit.wav"} {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, name)
			d, err := NewStreamDecoder(Format{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			half := len(data) / 2
			out, err := d.Decode(data[:half])
			if err != nil {
				t.Fatal(err)
			}
			info, ok := d.Info()
			if !ok || info.SampleRate == 0 || info.Channels != 1 {
				t.Fatalf("info after half the file: %+v %v", info, ok)
			}
			// Half the bytes hold roughly half the audio.
			frames := len(out) / info.Channels
			total := map[int]int{16000: 48000, 48000: 144000}[info.SampleRate]
			if name == "speech-24bit.wav" {
				total = 24000
			}
			// MPEG-2 MP3 is decoded by an FFmpeg subprocess, whose output
			// arrives asynchronously: poll for it.
			for deadline := time.Now().Add(10 * time.Second); frames < total/4 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				out, err := d.Decode(nil)
				if err != nil {
					t.Fatal(err)
				}
				frames += len(out) / info.Channels
			}
			if frames < total/4 || frames > total*3/4 {
				t.Errorf("%d of %d frames out after half the bytes", frames, total)
			}
		})
	}
}

// TestStreamCloseStopsGoroutine: a decoder that owns a goroutine (MP3,
// FLAC) leaves none behind after Close, whether it was closed before any
// input, mid-stream, or after Flush.
func TestStreamCloseStopsGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, name := range []string{"speech-16k-mono.mp3", "speech.flac"} {
		data := readTestdata(t, name)
		for _, cut := range []int{0, 100, len(data) / 2, len(data)} {
			d, err := NewStreamDecoder(Format{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Decode(data[:cut]); err != nil {
				t.Fatal(err)
			}
			if cut == len(data) {
				if _, err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left running (%d before)", n-before, before)
	}
}

// TestStreamRawAllocationFree: the common path, linear16 16 kHz mono in 20
// ms chunks, allocates nothing per chunk.
func TestStreamRawAllocationFree(t *testing.T) {
	d, err := NewStreamDecoder(Format{EncodingLinear16, 16000, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	chunk := make([]byte, 640)
	odd := make([]byte, 641)
	if _, err := d.Decode(chunk); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := d.Decode(chunk); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Decode(odd); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per chunk", allocs)
	}
}

// TestStreamTooLarge: an Ogg Opus stream of two-byte packets that each
// decode to 120 ms (six empty 20 ms frames) expands 2900-fold; one Decode
// call must stop at the chunk limit instead of returning it all. The limit
// is lowered so the test runs fast.
func TestStreamTooLarge(t *testing.T) {
	defer func(old int) { chunkLimit = old }(chunkLimit)
	chunkLimit = 100_000
	stream := oggPage(oggBOS, 0, 7, []byte("OpusHead\x01\x01\x00\x00\x80\xbb\x00\x00\x00\x00\x00"))
	stream = append(stream, oggPage(0, 0, 7, []byte("OpusTags\x00\x00\x00\x00\x00\x00\x00\x00"))...)
	packets := make([][]byte, 10)
	for i := range packets {
		packets[i] = []byte{0xFB, 0x06}
	}
	for range 40 { // 40 x 10 x 5760 samples: 2.3 million
		stream = append(stream, oggPage(0, -1, 7, packets...)...)
	}
	d, err := NewStreamDecoder(Format{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.Decode(stream)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if len(out) > chunkLimit+opusMaxFrames {
		t.Errorf("one call returned %d samples", len(out))
	}
	// Pushed in small chunks, the same stream decodes.
	got, info, err := decodeChunks(t, Format{}, randomChunks(stream, rand.New(rand.NewPCG(5, 6)), 30))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40*10*5760 || info.Container != ContainerOggOpus {
		t.Errorf("%d samples, %+v", len(got), info)
	}
}
