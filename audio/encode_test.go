package audio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEncodeSpecNormalize(t *testing.T) {
	tests := []struct {
		in   EncodeSpec
		want EncodeSpec // ignored when bad
		bad  string     // words the error must contain
	}{
		{in: EncodeSpec{}, want: EncodeSpec{"mp3", "", 22050, 48000}},
		{in: EncodeSpec{Encoding: "linear16"}, want: EncodeSpec{"linear16", "wav", 24000, 0}},
		{in: EncodeSpec{Encoding: "linear16", Container: "none", SampleRate: 8000}, want: EncodeSpec{"linear16", "none", 8000, 0}},
		{in: EncodeSpec{Encoding: "mulaw"}, want: EncodeSpec{"mulaw", "wav", 8000, 0}},
		{in: EncodeSpec{Encoding: "alaw", Container: "none", SampleRate: 16000}, want: EncodeSpec{"alaw", "none", 16000, 0}},
		{in: EncodeSpec{Encoding: "mp3", BitRate: 32000}, want: EncodeSpec{"mp3", "", 22050, 32000}},
		{in: EncodeSpec{Encoding: "mp3", Container: "none", SampleRate: 22050}, want: EncodeSpec{"mp3", "", 22050, 48000}},
		{in: EncodeSpec{Encoding: "opus"}, want: EncodeSpec{"opus", "ogg", 48000, 12000}},
		{in: EncodeSpec{Encoding: "opus", Container: "ogg", BitRate: 650000}, want: EncodeSpec{"opus", "ogg", 48000, 650000}},
		{in: EncodeSpec{Encoding: "flac"}, want: EncodeSpec{"flac", "", 48000, 0}},
		{in: EncodeSpec{Encoding: "flac", SampleRate: 22050}, want: EncodeSpec{"flac", "", 22050, 0}},
		{in: EncodeSpec{Encoding: "aac"}, want: EncodeSpec{"aac", "", 22050, 48000}},
		{in: EncodeSpec{Encoding: "aac", BitRate: 4000}, want: EncodeSpec{"aac", "", 22050, 4000}},
		{in: EncodeSpec{Encoding: "wav"}, bad: `encoding "wav"`},
		{in: EncodeSpec{Encoding: "linear32"}, bad: `encoding "linear32"`},
		{in: EncodeSpec{Encoding: "linear16", SampleRate: 44100}, bad: "sample rate 44100"},
		{in: EncodeSpec{Encoding: "linear16", Container: "ogg"}, bad: `container "ogg"`},
		{in: EncodeSpec{Encoding: "linear16", BitRate: 128000}, bad: "takes no bit rate"},
		{in: EncodeSpec{Encoding: "mulaw", SampleRate: 24000}, bad: "8000 or 16000"},
		{in: EncodeSpec{Encoding: "mp3", SampleRate: 44100}, bad: "fixed at 22050"},
		{in: EncodeSpec{Encoding: "mp3", BitRate: 64000}, bad: "48000 or 32000"},
		{in: EncodeSpec{Encoding: "mp3", Container: "wav"}, bad: "takes no container"},
		{in: EncodeSpec{Encoding: "opus", Container: "none"}, bad: `container "none"`},
		{in: EncodeSpec{Encoding: "opus", BitRate: 3999}, bad: "outside 4000..650000"},
		{in: EncodeSpec{Encoding: "opus", SampleRate: 24000}, bad: "fixed at 48000"},
		{in: EncodeSpec{Encoding: "flac", SampleRate: 24000}, bad: "sample rate 24000"},
		{in: EncodeSpec{Encoding: "aac", BitRate: 192001}, bad: "outside 4000..192000"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.in), func(t *testing.T) {
			got, err := tt.in.Normalize()
			if tt.bad != "" {
				if !errors.Is(err, ErrBadEncodeSpec) || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err = %v, want ErrBadEncodeSpec saying %q", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if again, err := got.Normalize(); err != nil || again != got {
				t.Errorf("normalising again: %+v, %v", again, err)
			}
		})
	}
}

