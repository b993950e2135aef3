package tts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// wavChunk is one RIFF chunk.
type wavChunk struct {
	id   string
	body []byte
}

// fmtBody is a fmt chunk body.
func fmtBody(tag, channels uint16, rate uint32, bits uint16) []byte {
	b := make([]byte, 16)
	le := binary.LittleEndian
	le.PutUint16(b, tag)
	le.PutUint16(b[2:], channels)
	le.PutUint32(b[4:], rate)
	le.PutUint32(b[8:], rate*uint32(channels)*uint32(bits/8))
	le.PutUint16(b[12:], channels*bits/8)
	le.PutUint16(b[14:], bits)
	return b
}

// espeakStream is a WAV stream as espeak-ng writes it: placeholder sizes,
// the chunks given, then a data chunk header and the samples.
func espeakStream(chunks []wavChunk, samples []int16) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF\x24\xf0\xff\x7fWAVE")
	for _, c := range chunks {
		b.WriteString(c.id)
		binary.Write(&b, binary.LittleEndian, uint32(len(c.body)))
		b.Write(c.body)
		if len(c.body)%2 == 1 {
			b.WriteByte(0)
		}
	}
	b.WriteString("data\x00\xf0\xff\x7f")
	binary.Write(&b, binary.LittleEndian, samples)
	return b.Bytes()
}

var goodFmt = wavChunk{"fmt ", fmtBody(1, 1, espeakRate, 16)}

func TestReadEspeakWAV(t *testing.T) {
	samples := make([]int16, 5000)
	for i := range samples {
		samples[i] = int16(i*7919 - 20000)
	}
	good := espeakStream([]wavChunk{goodFmt}, samples)
	for _, tt := range []struct {
		name    string
		stream  []byte
		want    []int16
		wantErr bool
	}{
		{"espeak-ng stream", good, samples, false},
		{"odd trailing byte", append(slices.Clone(good), 0x55), samples, false},
		{"empty stream", nil, nil, false},
		{"header only", espeakStream([]wavChunk{goodFmt}, nil), nil, false},
		{"LIST chunk skipped", espeakStream([]wavChunk{{"LIST", []byte("INFOabc")}, goodFmt}, samples), samples, false},
		{"truncated RIFF header", good[:7], nil, true},
		{"truncated fmt", good[:30], nil, true},
		{"no data chunk header", good[:40], nil, true},
		{"not RIFF", append([]byte("RIFX"), good[4:]...), nil, true},
		{"not WAVE", append(append(slices.Clone(good[:8]), "AVI "...), good[12:]...), nil, true},
		{"data before fmt", espeakStream(nil, samples), nil, true},
		{"stereo", espeakStream([]wavChunk{{"fmt ", fmtBody(1, 2, espeakRate, 16)}}, samples), nil, true},
		{"8 bits", espeakStream([]wavChunk{{"fmt ", fmtBody(1, 1, espeakRate, 8)}}, samples), nil, true},
		{"float", espeakStream([]wavChunk{{"fmt ", fmtBody(3, 1, espeakRate, 32)}}, samples), nil, true},
		{"other rate", espeakStream([]wavChunk{{"fmt ", fmtBody(1, 1, 16000, 16)}}, samples), nil, true},
		{"two fmt chunks", espeakStream([]wavChunk{goodFmt, goodFmt}, samples), nil, true},
		{"short fmt", espeakStream([]wavChunk{{"fmt ", make([]byte, 14)}}, samples), nil, true},
		{"huge fmt", espeakStream([]wavChunk{{"fmt ", make([]byte, 100)}}, samples), nil, true},
		{"huge chunk", append([]byte("RIFF\x00\x00\x00\x00WAVEjunk\xff\xff\xff\xff"), make([]byte, 100)...), nil, true},
		{"endless chunks", espeakStream(slices.Repeat([]wavChunk{{"junk", nil}}, 20), samples), nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = bytes.NewReader(tt.stream)
				if oneByte {
					r = iotest.OneByteReader(r) // every header and sample split
				}
				var got []int16
				err := readEspeakWAV(bufio.NewReader(r), func(pcm []int16) bool {
					got = append(got, pcm...)
					return true
				})
				if tt.wantErr {
					if !errors.Is(err, ErrEspeakOutput) {
						t.Errorf("one byte %v: err %v, want ErrEspeakOutput", oneByte, err)
					}
					continue
				}
				if err != nil || !equalPCM(got, tt.want) {
					t.Errorf("one byte %v: %d samples, err %v; want %d samples", oneByte, len(got), err, len(tt.want))
				}
			}
		})
	}
	t.Run("stop", func(t *testing.T) {
		calls := 0
		err := readEspeakWAV(bufio.NewReader(iotest.HalfReader(bytes.NewReader(good))), func([]int16) bool {
			calls++
			return false
		})
		if err != nil || calls != 1 {
			t.Errorf("err %v after %d calls, want nil after 1", err, calls)
		}
	})
	t.Run("read error", func(t *testing.T) {
		boom := errors.New("boom")
		r := io.MultiReader(bytes.NewReader(good[:100]), iotest.ErrReader(boom))
		if err := readEspeakWAV(bufio.NewReader(r), func([]int16) bool { return true }); !errors.Is(err, boom) {
			t.Errorf("err %v, want boom", err)
		}
	})
}

