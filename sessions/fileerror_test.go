package sessions_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/sessions"
)

func TestCheckAudioFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var wav audio.SeekBuffer
	w, err := audio.NewWAVWriter(&wav, 16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSamples(make([]int16, 16000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good := write("good.wav", wav.Bytes())
	if err := sessions.CheckAudioFile(t.Context(), good); err != nil {
		t.Errorf("a WAV file: %v", err)
	}
	tests := []struct {
		name string
		path string
		is   error
	}{
		{"not audio", write("notes.wav", []byte("these are notes, not audio")), audio.ErrUndecodable},
		{"empty", write("empty.mp3", nil), audio.ErrUndecodable},
		{"missing", filepath.Join(dir, "gone.wav"), fs.ErrNotExist},
		{"folder", dir, sessions.ErrFolder},
	}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		// The sound of a meeting's recording is its first audio track.
		m4a := ffmpegtest.FFmpeg(t, dir, "meeting.m4a", "-i", good, "-c:a", "aac")
		if err := sessions.CheckAudioFile(t.Context(), m4a); err != nil {
			t.Errorf("an M4A file: %v", err)
		}
		tests = append(tests, struct {
			name string
			path string
			is   error
		}{"video without sound", ffmpegtest.FFmpeg(t, dir, "screen.mp4", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1", "-c:v", "mpeg4"), audio.ErrNoAudioTrack})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sessions.CheckAudioFile(t.Context(), tt.path)
			var fe *sessions.FileError
			if !errors.As(err, &fe) || fe.Name != filepath.Base(tt.path) || !errors.Is(err, tt.is) {
				t.Errorf("CheckAudioFile(%s) = %v, want a FileError naming %s that matches %v", tt.name, err, filepath.Base(tt.path), tt.is)
			}
		})
	}
}
