package audio

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// librivoxDir holds the real recordings the test files were made from
// (installed by scripts/setup with pocketsphinx).
const librivoxDir = "/usr/share/pocketsphinx/test/data/librivox"

const referenceName = "sense_and_sensibility_01_austen_64kb-0870.wav"

// reference returns the first seconds of the original recording the test
// files were generated from, as float64 in [-1, 1). It reads the file with
// its own minimal parser, independent of the code under test.
func reference(t testing.TB, seconds float64) []float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(librivoxDir, referenceName))
	if os.IsNotExist(err) {
		t.Skipf("original recordings not installed (%v); run scripts/setup", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:4]) != "RIFF" || string(b[36:40]) != "data" || binary.LittleEndian.Uint32(b[24:]) != 16000 {
		t.Fatalf("%s is not the 16 kHz canonical WAV the tests expect", referenceName)
	}
	pcm := b[44:]
	n := min(len(pcm)/2, int(seconds*16000))
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
	}
	return out
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// channel extracts one channel of interleaved samples as float64.
func channel(s []float32, channels, c int) []float64 {
	out := make([]float64, len(s)/channels)
	for i := range out {
		out[i] = float64(s[i*channels+c])
	}
	return out
}

func toFloat64(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// bestLag finds the shift of got against ref, within +-maxLag, that
// maximises their normalised correlation; got[i+lag] lines up with ref[i].
func bestLag(ref, got []float64, maxLag int) (lag int, corr float64) {
	return bestLagIn(ref, got, -maxLag, maxLag)
}

// bestLagIn is bestLag over the lags lo..hi.
func bestLagIn(ref, got []float64, lo, hi int) (lag int, corr float64) {
	corr = math.Inf(-1)
	for l := lo; l <= hi; l++ {
		if c := correlation(ref, got, l); c > corr {
			lag, corr = l, c
		}
	}
	return lag, corr
}

// correlation is the normalised correlation of ref[i] and got[i+lag] over
// their overlap.
func correlation(ref, got []float64, lag int) float64 {
	var xy, xx, yy float64
	for i := range ref {
		j := i + lag
		if j < 0 || j >= len(got) {
			continue
		}
		xy += ref[i] * got[j]
		xx += ref[i] * ref[i]
		yy += got[j] * got[j]
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx*yy)
}

// snr is the ratio, in dB, of the reference's energy to that of the
// difference, over their overlap with got shifted by lag.
func snr(ref, got []float64, lag int) float64 {
	var sig, noise float64
	for i := range ref {
		j := i + lag
		if j < 0 || j >= len(got) {
			continue
		}
		sig += ref[i] * ref[i]
		d := ref[i] - got[j]
		noise += d * d
	}
	if noise == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(sig/noise)
}

// resample64 resamples with the code under test (used where a reference must
// be brought to another rate, in tests whose subject is not the resampler).
func resample64(t testing.TB, x []float64, from, to int) []float64 {
	t.Helper()
	in := make([]float32, len(x))
	for i, v := range x {
		in[i] = float32(v)
	}
	out, err := Resample(in, from, to, 1)
	if err != nil {
		t.Fatal(err)
	}
	return toFloat64(out)
}

// randomChunks cuts b into pieces of random sizes, including empty ones and
// single bytes, so that every header and frame boundary is straddled.
func randomChunks(b []byte, rng *rand.Rand, maxSize int) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 0
		switch rng.IntN(4) {
		case 0:
			n = rng.IntN(3)
		default:
			n = 1 + rng.IntN(maxSize)
		}
		n = min(n, len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// decodeChunks decodes b with a StreamDecoder fed the given chunks and
// returns all samples and the info.
func decodeChunks(t testing.TB, f Format, chunks [][]byte) ([]float32, Info, error) {
	t.Helper()
	d, err := NewStreamDecoder(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var all []float32
	for _, c := range chunks {
		out, err := d.Decode(c)
		all = append(all, out...)
		if err != nil {
			return all, Info{}, err
		}
	}
	out, err := d.Flush()
	all = append(all, out...)
	info, _ := d.Info()
	return all, info, err
}

// oggPage builds one Ogg page holding whole packets, with a valid CRC.
func oggPage(flags byte, granule int64, serial uint32, packets ...[]byte) []byte {
	var lacing, body []byte
	for _, p := range packets {
		n := len(p)
		for n >= 255 {
			lacing = append(lacing, 255)
			n -= 255
		}
		lacing = append(lacing, byte(n))
		body = append(body, p...)
	}
	h := make([]byte, oggHeaderLen, oggHeaderLen+len(lacing)+len(body))
	copy(h, "OggS")
	h[5] = flags
	binary.LittleEndian.PutUint64(h[6:], uint64(granule))
	binary.LittleEndian.PutUint32(h[14:], serial)
	h[26] = byte(len(lacing))
	page := append(append(h, lacing...), body...)
	binary.LittleEndian.PutUint32(page[22:], oggCRC(page))
	return page
}

// checkSplitDecode decodes b whole and split in two at an arbitrary
// point: both fail or both succeed with the same samples, unless one ran
// into ErrTooLarge.
func checkSplitDecode(t *testing.T, b []byte, split uint16) {
	t.Helper()
	whole, _, err := decodeChunks(t, Format{}, [][]byte{b})
	checkDecodeError(t, err)
	s := int(split) % (len(b) + 1)
	got, _, err2 := decodeChunks(t, Format{}, [][]byte{b[:s], b[s:]})
	checkDecodeError(t, err2)
	if errors.Is(err, ErrTooLarge) || errors.Is(err2, ErrTooLarge) {
		return
	}
	if (err == nil) != (err2 == nil) || !slices.Equal(got, whole) {
		t.Fatalf("split at %d: %v (%d samples); whole: %v (%d samples)", s, err2, len(got), err, len(whole))
	}
}

// squareTone is n samples of a square wave with a period of 50 samples,
// loud enough for any encoder to keep.
func squareTone(n int) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(8000 * ((i / 25) % 2))
	}
	return pcm
}
