package audio

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// convertFrames runs frames of frameLen samples of pcm through a
// FrameConverter and returns all output bytes, tail included.
func convertFrames(t testing.TB, in Format, outRate int, pcm []int16, frameLen int) []byte {
	t.Helper()
	c, err := NewFrameConverter(in, outRate)
	if err != nil {
		t.Fatal(err)
	}
	if c.Format() != (Format{EncodingLinear16, outRate, 1}) {
		t.Fatalf("output format %+v", c.Format())
	}
	var out []byte
	for len(pcm) > 0 {
		n := min(frameLen, len(pcm))
		out = append(out, c.Convert(pcm[:n])...)
		pcm = pcm[n:]
	}
	return append(out, c.Flush()...)
}

// TestFrameConverterRates converts a 440 Hz tone between the common rates
// and layouts. The output is exactly what To16kMono (the recogniser's
// proven path) makes of the same audio when the output is 16 kHz; at every
// rate it has the expected length, and the tone keeps its level and pitch.
func TestFrameConverterRates(t *testing.T) {
	for _, tt := range []struct{ inRate, channels, outRate int }{
		{16000, 1, 16000}, {48000, 1, 16000}, {48000, 2, 16000}, {44100, 2, 16000},
		{8000, 1, 16000}, {16000, 1, 8000}, {44100, 1, 24000}, {16000, 2, 48000},
	} {
		t.Run(fmt.Sprintf("%d-%dch-to-%d", tt.inRate, tt.channels, tt.outRate), func(t *testing.T) {
			const seconds = 0.5
			frames := int(seconds * float64(tt.inRate))
			pcm := sine16(440, tt.inRate, frames, tt.channels, 16384)
			in := Format{EncodingLinear16, tt.inRate, tt.channels}
			got := convertFrames(t, in, tt.outRate, pcm, tt.inRate/50*tt.channels)

			wantLen := (frames*tt.outRate + tt.inRate - 1) / tt.inRate
			if len(got) != 2*wantLen {
				t.Fatalf("%d output samples, want %d", len(got)/2, wantLen)
			}
			if tt.outRate == SpeechRate {
				b := &Buffer{Samples: Int16ToFloat32(nil, pcm), SampleRate: tt.inRate, Channels: tt.channels}
				want, err := To16kMono(b)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, Int16ToBytes(nil, want)) {
					t.Fatal("output differs from To16kMono")
				}
			}
			out := BytesToInt16(nil, got)
			edge := tt.outRate / 20 // 50 ms, away from the start and end
			mid := out[edge : len(out)-edge]
			rms, _ := Level(mid)
			if math.Abs(rms-(-9.03)) > 0.1 {
				t.Errorf("tone at %.2f dBFS RMS, want -9.03", rms)
			}
			// Count rising zero crossings: 440 per second.
			crossings := 0
			for i := 1; i < len(mid); i++ {
				if mid[i-1] < 0 && mid[i] >= 0 {
					crossings++
				}
			}
			wantC := 440 * float64(len(mid)) / float64(tt.outRate)
			if math.Abs(float64(crossings)-wantC) > 1.5 {
				t.Errorf("%d rising zero crossings, want about %.1f", crossings, wantC)
			}
		})
	}
}

// TestFrameConverterChunking: output does not depend on the frame size.
func TestFrameConverterChunking(t *testing.T) {
	in := Format{EncodingLinear16, 44100, 2}
	pcm := sine16(1000, 44100, 44100/5, 2, 20000)
	want := convertFrames(t, in, 16000, pcm, len(pcm))
	for _, frameLen := range []int{2, 882, 1764, 1000} {
		if got := convertFrames(t, in, 16000, pcm, frameLen); !bytes.Equal(got, want) {
			t.Errorf("frames of %d samples give different output", frameLen)
		}
	}
}

// TestFrameConverterPassthrough: 16-bit mono at the output rate is only
// re-encoded, sample for sample.
func TestFrameConverterPassthrough(t *testing.T) {
	pcm := []int16{0, 1, -1, 32767, -32768, 1234}
	c, err := NewFrameConverter(Format{EncodingLinear16, 24000, 1}, 24000)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0, 0x80, 0xd2, 0x04}
	if got := c.Convert(pcm); !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
	if tail := c.Flush(); len(tail) != 0 {
		t.Errorf("flush returned %d bytes", len(tail))
	}
}

// TestFrameConverterAllocationFree: once warmed up, converting a frame of
// the microphone's audio allocates nothing.
func TestFrameConverterAllocationFree(t *testing.T) {
	for _, in := range []Format{{EncodingLinear16, 16000, 1}, {EncodingLinear16, 48000, 2}} {
		t.Run(fmt.Sprintf("%d-%d", in.SampleRate, in.Channels), func(t *testing.T) {
			c, err := NewFrameConverter(in, 16000)
			if err != nil {
				t.Fatal(err)
			}
			frame := sine16(440, in.SampleRate, in.SampleRate/50, in.Channels, 10000)
			for range 300 { // until the resampler's history has its size
				c.Convert(frame)
			}
			if allocs := testing.AllocsPerRun(200, func() { c.Convert(frame) }); allocs != 0 {
				t.Errorf("%.2f allocations per frame", allocs)
			}
		})
	}
}

func TestNewFrameConverterErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      Format
		outRate int
	}{
		{"mu-law input", Format{EncodingMulaw, 8000, 1}, 16000},
		{"no input rate", Format{EncodingLinear16, 0, 1}, 16000},
		{"no channels", Format{EncodingLinear16, 16000, 0}, 16000},
		{"output rate", Format{EncodingLinear16, 16000, 1}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewFrameConverter(tt.in, tt.outRate); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := NewMonoConverter(16000, 1, 999999); err == nil {
		t.Error("NewMonoConverter accepted an output rate of 999999")
	}
}

func BenchmarkFrameConverter(b *testing.B) {
	for _, in := range []Format{{EncodingLinear16, 16000, 1}, {EncodingLinear16, 48000, 2}, {EncodingLinear16, 44100, 1}} {
		b.Run(fmt.Sprintf("%d-%dch", in.SampleRate, in.Channels), func(b *testing.B) {
			c, err := NewFrameConverter(in, 16000)
			if err != nil {
				b.Fatal(err)
			}
			frame := sine16(440, in.SampleRate, in.SampleRate/50, in.Channels, 10000)
			b.SetBytes(int64(2 * len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				c.Convert(frame)
			}
		})
	}
}
