package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asticode/go-astisub"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/leaktest"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// clip is a LibriVox recording shipped by pocketsphinx-testdata, and
// clipWords what the local engine hears in it (the reader says "he was not
// an ill-disposed young man").
const (
	clip      = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"
	clipWords = "he was not an illness those young man"
)

// local is the engine the tests' workspaces start on first use, as the
// app's does; TestMain closes it.
var local struct {
	once sync.Once
	l    *engine.Local
	err  error
}

func startLocal() (api.Endpoint, api.Secret, error) {
	local.once.Do(func() {
		local.l, local.err = engine.StartLocal(engine.Config{MaxConnections: 16})
	})
	if local.err != nil {
		return api.Endpoint{}, "", local.err
	}
	return local.l.Endpoint(), local.l.Key, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if local.l != nil {
		if err := local.l.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the engine:", err)
			code = 1
		}
	}
	// Every goroutine a command started (sessions, progress, stoppers)
	// must have ended with it.
	if leaks := leaktest.Report(); leaks != "" {
		fmt.Fprintln(os.Stderr, leaks)
		code = 1
	}
	os.Exit(code)
}

// needClip skips a test on a machine without pocketsphinx-testdata.
func needClip(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(clip); err != nil {
		t.Skipf("test recording missing (scripts/setup installs pocketsphinx-testdata): %v", err)
	}
}

// fakeMics are microphones that replay the clip at real time.
type fakeMics struct {
	pcm  *audio.Buffer
	loop bool

	mu     sync.Mutex
	opened []string // the IDs asked for
}

func newFakeMics(t *testing.T, loop bool) *fakeMics {
	t.Helper()
	f, err := os.Open(clip)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := audio.Decode(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeMics{pcm: b, loop: loop}
}

func (m *fakeMics) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{
		{ID: "fake:0", Name: "Replay microphone", Default: true},
		{ID: "fake:1", Name: "Second replay"},
	}, nil
}

func (m *fakeMics) Open(_ context.Context, id string) (audio.Source, error) {
	m.mu.Lock()
	m.opened = append(m.opened, id)
	m.mu.Unlock()
	if id == "fake:sys" {
		// The computer's sound: silence, as in a meeting where no one else
		// speaks.
		return audio.NewSilence(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: m.pcm.SampleRate, Channels: 1}, audio.ReplayConfig{Paced: true})
	}
	if id != "" && id != "fake:0" && id != "fake:1" {
		return nil, device.ErrNoDevice
	}
	return audio.NewReplayBuffer(m.pcm, audio.ReplayConfig{Paced: true, Loop: m.loop})
}

// SystemDevices lists one source of the computer's sound.
func (m *fakeMics) SystemDevices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: "fake:sys", Name: "Sound from Replay speakers", Default: true}}, nil
}

func (m *fakeMics) openedIDs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.opened...)
}

// harness is a workspace built as main builds the app's, over a fresh
// history, no key (so the local engine) and fake microphones.
type harness struct {
	db     *store.DB
	ws     *Workspace
	mics   *fakeMics
	opens  atomic.Int32 // OpenWorkspace calls
	closes atomic.Int32 // Close calls
	stdout testkit.Buffer
	stderr testkit.Buffer
	tty    bool
	stdin  io.Reader // nil: an empty input
}

// newHarness builds the harness; tune, when given, changes the
// workspace's configuration first.
func newHarness(t *testing.T, mics *fakeMics, tune ...func(*sessions.WorkspaceConfig)) *harness {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := &harness{db: db, mics: mics}
	cfg := sessions.WorkspaceConfig{
		History: db,
		Keys:    sessions.NewKeys(&store.Memory{}, func(string) string { return "" }),
		Local:   startLocal,
	}
	if mics != nil {
		cfg.Microphones = mics
	}
	for _, f := range tune {
		f(&cfg)
	}
	sw, err := sessions.NewWorkspace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The database outlives the run so the test can read what was saved.
	h.ws = &Workspace{Workspace: sw, History: db, Close: func() error { h.closes.Add(1); return nil }}
	return h
}

