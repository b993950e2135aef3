package audio

import (
	"context"
	"fmt"
	"io"
)

// decodeReadSize is how much Decode reads at a time; it also bounds how much
// compressed input one StreamDecoder call sees.
const decodeReadSize = 32 << 10

// Decode reads a whole containerised file (WAV, MP3, FLAC, Ogg Vorbis, Ogg
// Opus or AAC in ADTS, detected from its first bytes) from r and returns its
// samples. It checks ctx between reads. Undecodable input gives an error
// matching ErrUndecodable; more than MaxDecodeSamples samples gives
// ErrTooLarge (use a StreamDecoder for long recordings).
func Decode(ctx context.Context, r io.Reader) (*Buffer, error) {
	d, err := NewStreamDecoder(Format{})
	if err != nil {
		return nil, fmt.Errorf("audio: decode: %w", err)
	}
	defer d.Close()
	return decodeAll(ctx, d, r)
}

// DecodeRaw reads raw PCM of format f from r and returns its samples. Like
// the service, it refuses (ErrUndecodable) input that starts with a
// container signature, since the declared encoding must match the audio
// actually sent.
func DecodeRaw(ctx context.Context, r io.Reader, f Format) (*Buffer, error) {
	if f.Encoding == EncodingNone {
		return nil, fmt.Errorf("audio: decode raw: format has no encoding")
	}
	d, err := NewStreamDecoder(f)
	if err != nil {
		return nil, fmt.Errorf("audio: decode raw: %w", err)
	}
	defer d.Close()
	return decodeAll(ctx, d, r)
}

func decodeAll(ctx context.Context, d *StreamDecoder, r io.Reader) (*Buffer, error) {
	buf := make([]byte, decodeReadSize)
	var samples []float32
	add := func(s []float32) error {
		if len(samples)+len(s) > MaxDecodeSamples {
			return fmt.Errorf("audio: decode: %w: more than %d samples", ErrTooLarge, MaxDecodeSamples)
		}
		samples = append(samples, s...)
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("audio: decode: %w", err)
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			out, err := d.Decode(buf[:n])
			if err != nil {
				return nil, fmt.Errorf("audio: decode: %w", err)
			}
			if err := add(out); err != nil {
				return nil, err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("audio: decode: read: %w", rerr)
		}
	}
	out, err := d.Flush()
	if err != nil {
		return nil, fmt.Errorf("audio: decode: %w", err)
	}
	if err := add(out); err != nil {
		return nil, err
	}
	info, _ := d.Info()
	return &Buffer{Samples: samples, SampleRate: info.SampleRate, Channels: info.Channels, Container: info.Container}, nil
}
