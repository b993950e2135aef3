package tts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// espeak-ng runs out of process. The library (libespeak-ng 1.51) keeps one
// global synthesiser whose state carries over from call to call, and now
// and then it reads past the top of the calling thread's stack inside
// espeak_Synth: a SIGSEGV that takes the whole desktop app down with it.
// The espeak-ng program, started afresh for every piece, begins from clean
// state each time; if it does crash, only that piece fails, with an error.
// The cost is a process start per piece (a few milliseconds, see
// BenchmarkTimeToFirstAudio) and the loss of word events: the program does
// not report them, so espeak-ng voices advance Chunk.TextEnd piece by
// piece.

// ErrEspeakOutput is returned (wrapped) when the espeak-ng program writes
// something other than the 16-bit mono WAV stream it is asked for.
var ErrEspeakOutput = errors.New("tts: unexpected espeak-ng output")

// Espeak parameter scales.
const (
	espeakNormalRate  = 175 // words per minute, the program's default
	espeakMinRate     = 80  // espeakRATE_MINIMUM
	espeakMaxRate     = 450 // espeakRATE_MAXIMUM
	espeakNormalPitch = 50  // -p, 0 to 99
	espeakMaxPitch    = 99
)

// espeakStderrLimit bounds the stderr kept for an error message.
const espeakStderrLimit = 4 << 10

// espeakRunner starts espeak-ng processes for one Synthesizer.
type espeakRunner struct {
	program string // absolute path of the espeak-ng program
	data    string // --path, or "" for the program's default
	// slots bounds the processes running at once: each Synthesize call
	// runs at most one, and a burst of calls must not fork without limit.
	slots chan struct{}
}

// newEspeakRunner finds the program (name, or "espeak-ng" when empty, is
// looked up in PATH like a shell would).
func newEspeakRunner(name, data string) (*espeakRunner, error) {
	if name == "" {
		name = "espeak-ng"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: espeak-ng program: %w", ErrInit, err)
	}
	return &espeakRunner{program: path, data: data, slots: make(chan struct{}, max(4, 2*runtime.NumCPU()))}, nil
}

// espeakArgs returns the program's arguments for one piece: voice id (e.g.
// "es+f3"), speed relative to the normal rate, pitch relative to the
// normal pitch. The text comes on stdin (--stdin), UTF-8 (-b 1).
func (e *espeakRunner) espeakArgs(voice string, speed, pitch float64) []string {
	rate := clampInt(int(math.Round(espeakNormalRate*speed)), espeakMinRate, espeakMaxRate)
	pit := clampInt(int(math.Round(espeakNormalPitch*pitch)), 0, espeakMaxPitch)
	args := make([]string, 0, 11)
	if e.data != "" {
		args = append(args, "--path="+e.data)
	}
	return append(args, "-v", voice, "-s", strconv.Itoa(rate), "-p", strconv.Itoa(pit), "-b", "1", "--stdout", "--stdin")
}

// espeakText prepares a piece for the program, which always reads "[[ ]]"
// as phoneme mnemonics: a space before every '[' keeps text text. Brackets
// are not spoken, so the audio is the same.
func espeakText(text string) string {
	return strings.ReplaceAll(text, "[", " [")
}

// synth speaks text (one piece) with voice id and hands the samples to
// audio as the program streams them. audio returns false to stop early,
// which kills the process and returns nil. Cancelling ctx kills the
// process too and returns ctx's error. The process is always waited for.
func (e *espeakRunner) synth(ctx context.Context, voice, text string, speed, pitch float64, audio func([]int16) bool) (err error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-e.slots }()

	cmd := exec.CommandContext(ctx, e.program, e.espeakArgs(voice, speed, pitch)...)
	cmd.Stdin = strings.NewReader(espeakText(text))
	stderr := &limitedBuffer{limit: espeakStderrLimit}
	cmd.Stderr = stderr
	// The program does not fork; WaitDelay only guards Wait against a
	// stuck pipe should one ever be inherited.
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("tts: espeak-ng: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("tts: espeak-ng: %w", err)
	}
	stopped := false
	readErr := readEspeakWAV(bufio.NewReaderSize(stdout, 8<<10), func(pcm []int16) bool {
		if !audio(pcm) {
			stopped = true
			return false
		}
		return true
	})
	// When nothing more is wanted, or the output cannot be understood, the
	// process must not run on (nor block on a full pipe). A stream cut
	// short means that the process closed it: it is ending by itself, and
	// its exit status says why.
	killed := stopped || readErr != nil && !errors.Is(readErr, io.ErrUnexpectedEOF)
	if killed {
		_ = cmd.Process.Kill() // os.ErrProcessDone if it has just exited
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case stopped:
		return nil
	case waitErr != nil && !killed:
		return fmt.Errorf("tts: espeak-ng -v %s: %w%s", voice, waitErr, stderr.suffix())
	case readErr != nil:
		return fmt.Errorf("%w (espeak-ng -v %s)%s", readErr, voice, stderr.suffix())
	}
	return nil
}

