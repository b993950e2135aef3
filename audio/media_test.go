package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// The first bytes of files FFmpeg 5.1 wrote (ffmpeg -i speech.wav
// out.EXT): detection seeds and cases.
var (
	webmHead = []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67")
	mkvHead  = []byte("\x1a\x45\xdf\xa3\xa3\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x88matroska\x42\x87\x81\x04\x42\x85\x81\x02\x18\x53\x80\x67")
	m4aHead  = []byte("\x00\x00\x00\x1cftypM4A \x00\x00\x02\x00M4A isomiso2\x00\x00\x00\x08free")
	mp4Head  = []byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x08free")
	movHead  = []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  \x00\x00\x00\x08wide\x00\x00\xfb\x56mdat")
	gp3Head  = []byte("\x00\x00\x00\x18ftyp3gp4\x00\x00\x02\x00isom3gp4\x00\x00\x00\x08free")
)

func TestDetectMedia(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want Container
		kind string
	}{
		{"webm", webmHead, ContainerMatroska, "WebM"},
		{"mkv", mkvHead, ContainerMatroska, "Matroska"},
		{"ebml magic alone", []byte(ebmlMagic), ContainerMatroska, "Matroska"},
		{"m4a", m4aHead, ContainerMP4, "M4A"},
		{"mp4", mp4Head, ContainerMP4, "MP4"},
		{"mov", movHead, ContainerMP4, "QuickTime movie"},
		{"3gp", gp3Head, ContainerMP4, "3GP"},
		{"old quicktime, moov first", []byte("\x00\x00\x01\x00moov\x00\x00\x00\x6cmvhd"), ContainerMP4, "QuickTime movie"},
		{"old quicktime, mdat first", []byte("\x00\x10\x00\x00mdat\x00\x00"), ContainerMP4, "QuickTime movie"},
		{"ftyp too short for a brand", []byte("\x00\x00\x00\x0cftypM4A "), ContainerUnknown, ""},
		{"ftyp of an odd size", []byte("\x00\x00\x00\x1bftypM4A \x00\x00\x02\x00M4A iso"), ContainerUnknown, ""},
		{"heif image", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), ContainerUnknown, ""},
		{"wav", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), ContainerWAV, ""},
		{"text", []byte("hello, this is not a movie"), ContainerUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.b); got != tt.want {
				t.Errorf("Detect = %v, want %v", got, tt.want)
			}
			if got := MediaKind(tt.b); got != tt.kind {
				t.Errorf("MediaKind = %q, want %q", got, tt.kind)
			}
		})
	}
	// A prefix of a box header waits for the rest; so does the magic.
	for _, b := range [][]byte{m4aHead[:3], m4aHead[:6], webmHead[:2]} {
		if _, more, err := sniff(b, false); !more || err != nil {
			t.Errorf("sniff(%q) = more %v, err %v; want more", b, more, err)
		}
	}
	_, _, err := sniff([]byte("\x00\x00\x00\x18ftypavif\x00\x00\x00\x00"), true)
	if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), "image") {
		t.Errorf("an AVIF image: %v, want it named an image", err)
	}
}

// TestStreamDecoderRefusesMedia checks that a stream (the body of a
// request) of MP4 or WebM is refused in words that say why.
func TestStreamDecoderRefusesMedia(t *testing.T) {
	for _, head := range [][]byte{m4aHead, webmHead} {
		_, _, err := decodeChunks(t, Format{}, [][]byte{head})
		if !errors.Is(err, ErrUndecodable) || !strings.Contains(err.Error(), "from its file") {
			t.Errorf("%q: %v", head[:12], err)
		}
	}
}

func FuzzMediaKind(f *testing.F) {
	for _, b := range [][]byte{webmHead, mkvHead, m4aHead, mp4Head, movHead, gp3Head} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kind := MediaKind(b)
		c := Detect(b)
		if (kind != "") != (c == ContainerMP4 || c == ContainerMatroska) {
			t.Fatalf("MediaKind %q but Detect %v", kind, c)
		}
		_ = ebmlDocType(b)
	})
}

