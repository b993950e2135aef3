package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// AAC in ADTS framing (ISO/IEC 13818-7, 14496-3), the format of the
// service's aac output. Go has no AAC codec, so both directions run FFmpeg
// (its native AAC encoder and decoder) as a subprocess: PCM or ADTS on
// stdin, the other on stdout, streaming. The package parses the ADTS
// headers itself, to detect the format and report its layout, and never
// lets the subprocess outlive its owner.

// adtsHeaderLen is the size of an ADTS header without its optional CRC.
const adtsHeaderLen = 7

var adtsRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// adtsHeader is what matters of one ADTS frame header.
type adtsHeader struct {
	rate       int
	channels   int
	frameBytes int // the whole frame, header included
}

// isADTSSync reports whether b (two bytes or more) starts with the ADTS
// syncword and layer 0, which tells ADTS from MPEG audio sharing the sync.
func isADTSSync(b []byte) bool {
	return len(b) >= 2 && b[0] == 0xFF && b[1]&0xF6 == 0xF0
}

// parseADTSHeader checks the 7-byte header at the start of b, which must
// start with the ADTS sync, and returns an ErrUndecodable error saying what
// is wrong for any header FFmpeg could not decode.
func parseADTSHeader(b []byte) (adtsHeader, error) {
	var h adtsHeader
	profile := b[2] >> 6
	rateIndex := int(b[2]>>2) & 0xF
	chanConfig := int(b[2]&1)<<2 | int(b[3]>>6)
	h.frameBytes = int(b[3]&3)<<11 | int(b[4])<<3 | int(b[5]>>5)
	minBytes := adtsHeaderLen
	if b[1]&1 == 0 {
		minBytes += 2 // CRC
	}
	switch {
	case profile == 2:
		return h, undecodable("AAC Scalable Sample Rate profile is not supported")
	case rateIndex >= len(adtsRates):
		return h, undecodable("AAC (ADTS) header has an invalid sample rate index %d", rateIndex)
	case chanConfig == 0:
		return h, undecodable("AAC with a program-defined channel layout is not supported")
	case h.frameBytes < minBytes:
		return h, undecodable("AAC (ADTS) frame length %d is shorter than its header", h.frameBytes)
	}
	h.rate = adtsRates[rateIndex]
	h.channels = chanConfig
	if chanConfig == 7 {
		h.channels = 8
	}
	return h, nil
}

// sniffADTS decides on a stream that starts with the ADTS sync.
func sniffADTS(b []byte, atEOF bool) (Container, bool, error) {
	if len(b) < adtsHeaderLen {
		if atEOF {
			return ContainerUnknown, false, undecodable("the stream ends inside its first AAC (ADTS) header")
		}
		return ContainerUnknown, true, nil
	}
	if _, err := parseADTSHeader(b); err != nil {
		return ContainerUnknown, false, err
	}
	return ContainerAAC, false, nil
}

// stderrTail keeps the last bytes FFmpeg wrote to stderr, for error
// messages. exec copies stderr into it from its own goroutine.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
}

const stderrKeep = 2048

func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if len(s.buf) > stderrKeep {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-stderrKeep:]...)
	}
	return len(p), nil
}

func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(string(s.buf))
}

// errOutputLimit is set when a subprocess produced more output than its
// owner would hold; the process is killed.
var errOutputLimit = errors.New("output limit exceeded")

// ffmpegProc runs an FFmpeg program, in one of two ways.
//
// As a filter (startFFmpeg): bytes in on stdin, bytes out on stdout. A
// reader goroutine, owned by the ffmpegProc, moves stdout into a buffer
// as it arrives, so FFmpeg never blocks on a full pipe and writing stdin
// never deadlocks; take hands the buffered output to the owner's
// goroutine. finish or kill stop the process and wait for it and for the
// reader.
//
// As a source (startSource): the program reads a file itself and the
// owner reads its stdout with readOut, as slowly as it likes: a full pipe
// holds the program back, so nothing is buffered beyond the pipe, however
// long the file. kill stops it; wait reaps it once its output is read.
type ffmpegProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser // nil for a source
	stdout io.ReadCloser  // read by the reader goroutine (filter) or the owner (source)
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader has seen stdout end; nil for a source
	stderr stderrTail
	limit  int // bytes of output the buffer may hold

	mu     sync.Mutex
	out    []byte
	outErr error

	waited bool
	result error
}