func TestEncodeSpecContentType(t *testing.T) {
	tests := []struct {
		in   EncodeSpec
		want string
	}{
		{EncodeSpec{Encoding: "linear16"}, "audio/wav"},
		{EncodeSpec{Encoding: "linear16", Container: "none"}, "audio/l16;rate=24000"},
		{EncodeSpec{Encoding: "mulaw", Container: "wav"}, "audio/wav"},
		{EncodeSpec{Encoding: "mulaw", Container: "none"}, "audio/mulaw;rate=8000"},
		{EncodeSpec{Encoding: "alaw", Container: "none", SampleRate: 16000}, "audio/alaw;rate=16000"},
		{EncodeSpec{}, "audio/mpeg"},
		{EncodeSpec{Encoding: "opus"}, "audio/ogg;codecs=opus"},
		{EncodeSpec{Encoding: "flac"}, "audio/flac"},
		{EncodeSpec{Encoding: "aac"}, "audio/aac"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			s, err := tt.in.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			if got := s.ContentType(); got != tt.want {
				t.Errorf("ContentType() = %q, want %q", got, tt.want)
			}
		})
	}
}

// speechAt returns seconds of the reference recording at rate, as int16.
func speechAt(t testing.TB, seconds float64, rate int) []int16 {
	t.Helper()
	ref := reference(t, seconds)
	if rate != 16000 {
		ref = resample64(t, ref, 16000, rate)
	}
	out := make([]int16, len(ref))
	for i, v := range ref {
		out[i] = floatToInt16(float32(v))
	}
	return out
}

// encodeAll encodes pcm in pieces of step samples and returns the output.
func encodeAll(t testing.TB, spec EncodeSpec, pcm []int16, step int) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(context.Background(), &buf, spec)
	if err != nil {
		t.Fatal(err)
	}
	for p := pcm; len(p) > 0; {
		n := min(step, len(p))
		if err := e.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeEncoded decodes the output of an encoder for spec.
func decodeEncoded(t testing.TB, spec EncodeSpec, b []byte) *Buffer {
	t.Helper()
	var (
		buf *Buffer
		err error
	)
	if spec.Container == "none" {
		enc, perr := ParseEncoding(spec.Encoding)
		if perr != nil {
			t.Fatal(perr)
		}
		buf, err = DecodeRaw(context.Background(), bytes.NewReader(b), Format{enc, spec.SampleRate, 1})
	} else {
		buf, err = Decode(context.Background(), bytes.NewReader(b))
	}
	if err != nil {
		t.Fatalf("decoding %d bytes: %v", len(b), err)
	}
	return buf
}

func needFFmpeg(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skipf("ffmpeg not installed (%v); run scripts/setup", err)
	}
}

// roundTrip is one (encoding, container, rate) case and what its decoded
// audio must satisfy.
type roundTrip struct {
	spec      EncodeSpec
	container Container
	exact     bool    // lossless: the samples come back unchanged
	minSNR    float64 // dB, for waveform-preserving codecs
	minCorr   float64 // normalised correlation, for perceptual codecs
	maxDelay  int     // samples the decoded audio may lag the input
	maxExtra  int     // samples the decoded audio may exceed the input by
}

