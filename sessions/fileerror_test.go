package sessions_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-app/earshot/audio"
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