// toolPath finds an FFmpeg program (ffmpeg, ffprobe); an error wraps
// exec.ErrNotFound when it is not installed.
func toolPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("the %s program is needed: %w", name, err)
	}
	return p, nil
}

// ffmpegQuiet are the options of every ffmpeg run: no banner, no
// progress, only errors on stderr, one thread.
var ffmpegQuiet = []string{"-hide_banner", "-nostats", "-loglevel", "error", "-threads", "1"}

// startFFmpeg starts ffmpeg as a filter with args (after the common quiet
// options). It is killed when ctx ends or kill is called.
func startFFmpeg(ctx context.Context, args []string, limit int) (*ffmpegProc, error) {
	p, err := startTool(ctx, "ffmpeg", append(slices.Clip(ffmpegQuiet), args...), true)
	if err != nil {
		return nil, err
	}
	p.limit = limit
	go p.read()
	return p, nil
}

// startSource starts the program name (ffmpeg, ffprobe) with args as a
// source: its stdin is empty and the owner reads its stdout (readOut).
// It is killed when ctx ends or kill is called.
func startSource(ctx context.Context, name string, args []string) (*ffmpegProc, error) {
	return startTool(ctx, name, args, false)
}

func startTool(ctx context.Context, name string, args []string, filter bool) (*ffmpegProc, error) {
	path, err := toolPath(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, path, args...)
	p := &ffmpegProc{cmd: cmd, cancel: cancel}
	cmd.Stderr = &p.stderr
	if filter {
		p.done = make(chan struct{})
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			cancel()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// readOut reads a source's output.
func (p *ffmpegProc) readOut(b []byte) (int, error) { return p.stdout.Read(b) }

func (p *ffmpegProc) read() {
	defer close(p.done)
	stdout := p.stdout
	buf := make([]byte, 32<<10)
	for {
		n, err := stdout.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if len(p.out)+n > p.limit {
				p.outErr = errOutputLimit
				p.mu.Unlock()
				p.cancel() // kill: the owner sees outErr
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
			p.out = append(p.out, buf[:n]...)
			p.mu.Unlock()
		}
		if err != nil {
			return // EOF, or the pipe closed by Wait after a kill
		}
	}
}

// write sends b to FFmpeg's stdin.
func (p *ffmpegProc) write(b []byte) error {
	if _, err := p.stdin.Write(b); err != nil {
		return p.failure(fmt.Errorf("write to ffmpeg: %w", err))
	}
	return nil
}

// take appends the output received so far to dst.
func (p *ffmpegProc) take(dst []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dst = append(dst, p.out...)
	p.out = p.out[:0]
	return dst, p.outErr
}

// finish closes stdin, waits for FFmpeg to write the rest and exit, and
// appends the remaining output to dst.
func (p *ffmpegProc) finish(dst []byte) ([]byte, error) {
	_ = p.stdin.Close()
	<-p.done
	dst, err := p.take(dst)
	if werr := p.wait(); werr != nil {
		return dst, werr
	}
	return dst, err
}

// wait reaps the process once; it must run after the reader is done.
func (p *ffmpegProc) wait() error {
	if !p.waited {
		p.waited = true
		err := p.cmd.Wait()
		p.cancel()
		if err != nil {
			p.result = p.failure(err)
		}
	}
	return p.result
}

// failure describes an FFmpeg failure with what it said on stderr.
func (p *ffmpegProc) failure(err error) error {
	p.mu.Lock()
	outErr := p.outErr
	p.mu.Unlock()
	if outErr != nil {
		return outErr
	}
	if msg := p.stderr.String(); msg != "" {
		return fmt.Errorf("ffmpeg: %w: %s", err, msg)
	}
	return fmt.Errorf("ffmpeg: %w", err)
}

// kill stops FFmpeg at once and waits for it and the reader.
func (p *ffmpegProc) kill() {
	p.cancel()
	if p.stdin != nil {
		_ = p.stdin.Close()
		<-p.done
	}
	_ = p.wait()
}

// ffmpegStream decodes a compressed stream with an FFmpeg subprocess, which
// it owns: start launches it and close kills it. Decoded audio arrives
// asynchronously, so each decode returns what FFmpeg has output by then and
// flush returns the rest; the total does not depend on how the input is
// chunked. FFmpeg is told the rate and channels the stream's first header
// gives, so the output layout is the one Info reports.
type ffmpegStream struct {
	codec   string // the codec's name, for messages
	proc    *ffmpegProc
	info    Info
	raw     []byte // output bytes not yet a whole frame of float32
	decoded bool   // some audio has come out
}

// start runs FFmpeg on input in the given demuxer format (FFmpeg's -f),
// decoding to info's rate and channels. An error matches ErrUndecodable
// and, when FFmpeg is not installed, exec.ErrNotFound.
func (f *ffmpegStream) start(codec, demuxer string, info Info) error {
	f.codec, f.info = codec, info
	args := []string{
		"-probesize", "32", "-analyzeduration", "0",
		"-f", demuxer, "-i", "pipe:0",
		"-map", "0:a:0", "-ac", strconv.Itoa(info.Channels), "-ar", strconv.Itoa(info.SampleRate),
		"-f", "f32le", "-flush_packets", "1", "pipe:1",
	}
	proc, err := startFFmpeg(context.Background(), args, 4*chunkLimit)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUndecodable, codec, err)
	}
	f.proc = proc
	return nil
}

