package sphinx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The LibriVox recordings shipped by pocketsphinx-testdata.
const librivoxDir = "/usr/share/pocketsphinx/test/data/librivox"

var clipIDs = []string{"0870", "0880", "0890", "0920", "0930"}

func clipPath(id string) string {
	return filepath.Join(librivoxDir, "sense_and_sensibility_01_austen_64kb-"+id+".wav")
}

// readClip reads a test recording the way pocketsphinx_continuous reads a
// .wav file: it skips the 44-byte canonical header and takes the rest as
// little-endian 16-bit samples. The header is checked so that a recording
// in another format fails loudly instead of decoding garbage.
func readClip(tb testing.TB, path string) []int16 {
	tb.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("test recording missing (install pocketsphinx-testdata): %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " ||
		binary.LittleEndian.Uint16(b[20:]) != 1 || binary.LittleEndian.Uint16(b[22:]) != 1 ||
		binary.LittleEndian.Uint32(b[24:]) != SampleRate || binary.LittleEndian.Uint16(b[34:]) != 16 ||
		string(b[36:40]) != "data" {
		tb.Fatalf("%s: not a canonical 16 kHz mono 16-bit WAV file", path)
	}
	b = b[44:]
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return s
}

// writeClip writes samples as a canonical 16 kHz mono WAV file.
func writeClip(tb testing.TB, path string, s []int16) {
	tb.Helper()
	var buf bytes.Buffer
	n := uint32(2 * len(s))
	buf.WriteString("RIFF")
	_ = binary.Write(&buf, binary.LittleEndian, 36+n)
	buf.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(SampleRate), uint32(2 * SampleRate), uint16(2), uint16(16)} {
		_ = binary.Write(&buf, binary.LittleEndian, v)
	}
	buf.WriteString("data")
	_ = binary.Write(&buf, binary.LittleEndian, n)
	_ = binary.Write(&buf, binary.LittleEndian, s)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// background returns n samples made by repeating the first 100 ms of a
// clip, which holds only the recording's background noise. Used as
// "silence", it keeps the detector's noise estimate realistic, where digital
// zeros would not.
func background(clip []int16, n int) []int16 {
	const seg = SampleRate / 10
	out := make([]int16, 0, n)
	for len(out) < n {
		out = append(out, clip[:min(seg, n-len(out))]...)
	}
	return out
}

var shared struct {
	once sync.Once
	d    *Decoder
	err  error
}

// sharedDecoder returns a decoder loaded once for the whole test binary.
// Tests that use it must not run in parallel with each other.
func sharedDecoder(tb testing.TB) *Decoder {
	tb.Helper()
	shared.once.Do(func() {
		shared.d, shared.err = NewDecoder(context.Background(), Config{})
	})
	if shared.err != nil {
		tb.Fatalf("loading decoder: %v", shared.err)
	}
	return shared.d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.d != nil {
		_ = shared.d.Close()
	}
	os.Exit(code)
}

// cliWord is one line of `pocketsphinx_continuous -time yes`.
type cliWord struct {
	word       string
	start, end float64
	conf       float64
}

// cliUtt is one utterance printed by pocketsphinx_continuous.
type cliUtt struct {
	text  string
	words []cliWord
}

// continuousPath returns the path of pocketsphinx_continuous or skips.
func continuousPath(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("pocketsphinx_continuous")
	if err != nil {
		tb.Skip("pocketsphinx_continuous not on PATH")
	}
	return p
}

// runContinuous runs `pocketsphinx_continuous -infile path -time yes` plus
// extra arguments and parses its standard output: a hypothesis line per
// utterance followed by one "word start end confidence" line per segment.
func runContinuous(ctx context.Context, bin, path string, extra ...string) ([]cliUtt, error) {
	args := append([]string{"-infile", path, "-time", "yes"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", bin, err, lastLine(stderr.String()))
	}
	return parseContinuous(out)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func parseContinuous(out []byte) ([]cliUtt, error) {
	var utts []cliUtt
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 4 {
			var nums [3]float64
			ok := true
			for i := range nums {
				v, err := strconv.ParseFloat(f[i+1], 64)
				if err != nil {
					ok = false
					break
				}
				nums[i] = v
			}
			if ok {
				if len(utts) == 0 {
					return nil, fmt.Errorf("word line before any hypothesis: %q", line)
				}
				u := &utts[len(utts)-1]
				u.words = append(u.words, cliWord{word: f[0], start: nums[0], end: nums[1], conf: nums[2]})
				continue
			}
		}
		utts = append(utts, cliUtt{text: line})
	}
	return utts, sc.Err()
}

// texts returns the Text of every result.
func texts(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

// checkResults asserts what must hold for any sequence of final results:
// consistent indices, words inside their utterance and in order, sane
// confidences, and words that spell the hypothesis.
func checkResults(t *testing.T, rs []Result) {
	t.Helper()
	prevEnd := 0.0
	for i, r := range rs {
		if r.Index != i || !r.Final || r.Reason == 0 {
			t.Errorf("result %d: Index %d Final %v Reason %v", i, r.Index, r.Final, r.Reason)
		}
		if r.Start < prevEnd-1e-9 || r.End < r.Start {
			t.Errorf("result %d spans [%.3f, %.3f] after previous end %.3f", i, r.Start, r.End, prevEnd)
		}
		prevEnd = r.End
		var words []string
		last := r.Start
		for _, w := range r.Words {
			words = append(words, w.Text)
			if w.Start < last-1e-9 || w.End <= w.Start || w.End > r.End+1e-9 {
				t.Errorf("result %d word %q [%.3f, %.3f] out of order or outside [%.3f, %.3f]", i, w.Text, w.Start, w.End, r.Start, r.End)
			}
			last = w.End
			if w.Confidence < 0 || w.Confidence > 1 || math.IsNaN(w.Confidence) {
				t.Errorf("result %d word %q confidence %v", i, w.Text, w.Confidence)
			}
		}
		if got := strings.Join(words, " "); got != r.Text {
			t.Errorf("result %d words %q do not spell text %q", i, got, r.Text)
		}
	}
}

// streamStats are internal counters of a finished stream.
type streamStats struct {
	mapErrors int // hypotheses whose segmentation did not fit the kept frames
	gaps      int // utterances whose kept frames were not contiguous
}

// collect runs samples through a new stream of d, pushing chunks of the
// sizes next returns, and returns every event and the final results. It
// fails the test if a hypothesis did not fit the frames the detector kept.
func collect(t *testing.T, d *Decoder, samples []int16, opts StreamOptions, next func() int) (events []Event, finals []Result, st streamStats) {
	t.Helper()
	s, err := d.NewStream(opts)
	if err != nil {
		t.Fatal(err)
	}
	add := func(evs []Event) {
		events = append(events, evs...)
		for _, ev := range evs {
			if ev.Kind == Final {
				finals = append(finals, ev.Result)
			}
		}
	}
	for len(samples) > 0 {
		n := min(max(next(), 1), len(samples))
		evs, err := s.Push(samples[:n])
		if err != nil {
			t.Fatal(err)
		}
		add(evs)
		samples = samples[n:]
	}
	evs, err := s.End()
	if err != nil {
		t.Fatal(err)
	}
	add(evs)
	st = streamStats{mapErrors: s.mapErrors, gaps: s.gaps}
	if st.mapErrors != 0 {
		t.Errorf("%d hypotheses did not fit the frames the detector kept", st.mapErrors)
	}
	return events, finals, st
}

// transcribe decodes samples in one batch pass and checks the frame mapping.
func transcribe(t *testing.T, d *Decoder, samples []int16) []Result {
	t.Helper()
	_, finals, _ := collect(t, d, samples, StreamOptions{}, func() int { return len(samples) })
	return finals
}

var batchCache = map[string][]Result{}

// batch returns the batch results of a recording on the shared decoder,
// decoded once per test binary. Tests using it must not run in parallel.
func batch(t *testing.T, name string, samples []int16) []Result {
	t.Helper()
	if rs, ok := batchCache[name]; ok {
		return rs
	}
	rs := transcribe(t, sharedDecoder(t), samples)
	batchCache[name] = rs
	return rs
}

// twoClips is a short multi-utterance recording: clip 0880, one second of
// background, clip 0930.
func twoClips(t testing.TB) []int16 {
	a := readClip(t, clipPath("0880"))
	return slices.Concat(a, background(a, SampleRate), readClip(t, clipPath("0930")))
}
