package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Text-to-speech output encoding: the encodings, containers, rates and bit
// rates the service's /v1/speak accepts, each as a streaming encoder so that
// the first bytes of a response can leave before the whole text is
// synthesised.

// ErrBadEncodeSpec is matched (with errors.Is) by every error that means an
// EncodeSpec is not a combination the service offers: an unknown encoding,
// a container, sample rate or bit rate the encoding does not allow. The
// error is an *EncodeSpecError, whose Reason says which.
var ErrBadEncodeSpec = errors.New("unsupported audio output format")

// EncodeSpecError is the error of an EncodeSpec the service does not
// offer. It matches ErrBadEncodeSpec.
type EncodeSpecError struct {
	// Reason says which part of the spec is refused and why, in words fit
	// for a 400 response, such as "encoding flac takes no bit rate, got
	// 8000".
	Reason string
}

func (e *EncodeSpecError) Error() string { return ErrBadEncodeSpec.Error() + ": " + e.Reason }

// Is makes every EncodeSpecError match ErrBadEncodeSpec.
func (e *EncodeSpecError) Is(target error) bool { return target == ErrBadEncodeSpec }

// ErrEncoderClosed is returned by Encoder methods called after Close.
var ErrEncoderClosed = errors.New("audio: encoder closed")

// EncodeSpec names a text-to-speech output format with the service's query
// parameters: encoding (linear16, mulaw, alaw, mp3, opus, flac, aac),
// container (wav, ogg or none; "" means the encoding's default), sample_rate
// and bit_rate (0 means the default). Normalize fills the defaults and
// checks the combination.
type EncodeSpec struct {
	Encoding   string
	Container  string
	SampleRate int
	BitRate    int
}

// Defaults of the service's TTS output parameters.
const (
	DefaultTTSEncoding   = "mp3"
	DefaultTTSSampleRate = 24000
)

// encodingRule is what the service allows for one encoding: the first
// container, rate and bit rate listed are the defaults. A nil rates or
// bitRates list means the parameter does not apply; minBitRate..maxBitRate
// replace bitRates for encodings with a range.
type encodingRule struct {
	containers             []string
	rates                  []int
	bitRates               []int
	defaultBitRate         int
	minBitRate, maxBitRate int
}

// encodingRules follows the service's "audio format combinations" table.
// The table gives no default rate for flac; 48000 Hz, the highest it lists,
// is used (TTS voices are synthesised at 24 kHz and above).
var encodingRules = map[string]encodingRule{
	"linear16": {containers: []string{"wav", "none"}, rates: []int{DefaultTTSSampleRate, 8000, 16000, 32000, 48000}},
	"mulaw":    {containers: []string{"wav", "none"}, rates: []int{8000, 16000}},
	"alaw":     {containers: []string{"wav", "none"}, rates: []int{8000, 16000}},
	"mp3":      {containers: []string{""}, rates: []int{22050}, bitRates: []int{48000, 32000}},
	"opus":     {containers: []string{"ogg"}, rates: []int{48000}, defaultBitRate: 12000, minBitRate: 4000, maxBitRate: 650000},
	"flac":     {containers: []string{""}, rates: []int{48000, 8000, 16000, 22050, 32000}},
	"aac":      {containers: []string{""}, rates: []int{22050}, defaultBitRate: 48000, minBitRate: 4000, maxBitRate: 192000},
}

func badSpec(format string, args ...any) error {
	return &EncodeSpecError{Reason: fmt.Sprintf(format, args...)}
}