func (h *harness) stdinOrEmpty() io.Reader {
	if h.stdin == nil {
		return strings.NewReader("")
	}
	return h.stdin
}

func (h *harness) env() Env {
	return Env{
		Stdout: &h.stdout,
		Stderr: &h.stderr,
		Stdin:  h.stdinOrEmpty(),
		Getenv: func(k string) string {
			if k == "COLUMNS" {
				return "300" // so that status lines are not shortened
			}
			return ""
		},
		OpenWorkspace: func(context.Context) (*Workspace, error) {
			h.opens.Add(1)
			return h.ws, nil
		},
		IsTerminal: func(io.Writer) bool { return h.tty },
	}
}

// run runs earshot with args and checks that the workspace, when opened,
// was closed.
func (h *harness) run(t *testing.T, ctx context.Context, args ...string) int {
	t.Helper()
	code := Run(ctx, h.env(), args)
	if o, c := h.opens.Load(), h.closes.Load(); o != c {
		t.Errorf("the workspace was opened %d times and closed %d times", o, c)
	}
	return code
}

// normalize keeps the lower-case letters of s, one space between words.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'')
	}), " ")
}

// subtitleText is the text of every cue, in order.
func subtitleText(subs *astisub.Subtitles) string {
	var parts []string
	for _, it := range subs.Items {
		for _, l := range it.Lines {
			for _, li := range l.Items {
				parts = append(parts, li.Text)
			}
		}
	}
	return strings.Join(parts, " ")
}

// transcriptOf parses out in format f and returns its words; the test
// fails if out does not parse.
func transcriptOf(t *testing.T, f sessions.ExportFormat, out []byte) string {
	t.Helper()
	switch f {
	case sessions.ExportSRT, sessions.ExportVTT:
		read := astisub.ReadFromSRT
		if f == sessions.ExportVTT {
			read = astisub.ReadFromWebVTT
		}
		subs, err := read(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the %s output does not parse: %v\n%s", f, err, out)
		}
		if len(subs.Items) == 0 {
			t.Fatalf("the %s output has no cues:\n%s", f, out)
		}
		for i, it := range subs.Items {
			if it.EndAt <= it.StartAt || i > 0 && it.StartAt < subs.Items[i-1].StartAt {
				t.Errorf("cue %d runs %v to %v: want increasing times", i, it.StartAt, it.EndAt)
			}
		}
		return normalize(subtitleText(subs))
	case sessions.ExportJSON:
		var resp api.ListenResponse
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&resp); err != nil {
			t.Fatalf("the JSON output is not a listen response: %v\n%s", err, out)
		}
		if dec.More() {
			t.Errorf("the JSON output goes on after the response")
		}
		return normalize(resp.Transcript())
	}
	return normalize(string(out))
}

func TestTranscribeFileFormats(t *testing.T) {
	needClip(t)
	for _, f := range sessions.ExportFormats {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), "transcribe", clip, "--format", string(f)); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if got := transcriptOf(t, f, []byte(h.stdout.String())); !strings.Contains(got, clipWords) {
				t.Errorf("transcript %q does not contain %q", got, clipWords)
			}
			stderr := h.stderr.String()
			if !strings.Contains(stderr, "Transcribed "+filepath.Base(clip)) || !strings.Contains(stderr, "Local engine") ||
				strings.Contains(stderr, "\r") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one summary line and no progress (not a terminal)", stderr)
			}
			sess, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
			if err != nil {
				t.Fatal(err)
			}
			if len(sess) != 1 || sess[0].Status != store.StatusDone || sess[0].Title != filepath.Base(clip) || sess[0].Backend != "Local engine" {
				t.Fatalf("history holds %+v; want the run, done", sess)
			}
			// The audio is kept with it (the setting is on by default).
			if a, err := h.db.Audio(t.Context(), sess[0].ID); err != nil || a.Encoding != "opus" || len(a.Data) == 0 {
				t.Errorf("kept audio %q, %d bytes, %v; want the file's audio as Opus", a.Encoding, len(a.Data), err)
			}
			// What history keeps exports the same words.
			var saved bytes.Buffer
			if err := h.ws.Export(t.Context(), sess[0].ID, f, &saved); err != nil {
				t.Fatal(err)
			}
			if got := transcriptOf(t, f, saved.Bytes()); !strings.Contains(got, clipWords) {
				t.Errorf("the saved transcript %q does not contain %q", got, clipWords)
			}
		})
	}
}

