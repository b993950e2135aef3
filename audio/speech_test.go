package audio

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTo16kMono converts the real stereo 44.1 kHz and 8 kHz recordings and
// checks the result against the original 16 kHz speech.
func TestTo16kMono(t *testing.T) {
	ref := reference(t, 3)
	tests := []struct {
		file    string
		frames  int
		minCorr float64
	}{
		{"speech-44k-stereo.wav", 8000, 0.999},
		{"speech-44k-stereo.mp3", 48000, 0.99},
		{"speech-8k-alaw.wav", 48000, 0.99},
		{"speech.opus", 48000, 0.98},
		{"speech.flac", 48000, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := Decode(context.Background(), bytes.NewReader(readTestdata(t, tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			pcm, err := To16kMono(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(pcm) != tt.frames {
				t.Fatalf("%d samples, want %d", len(pcm), tt.frames)
			}
			got := make([]float64, len(pcm))
			for i, v := range pcm {
				got[i] = float64(v) / 32768
			}
			if b.Channels == 2 {
				// mono = (L - 0.5 L) / 2 = L / 4
				for i := range got {
					got[i] *= 4
				}
			}
			lag, corr := bestLag(ref, got, 10)
			if lag < -1 || lag > 1 || corr < tt.minCorr {
				t.Errorf("lag %d, correlation %.4f; want |lag| <= 1 and correlation >= %.3f", lag, corr, tt.minCorr)
			}
		})
	}
	if _, err := To16kMono(&Buffer{SampleRate: 0, Channels: 1}); err == nil {
		t.Error("buffer without a rate accepted")
	}
}

// TestConverter16kMonoStreaming: the streaming converter, fed the output of
// a StreamDecoder in random pieces (splitting frames), gives exactly what
// To16kMono gives for the whole buffer.
func TestConverter16kMonoStreaming(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, name := range []string{"speech-44k-stereo.wav", "speech.opus", "speech.flac"} {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, name)
			b, err := Decode(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			want, err := To16kMono(b)
			if err != nil {
				t.Fatal(err)
			}
			d, err := NewStreamDecoder(Format{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			var c *Converter16kMono
			var got []int16
			push := func(s []float32) {
				for len(s) > 0 {
					n := min(len(s), 1+rng.IntN(999))
					got = append(got, c.Convert(s[:n])...)
					s = s[n:]
				}
			}
			for _, chunk := range randomChunks(data, rng, 4000) {
				s, err := d.Decode(chunk)
				if err != nil {
					t.Fatal(err)
				}
				if c == nil {
					info, ok := d.Info()
					if !ok {
						continue
					}
					if c, err = NewConverter16kMono(info.SampleRate, info.Channels); err != nil {
						t.Fatal(err)
					}
				}
				push(s)
			}
			s, err := d.Flush()
			if err != nil {
				t.Fatal(err)
			}
			push(s)
			got = append(got, c.Flush()...)
			if !slices.Equal(got, want) {
				t.Errorf("streamed %d samples differ from whole-buffer %d", len(got), len(want))
			}
		})
	}
}

// TestConverter16kMonoPassthrough: 16 kHz mono int16 input comes out
// unchanged.
func TestConverter16kMonoPassthrough(t *testing.T) {
	in := []int16{0, 1, -1, 32767, -32768, 12345}
	c, err := NewConverter16kMono(16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := append([]int16(nil), c.Convert(Int16ToFloat32(nil, in))...)
	got = append(got, c.Flush()...)
	if !slices.Equal(got, in) {
		t.Errorf("got %v", got)
	}
}

// BenchmarkSpeechDecoderLinear16 is the engine's common path: 20 ms chunks
// of linear16 16 kHz mono decoded for the recogniser.
func BenchmarkSpeechDecoderLinear16(b *testing.B) {
	benchmarkSpeechDecoder(b, Format{EncodingLinear16, 16000, 1})
}

// BenchmarkSpeechDecoder48kStereo: 20 ms chunks of linear16 48 kHz stereo
// (a typical microphone) decoded for the recogniser.
func BenchmarkSpeechDecoder48kStereo(b *testing.B) {
	benchmarkSpeechDecoder(b, Format{EncodingLinear16, 48000, 2})
}

func benchmarkSpeechDecoder(b *testing.B, f Format) {
	s, err := NewSpeechDecoder(f)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	chunk := make([]byte, f.FrameSize()*f.SampleRate/50)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Decode(chunk); err != nil {
			b.Fatal(err)
		}
	}
}
