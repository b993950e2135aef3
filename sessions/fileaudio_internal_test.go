package sessions

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// TestDecodedUploadHeldBack: an hour-long recording decoded for sending
// (an MKV here) is decoded only as fast as its body is read, so that what
// the app holds does not grow with the file: once 4 KB of the body have
// been read (some 80 s of the quiet audio, as FLAC), the decoder has
// decoded no more than a few minutes of the hour, and closing the upload
// stops it there. A decoding that ran ahead of the upload, into memory,
// would have decoded the hour by then.
func TestDecodedUploadHeldBack(t *testing.T) {
	ffmpegtest.NeedFFmpeg(t)
	defer leaktest.Check(t)
	path := ffmpegtest.FFmpeg(t, t.TempDir(), "hour.mkv", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "3600", "-c:a", "flac")
	u, err := openFileUpload(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !u.decoding() || u.about.Length < 59*time.Minute {
		t.Fatalf("upload %+v, want the hour decoded for sending", u.about)
	}
	body, err := u.start(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	decoded := func() time.Duration { return audio.FramesDuration(u.decoded.Load(), streamRate) }
	if _, err := io.ReadFull(body, make([]byte, 4<<10)); err != nil {
		t.Fatal(err)
	}
	const most = 5 * time.Minute
	if d := decoded(); d > most {
		t.Errorf("with 4 KB of the body read, %v of the hour was decoded, want at most %v", d, most)
	}
	u.close()
	if d := decoded(); d > most {
		t.Errorf("after the upload closed, %v of the hour was decoded, want at most %v", d, most)
	}
}

// TestFileUploadReadsAsItGoes: a file sent as it is (a WAV here) is read
// from the disk as the body is read, never held whole: bytes written into
// the file after the sending began, ahead of what was read, are sent.
func TestFileUploadReadsAsItGoes(t *testing.T) {
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, tone(10*streamRate, 1, 440, 0), streamRate, 1); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/tone.wav"
	if err := os.WriteFile(path, wav.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := openFileUpload(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer u.close()
	if u.decoding() || u.size != int64(wav.Len()) {
		t.Fatalf("upload of %d bytes, decoding %v; want the WAV's %d bytes as they are", u.size, u.decoding(), wav.Len())
	}
	body, err := u.start(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1<<10)
	if _, err := io.ReadFull(body, head); err != nil {
		t.Fatal(err)
	}
	mark := []byte("written after the sending began")
	at := int64(wav.Len() - 4<<10)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(mark, at); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	sent := append(head, rest...)
	if len(sent) != wav.Len() || !bytes.Equal(sent[at:at+int64(len(mark))], mark) {
		t.Errorf("sent %d bytes without what was written at %d: the file was read before it was sent", len(sent), at)
	}
}