func TestTranscribeToFile(t *testing.T) {
	needClip(t)
	tests := []struct {
		name, out string
		args      []string
		want      sessions.ExportFormat
	}{
		{"format from the extension", "talk.vtt", nil, sessions.ExportVTT},
		{"format flag wins", "talk.vtt", []string{"--format", "srt"}, sessions.ExportSRT},
		{"unknown extension gives text", "talk.out", nil, sessions.ExportText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			out := filepath.Join(t.TempDir(), tt.out)
			// Flags after the file, as people type them.
			args := append([]string{"transcribe", clip, "-o", out}, tt.args...)
			if code := h.run(t, t.Context(), args...); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if h.stdout.String() != "" {
				t.Errorf("stdout %q: want nothing with -o", h.stdout.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // the subtitle library marks SRT as UTF-8
			if tt.want == sessions.ExportVTT && !bytes.HasPrefix(b, []byte("WEBVTT")) ||
				tt.want == sessions.ExportSRT && !bytes.HasPrefix(b, []byte("1\n")) {
				t.Errorf("%s holds %q; want %s", tt.out, b, tt.want)
			}
			if got := transcriptOf(t, tt.want, b); !strings.Contains(got, clipWords) {
				t.Errorf("transcript %q does not contain %q", got, clipWords)
			}
		})
	}
}

// TestTranscribeOverridesForThisRun checks that flags change the request
// of the run, and not the saved settings.
func TestTranscribeOverridesForThisRun(t *testing.T) {
	needClip(t)
	h := newHarness(t, nil)
	before, err := h.ws.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if before.Diarize || !before.SmartFormat {
		t.Fatalf("default settings %+v: the test expects diarize off and smart format on", before)
	}
	if code := h.run(t, t.Context(), "transcribe", "--diarize", "--smart-format=false", "--format", "json", clip); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	var resp api.ListenResponse
	if err := json.Unmarshal([]byte(h.stdout.String()), &resp); err != nil {
		t.Fatal(err)
	}
	words := resp.Results.Channels[0].Alternatives[0].Words
	if len(words) == 0 {
		t.Fatal("no words")
	}
	for _, w := range words {
		if w.Speaker == nil {
			t.Fatalf("word %+v has no speaker: --diarize was not sent", w)
		}
	}
	after, err := h.ws.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("settings changed from %+v to %+v; flags are for one run", before, after)
	}
	sess, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
	if err != nil || len(sess) != 1 {
		t.Fatalf("sessions %+v, %v", sess, err)
	}
	var q map[string][]string
	if err := json.Unmarshal([]byte(sess[0].Options), &q); err != nil {
		t.Fatal(err)
	}
	if q["diarize_model"] == nil || q["smart_format"] != nil {
		t.Errorf("saved options %v: want diarize_model and no smart_format", q)
	}

	// The same file without flags gets the saved settings again.
	h.stdout = testkit.Buffer{}
	if code := h.run(t, t.Context(), "transcribe", "--format", "json", clip); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	resp = api.ListenResponse{}
	if err := json.Unmarshal([]byte(h.stdout.String()), &resp); err != nil {
		t.Fatal(err)
	}
	if w := resp.Results.Channels[0].Alternatives[0].Words; len(w) == 0 || w[0].Speaker != nil {
		t.Errorf("words %+v: want no speakers when the settings do not diarize", w)
	}
}

func TestTranscribeUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "which file?"},
		{"two files", []string{"a.wav", "b.wav"}, "one file at a time"},
		{"bad format", []string{"a.wav", "--format", "doc"}, `unknown export format "doc"`},
		{"live with a file", []string{"--live", "a.wav"}, "it takes no file"},
		{"device without live", []string{"--device", "x", "a.wav"}, "--device needs --live"},
		{"device and replay", []string{"--live", "--device", "x", "--replay", "a.wav"}, "give one"},
		{"unknown source", []string{"--live", "--source", "speakers"}, "--source is mic, system or both"},
		{"source without live", []string{"--source", "both", "a.wav"}, "--source needs --live"},
		{"list devices with a file", []string{"--list-devices", "a.wav"}, "--list-devices takes no file"},
		{"unknown flag", []string{"--nope", "a.wav"}, "flag provided but not defined: -nope"},
		{"empty model", []string{"--model=", "a.wav"}, "need a name"},
		{"help", []string{"-h"}, "for testing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			code := h.run(t, t.Context(), append([]string{"transcribe"}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit status %d, want 2 (stderr %q)", code, h.stderr.String())
			}
			if !strings.Contains(h.stderr.String(), tt.want) {
				t.Errorf("stderr %q does not contain %q", h.stderr.String(), tt.want)
			}
			if h.stdout.String() != "" {
				t.Errorf("stdout %q: want nothing", h.stdout.String())
			}
			if h.opens.Load() != 0 {
				t.Error("a usage mistake opened the workspace")
			}
		})
	}

	t.Run("bad language", func(t *testing.T) {
		needClip(t)
		h := newHarness(t, nil)
		if code := h.run(t, t.Context(), "transcribe", "--language", "en us", clip); code != 2 {
			t.Errorf("exit status %d, want 2", code)
		}
		if !strings.Contains(h.stderr.String(), `language "en us" is not a name`) {
			t.Errorf("stderr %q", h.stderr.String())
		}
	})
}

func TestTranscribeFailures(t *testing.T) {
	dir := t.TempDir()
	notAudio := filepath.Join(dir, "notes.wav")
	if err := os.WriteFile(notAudio, []byte(strings.Repeat("not a recording\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.wav")
	empty := filepath.Join(dir, "empty.wav")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		want   string
		opened bool // the workspace was needed to find out
		status string
	}{
		{"missing file", []string{missing}, "earshot transcribe: " + missing + ": no such file\n", false, ""},
		{"missing replay", []string{"--replay", missing}, missing + ": no such file", false, ""},
		{"folder", []string{dir}, dir + " is a folder, not an audio file", false, ""},
		{"not audio", []string{notAudio}, "the service refused the request: Bad Request: failed to process audio: undecodable audio", true, store.StatusFailed},
		{"replay not audio", []string{"--replay", notAudio}, "the audio could not be decoded: is it a wav, mp3, flac, ogg, opus, m4a, mp4, webm, mkv or mov file? (notes.wav: ", true, ""},
		// The file is empty, not the options wrong; nothing is saved.
		{"empty file", []string{empty}, "earshot transcribe: empty.wav: the file is empty (0 bytes): there is no audio in it\n", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			out := filepath.Join(t.TempDir(), "kept.txt")
			if err := os.WriteFile(out, []byte("earlier transcript"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"transcribe", "-o", out}, tt.args...)
			if code := h.run(t, t.Context(), args...); code != 1 {
				t.Errorf("exit status %d, want 1 (stderr %q)", code, h.stderr.String())
			}
			if !strings.Contains(h.stderr.String(), tt.want) {
				t.Errorf("stderr %q does not contain %q", h.stderr.String(), tt.want)
			}
			if (h.opens.Load() != 0) != tt.opened {
				t.Errorf("workspace opened %d times; want opened %v", h.opens.Load(), tt.opened)
			}
			if b, _ := os.ReadFile(out); string(b) != "earlier transcript" {
				t.Errorf("the -o file now holds %q: a failed run must leave it alone", b)
			}
			sess, err := h.db.Sessions(t.Context(), store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.status == "" && len(sess) != 0 || tt.status != "" && (len(sess) != 1 || sess[0].Status != tt.status) {
				t.Errorf("history %+v; want status %q", sess, tt.status)
			}
		})
	}
}

// TestTranscribeMedia transcribes the sound of recordings people have,
// made by ffmpeg from the clip: an M4A, and a Matroska video with two
// audio tracks, whose first is transcribed and named. A video without
// sound says so, and nothing is saved.
func TestTranscribeMedia(t *testing.T) {
	needClip(t)
	ffmpegtest.NeedFFmpeg(t)
	t.Parallel()
	dir := t.TempDir()
	ffmpeg := func(name string, args ...string) string { return ffmpegtest.FFmpeg(t, dir, name, args...) }
	video := []string{"-f", "lavfi", "-i", "color=c=black:s=64x48:r=5:d=1"}
	other := "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0930.wav"
	tests := []struct {
		name, file, note string
	}{
		{"m4a", ffmpeg("clip.m4a", "-i", clip, "-c:a", "alac"), ""},
		{"mkv of two tracks", ffmpeg("meeting.mkv", append(append([]string{"-i", clip, "-i", other}, video...),
			"-map", "2:v", "-map", "0:a", "-map", "1:a", "-c:v", "mpeg4", "-c:a", "flac")...),
			"Transcribing meeting.mkv: the first of its 2 audio tracks (flac).\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), "transcribe", tt.file); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if got := normalize(h.stdout.String()); got != clipWords {
				t.Errorf("transcript %q, want %q", got, clipWords)
			}
			if stderr := h.stderr.String(); !strings.Contains(stderr, tt.note) || !strings.Contains(stderr, "Transcribed "+filepath.Base(tt.file)) {
				t.Errorf("stderr %q, want %q and the summary", stderr, tt.note)
			}
		})
	}
	silent := ffmpeg("screen.mp4", append(video, "-c:v", "mpeg4")...)
	h := newHarness(t, nil)
	if code := h.run(t, t.Context(), "transcribe", silent); code != 1 {
		t.Errorf("a video without sound: exit status %d, want 1", code)
	}
	if stderr := h.stderr.String(); !strings.Contains(stderr, "screen.mp4: undecodable audio: the file has no audio track: there is no sound in it to transcribe") {
		t.Errorf("stderr %q", stderr)
	}
	if sess, err := h.db.Sessions(t.Context(), store.Filter{}); err != nil || len(sess) != 0 {
		t.Errorf("history %+v, %v; want nothing saved", sess, err)
	}
}

