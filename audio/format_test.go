package audio

import (
	"math"
	"slices"
	"testing"
)

func TestParseEncoding(t *testing.T) {
	tests := []struct {
		in      string
		want    Encoding
		wantErr bool
	}{
		{"", EncodingNone, false},
		{"linear16", EncodingLinear16, false},
		{"linear32", EncodingLinear32, false},
		{"mulaw", EncodingMulaw, false},
		{"alaw", EncodingAlaw, false},
		{"Linear16", EncodingNone, true},
		{"opus", EncodingNone, true},
		{"pcm", EncodingNone, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseEncoding(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("ParseEncoding(%q) = %v, %v", tt.in, got, err)
			}
			if err == nil && got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestFormatValidate(t *testing.T) {
	tests := []struct {
		f  Format
		ok bool
	}{
		{Format{EncodingLinear16, 16000, 1}, true},
		{Format{EncodingMulaw, 8000, 1}, true},
		{Format{EncodingLinear32, 48000, 2}, true},
		{Format{EncodingNone, 16000, 1}, false},
		{Format{Encoding(99), 16000, 1}, false},
		{Format{EncodingLinear16, 0, 1}, false},
		{Format{EncodingLinear16, 16000, 0}, false},
		{Format{EncodingLinear16, 16000, 33}, false},
		{Format{EncodingLinear16, 10_000_000, 1}, false},
	}
	for _, tt := range tests {
		if err := tt.f.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v", tt.f, err)
		}
	}
	if got := (Format{EncodingLinear16, 16000, 2}).FrameSize(); got != 4 {
		t.Errorf("FrameSize = %d", got)
	}
}

// TestInt16Float32Exact: every int16 survives the trip through float32.
func TestInt16Float32Exact(t *testing.T) {
	all := make([]int16, 0, 65536)
	for i := math.MinInt16; i <= math.MaxInt16; i++ {
		all = append(all, int16(i))
	}
	f := Int16ToFloat32(nil, all)
	for i, v := range f {
		if v < -1 || v >= 1 {
			t.Fatalf("%d scaled to %v, outside [-1, 1)", all[i], v)
		}
	}
	if back := Float32ToInt16(nil, f); !slices.Equal(back, all) {
		t.Fatal("int16 -> float32 -> int16 is not the identity")
	}
	if back := BytesToInt16(nil, Int16ToBytes(nil, all)); !slices.Equal(back, all) {
		t.Fatal("int16 -> bytes -> int16 is not the identity")
	}
	if got := DecodePCM(nil, Int16ToBytes(nil, all), EncodingLinear16); !slices.Equal(got, f) {
		t.Fatal("DecodePCM(linear16) differs from Int16ToFloat32")
	}
}

func TestFloat32ToInt16RoundsAndClips(t *testing.T) {
	in := []float32{0, 0.5 / 32768, -0.5 / 32768, 1.49 / 32768, 1, 2, -1, -3, float32(math.NaN()), float32(math.Inf(1))}
	want := []int16{0, 1, -1, 1, 32767, 32767, -32768, -32768, 0, 32767}
	got := Float32ToInt16(nil, in)
	// math.Round rounds half away from zero.
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestPCMRoundTrip encodes a signal in each raw encoding and decodes it:
// linear encodings return it to within half a step, G.711 within its
// segment's step (at most 1/32 of full scale near the top).
func TestPCMRoundTrip(t *testing.T) {
	src := make([]float32, 4000)
	for i := range src {
		src[i] = float32(0.9 * math.Sin(float64(i)*0.013) * math.Sin(float64(i)*0.0007))
	}
	tests := []struct {
		e      Encoding
		maxErr float64
	}{
		{EncodingLinear16, 0.5 / 32768},
		{EncodingLinear32, 1e-7},
		{EncodingMulaw, (1024.0/2 + 4) / 32768},
		{EncodingAlaw, (1024.0/2 + 16) / 32768},
	}
	for _, tt := range tests {
		t.Run(tt.e.String(), func(t *testing.T) {
			b := EncodePCM(nil, src, tt.e)
			if len(b) != len(src)*tt.e.BytesPerSample() {
				t.Fatalf("%d bytes for %d samples", len(b), len(src))
			}
			// A trailing partial sample is not decoded.
			got := DecodePCM(nil, append(b, 0x7F), tt.e)
			if tt.e.BytesPerSample() > 1 && len(got) != len(src) {
				t.Fatalf("decoded %d samples, want %d", len(got), len(src))
			}
			for i := range src {
				if d := math.Abs(float64(got[i] - src[i])); d > tt.maxErr+1e-9 {
					t.Fatalf("sample %d: %v -> %v, error %g > %g", i, src[i], got[i], d, tt.maxErr)
				}
			}
		})
	}
}

func TestDecodePCMAppends(t *testing.T) {
	dst := make([]float32, 1, 10)
	dst[0] = 7
	got := DecodePCM(dst, []byte{0, 0x80, 0xFF, 0x7F}, EncodingLinear16)
	if !slices.Equal(got, []float32{7, -1, 32767.0 / 32768}) {
		t.Errorf("got %v", got)
	}
	if got := DecodePCM(nil, []byte{1, 2}, EncodingNone); len(got) != 0 {
		t.Errorf("EncodingNone decoded %v", got)
	}
}
