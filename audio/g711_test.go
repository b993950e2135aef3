package audio

import (
	"math"
	"testing"
)

// TestG711KnownValues checks codes and levels published in ITU-T G.711 and
// produced by its G.191 reference software.
func TestG711KnownValues(t *testing.T) {
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"mulaw decode 0x80 (positive full scale)", int(MulawDecode(0x80)), 32124},
		{"mulaw decode 0x00 (negative full scale)", int(MulawDecode(0x00)), -32124},
		{"mulaw decode 0xFF (positive zero)", int(MulawDecode(0xFF)), 0},
		{"mulaw decode 0x7F (negative zero)", int(MulawDecode(0x7F)), 0},
		{"mulaw decode 0xFE", int(MulawDecode(0xFE)), 8},
		{"mulaw decode 0xF0 (top of segment 0)", int(MulawDecode(0xF0)), 120},
		{"mulaw decode 0xEF (bottom of segment 1)", int(MulawDecode(0xEF)), 132},
		{"mulaw encode 0", int(MulawEncode(0)), 0xFF},
		{"mulaw encode -1", int(MulawEncode(-1)), 0x7F},
		{"mulaw encode 32767", int(MulawEncode(32767)), 0x80},
		{"mulaw encode -32768", int(MulawEncode(-32768)), 0x00},
		{"alaw decode 0xD5 (smallest positive)", int(AlawDecode(0xD5)), 8},
		{"alaw decode 0x55 (smallest negative)", int(AlawDecode(0x55)), -8},
		{"alaw decode 0xAA (positive full scale)", int(AlawDecode(0xAA)), 32256},
		{"alaw decode 0x2A (negative full scale)", int(AlawDecode(0x2A)), -32256},
		{"alaw encode 0", int(AlawEncode(0)), 0xD5},
		{"alaw encode -1", int(AlawEncode(-1)), 0x55},
		{"alaw encode 32767", int(AlawEncode(32767)), 0xAA},
		{"alaw encode -32768", int(AlawEncode(-32768)), 0x2A},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %d (0x%X), want %d (0x%X)", tt.got, tt.got, tt.want, tt.want)
			}
		})
	}
}

type g711Law struct {
	name      string
	encode    func(int16) byte
	decode    func(byte) int16
	ref       func(int16) byte
	slack     int
	fullScale int
}

var g711Laws = []g711Law{
	{"mulaw", MulawEncode, MulawDecode, mulawCompress, 3, 32124},
	{"alaw", AlawEncode, AlawDecode, alawCompress, 15, 32256},
}

// TestG711Properties checks, for every one of the 65536 inputs, that the
// lookup tables agree with the reference algorithm, that the quantiser is
// symmetric (one's complement, as in G.191), monotonic, and codes each
// input to the level whose interval holds it.
func TestG711Properties(t *testing.T) {
	for _, law := range g711Laws {
		t.Run(law.name, func(t *testing.T) {
			prev := math.MinInt
			for i := math.MinInt16; i <= math.MaxInt16; i++ {
				x := int16(i)
				c := law.encode(x)
				if r := law.ref(x); c != r {
					t.Fatalf("table encodes %d as 0x%02X, reference 0x%02X", x, c, r)
				}
				if m := law.encode(^x); m != c^0x80 {
					t.Fatalf("encode(^%d) = 0x%02X, want 0x%02X", x, m, c^0x80)
				}
				y := int(law.decode(c))
				if y < prev {
					t.Fatalf("not monotonic at %d: level %d after %d", x, y, prev)
				}
				prev = y
				// Each level is the midpoint of its quantisation interval,
				// whose width is the distance to the neighbouring level of
				// the same segment (the codes differ in the lowest mantissa
				// bit). The encoder sees only the top 14 (mu-law) or 12
				// (A-law) bits, hence the slack. Beyond full scale it clips.
				step := abs(y - int(law.decode(c^1)))
				slack := law.slack
				if abs(int(x)) <= law.fullScale+step/2 && abs(y-int(x)) > step/2+slack {
					t.Fatalf("%d coded to level %d, outside its interval of width %d", x, y, step)
				}
			}
		})
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestG711RoundTrip: every code decodes to a level that encodes back to the
// same code, except mu-law's negative zero, which is the same level as
// positive zero.
func TestG711RoundTrip(t *testing.T) {
	for _, law := range g711Laws {
		t.Run(law.name, func(t *testing.T) {
			for c := range 256 {
				got := law.encode(law.decode(byte(c)))
				want := byte(c)
				if law.name == "mulaw" && c == 0x7F {
					want = 0xFF
				}
				if got != want {
					t.Errorf("code 0x%02X -> %d -> 0x%02X", c, law.decode(byte(c)), got)
				}
			}
		})
	}
}

func BenchmarkMulawEncode(b *testing.B) {
	src := make([]float32, 160) // 20 ms at 8 kHz
	for i := range src {
		src[i] = float32(math.Sin(float64(i) * 0.3))
	}
	dst := make([]byte, 0, 160)
	b.ReportAllocs()
	for b.Loop() {
		dst = EncodePCM(dst[:0], src, EncodingMulaw)
	}
}