func TestTranscribeCancelled(t *testing.T) {
	needClip(t)
	h := newHarness(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if code := h.run(t, ctx, "transcribe", clip); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !strings.Contains(h.stderr.String(), "earshot transcribe: cancelled") {
		t.Errorf("stderr %q", h.stderr.String())
	}
}

func TestTranscribeListDevices(t *testing.T) {
	h := newHarness(t, &fakeMics{})
	if code := h.run(t, t.Context(), "transcribe", "--list-devices"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(h.stdout.String()), "\n")
	if len(lines) < 3 || strings.Fields(lines[0])[0] != "ID" ||
		!strings.HasPrefix(lines[1], "fake:0") || !strings.HasSuffix(lines[1], "Replay microphone (default)") ||
		!strings.HasPrefix(lines[2], "fake:1") || !strings.HasSuffix(lines[2], "Second replay") {
		t.Errorf("devices listed as\n%s", h.stdout.String())
	}

	t.Run("without microphones", func(t *testing.T) {
		h := newHarness(t, nil)
		if code := h.run(t, t.Context(), "transcribe", "--list-devices"); code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		if !strings.Contains(h.stderr.String(), "cannot capture audio") {
			t.Errorf("stderr %q", h.stderr.String())
		}
	})
}

// captionsSession returns the one captions session in history and its
// segments.
func captionsSession(t *testing.T, db *store.DB) (store.Session, []store.Segment) {
	t.Helper()
	sess, err := db.Sessions(t.Context(), store.Filter{Kind: store.KindCaptions})
	if err != nil {
		t.Fatal(err)
	}
	if len(sess) != 1 {
		t.Fatalf("history holds %d captions sessions, want 1", len(sess))
	}
	segs, err := db.Segments(t.Context(), sess[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return sess[0], segs
}

// TestTranscribeLive captures the fake microphone until the recording
// ends, which ends the session as a closed microphone would.
func TestTranscribeLive(t *testing.T) {
	needClip(t)
	t.Parallel()
	h := newHarness(t, newFakeMics(t, false))
	if code := h.run(t, t.Context(), "transcribe", "--live", "--device", "fake:1"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if got := h.mics.openedIDs(); len(got) != 1 || got[0] != "fake:1" {
		t.Errorf("microphones opened: %q, want fake:1", got)
	}
	out := h.stdout.String()
	if got := normalize(out); !strings.Contains(got, clipWords) {
		t.Errorf("stdout %q does not contain %q", out, clipWords)
	}
	sess, segs := captionsSession(t, h.db)
	if sess.Status != store.StatusDone || sess.Source != "Second replay" || sess.Backend != "Local engine" {
		t.Errorf("session %+v", sess)
	}
	// One line per final, each saved to history.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(segs) == 0 || len(lines) != len(segs) {
		t.Fatalf("%d lines printed, %d captions saved; want one line per caption", len(lines), len(segs))
	}
	for i, s := range segs {
		if lines[i] != s.Text {
			t.Errorf("line %d %q, saved %q", i, lines[i], s.Text)
		}
	}
	if !strings.Contains(h.stderr.String(), fmt.Sprintf("%d caption", len(segs))) || strings.Contains(h.stderr.String(), "\r") {
		t.Errorf("stderr %q: want the summary and no interim lines", h.stderr.String())
	}
}

// TestTranscribeLiveStops is Ctrl+C: the context main cancels on SIGINT.
// The session stops cleanly, keeps the last words and is saved.
func TestTranscribeLiveStops(t *testing.T) {
	needClip(t)
	t.Parallel()
	h := newHarness(t, newFakeMics(t, true))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, h.env(), []string{"transcribe", "--live", "--diarize"}) }()

	// Wait for the first caption; the recording loops, so only Ctrl+C ends it.
	deadline := time.After(30 * time.Second)
	for !strings.Contains(h.stdout.String(), "\n") {
		select {
		case code := <-done:
			t.Fatalf("exit status %d before Ctrl+C; stderr %q", code, h.stderr.String())
		case <-deadline:
			cancel()
			<-done
			t.Fatalf("no caption within 30 s; stderr %q", h.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	// Stopping waits for the last words while the engine makes progress,
	// up to the session's own bound of two minutes (sessions.Captions);
	// on a loaded machine that is many seconds. Real time, as the engine
	// decodes in real time; the margin is the session's bound and more.
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit status %d after Ctrl+C, want 0; stderr %q", code, h.stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("transcribe --live did not stop after Ctrl+C")
	}
	if h.closes.Load() != 1 {
		t.Errorf("workspace closed %d times, want 1", h.closes.Load())
	}
	sess, segs := captionsSession(t, h.db)
	if sess.Status != store.StatusDone || sess.Ended.IsZero() {
		t.Errorf("session %+v: want done, with its end", sess)
	}
	lines := strings.Split(strings.TrimSuffix(h.stdout.String(), "\n"), "\n")
	if len(lines) != len(segs) {
		t.Errorf("%d lines printed, %d captions saved", len(lines), len(segs))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "Speaker ") {
			t.Errorf("line %q has no speaker label though --diarize was given", l)
		}
	}
	if !strings.Contains(normalize(h.stdout.String()), clipWords) {
		t.Errorf("stdout %q does not contain %q", h.stdout.String(), clipWords)
	}
}

// TestTranscribeLiveReplay replays a file instead of the microphone, and
// writes subtitles whole at the end, text line by line.
func TestTranscribeLiveReplay(t *testing.T) {
	needClip(t)
	t.Parallel()
	tests := []struct {
		format sessions.ExportFormat
		toFile bool
	}{
		{sessions.ExportSRT, false},
		{sessions.ExportJSON, false},
		{sessions.ExportText, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newFakeMics(t, false))
			args := []string{"transcribe", "--replay", clip, "--format", string(tt.format)}
			out := filepath.Join(t.TempDir(), "live"+tt.format.Extension())
			if tt.toFile {
				args = append(args, "-o", out)
			}
			if code := h.run(t, t.Context(), args...); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if got := h.mics.openedIDs(); len(got) != 0 {
				t.Errorf("microphones %q were opened for a replay", got)
			}
			got := []byte(h.stdout.String())
			if tt.toFile {
				if len(got) != 0 {
					t.Errorf("stdout %q: want nothing with -o", got)
				}
				var err error
				if got, err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			if words := transcriptOf(t, tt.format, got); !strings.Contains(words, clipWords) {
				t.Errorf("transcript %q does not contain %q", words, clipWords)
			}
			sess, _ := captionsSession(t, h.db)
			if sess.Source != "Replay of "+filepath.Base(clip) {
				t.Errorf("session source %q", sess.Source)
			}
		})
	}
}

// TestTranscribeTerminal checks what a terminal sees on stderr: progress
// and interims on a line rewritten in place, never on stdout.
func TestTranscribeTerminal(t *testing.T) {
	needClip(t)
	t.Parallel()
	t.Run("live", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.tty = true
		if code := h.run(t, t.Context(), "transcribe", "--replay", clip); code != 0 {
			t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
		}
		stderr := h.stderr.String()
		if !strings.Contains(stderr, "\r\x1b[KListening to Replay of "+filepath.Base(clip)+" with Local engine") {
			t.Errorf("stderr %q: want the listening line", stderr)
		}
		// Interim text came before the finals (shown on stderr only).
		var interims int
		for _, part := range strings.Split(stderr, "\r\x1b[K") {
			if w := normalize(part); w != "" && strings.HasPrefix(clipWords, w) {
				interims++
			}
		}
		if interims == 0 {
			t.Errorf("stderr %q shows no interim text", stderr)
		}
		if out := h.stdout.String(); strings.ContainsAny(out, "\r\x1b") || !strings.Contains(normalize(out), clipWords) {
			t.Errorf("stdout %q: want the finals alone", out)
		}
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.tty = true
		if code := h.run(t, t.Context(), "transcribe", clip); code != 0 {
			t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
		}
		stderr := h.stderr.String()
		if !strings.Contains(stderr, "\r\x1b[KSending "+filepath.Base(clip)+" to Local engine: 0% of 93 kB") ||
			!strings.Contains(stderr, "\r\x1b[KTranscribed "+filepath.Base(clip)) {
			t.Errorf("stderr %q: want progress, cleared before the summary", stderr)
		}
		if out := h.stdout.String(); strings.ContainsAny(out, "\r\x1b") {
			t.Errorf("stdout %q carries terminal control", out)
		}
	})
}

