package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-app/earshot/audio"
)

// What a file transcription sends. A file in a format the service reads
// from a stream (WAV, MP3, FLAC, Ogg, AAC) is sent as it is, read from
// the disk as it goes. A recording in a container of video and meetings
// (MP4, M4A, MOV, 3GP, WebM, MKV) is decoded here, its first audio track
// by FFmpeg from the file, to 16 kHz mono, and sent as FLAC encoded as it
// is decoded: lossless, so the transcript is the one the audio gives
// (Opus, seven times smaller, changed words of the test recordings); half
// the size of the PCM, and never the video. Nothing of it is held whole:
// the pipe between the decoder and the upload holds the upload back.

// ErrEmptyFile is what a FileError holds for a file of 0 bytes.
var ErrEmptyFile = errors.New("the file is empty (0 bytes): there is no audio in it")

// uploadSpec is the encoding of decoded audio on the wire.
var uploadSpec = audio.EncodeSpec{Encoding: "flac", SampleRate: streamRate}

// FileAudio describes the audio a file transcription sends.
type FileAudio struct {
	// Kind names a file decoded before sending ("M4A", "WebM", ...); ""
	// when the file is sent as it is.
	Kind string
	// Tracks counts the file's audio tracks; the first is transcribed.
	Tracks int
	// Track is the first audio track, as the file describes it.
	Track audio.AudioTrack
	// Video reports a video track beside the audio.
	Video bool
	// Length is the file's length, or 0 when it does not say.
	Length time.Duration
}

// TrackNote says which audio track is transcribed when the file has
// several, such as "the first of its 3 audio tracks (eng, aac)"; "" when
// there is no choice to tell of.
func (a FileAudio) TrackNote() string {
	if a.Tracks < 2 {
		return ""
	}
	var about []string
	for _, s := range []string{a.Track.Language, a.Track.Title, a.Track.Codec} {
		if s != "" {
			about = append(about, s)
		}
	}
	note := fmt.Sprintf("the first of its %d audio tracks", a.Tracks)
	if len(about) > 0 {
		note += " (" + strings.Join(about, ", ") + ")"
	}
	return note
}

// upload is the audio of one transcription request: bytes sent as they
// are (a file, kept audio), or a file decoded as it is sent. start begins
// the sending; close ends it, however it went, and waits for what it
// started. Its methods are for the one goroutine that sends, but
// progress, which the body's reader calls.
type upload struct {
	name        string    // the file's base name
	direct      io.Reader // sent as it is; nil when decoded
	size        int64     // bytes of direct
	contentType string
	closer      io.Closer // the file, or nil
	path        string    // the file decoded, when direct is nil
	about       FileAudio

	// While decoding: the pump goroutine, owned by the upload, which
	// alone uses the decoder and the encoder.
	cancel  context.CancelFunc // ends the decoding
	body    *io.PipeReader
	done    chan struct{} // closed when the pump has returned
	decoded atomic.Int64  // samples decoded and handed to the encoder
	once    sync.Once
}

// openFileUpload opens the file at path for sending and finds how: as it
// is, or decoded (see above), after probing its tracks. A file that
// cannot be read, is empty, or holds no audio track is a *FileError.
func openFileUpload(ctx context.Context, path string) (*upload, error) {
	name := filepath.Base(path)
	fail := func(err error) (*upload, error) { return nil, &FileError{Name: name, Err: err} }
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case info.IsDir():
		err = ErrFolder
	case info.Size() == 0:
		err = ErrEmptyFile
	}
	if err != nil {
		f.Close()
		return fail(err)
	}
	var head [64]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.Close()
		return fail(err)
	}
	if c := audio.Detect(head[:n]); c != audio.ContainerMP4 && c != audio.ContainerMatroska {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return fail(err)
		}
		return &upload{name: name, direct: f, size: info.Size(), contentType: contentTypeOf(path), closer: f}, nil
	}
	f.Close()
	media, err := audio.ProbeFile(ctx, path)
	if err != nil {
		return fail(err)
	}
	u := &upload{name: name, path: path, contentType: uploadSpec.ContentType(), about: FileAudio{
		Kind: media.Kind, Tracks: len(media.Tracks), Track: media.Tracks[0], Video: media.Video, Length: media.Duration,
	}}
	if u.contentType == "" {
		u.contentType = "audio/flac"
	}
	return u, nil
}

// bytesUpload sends data (kept audio) as it is.
func bytesUpload(name string, r io.Reader, size int64, contentType string) *upload {
	return &upload{name: name, direct: r, size: size, contentType: contentType}
}

// decoding reports whether the audio is decoded before it is sent.
func (u *upload) decoding() bool { return u.direct == nil }

// start returns the request's body. A decoded file starts its decoding:
// ffmpeg and the pump that encodes its samples into the body, each
// sample handed to keep as well (which may be nil). ctx bounds the
// decoding.
func (u *upload) start(ctx context.Context, keep *keptAudio) (io.Reader, error) {
	if !u.decoding() {
		return u.direct, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	dec, err := audio.DecodeFile(ctx, u.path)
	if err != nil {
		cancel()
		return nil, &FileError{Name: u.name, Err: err}
	}
	pr, pw := io.Pipe()
	u.cancel, u.body, u.done = cancel, pr, make(chan struct{})
	go u.pump(ctx, dec, pw, keep)
	return pr, nil
}

// pumpChunk is how many samples the pump moves at a time: 0.1 s.
const pumpChunk = streamRate / 10

// pump moves the decoded samples into the encoder, and so into the body,
// until the file ends or fails; the body ends the same way.
func (u *upload) pump(ctx context.Context, dec *audio.FileDecoder, pw *io.PipeWriter, keep *keptAudio) {
	defer close(u.done)
	defer dec.Close()
	// The encoder writes its header at once: here, where the body is
	// read from, not before.
	enc, err := audio.NewEncoder(ctx, pw, uploadSpec)
	if err != nil {
		pw.CloseWithError(err)
		return
	}
	err = func() error {
		buf := make([]int16, pumpChunk)
		for {
			n, err := dec.Read(buf)
			if n > 0 {
				keep.add(buf[:n], false)
				if werr := enc.Write(buf[:n]); werr != nil {
					return werr
				}
				u.decoded.Add(int64(n))
			}
			if errors.Is(err, io.EOF) {
				return enc.Close()
			}
			if err != nil {
				return &FileError{Name: u.name, Err: err}
			}
		}
	}()
	if err != nil {
		_ = enc.Close()
	}
	pw.CloseWithError(err) // nil: the body ends
}

// progress is where the sending stands once sent bytes of the body have
// gone, the whole of it when ended.
func (u *upload) progress(sent int64, ended bool) Progress {
	p := Progress{Phase: PhaseUploading, Sent: sent, Total: u.size}
	if u.decoding() {
		p = Progress{Phase: PhaseDecoding, Sent: sent, Decoded: audio.FramesDuration(u.decoded.Load(), streamRate), Length: u.about.Length}
	}
	if ended || (u.size > 0 && sent >= u.size) {
		p.Phase = PhaseTranscribing
	}
	return p
}

// close ends the sending and waits for the decoding, if any: ffmpeg is
// stopped, and the pump, were it still writing into a body the transport
// no longer reads, let go. The file is closed.
func (u *upload) close() {
	u.once.Do(func() {
		if u.done != nil {
			u.cancel()
			u.body.CloseWithError(errUploadEnded)
			<-u.done
		}
		if u.closer != nil {
			u.closer.Close()
		}
	})
}

// errUploadEnded is what a pump still writing when its upload closes
// gets; nobody sees it.
var errUploadEnded = errors.New("the upload has ended")
