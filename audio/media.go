package audio

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Recordings in the containers of video and meetings (MP4, M4A, MOV, 3GP,
// WebM, MKV) are decoded from their file, by the FFmpeg programs the AAC
// codec already runs (see ffmpegProc): ffprobe lists the file's tracks,
// then ffmpeg decodes the first audio track to 16 kHz mono PCM, which the
// reader takes as it comes. FFmpeg reads the file itself because an MP4
// may keep its index (moov) after its data, where a stream would reach it
// only at the end.

// ErrNoAudioTrack is the error of a file with no audio track, such as a
// screen recording without sound. It matches ErrUndecodable.
var ErrNoAudioTrack = fmt.Errorf("%w: the file has no audio track", ErrUndecodable)

// AudioTrack is one audio track of a file, as ffprobe reports it. Fields
// the file does not give are empty.
type AudioTrack struct {
	Codec      string // FFmpeg's name: aac, opus, vorbis, mp3, ...
	Language   string // as tagged: eng, fr, ...; "" when untagged or "und"
	Title      string
	Channels   int
	SampleRate int
}

// MediaInfo describes a file's audio: its audio tracks, in file order
// (the first is the one DecodeFile decodes), and its length.
type MediaInfo struct {
	// Kind names the file for people: "M4A", "WebM", ... (see
	// MediaKind); FFmpeg's format name for other files.
	Kind string
	// Duration is the file's length, or 0 when it does not say (a WebM
	// file recorded in a browser often does not).
	Duration time.Duration
	Tracks   []AudioTrack
	// Video reports a video track beside the audio.
	Video bool
}

// maxProbeOutput bounds what ffprobe may print: a file with thousands
// of tracks is not a recording.
const maxProbeOutput = 1 << 20

// fileArg names a file to FFmpeg programs as a file, whatever its name:
// a name with a colon would otherwise be read as a protocol, and one that
// starts with a dash as an option.
func fileArg(path string) string { return "file:" + path }

// ProbeFile reads the tracks and length of the file at path with
// ffprobe. A file with no audio track is ErrNoAudioTrack; a file FFmpeg
// cannot read matches ErrUndecodable; a missing ffprobe matches
// exec.ErrNotFound as well.
func ProbeFile(ctx context.Context, path string) (MediaInfo, error) {
	var head [4096]byte
	n, err := readHead(path, head[:])
	if err != nil {
		return MediaInfo{}, err
	}
	p, err := startSource(ctx, "ffprobe", []string{
		"-hide_banner", "-loglevel", "error", "-print_format", "json",
		"-show_entries", "format=duration,format_name:stream=codec_type,codec_name,channels,sample_rate:stream_tags=language,title",
		fileArg(path),
	})
	if err != nil {
		return MediaInfo{}, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	out, rerr := io.ReadAll(io.LimitReader(procReader{p}, maxProbeOutput+1))
	if len(out) > maxProbeOutput {
		p.kill()
		return MediaInfo{}, undecodable("ffprobe describes the file at more than %d bytes", maxProbeOutput)
	}
	if werr := p.wait(); werr != nil || rerr != nil {
		return MediaInfo{}, fmt.Errorf("%w: FFmpeg cannot read the file: %w", ErrUndecodable, errors.Join(werr, rerr))
	}
	info, err := parseProbe(out)
	if err != nil {
		return MediaInfo{}, err
	}
	if kind := MediaKind(head[:n]); kind != "" {
		info.Kind = kind
	}
	if len(info.Tracks) == 0 {
		return info, ErrNoAudioTrack
	}
	return info, nil
}

// readHead reads the first bytes of the file at path into b.
func readHead(path string, b []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, b)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return n, err
}

// procReader reads a source's output.
type procReader struct{ p *ffmpegProc }

func (r procReader) Read(b []byte) (int, error) { return r.p.readOut(b) }

// probeOutput is what ffprobe prints, as asked for by ProbeFile.
type probeOutput struct {
	Streams []struct {
		CodecType  string          `json:"codec_type"`
		CodecName  string          `json:"codec_name"`
		Channels   int             `json:"channels"`
		SampleRate json.RawMessage `json:"sample_rate"` // a string of digits
		Tags       struct {
			Language string `json:"language"`
			Title    string `json:"title"`
		} `json:"tags"`
	} `json:"streams"`
	Format struct {
		FormatName string          `json:"format_name"`
		Duration   json.RawMessage `json:"duration"` // a string of a decimal, or absent
	} `json:"format"`
}

// parseProbe reads ffprobe's JSON. Values it cannot read are left out.
func parseProbe(b []byte) (MediaInfo, error) {
	var out probeOutput
	if err := json.Unmarshal(b, &out); err != nil {
		return MediaInfo{}, undecodable("ffprobe's description of the file cannot be read: %v", err)
	}
	info := MediaInfo{Kind: out.Format.FormatName}
	if secs, ok := jsonNumber(out.Format.Duration); ok && secs > 0 && secs < float64(maxMediaDuration/time.Second) {
		info.Duration = time.Duration(secs * float64(time.Second))
	}
	for _, s := range out.Streams {
		switch s.CodecType {
		case "video":
			info.Video = true
		case "audio":
			rate, _ := jsonNumber(s.SampleRate)
			t := AudioTrack{Codec: s.CodecName, Language: s.Tags.Language, Title: s.Tags.Title, Channels: min(max(s.Channels, 0), maxChannels)}
			if rate > 0 && rate <= maxSampleRate {
				t.SampleRate = int(rate)
			}
			if t.Language == "und" {
				t.Language = ""
			}
			info.Tracks = append(info.Tracks, t)
		}
	}
	return info, nil
}

// maxMediaDuration bounds the length a file may claim: longer is taken
// as unknown.
const maxMediaDuration = 1000 * time.Hour

// jsonNumber reads a number that ffprobe writes as a string ("15.8"),
// or as a number.
func jsonNumber(raw json.RawMessage) (float64, bool) {
	s := strings.Trim(string(raw), `" `)
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// FileDecoder decodes the first audio track of a file to 16 kHz mono
// 16-bit PCM with an ffmpeg process, which it owns: Read takes the
// samples as ffmpeg writes them, and ffmpeg waits while they are not
// read, so memory holds a pipe's worth whatever the file's length. Close
// kills the process and waits for it. A FileDecoder is not safe for
// concurrent use.
type FileDecoder struct {
	proc   *ffmpegProc
	raw    [32 << 10]byte
	odd    []byte // a byte of a sample cut by a read, kept for the next
	frames int64
	ended  bool
	err    error
}

// DecodeFile starts decoding the file at path (any file FFmpeg reads; see
// ProbeFile for its tracks) to 16 kHz mono; ctx bounds the decoding. The
// first audio track is decoded, its channels mixed.
func DecodeFile(ctx context.Context, path string) (*FileDecoder, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	args := append(slices.Clip(ffmpegQuiet), "-nostdin",
		"-i", fileArg(path), "-map", "0:a:0", "-vn", "-sn", "-dn",
		"-ac", "1", "-ar", strconv.Itoa(SpeechRate), "-f", "s16le", "pipe:1")
	p, err := startSource(ctx, "ffmpeg", args)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	return &FileDecoder{proc: p}, nil
}

// Read fills pcm with the next samples and returns how many, at least one
// unless it returns an error; io.EOF after the last. A file ffmpeg cannot
// decode, or of which no sample could be decoded, matches ErrUndecodable.
func (d *FileDecoder) Read(pcm []int16) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(pcm) == 0 {
		return 0, nil
	}
	want := min(2*len(pcm)-len(d.odd), len(d.raw))
	for {
		n, rerr := d.proc.readOut(d.raw[:want])
		if n > 0 {
			b := d.raw[:n]
			if len(d.odd) > 0 {
				b = append(d.odd, b...) // at most one byte more than read
			}
			m := len(b) / 2
			for i := range m {
				pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
			}
			d.odd = append(d.odd[:0], b[2*m:]...)
			if m > 0 {
				d.frames += int64(m)
				return m, nil
			}
		}
		if rerr != nil {
			d.err = d.end(rerr)
			return 0, d.err
		}
	}
}

// end reaps ffmpeg once its output has ended (rerr is io.EOF) or failed.
func (d *FileDecoder) end(rerr error) error {
	d.ended = true
	werr := d.proc.wait()
	switch {
	case werr != nil:
		return fmt.Errorf("%w: FFmpeg cannot decode the file: %w", ErrUndecodable, werr)
	case !errors.Is(rerr, io.EOF):
		return fmt.Errorf("read from ffmpeg: %w", rerr)
	case d.frames == 0:
		return undecodable("no audio could be decoded from the file")
	}
	return io.EOF
}

// Decoded is the length of the audio read so far.
func (d *FileDecoder) Decoded() time.Duration { return FramesDuration(d.frames, SpeechRate) }

// Close stops ffmpeg, if it still runs, and waits for it. It is
// idempotent and returns nil.
func (d *FileDecoder) Close() error {
	if !d.ended {
		d.ended = true
		d.proc.kill()
	}
	if d.err == nil {
		d.err = ErrClosed
	}
	return nil
}