func TestPlainError(t *testing.T) {
	tests := []struct {
		err  error
		want string
		is   error
	}{
		{fmt.Errorf("read the settings: %w", context.Canceled), "cancelled", context.Canceled},
		{sessions.ErrNoKey, sessions.ErrNoKey.Error(), sessions.ErrNoKey},
		{fmt.Errorf("transcribe: %w", &api.Error{Status: 401, Code: api.CodeInvalidAuth, Message: "Invalid credentials."}),
			"the service did not accept the API key: Invalid credentials. (HTTP 401)", api.ErrUnauthorized},
		{&api.Error{Status: 429}, "the service is busy; try again in a moment (HTTP 429)", api.ErrRateLimited},
		{&api.Error{Code: api.CodeUndecodable, CloseCode: 1008, Message: "corrupt"}, "the audio could not be decoded", api.ErrUndecodableAudio},
		{&api.Error{Status: 400, Code: "Bad Request", Message: "No such model"}, "the service refused the request: No such model (HTTP 400)", nil},
		{&api.Error{Status: 503}, "the service ran into a problem of its own (HTTP 503)", nil},
		{errors.New("something else"), "something else", nil},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := plainError(tt.err)
			if !strings.HasPrefix(got.Error(), tt.want) {
				t.Errorf("plainError(%v) = %q, want it to start with %q", tt.err, got, tt.want)
			}
			if tt.is != nil && !errors.Is(got, tt.is) {
				t.Errorf("plainError(%v) no longer matches %v", tt.err, tt.is)
			}
		})
	}
}

