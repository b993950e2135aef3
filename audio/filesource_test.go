package audio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// TestOpenFileReplay: a recording opened to play as it decodes gives
// exactly what decoding it whole gives (its own rate and channels), and a
// recording of the containers of meetings its first audio track at 16 kHz
// mono, the samples of a lossless one exactly.
func TestOpenFileReplay(t *testing.T) {
	defer leaktest.Check(t)
	for _, name := range []string{"speech-44k-stereo.wav", "speech-24bit.wav", "speech.flac", "speech.ogg", "speech.opus", "speech-16k-mono.mp3", "speech-44k-stereo.mp3"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			whole, err := Decode(t.Context(), bytes.NewReader(readTestdata(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := NewReplayBuffer(whole, ReplayConfig{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := OpenFileReplay(t.Context(), path, ReplayConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != want.Format() {
				t.Errorf("format %+v, want %+v", r.Format(), want.Format())
			}
			_, got := readAll(t, r)
			_, all := readAll(t, want)
			if !slices.Equal(got, all) {
				t.Errorf("%d samples differ from the %d of the whole file decoded", len(got), len(all))
			}
		})
	}
	t.Run("mkv", func(t *testing.T) {
		ffmpegtest.NeedFFmpeg(t)
		wav, pcm := referenceWAV(t, 3)
		path := ffmpegtest.FFmpeg(t, t.TempDir(), "speech.mkv", "-i", wav, "-c:a", "flac")
		r, err := OpenFileReplay(t.Context(), path, ReplayConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Format() != mono16k {
			t.Errorf("format %+v, want 16 kHz mono", r.Format())
		}
		if _, got := readAll(t, r); !slices.Equal(got, pcm) {
			t.Errorf("%d samples differ from the recording's %d", len(got), len(pcm))
		}
	})
}

// countingSamples is an endless tone that counts the samples read.
type countingSamples struct{ read int }

func (c *countingSamples) Read(pcm []int16) (int, error) {
	for i := range pcm {
		pcm[i] = int16(c.read + i)
	}
	c.read += len(pcm)
	return len(pcm), nil
}

// TestReplayReaderReadsAsItPlays: a replay read from a decoder takes from
// it no more than a frame ahead of what it has delivered: the recording
// is never held whole, however long (a conversation from a file decoded
// it whole first, and refused one longer than 46 minutes of 48 kHz
// stereo after holding 1 GB of it).
func TestReplayReaderReadsAsItPlays(t *testing.T) {
	src := &countingSamples{}
	r, err := NewReplayReader(mono16k, src, ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	frame := 0
	for i := range 100 {
		f, err := r.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if int(f[0]) != int(int16(frame)) {
			t.Fatalf("frame %d starts at sample %d, want %d", i, f[0], int16(frame))
		}
		frame += len(f)
		if src.read > frame+2*len(f) {
			t.Fatalf("after %d samples delivered, %d were read from the decoder", frame, src.read)
		}
	}
	if _, err := NewReplayReader(mono16k, src, ReplayConfig{Loop: true}); err == nil {
		t.Error("a replay read from a decoder was made to loop")
	}
}

// TestOpenFileReplayStops: closing a replay of a long recording stops its
// decoding (ffmpeg, for an MKV), however much of it is left; a file that
// holds no audio is refused when it is opened.
func TestOpenFileReplayStops(t *testing.T) {
	ffmpegtest.NeedFFmpeg(t)
	defer leaktest.Check(t)
	dir := t.TempDir()
	hour := ffmpegtest.FFmpeg(t, dir, "hour.mkv", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "3600", "-c:a", "flac")
	r, err := OpenFileReplay(t.Context(), hour, ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Read(t.Context()); !errors.Is(err, ErrSourceClosed) {
		t.Errorf("Read after Close: %v", err)
	}

	silent := ffmpegtest.FFmpeg(t, dir, "screen.mp4", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1", "-c:v", "mpeg4")
	if _, err := OpenFileReplay(t.Context(), silent, ReplayConfig{}); !errors.Is(err, ErrNoAudioTrack) {
		t.Errorf("a video without sound: %v, want ErrNoAudioTrack", err)
	}
	notes := filepath.Join(dir, "notes.wav")
	if err := os.WriteFile(notes, []byte("these are notes, not a recording"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileReplay(t.Context(), notes, ReplayConfig{}); !errors.Is(err, ErrUndecodable) {
		t.Errorf("a text file: %v, want ErrUndecodable", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := OpenFileReplay(ctx, filepath.Join("testdata", "speech.flac"), ReplayConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("with its context ended: %v", err)
	}
}
