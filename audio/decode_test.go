package audio

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestDecodeFiles decodes real compressed and converted recordings and
// checks not only the layout and duration but that the decoded signal is the
// original speech: bit-exact for lossless files, and for lossy codecs
// aligned to the sample (gapless trimming) with a correlation and SNR fitting
// each codec and bit rate.
func TestDecodeFiles(t *testing.T) {
	ref := reference(t, 3)
	tests := []struct {
		file      string
		raw       Format // for headerless files
		container Container
		rate      int
		channels  int
		frames    int
		exact     bool    // samples equal the original's
		maxLag    int     // allowed misalignment, in 16 kHz samples
		minCorr   float64 // normalised correlation with the original
		minSNR    float64 // dB
	}{
		{file: "speech.flac", container: ContainerFLAC, rate: 16000, channels: 1, frames: 48000, exact: true},
		{file: "speech-24bit.wav", container: ContainerWAV, rate: 16000, channels: 1, frames: 24000, exact: true},
		{file: "speech-float.wav", container: ContainerWAV, rate: 16000, channels: 1, frames: 20000, exact: true},
		// 44.1 kHz: compared after resampling back to 16 kHz.
		{file: "speech-44k-stereo.wav", container: ContainerWAV, rate: 44100, channels: 2, frames: 22050, minCorr: 0.9999, minSNR: 45},
		{file: "speech-8k-alaw.wav", container: ContainerWAV, rate: 8000, channels: 1, frames: 24000, minCorr: 0.99, minSNR: 18},
		{file: "speech-8k-u8.wav", container: ContainerWAV, rate: 8000, channels: 1, frames: 24000, minCorr: 0.99, minSNR: 18},
		{file: "speech-8k.mulaw", raw: Format{EncodingMulaw, 8000, 1}, container: ContainerNone, rate: 8000, channels: 1, frames: 24000, minCorr: 0.99, minSNR: 18},
		{file: "speech-16k-mono.mp3", container: ContainerMP3, rate: 16000, channels: 1, frames: 48000, minCorr: 0.995, minSNR: 20},
		{file: "speech-44k-stereo.mp3", container: ContainerMP3, rate: 44100, channels: 2, frames: 132300, minCorr: 0.995, minSNR: 19},
		{file: "speech.ogg", container: ContainerOggVorbis, rate: 16000, channels: 1, frames: 48000, minCorr: 0.99, minSNR: 16},
		{file: "speech.opus", container: ContainerOggOpus, rate: 48000, channels: 1, frames: 144000, maxLag: 2, minCorr: 0.98, minSNR: 13},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := readTestdata(t, tt.file)
			var b *Buffer
			var err error
			if tt.raw.Encoding != EncodingNone {
				b, err = DecodeRaw(context.Background(), bytes.NewReader(data), tt.raw)
			} else {
				if got := Detect(data); got != tt.container {
					t.Errorf("Detect = %v, want %v", got, tt.container)
				}
				b, err = Decode(context.Background(), bytes.NewReader(data))
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Container != tt.container || b.SampleRate != tt.rate || b.Channels != tt.channels || b.Frames() != tt.frames {
				t.Fatalf("got %v %d Hz %d ch %d frames, want %v %d Hz %d ch %d frames",
					b.Container, b.SampleRate, b.Channels, b.Frames(), tt.container, tt.rate, tt.channels, tt.frames)
			}
			left := channel(b.Samples, b.Channels, 0)
			if tt.exact {
				for i, v := range left {
					if v != ref[i] {
						t.Fatalf("sample %d = %v, original %v", i, v, ref[i])
					}
				}
				return
			}
			x := left
			if b.SampleRate != 16000 {
				x = resample64(t, left, b.SampleRate, 16000)
			}
			// A wrong alignment would show as a lag at the edge of the
			// search or as a poor correlation.
			lag, corr := bestLag(ref, x, 20)
			s := snr(ref, x, lag)
			t.Logf("lag %d, correlation %.4f, SNR %.1f dB", lag, corr, s)
			if lag < -tt.maxLag || lag > tt.maxLag {
				t.Errorf("decoded audio is shifted by %d samples against the original", lag)
			}
			if corr < tt.minCorr || s < tt.minSNR {
				t.Errorf("correlation %.4f, SNR %.1f dB; want at least %.4f and %.1f dB", corr, s, tt.minCorr, tt.minSNR)
			}
			if b.Channels == 2 {
				// The right channel was made as the left inverted at half
				// level.
				right := channel(b.Samples, 2, 1)
				half := make([]float64, len(left))
				for i, v := range left {
					half[i] = -0.5 * v
				}
				if s := snr(half, right, 0); s < 15 {
					t.Errorf("right channel is not -0.5 x left: SNR %.1f dB", s)
				}
			}
		})
	}
}