func TestStatusLineWidth(t *testing.T) {
	var b bytes.Buffer
	env := Env{Getenv: func(k string) string {
		if k == "COLUMNS" {
			return "24"
		}
		return ""
	}, IsTerminal: func(io.Writer) bool { return true }}
	s := newStatusLine(env, &b)
	const text = "the quick brown fox jumps over the lazy dog"
	s.set(text)
	s.clear()
	s.clear() // nothing shown: nothing to clear
	// 23 characters: one column is kept free, so the line never wraps.
	want := "\r\x1b[K…" + text[len(text)-22:] + "\r\x1b[K"
	if got := b.String(); got != want {
		t.Errorf("status line wrote %q, want %q", got, want)
	}
}

// FuzzTranscribeArgs feeds command lines to transcribe's parsing, which
// must refuse what it cannot read without panicking.
func FuzzTranscribeArgs(f *testing.F) {
	for _, seed := range []string{
		"talk.wav", "talk.wav\x00--format\x00srt", "--live\x00--device\x00hw:1", "--replay=a.wav\x00-o\x00out.vtt",
		"--\x00-odd.wav", "--model\x00--\x00a.wav", "--list-devices", "--diarize=maybe", "-o\x00x.SRT\x00a.wav",
		"--language\x00en us\x00a.wav", "--format\x00.WebVTT\x00a", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args []string
		if line != "" {
			args = strings.Split(line, "\x00")
		}
		env := Env{Stdout: io.Discard, Stderr: io.Discard}
		fs, fl := newTranscribeFlags(env)
		if err := fl.parse(fs, args); err != nil {
			return
		}
		if err := fl.check(); err != nil {
			return
		}
		if len(fl.args) > 1 || fl.live && len(fl.args) > 0 || !fl.live && !fl.listDevices && len(fl.args) != 1 {
			t.Fatalf("check accepted %q: %d files, live %v, list %v", args, len(fl.args), fl.live, fl.listDevices)
		}
		if ef, err := fl.exportFormat(); err == nil && !slices.Contains(sessions.ExportFormats, ef) {
			t.Fatalf("format %q from %q", ef, args)
		}
		_, _ = fl.settings(store.DefaultSettings())
	})
}