func (f *ffmpegStream) Info() (Info, bool) { return f.info, f.proc != nil }

// decode passes p to FFmpeg and returns what it has decoded so far; an
// empty p only collects that output, so a caller may poll. start must have
// succeeded.
func (f *ffmpegStream) decode(dst []float32, p []byte) ([]float32, error) {
	if len(p) > 0 {
		if err := f.proc.write(p); err != nil {
			// FFmpeg stopped reading: it refused the input. Its exit
			// status and message say why.
			if _, ferr := f.proc.finish(nil); ferr != nil {
				err = ferr
			}
			return dst, f.procError(err)
		}
	}
	var err error
	f.raw, err = f.proc.take(f.raw)
	if err != nil {
		f.proc.kill()
		return dst, f.procError(err)
	}
	return f.samples(dst), nil
}

// flush ends FFmpeg's input and returns the rest of its output. A stream
// from which nothing at all could be decoded is an error.
func (f *ffmpegStream) flush(dst []float32) ([]float32, error) {
	var err error
	f.raw, err = f.proc.finish(f.raw)
	if err != nil {
		return dst, f.procError(err)
	}
	dst = f.samples(dst)
	if len(dst) > chunkLimit {
		return dst[:0], errChunkTooLarge()
	}
	if !f.decoded {
		return dst, undecodable("no %s frame could be decoded", f.codec)
	}
	return dst, nil
}

// samples moves the whole frames of raw into dst.
func (f *ffmpegStream) samples(dst []float32) []float32 {
	frame := 4 * f.info.Channels
	n := len(f.raw) / frame * frame
	if n > 0 {
		f.decoded = true
	}
	dst, out := grow(dst, n/4)
	for i := range out {
		out[i] = sanitize(math.Float32frombits(binary.LittleEndian.Uint32(f.raw[4*i:])))
	}
	f.raw = append(f.raw[:0], f.raw[n:]...)
	return dst
}

// procError maps a subprocess failure to the package's errors.
func (f *ffmpegStream) procError(err error) error {
	if errors.Is(err, errOutputLimit) {
		return errChunkTooLarge()
	}
	return fmt.Errorf("%w: %s decoding failed: %w", ErrUndecodable, f.codec, err)
}

func (f *ffmpegStream) close() {
	if f.proc != nil {
		f.proc.kill()
	}
}

// aacStream decodes an ADTS stream with FFmpeg (see ffmpegStream), started
// with the first bytes, whose header gives the layout. FFmpeg is told the
// rate and channels of the first header, so HE-AAC (whose header gives the
// core rate) is output at that rate, without its spectral band replication.
type aacStream struct {
	ffmpegStream
}

func newAACStream() *aacStream { return &aacStream{} }

func (a *aacStream) decode(dst []float32, p []byte) ([]float32, error) {
	if a.proc == nil {
		if len(p) == 0 {
			return dst, nil
		}
		h, err := parseADTSHeader(p)
		if err != nil {
			return dst, err
		}
		if err := checkLayout(h.rate, h.channels); err != nil {
			return dst, undecodable("AAC: %v", err)
		}
		if err := a.start("AAC", "aac", Info{Container: ContainerAAC, SampleRate: h.rate, Channels: h.channels}); err != nil {
			return dst, err
		}
	}
	return a.ffmpegStream.decode(dst, p)
}

func (a *aacStream) flush(dst []float32) ([]float32, error) {
	if a.proc == nil {
		return dst, undecodable("AAC stream ends before its first frame")
	}
	return a.ffmpegStream.flush(dst)
}