// TestDecodeMP3WithoutGaplessTag strips LAME's Info frame: the decoder can
// then not know the encoder delay, so it must keep all decoded audio, which
// lags the original by exactly the encoder delay (576) plus the decoder's
// (529).
func TestDecodeMP3WithoutGaplessTag(t *testing.T) {
	ref := reference(t, 3)
	data := readTestdata(t, "speech-16k-mono.mp3")
	h, ok := parseMPEGHeader(data)
	if !ok {
		t.Fatal("test file does not start with a frame")
	}
	b, err := Decode(context.Background(), bytes.NewReader(data[h.frameBytes:]))
	if err != nil {
		t.Fatal(err)
	}
	lag, corr := bestLagIn(ref, channel(b.Samples, 1, 0), 1000, 1200)
	if lag != 576+mp3DecoderDelay || corr < 0.99 {
		t.Errorf("lag %d, correlation %.4f; want lag %d", lag, corr, 576+mp3DecoderDelay)
	}
	if b.Frames()%576 != 0 {
		t.Errorf("%d frames is not whole MPEG-2 frames", b.Frames())
	}
}

// TestDecodeID3 puts tags in front of MP3 and FLAC data, as taggers do: a
// large one that the decoder must skip without trusting its size for
// allocation, and two in a row.
func TestDecodeID3(t *testing.T) {
	id3 := func(size int) []byte {
		h := []byte{'I', 'D', '3', 4, 0, 0, byte(size >> 21 & 0x7F), byte(size >> 14 & 0x7F), byte(size >> 7 & 0x7F), byte(size & 0x7F)}
		return append(h, make([]byte, size)...)
	}
	tests := []struct {
		file string
		tags []byte
		want Container
	}{
		{"speech-16k-mono.mp3", id3(300000), ContainerMP3},
		{"speech-16k-mono.mp3", append(id3(10), id3(20)...), ContainerMP3},
		{"speech.flac", id3(1000), ContainerFLAC},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			plain, err := Decode(context.Background(), bytes.NewReader(readTestdata(t, tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			tagged, err := Decode(context.Background(), bytes.NewReader(append(slices.Clone(tt.tags), readTestdata(t, tt.file)...)))
			if err != nil {
				t.Fatal(err)
			}
			if tagged.Container != tt.want || !slices.Equal(tagged.Samples, plain.Samples) {
				t.Errorf("tagged file decodes as %v with %d samples, want %v with %d", tagged.Container, len(tagged.Samples), tt.want, len(plain.Samples))
			}
		})
	}
	// A tag that claims 256 MiB and is cut off must fail, not allocate.
	huge := []byte{'I', 'D', '3', 4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F}
	if _, err := Decode(context.Background(), bytes.NewReader(huge)); !errors.Is(err, ErrUndecodable) {
		t.Errorf("truncated huge ID3 tag: err = %v, want ErrUndecodable", err)
	}
}

// TestDecodeChunkedEqualsWhole pushes every test file through a
// StreamDecoder in random chunks (1 byte to a few KB, and empty ones) and
// requires exactly the samples that whole-file decoding gives.
func TestDecodeChunkedEqualsWhole(t *testing.T) {
	files := []string{"speech.flac", "speech-16k-mono.mp3", "speech-44k-stereo.mp3", "speech.ogg", "speech.opus",
		"speech-8k-alaw.wav", "speech-24bit.wav", "speech-44k-stereo.wav", "speech-float.wav"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, name)
			whole, err := Decode(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			got, info, err := decodeChunks(t, Format{}, randomChunks(data, rng, 3000))
			if err != nil {
				t.Fatal(err)
			}
			if info.SampleRate != whole.SampleRate || info.Channels != whole.Channels || info.Container != whole.Container {
				t.Errorf("stream info %+v, whole file %d Hz %d ch %v", info, whole.SampleRate, whole.Channels, whole.Container)
			}
			if !slices.Equal(got, whole.Samples) {
				t.Errorf("chunked decoding gave %d samples that differ from the whole file's %d", len(got), len(whole.Samples))
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	flac := readTestdata(t, "speech.flac")
	tests := []struct {
		name string
		data []byte
		why  string // plain words the error must contain
	}{
		{"empty", nil, "empty"},
		{"text", []byte("hello, this is not audio at all"), "not a known audio container"},
		{"mp4", []byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), "MP4"},
		{"aac", []byte{0xFF, 0xF1, 0x50, 0x80, 0, 0, 0, 0}, "AAC"},
		{"rifx", []byte("RIFX\x00\x00\x00\x24WAVEfmt "), "RIFX"},
		{"rf64", []byte("RF64\xff\xff\xff\xffWAVEds64"), "RF64"},
		{"avi", []byte("RIFF\x00\x00\x00\x00AVI LIST"), "not WAVE"},
		{"speex", oggPage(2, 0, 1, []byte("Speex   version")), "Speex"},
		{"short", []byte("RI"), "too short"},
		{"flac without streaminfo", append([]byte("fLaC\x86\x00\x00\x10"), make([]byte, 16)...), "STREAMINFO"},
		{"flac truncated header", flac[:20], "FLAC"},
		{"wav without data", []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00"), "before its data chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(context.Background(), bytes.NewReader(tt.data))
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("err = %v, want ErrUndecodable", err)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("error %q does not say %q", err, tt.why)
			}
		})
	}
}

