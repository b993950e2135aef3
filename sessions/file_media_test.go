package sessions_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// writeWAVFile writes 16 kHz mono pcm to dir/name.
func writeWAVFile(t testing.TB, dir, name string, pcm []int16) string {
	t.Helper()
	var b bytes.Buffer
	if err := audio.EncodeWAV(&b, pcm, 16000, 1); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFileMedia transcribes the recordings people have, made by ffmpeg
// from a real reading, on the local engine, through the app's session:
// M4A, MP4 and MOV, MKV with video and two audio tracks, WebM. Where the
// track is lossless (ALAC in M4A and MP4, PCM in MOV, FLAC in MKV) the
// transcript must be the WAV's word for word, so its word error rate too.
// Where it is lossy, as meeting apps and browsers write (AAC in MP4, Opus
// in WebM, which holds no lossless codec), the codec alone changes words:
// measured on this reading with the WAVs ffmpeg decodes from such files,
// AAC turns "how much" into "our much" even at 256 kb/s, and Opus at 64,
// 128 and 256 kb/s each gives other words, as it resamples to 48 kHz and
// back. So such a file must give the transcript of the WAV ffmpeg decodes
// from it (nothing lost on the way but what the codec lost), and a word
// error rate within one word of the reading's. These files were refused
// before: "MP4/M4A audio is not supported".
func TestFileMedia(t *testing.T) {
	t.Parallel()
	ffmpegtest.NeedFFmpeg(t)
	eng := localEngine(t)
	ctx := testContext(t, 8*time.Minute)
	client := newClient(t, eng.Endpoint(), eng.Key)
	// Two lines of the reading, with the reader's pause between them:
	// the first is the one AAC alone changes a word of.
	var pcm []int16
	tr := truth(t)
	var want string
	for _, id := range []string{"0870", "0880"} {
		pcm = append(append(pcm, loadPCM(t, librivoxPath(id))...), make([]int16, 8000)...)
		want += " " + tr[id]
	}
	dir := t.TempDir()
	wav := writeWAVFile(t, dir, "reading.wav", pcm)
	other := librivoxPath("0920") // a second track, to tell it from the first

	opts := api.ListenOptions{Model: "nova-3", Punctuate: true}
	transcribe := func(t *testing.T, path string) (string, sessions.FileAudio) {
		t.Helper()
		f := sessions.FileTranscription{Client: client}
		s := f.Session(path, opts)
		if err := s.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		res, err := s.Wait(nil)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		return res.Response.Transcript(), s.Audio()
	}
	ref, _ := transcribe(t, wav)
	refWER := testkit.WordErrorRate(want, ref)
	t.Logf("the reading as WAV: WER %.1f%%: %q", 100*refWER, ref)

	video := []string{"-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1"}
	tests := []struct {
		name   string
		args   []string
		lossy  bool // the codec alone may change a word: see above
		tracks int
	}{
		{"reading.m4a", []string{"-i", wav, "-c:a", "alac"}, false, 1},
		{"zoom.mp4", append(append([]string{"-i", wav}, video...), "-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "alac"), false, 1},
		{"reading.mov", []string{"-i", wav, "-c:a", "pcm_s16le"}, false, 1},
		{"two tracks.mkv", append(append([]string{"-i", wav, "-i", other}, video...),
			"-map", "2:v", "-map", "0:a", "-map", "1:a", "-c:v", "mpeg4", "-c:a", "flac"), false, 2},
		{"meet.webm", []string{"-i", wav, "-c:a", "libopus"}, true, 1},
		{"teams.mp4", append(append([]string{"-i", wav}, video...), "-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac"), true, 1},
	}
	oneWord := 1 / float64(len(strings.Fields(want)))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ffmpegtest.FFmpeg(t, dir, tt.name, tt.args...)
			got, about := transcribe(t, path)
			gotWER := testkit.WordErrorRate(want, got)
			wantText, wantWER := ref, refWER
			if tt.lossy {
				same := ffmpegtest.FFmpeg(t, dir, tt.name+".wav", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "16000")
				wantText, _ = transcribe(t, same)
				wantWER = testkit.WordErrorRate(want, wantText)
				if math.Abs(gotWER-refWER) > oneWord+1e-9 {
					t.Errorf("WER %.1f%%, more than a word from the reading's %.1f%%", 100*gotWER, 100*refWER)
				}
			}
			t.Logf("WER %.1f%%: the reading's WAV %.1f%%, the WAV it is compared with %.1f%%", 100*gotWER, 100*refWER, 100*wantWER)
			if got != wantText || gotWER != wantWER {
				t.Errorf("transcript %q (WER %.1f%%), the WAV's %q (WER %.1f%%)", got, 100*gotWER, wantText, 100*wantWER)
			}
			if about.Kind == "" || about.Tracks != tt.tracks {
				t.Errorf("Audio() = %+v, want a decoded file of %d audio tracks", about, tt.tracks)
			}
			if note := about.TrackNote(); (tt.tracks > 1) != strings.Contains(note, "the first of its 2 audio tracks") {
				t.Errorf("TrackNote() = %q", note)
			}
		})
	}
}

