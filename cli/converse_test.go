package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/ffmpegtest"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

const librivox = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-"

// pausedConversation writes a WAV of LibriVox lines with 1.6 s of silence
// after each, and returns its path and the lines' words.
func pausedConversation(t *testing.T, ids ...string) (string, []string) {
	t.Helper()
	truth := map[string]string{
		"0880": "he was not an ill disposed young man",
		"0930": "he might even have been made amiable himself",
	}
	var all []int16
	var words []string
	for _, id := range ids {
		f, err := os.Open(librivox + id + ".wav")
		if os.IsNotExist(err) {
			t.Skipf("test speech missing (scripts/setup installs it): %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := audio.Decode(t.Context(), f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, audio.Float32ToInt16(nil, b.Samples)...)
		all = append(all, make([]int16, 16000*16/10)...)
		words = append(words, truth[id])
	}
	path := filepath.Join(t.TempDir(), "conversation.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := audio.EncodeWAV(f, all, 16000, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, words
}

// turnLine matches a line of converse's output.
var turnLine = regexp.MustCompile(`^Turn (\d+)  (\d+:\d\d\.\d\d)-(\d+:\d\d\.\d\d)  (\S+)\s+confidence (\d\.\d\d)  latency (\d+ ms|-)\s+(.*)$`)

// TestConverseFile: on a recording of two lines with a pause after each,
// converse prints two turns, each ended by the model at the pause, with
// its confidence, latency and words, and saves the conversation. The
// same recording as an M4A, of the kind meeting apps write, gives the
// same (it was refused: "MP4/M4A audio is not supported").
func TestConverseFile(t *testing.T) {
	t.Parallel()
	wav, truth := pausedConversation(t, "0880", "0930")
	files := []string{wav}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		files = append(files, ffmpegtest.FFmpeg(t, filepath.Dir(wav), "conversation.m4a", "-i", wav, "-c:a", "alac"))
	}
	for _, path := range files {
		t.Run(filepath.Ext(path), func(t *testing.T) {
			h := newHarness(t, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if code := h.run(t, ctx, "converse", path, "--speed", "4"); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			t.Logf("converse printed:\n%s", h.stdout.String())
			lines := strings.Split(strings.TrimSpace(h.stdout.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("printed %q, want two turns", h.stdout.String())
			}
			for i, l := range lines {
				m := turnLine.FindStringSubmatch(l)
				if m == nil {
					t.Errorf("line %q is not a turn", l)
					continue
				}
				if m[1] != []string{"1", "2"}[i] || m[4] != "model" || m[6] == "-" {
					t.Errorf("line %q: want turn %d ended by the model with its latency", l, i+1)
				}
				if ov := testkit.WordOverlap(truth[i], m[7]); ov < 0.5 {
					t.Errorf("turn %d reads %q, %.0f%% of %q", i+1, m[7], ov*100, truth[i])
				}
			}
			if !strings.Contains(h.stderr.String(), "2 turns ended; saved to history.") {
				t.Errorf("stderr %q", h.stderr.String())
			}
			list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindConversation})
			if err != nil || len(list) != 1 || list[0].Source != filepath.Base(path) || list[0].Status != store.StatusDone {
				t.Errorf("history %+v (%v), want the conversation", list, err)
			}
		})
	}
}

func TestConverseUsage(t *testing.T) {
	t.Parallel()
	wav := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(wav, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"converse"}, 2, "which file?"},
		{"file and live", []string{"converse", "--live", wav}, 2, "takes no file"},
		{"device without live", []string{"converse", wav, "--device", "x"}, 2, "--device needs --live"},
		{"two files", []string{"converse", wav, wav}, 2, "one file at a time"},
		{"bad speed", []string{"converse", wav, "--speed", "0"}, 2, "--speed must be above 0"},
		{"speed live", []string{"converse", "--live", "--speed", "2"}, 2, "the microphone runs at its own pace"},
		{"threshold out of range", []string{"converse", wav, "--eot-threshold", "0.2"}, 2, "eot_threshold 0.2 is out of range"},
		{"weighted keyterm", []string{"converse", wav, "--keyterm", "Earshot:3"}, 2, "carries a :weight"},
		{"missing file", []string{"converse", filepath.Join(t.TempDir(), "nope.wav")}, 1, "no such file"},
		{"help", []string{"converse", "-h"}, 2, "Usage: earshot converse FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), tt.args...); code != tt.code {
				t.Errorf("exit status %d, want %d; stderr %q", code, tt.code, h.stderr.String())
			}
			if !strings.Contains(h.stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", h.stderr.String(), tt.want)
			}
			if h.stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", h.stdout.String())
			}
		})
	}
}

func TestWriteTurn(t *testing.T) {
	tests := []struct {
		turn sessions.Turn
		want string
	}{
		{sessions.Turn{Index: 0, Start: 0.25, End: 3.2, Trigger: "model", EndOfTurnConfidence: 0.934, Latency: 421 * time.Millisecond, HasLatency: true, Transcript: "hello there"},
			"Turn 1  0:00.25-0:03.20  model    confidence 0.93  latency 421 ms   hello there\n"},
		{sessions.Turn{Index: 11, Start: 61.5, End: 125.004, Trigger: "vibes", Transcript: "kept"},
			"Turn 12  1:01.50-2:05.00  vibes    confidence 0.00  latency -        kept\n"},
		{sessions.Turn{Index: 2}, "Turn 3  0:00.00-0:00.00  -        confidence 0.00  latency -        \n"},
	}
	for _, tt := range tests {
		t.Run(tt.turn.Transcript, func(t *testing.T) {
			var b strings.Builder
			if err := writeTurn(&b, tt.turn); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got  %q\nwant %q", b.String(), tt.want)
			}
			if tt.turn.Transcript != "" && !turnLine.MatchString(strings.TrimSuffix(b.String(), "\n")) {
				t.Errorf("%q does not match the pattern of a turn line", b.String())
			}
		})
	}
}

// FuzzConverseArgs: no command line makes converse's flags panic.
func FuzzConverseArgs(f *testing.F) {
	for _, s := range []string{"a.wav", "--live", "--speed\x00NaN", "--eot-threshold\x001e400", "--keyterm\x00a\x00--keyterm\x00b", "--\x00-x", "--speed\x00-Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		env := Env{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}}
		fs, fl := newConverseFlags(env)
		if err := fl.parse(fs, strings.Split(s, "\x00")); err != nil {
			return
		}
		_ = fl.check()
	})
}
