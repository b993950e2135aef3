package audio

import (
	"bufio"
	"errors"
	"io"
)

// ErrClosed is returned by StreamDecoder methods called after Flush or Close.
var ErrClosed = errors.New("audio: stream decoder closed")

// streamImpl is one decoding strategy behind a StreamDecoder. decode and
// flush append to dst, which the StreamDecoder passes empty.
type streamImpl interface {
	decode(dst []float32, p []byte) ([]float32, error)
	flush(dst []float32) ([]float32, error)
	Info() (Info, bool)
	close()
}

// StreamDecoder decodes audio that arrives in chunks of any size, such as
// the binary frames of a WebSocket: a WAV header or an Ogg page may straddle
// chunks, and an odd byte of linear16 is kept for the next chunk. Each call
// to Decode returns everything that the bytes so far make decodable, as
// interleaved float32 (full scale +-1) in whole frames.
//
// It works in one of two modes, chosen when it is created: raw PCM of a
// given Format, or containerised audio whose container (WAV, MP3, FLAC, Ogg
// Vorbis, Ogg Opus, AAC in ADTS) is detected from the first bytes. Raw PCM
// costs no allocation per chunk once the output buffer has grown to the chunk
// size.
//
// MPEG-1 MP3 and FLAC are decoded by pull-based libraries; for those the
// StreamDecoder owns a goroutine, which Close stops and waits for. AAC and
// MPEG-2/2.5 MP3 (8-24 kHz, which go-mp3 garbles) are decoded by an ffmpeg
// subprocess that the StreamDecoder owns: its output
// arrives asynchronously, so a Decode call returns what ffmpeg has decoded so
// far (Decode(nil) polls for more without input) and Flush the rest; Close
// kills the process and waits for it. Always call Close when done.
//
// A StreamDecoder is not safe for concurrent use: one goroutine pushes the
// chunks and reads the results.
type StreamDecoder struct {
	format Format // Encoding is EncodingNone in container mode
	impl   streamImpl
	head   []byte // bytes held back until the container or signature is known
	out    []float32
	err    error // sticky: once decoding failed, it stays failed
	ended  bool  // Flush or Close was called
}