// TestFileMediaKeptAndRerun transcribes an MP4 with video on the local
// engine into history: the sound it sent is kept (16 kHz Ogg Opus, as
// live sessions keep theirs), and the entry runs again from the kept
// audio; an entry without kept audio runs again from the file itself.
func TestFileMediaKeptAndRerun(t *testing.T) {
	t.Parallel()
	ffmpegtest.NeedFFmpeg(t)
	eng := localEngine(t)
	ctx := testContext(t, 5*time.Minute)
	db := openDB(t)
	dir := t.TempDir()
	wav := writeWAVFile(t, dir, "line.wav", loadPCM(t, librivoxPath("0920")))
	path := ffmpegtest.FFmpeg(t, dir, "meeting.mp4", "-i", wav, "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1",
		"-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac")

	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Local: func() (api.Endpoint, api.Secret, error) { return eng.Endpoint(), eng.Key, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	s := store.DefaultSettings()
	s.Backend, s.KeepAudio = store.BackendLocal, true
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	var log progressLog
	res, err := ws.TranscribeFile(ctx, path, log.report)
	if err != nil {
		t.Fatal(err)
	}
	prog := log.all()
	for i, p := range prog {
		if i > 0 && (p.Phase < prog[i-1].Phase || p.Decoded < prog[i-1].Decoded) {
			t.Errorf("report %d %+v goes back from %+v", i, p, prog[i-1])
		}
	}
	if len(prog) < 2 || prog[0].Phase != sessions.PhaseDecoding || prog[len(prog)-1].Phase != sessions.PhaseDone {
		t.Errorf("progress %+v, want decoding, then done", prog)
	}
	if last := prog[len(prog)-1]; last.Fraction() != 1 || last.Decoded < 5*time.Second {
		t.Errorf("last report %+v, want all of the file's 6 s decoded", last)
	}
	first := res.Response.Transcript()
	if o := testkit.WordOverlap(first, truth(t)["0920"]); o < 0.6 {
		t.Errorf("transcript %q", first)
	}
	kept, err := db.Audio(ctx, res.SessionID)
	if err != nil {
		t.Fatalf("the sound of the MP4 was not kept: %v", err)
	}
	if kept.ContentType != sessions.KeptContentType || len(kept.Data) == 0 {
		t.Errorf("kept %s, %d bytes", kept.ContentType, len(kept.Data))
	}

	again, err := ws.Rerun(ctx, res.SessionID, sessions.RerunOptions{}, nil)
	if err != nil {
		t.Fatalf("re-run from the kept audio: %v", err)
	}
	if o := testkit.WordOverlap(again.New.Transcript, first); o < 0.8 {
		t.Errorf("the re-run from the kept audio heard %q, the file %q", again.New.Transcript, first)
	}
	// Without kept audio, the re-run reads the MP4 itself.
	s.KeepAudio = false
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	plain, err := ws.TranscribeFile(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Audio(ctx, plain.SessionID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("audio kept against the settings: %v", err)
	}
	var rlog progressLog
	fromFile, err := ws.Rerun(ctx, plain.SessionID, sessions.RerunOptions{}, rlog.report)
	if err != nil {
		t.Fatalf("re-run from the file: %v", err)
	}
	if fromFile.New.Transcript != first {
		t.Errorf("the re-run from the file heard %q, the first run %q", fromFile.New.Transcript, first)
	}
	if p := rlog.all(); len(p) == 0 || p[0].Phase != sessions.PhaseDecoding {
		t.Errorf("re-run progress %+v, want the file decoded", p)
	}
}

// TestFileSessionEmptyOrSilent: a file of 0 bytes, and a video without
// sound, fail Start with what is wrong with the file, before anything is
// sent or saved. The empty file was sent, and the service's refusal read
// "The service would refuse these options: Audio: the audio is empty."
func TestFileSessionEmptyOrSilent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.wav")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want error
	}{{empty, sessions.ErrEmptyFile}}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		silent := ffmpegtest.FFmpeg(t, dir, "screen.mp4", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1", "-c:v", "mpeg4")
		cases = append(cases, struct {
			path string
			want error
		}{silent, audio.ErrNoAudioTrack})
	}
	for _, c := range cases {
		h := &responseHistory{}
		tr := &fakeTranscriber{}
		f := sessions.FileTranscription{Client: tr, History: h}
		s := f.Session(c.path, batchOptions())
		err := s.Start(t.Context())
		var fe *sessions.FileError
		if !errors.Is(err, c.want) || !errors.As(err, &fe) || fe.Name != filepath.Base(c.path) {
			t.Errorf("%s: Start = %v, want a FileError of %v", filepath.Base(c.path), err, c.want)
		}
		if err == nil {
			allEvents(t, s.Events())
		}
		<-s.Done()
		if list := h.sessions(); len(list) != 0 {
			t.Errorf("%s: saved %+v", filepath.Base(c.path), list)
		}
	}
}