func roundTrips() []roundTrip {
	var out []roundTrip
	for _, c := range []string{"wav", "none"} {
		want := ContainerWAV
		if c == "none" {
			want = ContainerNone
		}
		for _, r := range []int{8000, 16000, 24000, 32000, 48000} {
			out = append(out, roundTrip{spec: EncodeSpec{"linear16", c, r, 0}, container: want, exact: true})
		}
		for _, e := range []string{"mulaw", "alaw"} {
			for _, r := range []int{8000, 16000} {
				out = append(out, roundTrip{spec: EncodeSpec{e, c, r, 0}, container: want, minSNR: 30})
			}
		}
	}
	for _, r := range []int{8000, 16000, 22050, 32000, 48000} {
		out = append(out, roundTrip{spec: EncodeSpec{"flac", "", r, 0}, container: ContainerFLAC, exact: true})
	}
	// MP3: LAME's delay (576) plus the decoder's (529), and up to a frame
	// of padding; ADTS AAC: FFmpeg's 1024 priming samples and up to a
	// frame of padding. Ogg Opus trims both ends exactly.
	// 22.05 kHz MP3 is MPEG-2, which Decode hands to FFmpeg (go-mp3
	// garbles it: 0.90 at 32 kbit/s), so it must match TestEncodeCrossCheck.
	for _, b := range []int{32000, 48000} {
		out = append(out, roundTrip{spec: EncodeSpec{"mp3", "", 22050, b}, container: ContainerMP3, minCorr: 0.98, maxDelay: 1105, maxExtra: 1105 + 2*576})
	}
	for _, b := range []int{12000, 64000} {
		out = append(out, roundTrip{spec: EncodeSpec{"opus", "ogg", 48000, b}, container: ContainerOggOpus, minCorr: 0.8})
	}
	for _, b := range []int{24000, 48000} {
		out = append(out, roundTrip{spec: EncodeSpec{"aac", "", 22050, b}, container: ContainerAAC, minCorr: 0.9, maxDelay: 1024, maxExtra: 2 * 1024})
	}
	return out
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, tt := range roundTrips() {
		name := fmt.Sprintf("%s-%s-%d-%d", tt.spec.Encoding, tt.spec.Container, tt.spec.SampleRate, tt.spec.BitRate)
		t.Run(name, func(t *testing.T) {
			if tt.spec.Encoding == "aac" || tt.spec.Encoding == "mp3" {
				needFFmpeg(t)
			}
			t.Parallel()
			pcm := speechAt(t, 1.5, tt.spec.SampleRate)
			// An odd step exercises packets and blocks straddling writes.
			enc := encodeAll(t, tt.spec, pcm, 1237)
			got := decodeEncoded(t, tt.spec, enc)
			if got.SampleRate != tt.spec.SampleRate || got.Channels != 1 || got.Container != tt.container {
				t.Fatalf("decoded as %v %d Hz %d ch, want %v %d Hz mono", got.Container, got.SampleRate, got.Channels, tt.container, tt.spec.SampleRate)
			}
			n := got.Frames()
			if n < len(pcm) || n > len(pcm)+tt.maxExtra {
				t.Fatalf("decoded %d samples from %d (may add %d)", n, len(pcm), tt.maxExtra)
			}
			in := Int16ToFloat32(nil, pcm)
			if tt.exact {
				if !slices.Equal(got.Samples, in) {
					t.Fatal("lossless round trip changed the samples")
				}
				return
			}
			ref, dec := toFloat64(in), toFloat64(got.Samples)
			// Find the codec delay on the first 4000 samples, then judge the
			// whole signal at that lag.
			head := ref[:min(len(ref), 4000)]
			lag, _ := bestLagIn(head, dec, 0, tt.maxDelay)
			if s := snr(ref, dec, lag); tt.minSNR > 0 && s < tt.minSNR {
				t.Errorf("SNR %.1f dB at lag %d, want >= %.0f", s, lag, tt.minSNR)
			}
			c := correlation(ref, dec, lag)
			if tt.minCorr > 0 && c < tt.minCorr {
				t.Errorf("correlation %.3f at lag %d, want >= %.2f", c, lag, tt.minCorr)
			}
			t.Logf("%d bytes for %d samples; lag %d, correlation %.3f, SNR %.1f dB", len(enc), len(pcm), lag, c, snr(ref, dec, lag))
		})
	}
}

// callWriter is a destination that records when it is written and fails
// the test if that happens outside a call the test is making on the
// encoder (the encoder must write only from the caller's goroutine).
type callWriter struct {
	t      *testing.T
	inCall bool
	buf    bytes.Buffer
}

func (w *callWriter) Write(p []byte) (int, error) {
	if !w.inCall {
		w.t.Errorf("destination written outside an encoder call (%d bytes)", len(p))
	}
	return w.buf.Write(p)
}

func (w *callWriter) call(f func() error) error {
	w.inCall = true
	defer func() { w.inCall = false }()
	return f()
}