// FuzzReadEspeakWAV: any stream is read without panicking, and the
// samples it yields are the bytes after the header.
func FuzzReadEspeakWAV(f *testing.F) {
	f.Add(espeakStream([]wavChunk{goodFmt}, []int16{1, -2, 3}))
	f.Add(espeakStream([]wavChunk{{"LIST", []byte("x")}, goodFmt}, []int16{4}))
	f.Add(espeakStream(nil, nil))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xff\xff\xff"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, stream []byte) {
		n := 0
		err := readEspeakWAV(bufio.NewReader(bytes.NewReader(stream)), func(pcm []int16) bool {
			n += len(pcm)
			return true
		})
		if err != nil && !errors.Is(err, ErrEspeakOutput) {
			t.Fatalf("err %v does not match ErrEspeakOutput", err)
		}
		if 2*n > len(stream) {
			t.Fatalf("%d samples from %d bytes", n, len(stream))
		}
	})
}

func TestEspeakArgs(t *testing.T) {
	e := &espeakRunner{}
	for _, tt := range []struct {
		speed, pitch float64
		data         string
		want         string
	}{
		{1, 1, "", "-v es+f3 -s 175 -p 50 -b 1 --stdout --stdin"},
		{0.5, 1, "", "-v es+f3 -s 88 -p 50 -b 1 --stdout --stdin"},
		{1.5, 1.1, "", "-v es+f3 -s 263 -p 55 -b 1 --stdout --stdin"},
		{1, 3, "", "-v es+f3 -s 175 -p 99 -b 1 --stdout --stdin"},
		{0.1, 0, "", "-v es+f3 -s 80 -p 0 -b 1 --stdout --stdin"},
		{1, 1, "/opt/es data", "--path=/opt/es data -v es+f3 -s 175 -p 50 -b 1 --stdout --stdin"},
	} {
		e.data = tt.data
		if got := strings.Join(e.espeakArgs("es+f3", tt.speed, tt.pitch), " "); got != tt.want {
			t.Errorf("speed %v, pitch %v, data %q: %s, want %s", tt.speed, tt.pitch, tt.data, got, tt.want)
		}
	}
}