// Normalize returns s with the service's defaults filled in (encoding mp3;
// container wav for linear16, mulaw and alaw, ogg for opus, "" for the
// self-contained mp3, flac and aac; sample rate 24000 for linear16, 8000
// for mulaw and alaw, the fixed rate elsewhere; bit rate 48000 for mp3 and
// aac, 12000 for opus), or an error matching ErrBadEncodeSpec for a
// combination the service refuses. Container "none" is accepted for the
// self-contained encodings and normalised to "". A bit rate given for an
// encoding that has none is refused, as is a sample rate for one whose rate
// is fixed, unless it equals that rate.
func (s EncodeSpec) Normalize() (EncodeSpec, error) {
	if s.Encoding == "" {
		s.Encoding = DefaultTTSEncoding
	}
	r, ok := encodingRules[s.Encoding]
	if !ok {
		return s, badSpec("encoding %q is not one of linear16, mulaw, alaw, mp3, opus, flac, aac", s.Encoding)
	}
	switch {
	case s.Container == "":
		s.Container = r.containers[0]
	case s.Container == "none" && r.containers[0] == "":
		s.Container = ""
	case !slices.Contains(r.containers, s.Container):
		if r.containers[0] == "" {
			return s, badSpec("encoding %s takes no container, got %q", s.Encoding, s.Container)
		}
		return s, badSpec("container %q is not allowed for %s (want %s)", s.Container, s.Encoding, orList(r.containers))
	}
	switch {
	case s.SampleRate == 0:
		s.SampleRate = r.rates[0]
	case !slices.Contains(r.rates, s.SampleRate):
		if len(r.rates) == 1 {
			return s, badSpec("sample rate of %s is fixed at %d Hz, got %d", s.Encoding, r.rates[0], s.SampleRate)
		}
		return s, badSpec("sample rate %d is not allowed for %s (want %s)", s.SampleRate, s.Encoding, orList(r.rates))
	}
	switch {
	case r.bitRates == nil && r.maxBitRate == 0:
		if s.BitRate != 0 {
			return s, badSpec("encoding %s takes no bit rate, got %d", s.Encoding, s.BitRate)
		}
	case s.BitRate == 0 && r.bitRates != nil:
		s.BitRate = r.bitRates[0]
	case s.BitRate == 0:
		s.BitRate = r.defaultBitRate
	case r.bitRates != nil && !slices.Contains(r.bitRates, s.BitRate):
		return s, badSpec("bit rate %d is not allowed for %s (want %s)", s.BitRate, s.Encoding, orList(r.bitRates))
	case r.bitRates == nil && (s.BitRate < r.minBitRate || s.BitRate > r.maxBitRate):
		return s, badSpec("bit rate %d is outside %d..%d for %s", s.BitRate, r.minBitRate, r.maxBitRate, s.Encoding)
	}
	return s, nil
}

// orList formats allowed values as "a, b or c".
func orList[T string | int](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) == 1 {
		return s[0]
	}
	out := ""
	for i, x := range s[:len(s)-1] {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out + " or " + s[len(s)-1]
}

// ContentType returns the Content-Type header the service sends for audio
// of a normalised spec: audio/wav for WAV, audio/l16, audio/mulaw or
// audio/alaw with the rate for raw samples, audio/mpeg, audio/ogg;codecs=opus,
// audio/flac and audio/aac.
func (s EncodeSpec) ContentType() string {
	switch s.Encoding {
	case "linear16", "mulaw", "alaw":
		if s.Container == "wav" {
			return "audio/wav"
		}
		name := map[string]string{"linear16": "l16", "mulaw": "mulaw", "alaw": "alaw"}[s.Encoding]
		return "audio/" + name + ";rate=" + strconv.Itoa(s.SampleRate)
	case "mp3":
		return "audio/mpeg"
	case "opus":
		return "audio/ogg;codecs=opus"
	case "flac":
		return "audio/flac"
	case "aac":
		return "audio/aac"
	}
	return "application/octet-stream"
}

// encoderImpl is one output format behind an Encoder.
type encoderImpl interface {
	// write encodes mono samples and writes what is ready to the output.
	write(pcm []int16) error
	// finish encodes what is buffered, ends the stream and writes it out.
	finish() error
	// abort releases resources after a failure, without writing.
	abort()
}