// TestEncodeStreams checks that the streaming formats pass decodable audio
// to the destination before Close, so a response can start early.
func TestEncodeStreams(t *testing.T) {
	specs := []EncodeSpec{
		{Encoding: "linear16"},
		{Encoding: "linear16", Container: "none"},
		{Encoding: "mulaw"},
		{Encoding: "alaw", Container: "none"},
		{Encoding: "mp3"},
		{Encoding: "opus"},
		{Encoding: "flac", SampleRate: 16000},
		{Encoding: "aac"},
	}
	for _, spec := range specs {
		spec, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(spec.ContentType()+"-"+spec.Encoding, func(t *testing.T) {
			if spec.Encoding == "aac" {
				needFFmpeg(t)
			}
			t.Parallel()
			pcm := speechAt(t, 1, spec.SampleRate)
			w := &callWriter{t: t}
			var e *Encoder
			if err := w.call(func() (err error) {
				e, err = NewEncoder(context.Background(), w, spec)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			defer w.call(e.Close) // on failure; a second Close does nothing
			first := pcm[:len(pcm)/2]
			if err := w.call(func() error { return e.Write(first) }); err != nil {
				t.Fatal(err)
			}
			// FFmpeg encodes asynchronously: its output reaches the
			// destination with a later Write. Feed it silence a little at
			// a time until some arrives.
			silence := make([]int16, spec.SampleRate/50)
			deadline := time.Now().Add(10 * time.Second)
			for spec.Encoding == "aac" && w.buf.Len() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				if err := w.call(func() error { return e.Write(silence) }); err != nil {
					t.Fatal(err)
				}
			}
			early := slices.Clone(w.buf.Bytes())
			samples, err := decodePrefix(spec, early)
			if err != nil {
				t.Fatalf("decoding the %d bytes written before Close: %v", len(early), err)
			}
			if samples == 0 {
				t.Fatalf("the %d bytes written before Close hold no audio", len(early))
			}
			if err := w.call(e.Close); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(w.buf.Bytes(), early) {
				t.Error("Close rewrote bytes already sent")
			}
			if w.buf.Len() <= len(early) && spec.Container != "none" && spec.Encoding != "linear16" && spec.Encoding != "mulaw" {
				t.Error("Close wrote nothing: the codec's buffered audio was lost")
			}
			t.Logf("%d of %d bytes sent before Close; %d samples decodable", len(early), w.buf.Len(), samples)
		})
	}
}

// decodePrefix decodes the start of a stream (without ending it) and
// returns the samples it yields. For AAC, whose decoder runs in a
// subprocess, it ends the stream to collect them.
func decodePrefix(spec EncodeSpec, b []byte) (int, error) {
	f := Format{}
	if spec.Container == "none" {
		enc, err := ParseEncoding(spec.Encoding)
		if err != nil {
			return 0, err
		}
		f = Format{enc, spec.SampleRate, 1}
	}
	d, err := NewStreamDecoder(f)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	out, err := d.Decode(b)
	n := len(out)
	if err != nil || (spec.Encoding != "aac" && spec.Encoding != "mp3") {
		return n, err
	}
	out, err = d.Flush()
	return n + len(out), err
}

func TestEncodeWAVHeader(t *testing.T) {
	tests := []struct {
		encoding string
		tag      uint16
		bits     uint16
		size     int
	}{
		{"linear16", 1, 16, 44},
		{"mulaw", 7, 8, 46},
		{"alaw", 6, 8, 46},
	}
	for _, tt := range tests {
		t.Run(tt.encoding, func(t *testing.T) {
			spec := EncodeSpec{Encoding: tt.encoding, SampleRate: 16000}
			b := encodeAll(t, spec, []int16{0, 1000, -1000}, 10)
			if len(b) != tt.size+3*int(tt.bits/8) {
				t.Fatalf("%d bytes, want a %d-byte header and 3 samples", len(b), tt.size)
			}
			le := func(off int) uint32 {
				return uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24
			}
			if string(b[:4]) != "RIFF" || le(4) != 0xFFFFFFFF || le(tt.size-4) != 0xFFFFFFFF {
				t.Errorf("sizes %#x and %#x, want 0xFFFFFFFF (unknown) in a stream", le(4), le(tt.size-4))
			}
			if got := uint16(b[20]) | uint16(b[21])<<8; got != tt.tag {
				t.Errorf("format tag %d, want %d", got, tt.tag)
			}
			if got := uint16(b[34]) | uint16(b[35])<<8; got != tt.bits {
				t.Errorf("bits %d, want %d", got, tt.bits)
			}
		})
	}
}

// TestEncodeWAVFile checks that sizes are patched when the destination is a
// file, so strict readers see the real length.
func TestEncodeWAVFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := NewEncoder(context.Background(), f, EncodeSpec{Encoding: "mulaw", SampleRate: 8000})
	if err != nil {
		t.Fatal(err)
	}
	pcm := speechAt(t, 0.25, 8000)
	if err := e.Write(pcm); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := func(off int) int { return int(b[off]) | int(b[off+1])<<8 | int(b[off+2])<<16 | int(b[off+3])<<24 }
	if le(4) != len(b)-8 || le(42) != len(pcm) {
		t.Errorf("RIFF size %d, data size %d; want %d and %d", le(4), le(42), len(b)-8, len(pcm))
	}
	got := decodeEncoded(t, EncodeSpec{Encoding: "mulaw", Container: "wav"}, b)
	if got.Frames() != len(pcm) {
		t.Errorf("decoded %d samples, want %d", got.Frames(), len(pcm))
	}
}