// NewStreamDecoder returns a decoder for raw PCM of format f or, when
// f.Encoding is EncodingNone, for containerised audio whose format is
// detected (f's other fields are then ignored: the container says).
func NewStreamDecoder(f Format) (*StreamDecoder, error) {
	if f.Encoding == EncodingNone {
		return &StreamDecoder{}, nil
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &StreamDecoder{format: f, head: make([]byte, 0, 4)}, nil
}

// Decode pushes the next chunk and returns the samples decoded from it (and
// from bytes held back from earlier chunks). The returned slice is reused by
// the next call; copy it to keep it. An error matching ErrUndecodable means
// the stream is not decodable audio; it is sticky, as is ErrTooLarge. The
// samples decoded before an error are returned with it.
func (d *StreamDecoder) Decode(p []byte) ([]float32, error) {
	if d.ended {
		return nil, ErrClosed
	}
	if d.err != nil {
		return nil, d.err
	}
	if cap(d.out) > 1<<20 {
		d.out = nil // do not keep a huge buffer after one large chunk
	}
	out, err := d.decode(d.out[:0], p)
	d.out = out
	if err != nil {
		d.err = err
		return out, err
	}
	return out, nil
}

func (d *StreamDecoder) decode(dst []float32, p []byte) ([]float32, error) {
	if d.impl != nil {
		return d.impl.decode(dst, p)
	}
	if len(p) == 0 {
		return dst, nil
	}
	// Gather the first bytes: avoid the copy when one chunk suffices.
	data := p
	if len(d.head) > 0 {
		d.head = append(d.head, p...)
		data = d.head
	}
	if d.format.Encoding != EncodingNone {
		if len(data) < 4 {
			if len(d.head) == 0 {
				d.head = append(d.head, p...)
			}
			return dst, nil
		}
		if err := checkNotContainer(data, d.format.Encoding); err != nil {
			return dst, err
		}
		d.impl = newRawStream(d.format)
	} else {
		c, more, err := sniff(data, false)
		switch {
		case err != nil:
			return dst, err
		case more && len(data) >= detectLimit:
			return dst, undecodable("could not detect the container in the first %d bytes", len(data))
		case more:
			if len(d.head) == 0 {
				d.head = append(d.head, p...)
			}
			return dst, nil
		}
		impl, err := newContainerStream(c)
		if err != nil {
			return dst, err
		}
		d.impl = impl
	}
	d.head = nil
	return d.impl.decode(dst, data)
}

// Flush ends the stream: it decodes what was held back and returns the last
// samples, or an error if the stream ended before any audio header or in
// the middle of a container structure. The returned slice is reused by the
// next call. After Flush, Decode returns ErrClosed; call Close to release
// the decoder.
func (d *StreamDecoder) Flush() ([]float32, error) {
	if d.ended {
		return nil, ErrClosed
	}
	if d.err != nil {
		return nil, d.err
	}
	d.ended = true
	dst := d.out[:0]
	if d.impl == nil {
		switch {
		case d.format.Encoding != EncodingNone:
			// Fewer than 4 bytes in all: too short to be a container.
			d.impl = newRawStream(d.format)
			dst, _ = d.impl.decode(dst, d.head)
		case len(d.head) == 0:
			d.err = undecodable("the stream is empty")
			return nil, d.err
		default:
			if _, _, err := sniff(d.head, true); err != nil {
				d.err = err
			} else {
				d.err = undecodable("the stream is too short (%d bytes) to be audio", len(d.head))
			}
			return nil, d.err
		}
	}
	out, err := d.impl.flush(dst)
	d.out = out
	if err != nil {
		d.err = err
	}
	return out, err
}

// Info reports the container, sample rate and channels once they are known:
// at once for raw PCM, after the header has been decoded for containers.
func (d *StreamDecoder) Info() (Info, bool) {
	if d.format.Encoding != EncodingNone {
		return Info{Container: ContainerNone, SampleRate: d.format.SampleRate, Channels: d.format.Channels}, true
	}
	if d.impl == nil {
		return Info{}, false
	}
	return d.impl.Info()
}

// Close releases the decoder, stopping and waiting for its goroutine if it
// has one. It is idempotent and always returns nil; the error result keeps
// it an io.Closer.
func (d *StreamDecoder) Close() error {
	d.ended = true
	if d.impl != nil {
		d.impl.close()
	}
	return nil
}

// checkNotContainer refuses raw PCM whose first bytes are a container
// signature: the client declared an encoding but sent a file.
func checkNotContainer(b []byte, e Encoding) error {
	var name string
	switch {
	case hasPrefix(b, "RIFF"), hasPrefix(b, "RIFX"), hasPrefix(b, "RF64"):
		name = "WAV (RIFF)"
	case hasPrefix(b, "OggS"):
		name = "Ogg"
	case hasPrefix(b, "fLaC"):
		name = "FLAC"
	case hasPrefix(b, "ID3") && b[3] >= 2 && b[3] <= 4:
		name = "MP3 (ID3)"
	default:
		return nil
	}
	return undecodable("raw %s was declared but the stream starts with a %s header: the encoding must match the audio actually sent (omit encoding for containerized audio)", e, name)
}

// rawStream decodes raw PCM of a known format.
type rawStream struct {
	pcm  pcmStream
	info Info
}

func newRawStream(f Format) *rawStream {
	return &rawStream{
		pcm:  newPCMStream(codecOf(f.Encoding), f.Channels),
		info: Info{Container: ContainerNone, SampleRate: f.SampleRate, Channels: f.Channels},
	}
}

func (r *rawStream) decode(dst []float32, p []byte) ([]float32, error) {
	return r.pcm.decode(dst, p), nil
}

func (r *rawStream) flush(dst []float32) ([]float32, error) { return dst, nil }
func (r *rawStream) Info() (Info, bool)                     { return r.info, true }
func (r *rawStream) close()                                 {}

func newContainerStream(c Container) (streamImpl, error) {
	switch c {
	case ContainerWAV:
		return newWAVStream(), nil
	case ContainerOggVorbis, ContainerOggOpus:
		return newOggStream(), nil
	case ContainerFLAC:
		return newPullStream(func(r io.Reader, s *pullStream) error {
			return runFLAC(bufio.NewReader(r), s)
		}), nil
	case ContainerMP3:
		return newMPEGStream(), nil
	case ContainerAAC:
		return newAACStream(), nil
	case ContainerMP4:
		return nil, undecodable("MP4 (M4A, MOV, 3GP) audio is decoded from its file, not from a stream: its index may come last (send WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus or AAC; Earshot converts MP4 files before sending them)")
	case ContainerMatroska:
		return nil, undecodable("WebM and Matroska audio is decoded from its file, not from a stream (send WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus or AAC; Earshot converts WebM and MKV files before sending them)")
	}
	return nil, undecodable("no decoder for container %v", c)
}