// Encoder encodes mono int16 PCM into one text-to-speech output format,
// streaming: each Write encodes its samples and passes to the destination
// every byte the format can already emit (the header first), so a response
// can start before synthesis ends. WAV and raw output, MP3, Ogg Opus and
// FLAC are encoded in-process (FLAC emits a frame per 4096 samples); AAC is
// encoded by an ffmpeg subprocess the Encoder owns, whose output reaches the
// destination during later Writes and Close.
//
// The destination is written only from the goroutine calling Write and
// Close, so it may be an http.ResponseWriter. An Encoder is not safe for
// concurrent use. Always call Close: it flushes the codec, finishes the
// container and releases the codec (and any subprocess).
type Encoder struct {
	spec   EncodeSpec
	impl   encoderImpl
	err    error // sticky: once a write failed, the stream is broken
	closed bool
}

// NewEncoder normalises spec (see EncodeSpec.Normalize) and returns an
// encoder writing that format to w. Input samples must be at the normalised
// spec's SampleRate (see Spec); the caller resamples. ctx bounds the life of
// a codec subprocess (AAC): cancelling it kills the process and makes later
// calls fail.
func NewEncoder(ctx context.Context, w io.Writer, spec EncodeSpec) (*Encoder, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, fmt.Errorf("audio: new encoder: %w", err)
	}
	var impl encoderImpl
	switch spec.Encoding {
	case "linear16", "mulaw", "alaw":
		impl, err = newPCMEncoder(w, spec)
	case "mp3":
		impl, err = newMP3Encoder(w, spec)
	case "opus":
		impl, err = newOggOpusEncoder(w, spec)
	case "flac":
		impl, err = newFLACEncoder(w, spec)
	case "aac":
		impl, err = newAACEncoder(ctx, w, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("audio: new %s encoder: %w", spec.Encoding, err)
	}
	return &Encoder{spec: spec, impl: impl}, nil
}

// Spec returns the normalised format being written.
func (e *Encoder) Spec() EncodeSpec { return e.spec }

// ContentType returns the Content-Type of the output, as the service sends
// it (see EncodeSpec.ContentType).
func (e *Encoder) ContentType() string { return e.spec.ContentType() }

// Write encodes mono samples at Spec().SampleRate. An error is sticky: the
// output is broken and only Close remains useful.
func (e *Encoder) Write(pcm []int16) error {
	if e.closed {
		return ErrEncoderClosed
	}
	if e.err != nil {
		return e.err
	}
	if len(pcm) == 0 {
		return nil
	}
	if err := e.impl.write(pcm); err != nil {
		e.err = fmt.Errorf("audio: encode %s: %w", e.spec.Encoding, err)
		return e.err
	}
	return nil
}

// Close flushes the codec, finishes the container (the final Ogg page, the
// last FLAC frame, the MP3 encoder's buffered frames, the rest of the AAC
// stream) and releases the codec. It does not close the destination. After
// a Write error it only releases, and returns that error. Calling Close
// again returns nil.
func (e *Encoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.err != nil {
		e.impl.abort()
		return e.err
	}
	if err := e.impl.finish(); err != nil {
		e.impl.abort()
		return fmt.Errorf("audio: encode %s: close: %w", e.spec.Encoding, err)
	}
	return nil
}

// pcmEncoder writes linear16, mu-law or A-law samples, raw or in a WAV file
// whose header says "length unknown" (see wavStreamHeader).
type pcmEncoder struct {
	w        io.Writer
	enc      Encoding
	header   []byte // written with the first samples or at finish
	buf      []byte
	patchWAV bool
	bytes    int64
}

func newPCMEncoder(w io.Writer, spec EncodeSpec) (*pcmEncoder, error) {
	enc, err := ParseEncoding(spec.Encoding)
	if err != nil {
		return nil, err
	}
	p := &pcmEncoder{w: w, enc: enc}
	if spec.Container == "wav" {
		p.header = wavStreamHeader(enc, spec.SampleRate)
		_, p.patchWAV = w.(io.WriteSeeker)
		// Send the header at once: a client sees the format before the
		// first sample is synthesised.
		if _, err := w.Write(p.header); err != nil {
			return nil, fmt.Errorf("write wav header: %w", err)
		}
	}
	return p, nil
}

