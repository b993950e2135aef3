package sphinx

import (
	"fmt"
	"os"
	"time"
)

// Config selects the model and the voice activity detector of a Decoder. The
// zero value means "everything at its default": the Debian model and the
// library's VAD settings, which is exactly what pocketsphinx_continuous uses.
type Config struct {
	// HMM is the acoustic model directory; empty means DefaultHMM.
	HMM string
	// LM is the n-gram language model; empty means DefaultLM.
	LM string
	// Dict is the pronunciation dictionary; empty means DefaultDict.
	Dict string
	// SampleRate of the audio in Hz; 0 means SampleRate, the only value the
	// model accepts.
	SampleRate int

	// VADPreSpeech is the number of frames kept before detected speech
	// (-vad_prespeech); 0 means DefaultVADPreSpeech.
	VADPreSpeech int
	// VADStartSpeech is the number of consecutive speech frames that start
	// an utterance (-vad_startspeech); 0 means DefaultVADStartSpeech.
	VADStartSpeech int
	// VADPostSpeech is the number of consecutive silence frames (10 ms each)
	// that end an utterance (-vad_postspeech); 0 means DefaultVADPostSpeech.
	// This is where a service's endpointing setting goes; see
	// WithEndpointing.
	VADPostSpeech int
	// VADThreshold is the signal-to-noise threshold of the detector
	// (-vad_threshold); 0 means DefaultVADThreshold.
	VADThreshold float64

	// Search tunes the decoder's search; the zero value is the library's.
	Search Search
}

// DefaultConfig returns the configuration pocketsphinx_continuous uses, with
// every default spelled out.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// WithEndpointing returns a copy of c whose detector ends an utterance after
// d of silence, rounded to whole 10 ms frames (at least one frame). A
// service maps its endpointing parameter in milliseconds onto this.
func (c Config) WithEndpointing(d time.Duration) Config {
	frames := int((d + 5*time.Millisecond) / (time.Second / FrameRate))
	c.VADPostSpeech = max(frames, 1)
	return c
}

func (c Config) withDefaults() Config {
	if c.HMM == "" {
		c.HMM = DefaultHMM
	}
	if c.LM == "" {
		c.LM = DefaultLM
	}
	if c.Dict == "" {
		c.Dict = DefaultDict
	}
	if c.SampleRate == 0 {
		c.SampleRate = SampleRate
	}
	if c.VADPreSpeech == 0 {
		c.VADPreSpeech = DefaultVADPreSpeech
	}
	if c.VADStartSpeech == 0 {
		c.VADStartSpeech = DefaultVADStartSpeech
	}
	if c.VADPostSpeech == 0 {
		c.VADPostSpeech = DefaultVADPostSpeech
	}
	if c.VADThreshold == 0 {
		c.VADThreshold = DefaultVADThreshold
	}
	return c
}

// validate checks a configuration that already has its defaults filled in.
func (c Config) validate() error {
	if c.SampleRate != SampleRate {
		return fmt.Errorf("%w: sample rate %d Hz, the model needs %d Hz", ErrInvalidConfig, c.SampleRate, SampleRate)
	}
	// The library stores these in 16-bit fields.
	const maxFrames = 1 << 14
	for _, v := range []struct {
		name string
		val  int
	}{
		{"VADPreSpeech", c.VADPreSpeech},
		{"VADStartSpeech", c.VADStartSpeech},
		{"VADPostSpeech", c.VADPostSpeech},
	} {
		if v.val < 1 || v.val > maxFrames {
			return fmt.Errorf("%w: %s %d out of range 1..%d", ErrInvalidConfig, v.name, v.val, maxFrames)
		}
	}
	if c.VADThreshold < 0 {
		return fmt.Errorf("%w: negative VADThreshold %g", ErrInvalidConfig, c.VADThreshold)
	}
	if err := c.Search.validate(); err != nil {
		return err
	}
	for _, p := range []struct {
		name, path string
		dir        bool
	}{
		{"HMM", c.HMM, true},
		{"LM", c.LM, false},
		{"Dict", c.Dict, false},
	} {
		fi, err := os.Stat(p.path)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidConfig, p.name, err)
		}
		if fi.IsDir() != p.dir {
			want := "a file"
			if p.dir {
				want = "a directory"
			}
			return fmt.Errorf("%w: %s %s is not %s", ErrInvalidConfig, p.name, p.path, want)
		}
	}
	return nil
}