func TestDecodeReadErrorAndContext(t *testing.T) {
	data := readTestdata(t, "speech.ogg")
	boom := errors.New("disk on fire")
	_, err := Decode(context.Background(), iotest.ErrReader(boom))
	if !errors.Is(err, boom) || errors.Is(err, ErrUndecodable) {
		t.Errorf("read error: err = %v, want it wrapped and not ErrUndecodable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Decode(ctx, bytes.NewReader(data)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	// One byte per read must work as well as big reads.
	b, err := Decode(context.Background(), iotest.OneByteReader(bytes.NewReader(data)))
	if err != nil || b.Frames() != 48000 {
		t.Errorf("one byte at a time: %v, %d frames", err, b.Frames())
	}
}

// TestDecodeRawRefusesContainers checks the service's rule that the declared
// encoding must match the audio actually sent.
func TestDecodeRawRefusesContainers(t *testing.T) {
	for _, file := range []string{"speech.flac", "speech.ogg", "speech-8k-alaw.wav", "speech-16k-mono.mp3"} {
		t.Run(file, func(t *testing.T) {
			data := readTestdata(t, file)
			if file == "speech-16k-mono.mp3" {
				data = append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), data...)
			}
			_, err := DecodeRaw(context.Background(), bytes.NewReader(data), Format{EncodingLinear16, 16000, 1})
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), "must match") {
				t.Errorf("err = %v, want ErrUndecodable saying the encoding must match", err)
			}
		})
	}
}

func TestBufferDuration(t *testing.T) {
	b := &Buffer{Samples: make([]float32, 2*24000), SampleRate: 16000, Channels: 2}
	if b.Frames() != 24000 || b.Duration().Seconds() != 1.5 {
		t.Errorf("frames %d, duration %v", b.Frames(), b.Duration())
	}
	if (&Buffer{}).Duration() != 0 || (&Buffer{}).Frames() != 0 {
		t.Error("empty buffer has length")
	}
}

// TestDecodeUnsupportedMPEG: MPEG variants that are not MP3 are named, also
// behind an ID3 tag.
func TestDecodeUnsupportedMPEG(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		why  string
	}{
		{"layer ii", []byte{0xFF, 0xFD, 0x90, 0x04, 0, 0, 0, 0}, "layer II"},
		{"free format", []byte{0xFF, 0xFB, 0x00, 0x04, 0, 0, 0, 0}, "free-format"},
		{"id3 then nothing", []byte("ID3\x04\x00\x00\x00\x00\x00\x00junk"), "no MP3 frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(context.Background(), bytes.NewReader(tt.data))
			if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("err = %v, want ErrUndecodable saying %q", err, tt.why)
			}
		})
	}
}
