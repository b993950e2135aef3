package audio

import "fmt"

// SpeechRate is the sample rate the speech recogniser (pocketsphinx) takes:
// 16 kHz, mono, int16.
const SpeechRate = 16000

// To16kMono turns a decoded recording into what the recogniser takes:
// channels averaged to mono, resampled to 16 kHz, rounded and clipped to
// int16.
func To16kMono(b *Buffer) ([]int16, error) {
	c, err := NewConverter16kMono(b.SampleRate, b.Channels)
	if err != nil {
		return nil, err
	}
	frames := int64(b.Frames())
	out := make([]int16, 0, frames*SpeechRate/int64(b.SampleRate)+1)
	out = append(out, c.Convert(b.Samples)...)
	return append(out, c.Flush()...), nil
}

// Converter16kMono is the streaming form of To16kMono: it takes the
// interleaved float32 output of a StreamDecoder chunk by chunk and returns
// 16 kHz mono int16, identical to converting the whole stream at once. For
// 16 kHz mono input it only converts sample types. It is a MonoConverter
// whose output rate is SpeechRate. A Converter16kMono is not safe for
// concurrent use.
type Converter16kMono = MonoConverter

// NewConverter16kMono returns a converter for input of the given rate and
// channel count, as reported by StreamDecoder.Info.
func NewConverter16kMono(rate, channels int) (*Converter16kMono, error) {
	if err := checkLayout(rate, channels); err != nil {
		return nil, fmt.Errorf("audio: 16 kHz mono converter: %w", err)
	}
	return newMonoConverter(rate, channels, SpeechRate)
}

// SpeechDecoder is the recogniser's whole input path in one value: a
// StreamDecoder (raw PCM of a given Format, or a detected container)
// followed by a Converter16kMono created as soon as the stream's format is
// known. A SpeechDecoder is not safe for concurrent use; Close it when done.
type SpeechDecoder struct {
	dec  *StreamDecoder
	conv *Converter16kMono
	out  []int16
	skip int // output samples still to drop (a decoder started before its point)
}

// NewSpeechDecoder returns a decoder of the stream described by f (see
// NewStreamDecoder) to 16 kHz mono int16.
func NewSpeechDecoder(f Format) (*SpeechDecoder, error) {
	d, err := NewStreamDecoder(f)
	if err != nil {
		return nil, err
	}
	return &SpeechDecoder{dec: d}, nil
}

// Decode pushes the next chunk and returns the 16 kHz mono samples it made
// available. The returned slice is reused by the next call. Errors are those
// of StreamDecoder.Decode; samples decoded before an error are returned
// with it.
func (s *SpeechDecoder) Decode(p []byte) ([]int16, error) {
	samples, err := s.dec.Decode(p)
	out, cerr := s.convert(samples)
	if err != nil {
		return out, err
	}
	return out, cerr
}

// Flush ends the stream and returns its last samples, including the
// resampler's tail. The returned slice is reused by the next call.
func (s *SpeechDecoder) Flush() ([]int16, error) {
	samples, err := s.dec.Flush()
	out, cerr := s.convert(samples)
	if s.conv != nil {
		s.out = append(s.out, s.dropped(s.conv.Flush())...)
		out = s.out
	}
	if err != nil {
		return out, err
	}
	return out, cerr
}

func (s *SpeechDecoder) convert(samples []float32) ([]int16, error) {
	s.out = s.out[:0]
	if s.conv == nil {
		info, ok := s.dec.Info()
		if !ok {
			return s.out, nil
		}
		c, err := NewConverter16kMono(info.SampleRate, info.Channels)
		if err != nil {
			return s.out, err
		}
		s.conv = c
	}
	s.out = append(s.out, s.dropped(s.conv.Convert(samples))...)
	return s.out, nil
}

// dropped is pcm less the samples still to skip.
func (s *SpeechDecoder) dropped(pcm []int16) []int16 {
	n := min(s.skip, len(pcm))
	s.skip -= n
	return pcm[n:]
}

// Info reports the source's container, rate and channels once known.
func (s *SpeechDecoder) Info() (Info, bool) { return s.dec.Info() }

// Close releases the decoder (see StreamDecoder.Close).
func (s *SpeechDecoder) Close() error { return s.dec.Close() }
