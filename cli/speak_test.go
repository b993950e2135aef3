package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestSpeakToFile: speak writes the local engine's voice to a file in the
// format its extension names, which decodes back to speech; on a
// terminal it prints the time to first audio; the run is saved.
func TestSpeakToFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, voice string
		extra             []string
		container         audio.Container
	}{
		{"mp3 general voice", "hello.mp3", "aura-asteria-en", nil, audio.ContainerMP3},
		{"wav turn-based voice", "hello.wav", "flux-kit-en", []string{"--speed", "1.2", "--expressivity", "1"}, audio.ContainerWAV},
		{"flac by --encoding", "hello.out", "aura-2-thalia-en", []string{"--encoding", "flac"}, audio.ContainerFLAC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.tty = true
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			out := filepath.Join(t.TempDir(), tt.file)
			args := append([]string{"speak", "Hello from the voice playground.", "-o", out, "--model", tt.voice}, tt.extra...)
			if code := h.run(t, ctx, args...); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			if !regexp.MustCompile(`Time to first audio: \d+ ms`).MatchString(h.stderr.String()) {
				t.Errorf("stderr %q does not give the time to first audio", h.stderr.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			buf, err := audio.Decode(ctx, bytes.NewReader(b))
			if err != nil {
				t.Fatalf("the file does not decode: %v", err)
			}
			if buf.Container != tt.container || buf.Duration() < 500*time.Millisecond {
				t.Errorf("decoded %v of %v, want over 0.5 s of %v", buf.Duration(), buf.Container, tt.container)
			}
			// A file on disk has its real sizes, not a stream's "unknown".
			switch tt.container {
			case audio.ContainerWAV:
				if riff := binary.LittleEndian.Uint32(b[4:8]); int(riff) != len(b)-8 {
					t.Errorf("RIFF size %#x in a file of %d bytes", riff, len(b))
				}
			case audio.ContainerFLAC:
				if n := binary.BigEndian.Uint64(b[18:26]) & (1<<36 - 1); n != uint64(buf.Frames()) {
					t.Errorf("STREAMINFO says %d samples, the file holds %d", n, buf.Frames())
				}
			}
			level, _ := audio.Level(audio.Float32ToInt16(nil, buf.Samples))
			if level < -45 {
				t.Errorf("the audio is silent (%.1f dBFS)", level)
			}
			list, err := h.db.Sessions(ctx, store.Filter{Kind: store.KindSynthesis})
			if err != nil || len(list) != 1 || list[0].Model != tt.voice {
				t.Errorf("history %+v, %v; want one synthesis by %s", list, err, tt.voice)
			}
		})
	}
}

// TestSpeakStdin: "-" reads the text from standard input.
func TestSpeakStdin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out := filepath.Join(t.TempDir(), "stdin.wav")
	env := h.env()
	env.Stdin = strings.NewReader("Read from standard input.")
	if code := Run(ctx, env, []string{"speak", "-", "-o", out}); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() < 10000 {
		t.Fatalf("wrote %v, %v", fi, err)
	}
	list, _ := h.db.Sessions(ctx, store.Filter{Kind: store.KindSynthesis})
	if len(list) != 1 || list[0].Title != "Read from standard input." {
		t.Errorf("history %+v", list)
	}
}

// TestSpeakUsage: mistakes are told before anything is sent.
func TestSpeakUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"speak"}, "what to say"},
		{[]string{"speak", "a", "b"}, "one text at a time"},
		{[]string{"speak", "hi", "-o", "x.wma"}, "cannot tell the format"},
		{[]string{"speak", "hi", "--encoding", "mp3"}, "--encoding chooses the format of -o"},
		{[]string{"speak", "hi", "-o", "x.mp3", "--encoding", "wma"}, "use one of"},
		{[]string{"speak", "hi", "--model", "aura-asteria-en", "--speed", "1.2", "-o", "x.mp3"}, "own pace"},
		{[]string{"speak", "hi", "--model", "aura-asteria-en", "--expressivity", "1", "-o", "x.mp3"}, "turn-based"},
		{[]string{"speak", "  ", "-o", "x.mp3"}, "no text"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), tt.args...); code != 2 {
				t.Fatalf("exit status %d, want 2; stderr %q", code, h.stderr.String())
			}
			if !strings.Contains(h.stderr.String(), tt.says) {
				t.Errorf("stderr %q does not say %q", h.stderr.String(), tt.says)
			}
		})
	}
}

// noSpeakers is a machine without a sound card.
type noSpeakers struct{}

func (noSpeakers) Devices(context.Context) ([]device.Device, error) { return nil, nil }
func (noSpeakers) Open(context.Context, string, int) (sessions.Player, error) {
	return nil, fmt.Errorf("audio: open speaker: %w: miniaudio: Failed to open backend device", device.ErrNoOutputDevice)
}

// TestSpeakWithoutSpeaker: with no speaker, speak says so in one line,
// with what to do, and exits 1; the synthesis is still made and saved.
func TestSpeakWithoutSpeaker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	sw, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History:  h.db,
		Keys:     sessions.NewKeys(&store.Memory{}, func(string) string { return "" }),
		Local:    startLocal,
		Speakers: noSpeakers{},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.ws.Workspace = sw
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if code := h.run(t, ctx, "speak", "Nobody is listening."); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	want := regexp.MustCompile(`^earshot speak: nothing was played: no speaker or headphones were found\. The \d+\.\d s of audio are saved to history; write them to a file with -o FILE\n$`)
	if got := h.stderr.String(); !want.MatchString(got) {
		t.Errorf("stderr %q, want one line matching %s", got, want)
	}
	list, err := h.db.Sessions(ctx, store.Filter{Kind: store.KindSynthesis})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
		t.Errorf("history %+v, %v; want the synthesis saved", list, err)
	}
}