// TestEspeakText: "[[" would switch the program to phoneme input; the text
// it gets has none, and says the same.
func TestEspeakText(t *testing.T) {
	for _, in := range []string{"[[h@'loU]]", "a [[[b]]] c", "[", "no brackets"} {
		out := espeakText(in)
		if strings.Contains(out, "[[") || strings.ReplaceAll(out, " ", "") != strings.ReplaceAll(in, " ", "") {
			t.Errorf("espeakText(%q) = %q", in, out)
		}
	}
	// Phoneme input [[h@'loU]] is a short "hello" (as the program says it
	// when given the text as is); read as text, it is spelt out, longer.
	v := mustVoice(t, "aura-2-viktoria-de")
	const in = "[[h@'loU]]"
	asText := speak(t, v, in, Params{}).seconds(v.NativeRate)
	cmd := exec.Command(synth(t).espeak.program, synth(t).espeak.espeakArgs(v.id, 1, 1)...)
	cmd.Stdin = strings.NewReader(in)
	wav, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	asPhonemes := float64(len(wav)-44) / 2 / espeakRate
	if asText < 1.5*asPhonemes {
		t.Errorf("%q took %.2f s, as phonemes %.2f s: read as phonemes?", in, asText, asPhonemes)
	}
	t.Logf("%q: %.2f s as text, %.2f s as phonemes", in, asText, asPhonemes)
}

// fakeEspeak writes an executable shell script standing in for the
// espeak-ng program: it writes the given bytes to stdout, then runs then.
func fakeEspeak(t *testing.T, stdout []byte, then string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.wav")
	if err := os.WriteFile(out, stdout, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "espeak-ng")
	body := "#!/bin/sh\ncat '" + out + "'\n" + then + "\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestEspeakFailures: whatever the espeak-ng program does, Synthesize
// returns an error that says so, and the process is gone.
func TestEspeakFailures(t *testing.T) {
	if _, err := New(Config{EspeakProgram: filepath.Join(t.TempDir(), "no-espeak-ng")}); !errors.Is(err, ErrInit) {
		t.Errorf("missing program: err %v, want ErrInit", err)
	}
	tone := make([]int16, espeakRate/2)
	for i := range tone {
		tone[i] = int16(8000 * ((i/50)%2*2 - 1))
	}
	header := espeakStream([]wavChunk{goodFmt}, nil)
	v := mustVoice(t, "aura-2-celeste-es")
	for _, tt := range []struct {
		name      string
		stdout    []byte
		then      string
		exitError bool // the error wraps the program's *exec.ExitError
		output    bool // the error matches ErrEspeakOutput
	}{
		{"crash", espeakStream([]wavChunk{goodFmt}, tone), "kill -SEGV $$", true, false},
		{"crash in the header", header[:20], "kill -SEGV $$", true, false},
		{"exit status", nil, "echo 'Error: no such voice' >&2; exit 1", true, false},
		{"garbage", []byte("this is not a WAV stream at all"), "", false, true},
		{"garbage, then hangs", []byte("this is not a WAV stream at all"), "exec sleep 60", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{EspeakProgram: fakeEspeak(t, tt.stdout, tt.then)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			start := time.Now()
			err = s.Synthesize(context.Background(), v, "Hola. ¿Qué tal?", Params{}, func(Chunk) error { return nil })
			var ee *exec.ExitError
			switch {
			case err == nil:
				t.Fatal("no error")
			case tt.exitError && !errors.As(err, &ee):
				t.Errorf("err %v does not wrap the exit status", err)
			case tt.output && !errors.Is(err, ErrEspeakOutput):
				t.Errorf("err %v, want ErrEspeakOutput", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("returned after %v", d)
			}
			t.Log(err)
		})
	}

	// A program that hangs after some audio is killed on cancel and on
	// Close.
	hang := fakeEspeak(t, espeakStream([]wavChunk{goodFmt}, tone), "exec sleep 60")
	s, err := New(Config{EspeakProgram: hang})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = s.Synthesize(ctx, v, "Hola.", Params{}, func(Chunk) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: err %v", err)
	}
	done := make(chan error, 1)
	started := make(chan struct{})
	var once sync.Once
	go func() {
		done <- s.Synthesize(context.Background(), v, "Hola.", Params{}, func(Chunk) error { once.Do(func() { close(started) }); return nil })
	}()
	<-started // the program runs: its first audio has come
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Close: err %v, want ErrClosed", err)
	}
}
