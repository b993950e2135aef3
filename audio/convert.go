package audio

import "fmt"

// MonoConverter is the streaming conversion of interleaved float32 audio
// to mono int16 at another rate: channels averaged (MixToMono), resampled
// (Resampler), rounded and clipped to int16. Fed chunk by chunk, it returns
// exactly what converting the whole stream at once would; input at the
// output rate only has its sample type converted. A MonoConverter is not
// safe for concurrent use.
type MonoConverter struct {
	channels int
	rs       *Resampler // nil when the input is already at the output rate
	carry    []float32  // a partial input frame
	mono     []float32
	res      []float32
	out      []int16
}

// NewMonoConverter returns a converter from interleaved audio of inRate Hz
// and the given channel count to mono at outRate Hz.
func NewMonoConverter(inRate, channels, outRate int) (*MonoConverter, error) {
	if err := checkLayout(inRate, channels); err != nil {
		return nil, fmt.Errorf("audio: mono converter: input %w", err)
	}
	if err := checkLayout(outRate, 1); err != nil {
		return nil, fmt.Errorf("audio: mono converter: output %w", err)
	}
	return newMonoConverter(inRate, channels, outRate)
}

func newMonoConverter(inRate, channels, outRate int) (*MonoConverter, error) {
	c := &MonoConverter{channels: channels}
	if inRate != outRate {
		rs, err := NewResampler(inRate, outRate, 1)
		if err != nil {
			return nil, err
		}
		c.rs = rs
	}
	return c, nil
}

// Convert returns the mono samples that samples make available. The
// returned slice is reused by the next call to Convert or Flush.
func (c *MonoConverter) Convert(samples []float32) []int16 {
	c.mono = c.mono[:0]
	if len(c.carry) > 0 {
		take := min(c.channels-len(c.carry), len(samples))
		c.carry = append(c.carry, samples[:take]...)
		samples = samples[take:]
		if len(c.carry) == c.channels {
			c.mono = MixToMono(c.mono, c.carry, c.channels)
			c.carry = c.carry[:0]
		}
	}
	whole := len(samples) - len(samples)%c.channels
	c.mono = MixToMono(c.mono, samples[:whole], c.channels)
	c.carry = append(c.carry, samples[whole:]...)
	return c.finish(c.mono, false)
}

// Flush returns the last samples owed at the end of the stream (the
// resampler's tail). The returned slice is reused by the next call.
func (c *MonoConverter) Flush() []int16 {
	return c.finish(nil, true)
}

func (c *MonoConverter) finish(mono []float32, flush bool) []int16 {
	if c.rs != nil {
		c.res = c.res[:0]
		if flush {
			c.res = c.rs.Flush(c.res)
		} else {
			c.res = c.rs.Process(c.res, mono)
		}
		mono = c.res
	}
	c.out = Float32ToInt16(c.out[:0], mono)
	return c.out
}

// FrameConverter turns the frames of a Source into what a streaming speech
// service takes: linear16 (little-endian) mono at the stream's rate, as
// bytes ready to send. It is a MonoConverter with the sample conversions on
// either side; 16-bit mono input already at the output rate is only
// re-encoded. A FrameConverter is not safe for concurrent use.
type FrameConverter struct {
	out  Format
	conv *MonoConverter // nil on the direct path
	f32  []float32
	buf  []byte
}

// NewFrameConverter returns a converter from frames in format in (as a
// Source's Format reports: linear16) to linear16 mono at outRate Hz.
func NewFrameConverter(in Format, outRate int) (*FrameConverter, error) {
	if err := checkSourceFormat(in); err != nil {
		return nil, fmt.Errorf("audio: frame converter: %w", err)
	}
	out := Format{Encoding: EncodingLinear16, SampleRate: outRate, Channels: 1}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("audio: frame converter: output %w", err)
	}
	c := &FrameConverter{out: out}
	if in.Channels != 1 || in.SampleRate != outRate {
		conv, err := newMonoConverter(in.SampleRate, in.Channels, outRate)
		if err != nil {
			return nil, fmt.Errorf("audio: frame converter: %w", err)
		}
		c.conv = conv
	}
	return c, nil
}

// Format returns the format of the bytes Convert returns, for the stream's
// encoding, sample_rate and channels parameters.
func (c *FrameConverter) Format() Format { return c.out }

// Convert returns the converted audio that frame makes available (with
// resampling, a few samples lag until the next frame or Flush). The
// returned slice is reused by the next call to Convert or Flush.
func (c *FrameConverter) Convert(frame []int16) []byte {
	if c.conv == nil {
		c.buf = Int16ToBytes(c.buf[:0], frame)
		return c.buf
	}
	c.f32 = Int16ToFloat32(c.f32[:0], frame)
	c.buf = Int16ToBytes(c.buf[:0], c.conv.Convert(c.f32))
	return c.buf
}

// Flush returns the last converted audio at the end of the stream (the
// resampler's tail). The returned slice is reused by the next call.
func (c *FrameConverter) Flush() []byte {
	c.buf = c.buf[:0]
	if c.conv != nil {
		c.buf = Int16ToBytes(c.buf, c.conv.Flush())
	}
	return c.buf
}
