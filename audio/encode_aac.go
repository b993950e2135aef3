package audio

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

// aacOutputLimit bounds the encoded bytes held between two Writes. AAC
// output is a small fraction of its input, so only a stuck destination
// could reach it.
const aacOutputLimit = 64 << 20

// aacEncoder encodes mono AAC-LC in ADTS framing with FFmpeg's native AAC
// encoder, run as a subprocess the encoder owns. PCM goes to FFmpeg's
// stdin; the ADTS frames it writes are gathered by the subprocess's reader
// goroutine and passed to the destination by the next Write or by Close, so
// the destination is only written from the caller's goroutine. FFmpeg
// needs a few frames of input (about 100 ms) before its first output.
// ADTS has no field for the encoder delay, so decoders play FFmpeg's 1024
// priming samples as leading silence.
type aacEncoder struct {
	w    io.Writer
	proc *ffmpegProc
	in   []byte
	out  []byte
}

func newAACEncoder(ctx context.Context, w io.Writer, spec EncodeSpec) (*aacEncoder, error) {
	args := []string{
		"-f", "s16le", "-ar", strconv.Itoa(spec.SampleRate), "-ac", "1",
		"-probesize", "32", "-analyzeduration", "0", "-i", "pipe:0",
		"-c:a", "aac", "-b:a", strconv.Itoa(spec.BitRate),
		"-f", "adts", "-flush_packets", "1", "pipe:1",
	}
	proc, err := startFFmpeg(ctx, args, aacOutputLimit)
	if err != nil {
		return nil, err
	}
	return &aacEncoder{w: w, proc: proc}, nil
}

func (a *aacEncoder) write(pcm []int16) error {
	a.in = Int16ToBytes(a.in[:0], pcm)
	if err := a.proc.write(a.in); err != nil {
		if _, ferr := a.proc.finish(nil); ferr != nil {
			return ferr
		}
		return err
	}
	return a.pass(a.proc.take)
}

// pass moves FFmpeg's output so far to the destination.
func (a *aacEncoder) pass(take func([]byte) ([]byte, error)) error {
	out, err := take(a.out[:0])
	a.out = out
	if len(out) > 0 {
		if _, werr := a.w.Write(out); werr != nil {
			return werr
		}
	}
	if err != nil {
		return fmt.Errorf("ffmpeg: %w", err)
	}
	return nil
}

func (a *aacEncoder) finish() error { return a.pass(a.proc.finish) }

func (a *aacEncoder) abort() { a.proc.kill() }