// TestEncodeCrossCheck decodes the output with FFmpeg, an independent
// implementation, to catch errors that this package's own decoders might
// share: streamed WAV sizes, Ogg pages and granule positions, FLAC frame
// headers, the MP3 encoder's quality apart from go-mp3's.
func TestEncodeCrossCheck(t *testing.T) {
	needFFmpeg(t)
	tests := []struct {
		spec     EncodeSpec
		minCorr  float64 // 1: the samples must come back exactly
		maxDelay int
	}{
		{EncodeSpec{Encoding: "linear16", Container: "wav", SampleRate: 16000}, 1, 0},
		{EncodeSpec{Encoding: "mulaw", Container: "wav", SampleRate: 8000}, 0.999, 0},
		{EncodeSpec{Encoding: "alaw", Container: "wav", SampleRate: 16000}, 0.999, 0},
		{EncodeSpec{Encoding: "flac", SampleRate: 22050}, 1, 0},
		{EncodeSpec{Encoding: "flac", SampleRate: 48000}, 1, 0},
		{EncodeSpec{Encoding: "opus", BitRate: 32000}, 0.97, 0},
		{EncodeSpec{Encoding: "mp3", BitRate: 32000}, 0.97, 1105},
		{EncodeSpec{Encoding: "mp3", BitRate: 48000}, 0.98, 1105},
	}
	for _, tt := range tests {
		spec, err := tt.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%s-%d-%d", spec.Encoding, spec.SampleRate, spec.BitRate), func(t *testing.T) {
			t.Parallel()
			pcm := speechAt(t, 1, spec.SampleRate)
			enc := encodeAll(t, spec, pcm, 1000)
			cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", "pipe:0",
				"-f", "s16le", "-ac", "1", "-ar", fmt.Sprint(spec.SampleRate), "pipe:1")
			cmd.Stdin = bytes.NewReader(enc)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
			}
			got := BytesToInt16(nil, out)
			if tt.minCorr == 1 {
				if !slices.Equal(got, pcm) {
					t.Fatalf("ffmpeg decoded %d samples that differ from the %d encoded", len(got), len(pcm))
				}
				return
			}
			// FFmpeg honours the Opus pre-skip and end trimming exactly.
			if spec.Encoding == "opus" && len(got) != len(pcm) || len(got) < len(pcm) || len(got) > len(pcm)+2*tt.maxDelay+1152 {
				t.Fatalf("ffmpeg decoded %d samples from %d", len(got), len(pcm))
			}
			ref, dec := toFloat64(Int16ToFloat32(nil, pcm)), toFloat64(Int16ToFloat32(nil, got))
			lag, _ := bestLagIn(ref[:4000], dec, 0, tt.maxDelay)
			if c := correlation(ref, dec, lag); c < tt.minCorr {
				t.Errorf("correlation %.4f at lag %d, want >= %.3f", c, lag, tt.minCorr)
			} else {
				t.Logf("correlation %.4f at lag %d", c, lag)
			}
		})
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct {
	n   int
	err error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

func TestEncodeErrors(t *testing.T) {
	boom := errors.New("client went away")
	for _, enc := range []string{"linear16", "mulaw", "mp3", "opus", "flac", "aac"} {
		t.Run(enc, func(t *testing.T) {
			if enc == "aac" {
				needFFmpeg(t)
			}
			w := &failWriter{n: 200, err: boom}
			e, err := NewEncoder(context.Background(), w, EncodeSpec{Encoding: enc})
			if err != nil {
				t.Fatal(err)
			}
			pcm := speechAt(t, 0.5, e.Spec().SampleRate)
			var werr error
			for i := 0; i < 40 && werr == nil; i++ {
				werr = e.Write(pcm)
				if enc == "aac" {
					time.Sleep(5 * time.Millisecond) // let FFmpeg catch up
				}
			}
			if werr == nil {
				werr = e.Close()
			}
			if !errors.Is(werr, boom) {
				t.Fatalf("error %v does not wrap the destination's", werr)
			}
			if err := e.Write(pcm); !errors.Is(err, boom) && !errors.Is(err, ErrEncoderClosed) {
				t.Errorf("Write after a failure: %v, want the sticky error", err)
			}
			_ = e.Close()
			if err := e.Write(pcm); !errors.Is(err, ErrEncoderClosed) {
				t.Errorf("Write after Close: %v, want ErrEncoderClosed", err)
			}
			if err := e.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
	t.Run("bad spec", func(t *testing.T) {
		_, err := NewEncoder(context.Background(), &bytes.Buffer{}, EncodeSpec{Encoding: "vorbis"})
		if !errors.Is(err, ErrBadEncodeSpec) {
			t.Errorf("err = %v, want ErrBadEncodeSpec", err)
		}
	})
}

// TestEncodeAACContext checks that the FFmpeg subprocess dies with the
// encoder's context: writes then fail instead of hanging.
func TestEncodeAACContext(t *testing.T) {
	needFFmpeg(t)
	ctx, cancel := context.WithCancel(context.Background())
	e, err := NewEncoder(ctx, &bytes.Buffer{}, EncodeSpec{Encoding: "aac"})
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, 22050)
	if err := e.Write(pcm); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		err = e.Write(pcm)
	}
	if err == nil {
		t.Fatal("writes kept succeeding after the context was cancelled")
	}
	if cerr := e.Close(); cerr == nil {
		t.Error("Close after a failure returned nil")
	}
}

// TestEncodeOggPages checks the Ogg Opus framing itself: header pages,
// sequence numbers, checksums, granule positions and the end-of-stream
// page.
func TestEncodeOggPages(t *testing.T) {
	pcm := speechAt(t, 0.5, 48000)
	b := encodeAll(t, EncodeSpec{Encoding: "opus"}, pcm, 5000)
	var pages []oggHeader
	var bodies [][]byte
	for off := 0; off < len(b); {
		h, err := parseOggHeader(b[off:])
		if err != nil {
			t.Fatalf("page %d at %d: %v", len(pages), off, err)
		}
		end := off + h.headerLen + h.bodyLen
		if oggCRC(b[off:end]) != h.crc {
			t.Fatalf("page %d: bad checksum", len(pages))
		}
		if seq := int(b[off+18]) | int(b[off+19])<<8; seq != len(pages) {
			t.Fatalf("page %d has sequence number %d", len(pages), seq)
		}
		pages = append(pages, h)
		bodies = append(bodies, b[off+h.headerLen:end])
		off = end
	}
	if len(pages) < 4 {
		t.Fatalf("%d pages, want the 2 header pages and audio", len(pages))
	}
	if pages[0].flags != oggBOS || !hasPrefix(bodies[0], "OpusHead") || pages[0].granule != 0 {
		t.Errorf("first page: flags %d granule %d", pages[0].flags, pages[0].granule)
	}
	if pages[1].flags != 0 || !hasPrefix(bodies[1], "OpusTags") || pages[1].granule != 0 {
		t.Errorf("second page: flags %d granule %d", pages[1].flags, pages[1].granule)
	}
	last := pages[len(pages)-1]
	if last.flags != oggEOS || last.granule != int64(opusPreSkip+len(pcm)) {
		t.Errorf("last page: flags %d granule %d, want EOS and %d", last.flags, last.granule, opusPreSkip+len(pcm))
	}
	prev := int64(0)
	for i, p := range pages[2:] {
		if p.granule <= prev || p.serial != pages[0].serial {
			t.Errorf("audio page %d: granule %d after %d, serial %d", i, p.granule, prev, p.serial)
		}
		prev = p.granule
	}
}

// TestEncodeEmpty checks that closing an encoder with no input gives a
// valid, empty stream for every format.
func TestEncodeEmpty(t *testing.T) {
	for _, enc := range []string{"linear16", "mulaw", "alaw", "mp3", "opus", "flac", "aac"} {
		t.Run(enc, func(t *testing.T) {
			if enc == "aac" {
				needFFmpeg(t)
			}
			spec, _ := EncodeSpec{Encoding: enc}.Normalize()
			b := encodeAll(t, spec, nil, 1)
			switch enc {
			case "mp3", "aac":
				return // no frames at all: nothing to decode, nothing to check
			}
			got := decodeEncoded(t, spec, b)
			if got.Frames() != 0 {
				t.Errorf("%d samples from no input", got.Frames())
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, spec := range []EncodeSpec{
		{Encoding: "linear16"},
		{Encoding: "mulaw"},
		{Encoding: "mp3"},
		{Encoding: "opus"},
		{Encoding: "flac", SampleRate: 48000},
		{Encoding: "aac"},
	} {
		spec, err := spec.Normalize()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(spec.Encoding, func(b *testing.B) {
			if spec.Encoding == "aac" {
				needFFmpeg(b)
			}
			pcm := speechAt(b, 5, spec.SampleRate)
			b.ResetTimer()
			var out int
			for range b.N {
				out = len(encodeAll(b, spec, pcm, 4800))
			}
			// One op encodes 5 s: report the cost per second of audio.
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5/1e6, "ms/audio-s")
			b.ReportMetric(float64(out*8)/5/1000, "kbit/s")
		})
	}
}

// TestOggOpusWriter: a stream of two channels at 16 kHz, written in
// pieces of any length, decodes to exactly the frames written, each
// channel where it was; a high bit rate's large packets never overfill a
// page.
func TestOggOpusWriter(t *testing.T) {
	for _, tt := range []struct{ rate, channels, bitRate int }{
		{16000, 2, 48000},
		{16000, 1, 24000},
		{48000, 2, 510000},
	} {
		var buf bytes.Buffer
		w, err := NewOggOpusWriter(&buf, tt.rate, tt.channels, tt.bitRate)
		if err != nil {
			t.Fatal(err)
		}
		// A tone on the first channel only; pieces of 7 to 1,999 frames.
		frames := tt.rate*3/2 + 123
		pcm := sine16(440, tt.rate, frames, tt.channels, 16000)
		if tt.channels == 2 {
			for i := 1; i < len(pcm); i += 2 {
				pcm[i] = 0
			}
		}
		for off, n := 0, 7; off < frames; off, n = off+n, (n*31)%1999+7 {
			end := min(off+n, frames)
			if err := w.Write(pcm[off*tt.channels : end*tt.channels]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(t.Context(), bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%+v: decode: %v", tt, err)
		}
		scale := 48000 / tt.rate
		if got.Channels != tt.channels || got.Frames() != frames*scale {
			t.Fatalf("%+v: decoded %d channels, %d frames; want %d, %d", tt, got.Channels, got.Frames(), tt.channels, frames*scale)
		}
		level := func(ch int) float64 {
			var sum float64
			n := 0
			for i := 4800; i < got.Frames()-4800; i++ {
				v := float64(got.Samples[i*tt.channels+ch])
				sum += v * v
				n++
			}
			return math.Sqrt(sum / float64(n))
		}
		if l := level(0); l < 0.2 {
			t.Errorf("%+v: the tone decodes at level %.3f", tt, l)
		}
		if tt.channels == 2 {
			if l := level(1); l > 0.03 {
				t.Errorf("%+v: the silent channel decodes at level %.3f", tt, l)
			}
		}
	}
	if _, err := NewOggOpusWriter(io.Discard, 44100, 1, 24000); err == nil {
		t.Error("44.1 kHz, which libopus does not take, was accepted")
	}
	if _, err := NewOggOpusWriter(io.Discard, 16000, 3, 24000); err == nil {
		t.Error("three channels were accepted")
	}
}