func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(`{"streams":[{"codec_type":"video","codec_name":"h264"},{"codec_type":"audio","codec_name":"aac","sample_rate":"16000","channels":1,"tags":{"language":"und"}}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"15.800000"}}`))
	f.Add([]byte(`{"streams":[],"format":{"duration":"N/A"}}`))
	f.Add([]byte(`{"format":{"duration":1e300}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseProbe(b)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if info.Duration < 0 || info.Duration > maxMediaDuration {
			t.Fatalf("duration %v", info.Duration)
		}
		for _, tr := range info.Tracks {
			if tr.SampleRate < 0 || tr.SampleRate > maxSampleRate || tr.Channels < 0 || tr.Channels > maxChannels {
				t.Fatalf("track %+v", tr)
			}
		}
	})
}

// referenceWAV writes seconds of the reference recording to a WAV file.
func referenceWAV(t testing.TB, seconds float64) (string, []int16) {
	t.Helper()
	pcm := speechAt(t, seconds, 16000)
	data := 2 * len(pcm)
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(36+data))
	b = append(b, "WAVEfmt \x10\x00\x00\x00"...)
	b = append(b, fmtBody(1, 1, 16000, 16)...) // PCM, mono, 16 kHz, 16-bit
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(data))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	path := filepath.Join(t.TempDir(), "speech.wav")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, pcm
}

// readDecoder reads a FileDecoder to its end.
func readDecoder(t testing.TB, d *FileDecoder) ([]int16, error) {
	t.Helper()
	var out []int16
	buf := make([]int16, 3001) // odd, so samples are cut across reads
	for {
		n, err := d.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestDecodeFile decodes the containers of meeting recordings, made by
// ffmpeg from a real recording: with a lossless track the samples are the
// recording's own; with a lossy one, the recording's at a high SNR. A
// file with video and two audio tracks gives its first audio track.
func TestDecodeFile(t *testing.T) {
	ffmpegtest.NeedFFmpeg(t)
	defer leaktest.Check(t)
	wav, pcm := referenceWAV(t, 3)
	silence := []string{"-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono:d=3"}
	video := []string{"-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=3"}
	tests := []struct {
		name     string
		args     []string
		kind     string
		lossless bool
		tracks   int
		video    bool
	}{
		{"speech.m4a", []string{"-i", wav, "-c:a", "aac"}, "M4A", false, 1, false},
		{"meeting.mp4", append(append([]string{"-i", wav}, video...), "-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac"), "MP4", false, 1, true},
		{"browser.webm", []string{"-i", wav, "-c:a", "libopus"}, "WebM", false, 1, false},
		{"speech.mkv", []string{"-i", wav, "-c:a", "flac"}, "Matroska", true, 1, false},
		{"speech.mov", []string{"-i", wav, "-c:a", "pcm_s16le"}, "QuickTime movie", true, 1, false},
		{"two tracks.mkv", append(append(append([]string{"-i", wav}, silence...), video...),
			"-map", "2:v", "-map", "0:a", "-map", "1:a", "-c:v", "mpeg4", "-c:a", "flac"), "Matroska", true, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ffmpegtest.FFmpeg(t, t.TempDir(), tt.name, tt.args...)
			info, err := ProbeFile(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Kind != tt.kind || len(info.Tracks) != tt.tracks || info.Video != tt.video {
				t.Errorf("probe: %+v; want kind %q, %d tracks, video %v", info, tt.kind, tt.tracks, tt.video)
			}
			if d := info.Duration; d < 2900*time.Millisecond || d > 3100*time.Millisecond {
				t.Errorf("duration %v, want 3 s", d)
			}
			d, err := DecodeFile(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			got, err := readDecoder(t, d)
			if err != nil {
				t.Fatal(err)
			}
			if d.Decoded() != FramesDuration(int64(len(got)), 16000) {
				t.Errorf("Decoded %v for %d samples", d.Decoded(), len(got))
			}
			if tt.lossless {
				if !slices.Equal(got, pcm) {
					t.Errorf("%d samples differ from the recording's %d", len(got), len(pcm))
				}
				return
			}
			ref, dec := make([]float64, len(pcm)), make([]float64, len(got))
			for i, s := range pcm {
				ref[i] = float64(s) / 32768
			}
			for i, s := range got {
				dec[i] = float64(s) / 32768
			}
			lag, _ := bestLag(ref, dec, 2000)
			if s := snr(ref, dec, lag); s < 15 {
				t.Errorf("SNR %.1f dB at lag %d, want the recording", s, lag)
			}
		})
	}
}

func TestDecodeFileErrors(t *testing.T) {
	ffmpegtest.NeedFFmpeg(t)
	defer leaktest.Check(t)
	silent := ffmpegtest.FFmpeg(t, t.TempDir(), "screen.mp4", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1", "-c:v", "mpeg4")
	_, err := ProbeFile(t.Context(), silent)
	if !errors.Is(err, ErrNoAudioTrack) || !errors.Is(err, ErrUndecodable) {
		t.Errorf("a video without sound: ProbeFile = %v, want ErrNoAudioTrack", err)
	}
	garbage := filepath.Join(t.TempDir(), "notes.webm")
	if err := os.WriteFile(garbage, append([]byte(ebmlMagic), []byte("this is not a video at all")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeFile(t.Context(), garbage); !errors.Is(err, ErrUndecodable) {
		t.Errorf("a damaged file: ProbeFile = %v, want ErrUndecodable", err)
	}
	for _, path := range []string{silent, garbage} {
		d, err := DecodeFile(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readDecoder(t, d)
		d.Close()
		if !errors.Is(err, ErrUndecodable) {
			t.Errorf("%s: decoding gave %v, want ErrUndecodable", filepath.Base(path), err)
		}
	}
	if _, err := DecodeFile(t.Context(), filepath.Join(t.TempDir(), "gone.mp4")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestDecodeFileStops checks that closing a decoder in the middle, or
// ending its context, stops ffmpeg, and that ffmpeg waits for a reader
// that does not read (it is held by the pipe, not buffered).
func TestDecodeFileStops(t *testing.T) {
	ffmpegtest.NeedFFmpeg(t)
	defer leaktest.Check(t)
	// An hour of silence: far more than a pipe holds.
	path := ffmpegtest.FFmpeg(t, t.TempDir(), "hour.mkv", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "3600", "-c:a", "flac")
	d, err := DecodeFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int16, 1024)
	if _, err := d.Read(buf); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := d.Read(buf); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	d, err = DecodeFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = readDecoder(t, d)
	if err == nil || d.Decoded() >= time.Hour {
		t.Errorf("after the context ended: %v, %v decoded", err, d.Decoded())
	}
}