func (p *pcmEncoder) write(pcm []int16) error {
	const step = 4096
	for len(pcm) > 0 {
		n := min(len(pcm), step)
		p.buf = p.buf[:0]
		switch p.enc {
		case EncodingLinear16:
			p.buf = Int16ToBytes(p.buf, pcm[:n])
		case EncodingMulaw:
			for _, v := range pcm[:n] {
				p.buf = append(p.buf, MulawEncode(v))
			}
		case EncodingAlaw:
			for _, v := range pcm[:n] {
				p.buf = append(p.buf, AlawEncode(v))
			}
		}
		if _, err := p.w.Write(p.buf); err != nil {
			return err
		}
		p.bytes += int64(len(p.buf))
		pcm = pcm[n:]
	}
	return nil
}

// finish patches the WAV sizes when the destination can seek (a file); a
// stream keeps the "to end of stream" sizes.
func (p *pcmEncoder) finish() error {
	if !p.patchWAV || p.bytes > 0xFFFFFFFF-int64(len(p.header)) {
		return nil
	}
	ws := p.w.(io.WriteSeeker)
	var b [4]byte
	patch := func(off int64, v uint32) error {
		if _, err := ws.Seek(off, io.SeekStart); err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(b[:], v)
		_, err := ws.Write(b[:])
		return err
	}
	if err := patch(4, uint32(p.bytes)+uint32(len(p.header))-8); err != nil {
		return fmt.Errorf("patch wav header: %w", err)
	}
	if err := patch(int64(len(p.header))-4, uint32(p.bytes)); err != nil {
		return fmt.Errorf("patch wav header: %w", err)
	}
	if _, err := ws.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("patch wav header: %w", err)
	}
	return nil
}

func (p *pcmEncoder) abort() {}

// wavStreamHeader returns the header of a mono WAV file of linear16 (format
// 1, 16 bits), mu-law (format 7) or A-law (format 6, both 8 bits) whose
// length is unknown: the RIFF and data sizes are 0xFFFFFFFF, as streaming
// servers write them. Readers that stream (this package, FFmpeg, browsers,
// SoX) take such a data chunk to run to the end of the file; strict
// readers that trust the size see a truncated file, which they mostly
// play to its real end. The G.711 formats get the 18-byte fmt chunk
// (cbSize 0) that non-PCM formats call for; the optional fact chunk, which
// would hold the unknown sample count, is left out.
func wavStreamHeader(e Encoding, rate int) []byte {
	le := binary.LittleEndian
	tag, bits, fmtSize := uint16(1), 16, 16
	switch e {
	case EncodingMulaw:
		tag, bits, fmtSize = 7, 8, 18
	case EncodingAlaw:
		tag, bits, fmtSize = 6, 8, 18
	}
	h := make([]byte, 0, 46)
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, 0xFFFFFFFF)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, uint32(fmtSize))
	h = le.AppendUint16(h, tag)
	h = le.AppendUint16(h, 1) // mono
	h = le.AppendUint32(h, uint32(rate))
	h = le.AppendUint32(h, uint32(rate*bits/8))
	h = le.AppendUint16(h, uint16(bits/8))
	h = le.AppendUint16(h, uint16(bits))
	if fmtSize == 18 {
		h = le.AppendUint16(h, 0) // cbSize
	}
	h = append(h, "data"...)
	return le.AppendUint32(h, 0xFFFFFFFF)
}

// recoverEncoder turns a panic in a third-party encoder into an error.
// Deferred at every call into such an encoder that could panic.
func recoverEncoder(codec string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s encoder failed (%v)", codec, r)
	}
}
