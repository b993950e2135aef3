// Package audio is Earshot's audio layer, without network: raw PCM formats
// (linear16, linear32, G.711 mu-law and A-law), container detection and
// decoding (WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus, AAC in ADTS), streaming
// decoding of audio that arrives in arbitrary chunks, resampling, mixing to
// mono, WAV encoding, and streaming encoding of every text-to-speech output
// format ([Encoder]: linear16, mu-law and A-law raw or in WAV, MP3, Ogg Opus,
// FLAC, AAC); and live audio as a [Source] of frames: the microphone
// ([OpenCapture], through miniaudio) or a recording replayed from memory
// ([Replay]), with level metering ([Level], [Meter]) and conversion of the
// frames for a streaming speech service ([FrameConverter]).
//
// Decoded audio is always interleaved float32 with full scale at +-1 (integer
// PCM of n bits is divided by 2^(n-1), so int16 lands in [-1, 1)), whatever
// the source: one representation keeps resampling and mixing simple, holds
// every 8-24 bit PCM sample exactly, and converts back to int16 losslessly
// for int16 input. Float sources may exceed +-1; conversion to int16 clips.
// The speech recogniser wants 16 kHz mono int16; [To16kMono] and
// [Converter16kMono] produce exactly that.
//
// Input from outside (files, WebSocket frames) is treated as hostile: sizes
// read from headers are never used to size allocations, third-party decoders
// run behind a recover boundary, and every failure to decode is reported as an
// error that matches [ErrUndecodable] and says why in plain words.
package audio

import (
	"errors"
	"fmt"
	"time"
)

// ErrUndecodable is matched (with errors.Is) by every error that means the
// input is not audio this package can decode: an unknown or unsupported
// container, a corrupt header, a codec error, or raw PCM that is really a
// container. The wrapping error says why. The service answers such input
// with DATA-0000.
var ErrUndecodable = errors.New("undecodable audio")

// ErrTooLarge is matched by errors for input that decodes to more samples
// than this package will hold in memory at once (see [MaxDecodeSamples] and
// [MaxChunkSamples]). It is separate from ErrUndecodable because the audio
// may be perfectly valid, only too big.
var ErrTooLarge = errors.New("decoded audio too large")

// MaxDecodeSamples caps the samples (all channels counted) that [Decode] and
// [DecodeRaw] hold in memory: 1<<28 float32 samples are 1 GiB, about 46
// minutes of 48 kHz stereo or 4.6 hours of 16 kHz mono. Longer input must be
// streamed through a [StreamDecoder].
const MaxDecodeSamples = 1 << 28

// MaxChunkSamples caps the samples one [StreamDecoder.Decode] call may
// return. Compressed formats can expand enormously (a FLAC frame of silence
// is a few bytes for 65535 samples), so a hostile chunk could otherwise ask
// for gigabytes; legitimate callers push chunks of at most a few hundred
// kilobytes and stay far below it.
const MaxChunkSamples = 1 << 24

// chunkLimit is MaxChunkSamples, variable so tests can lower it.
var chunkLimit = MaxChunkSamples

// errChunkTooLarge reports output beyond chunkLimit from one call.
func errChunkTooLarge() error {
	return fmt.Errorf("%w: one chunk decodes to more than %d samples; push smaller chunks", ErrTooLarge, chunkLimit)
}

// undecodable returns an error that matches ErrUndecodable and reads as
// "undecodable audio: <why>".
func undecodable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUndecodable, fmt.Sprintf(format, args...))
}

// Container identifies how audio bytes are packaged.
type Container int

// The containers Detect knows. ContainerNone marks raw PCM described by a
// Format rather than by the bytes themselves.
const (
	ContainerUnknown Container = iota
	ContainerNone
	ContainerWAV
	ContainerMP3
	ContainerFLAC
	ContainerOggVorbis
	ContainerOggOpus
	ContainerAAC // AAC in ADTS framing
	// ContainerMP4 is the ISO base media file format and QuickTime: MP4,
	// M4A, MOV, 3GP. Its index may follow its data, so it is decoded from
	// a file (DecodeFile), never from a stream.
	ContainerMP4
	// ContainerMatroska is Matroska and WebM (MKV, MKA, WEBM), decoded
	// from a file like ContainerMP4.
	ContainerMatroska
)

// String returns a short lower-case name such as "wav" or "ogg-opus".
func (c Container) String() string {
	switch c {
	case ContainerNone:
		return "raw"
	case ContainerWAV:
		return "wav"
	case ContainerMP3:
		return "mp3"
	case ContainerFLAC:
		return "flac"
	case ContainerOggVorbis:
		return "ogg-vorbis"
	case ContainerOggOpus:
		return "ogg-opus"
	case ContainerAAC:
		return "aac"
	case ContainerMP4:
		return "mp4"
	case ContainerMatroska:
		return "matroska"
	default:
		return "unknown"
	}
}

// Buffer is a whole decoded recording held in memory. Samples are interleaved
// float32 with full scale at +-1: frame i holds
// Samples[i*Channels : (i+1)*Channels].
// Multichannel audio keeps the codec's channel order. A Buffer is a plain
// value: safe to read from many goroutines, not to modify concurrently.
type Buffer struct {
	Samples    []float32
	SampleRate int
	Channels   int
	Container  Container
}

// Frames returns the number of sample frames (samples per channel).
func (b *Buffer) Frames() int {
	if b.Channels <= 0 {
		return 0
	}
	return len(b.Samples) / b.Channels
}

// Duration returns the length of the audio.
func (b *Buffer) Duration() time.Duration {
	if b.SampleRate <= 0 {
		return 0
	}
	return time.Duration(int64(b.Frames()) * int64(time.Second) / int64(b.SampleRate))
}

// Info describes a decoded stream once its header has been read.
type Info struct {
	Container  Container
	SampleRate int
	Channels   int
}

// Limits on the layouts this package accepts. They are generous for any real
// audio and keep hostile headers from driving arithmetic or buffers to
// absurd sizes.
const (
	minSampleRate = 1000
	maxSampleRate = 768000
	maxChannels   = 32
)

func checkLayout(rate, channels int) error {
	if rate < minSampleRate || rate > maxSampleRate {
		return fmt.Errorf("sample rate %d Hz is outside %d..%d Hz", rate, minSampleRate, maxSampleRate)
	}
	if channels < 1 || channels > maxChannels {
		return fmt.Errorf("channel count %d is outside 1..%d", channels, maxChannels)
	}
	return nil
}