// TestTranscribeLiveBothSides: --source both hears the microphone and the
// computer's sound as two channels; each line says whose it is.
func TestTranscribeLiveBothSides(t *testing.T) {
	needClip(t)
	t.Parallel()
	h := newHarness(t, newFakeMics(t, false))
	if code := h.run(t, t.Context(), "transcribe", "--live", "--source", "both", "--device", "fake:1"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if got := h.mics.openedIDs(); len(got) != 2 || got[0] != "fake:1" || got[1] != "fake:sys" {
		t.Errorf("sources opened: %q, want the microphone fake:1 and the computer's sound", got)
	}
	out := strings.TrimSuffix(h.stdout.String(), "\n")
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "You: ") {
			t.Errorf("line %q: the microphone's words are yours", line)
		}
	}
	// The microphone's channel passes the echo canceller (here with
	// nothing to cancel), whose noise suppression may change a word.
	got := strings.Fields(normalize(strings.ReplaceAll(out, "You: ", "")))
	found := 0
	for _, w := range strings.Fields(clipWords) {
		if slices.Contains(got, w) {
			found++
		}
	}
	if want := len(strings.Fields(clipWords)); found < want*3/4 {
		t.Errorf("stdout %q has %d of the %d words of %q", out, found, want, clipWords)
	}
	sess, _ := captionsSession(t, h.db)
	if sess.Source != "Second replay and Sound from Replay speakers" {
		t.Errorf("session source %q", sess.Source)
	}
}

// TestListDevicesWithSystemSound: --list-devices lists the computer's
// sound after the microphones.
func TestListDevicesWithSystemSound(t *testing.T) {
	h := newHarness(t, newFakeMics(t, false))
	if code := h.run(t, t.Context(), "transcribe", "--list-devices"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	out := h.stdout.String()
	if !strings.Contains(out, "ID (--source system)") || !strings.Contains(strings.Join(strings.Fields(out), " "), "fake:sys Sound from Replay speakers (the output in use)") {
		t.Errorf("stdout %q", out)
	}
}