// readEspeakWAV reads the WAV stream espeak-ng writes with --stdout: a
// RIFF header whose sizes are placeholders (the program cannot know them
// when it writes the header), a fmt chunk for 16-bit mono PCM at
// espeakRate, and samples up to the end of the stream. It hands the
// samples to audio as they arrive, and stops when audio returns false. An
// empty stream is no audio (the program writes nothing for empty input).
// Errors match ErrEspeakOutput, or are r's read errors.
func readEspeakWAV(r *bufio.Reader, audio func([]int16) bool) error {
	if _, err := r.Peek(1); err == io.EOF {
		return nil
	}
	if err := readEspeakHeader(r); err != nil {
		return err
	}
	buf := make([]byte, 8<<10)
	held := 0 // an odd byte kept from the previous read, at buf[0]
	for {
		n, err := r.Read(buf[held:])
		n += held
		if even := n &^ 1; even > 0 {
			pcm := make([]int16, even/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(buf[2*i:]))
			}
			if !audio(pcm) {
				return nil
			}
		}
		held = n & 1
		if held == 1 {
			buf[0] = buf[n-1]
		}
		switch {
		case err == io.EOF:
			return nil // a trailing odd byte is not a sample
		case err != nil:
			return err
		}
	}
}

// Limits of the WAV header: chunks other than fmt and data are skipped,
// but not forever.
const (
	maxEspeakFmt    = 64
	maxEspeakChunks = 8
	maxEspeakSkip   = 1 << 16
)

// readEspeakHeader reads the RIFF header up to the start of the samples
// and checks that they are what the catalogue says.
func readEspeakHeader(r io.Reader) error {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return fmt.Errorf("%w: WAV header: %w", ErrEspeakOutput, unexpectedEOF(err))
	}
	if string(h[:4]) != "RIFF" || string(h[8:]) != "WAVE" {
		return fmt.Errorf("%w: not a RIFF WAVE stream (%q)", ErrEspeakOutput, h[:])
	}
	sawFmt := false
	for range maxEspeakChunks {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return fmt.Errorf("%w: WAV chunk header: %w", ErrEspeakOutput, unexpectedEOF(err))
		}
		id, size := string(ch[:4]), binary.LittleEndian.Uint32(ch[4:])
		switch {
		case id == "data":
			if !sawFmt {
				return fmt.Errorf("%w: WAV data before fmt", ErrEspeakOutput)
			}
			return nil // the size is a placeholder: samples run to the end
		case id == "fmt ":
			if sawFmt || size < 16 || size > maxEspeakFmt {
				return fmt.Errorf("%w: WAV fmt chunk of %d bytes", ErrEspeakOutput, size)
			}
			f := make([]byte, size+size&1)
			if _, err := io.ReadFull(r, f); err != nil {
				return fmt.Errorf("%w: WAV fmt chunk: %w", ErrEspeakOutput, unexpectedEOF(err))
			}
			le := binary.LittleEndian
			tag, chans, rate, bits := le.Uint16(f), le.Uint16(f[2:]), le.Uint32(f[4:]), le.Uint16(f[14:])
			if tag != 1 || chans != 1 || bits != 16 || rate != espeakRate {
				return fmt.Errorf("%w: format %d, %d channels, %d bits, %d Hz; want PCM, mono, 16 bits, %d Hz",
					ErrEspeakOutput, tag, chans, bits, rate, espeakRate)
			}
			sawFmt = true
		default:
			skip := int64(size) + int64(size&1)
			if skip > maxEspeakSkip {
				return fmt.Errorf("%w: WAV %q chunk of %d bytes", ErrEspeakOutput, ch[:4], size)
			}
			if n, err := io.CopyN(io.Discard, r, skip); n != skip {
				return fmt.Errorf("%w: WAV %q chunk: %w", ErrEspeakOutput, ch[:4], unexpectedEOF(err))
			}
		}
	}
	return fmt.Errorf("%w: no WAV data chunk in the first %d chunks", ErrEspeakOutput, maxEspeakChunks)
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func clampInt(x, lo, hi int) int { return max(lo, min(hi, x)) }

// limitedBuffer keeps the first limit bytes written to it and discards
// the rest; it is safe for concurrent use (exec copies stderr on its own
// goroutine).
type limitedBuffer struct {
	mu    sync.Mutex
	limit int
	buf   bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// suffix returns ": " and the trimmed text written, or "" if none.
func (b *limitedBuffer) suffix() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(b.buf.String())
	if s == "" {
		return ""
	}
	return ": " + s
}
