// Package ffmpegtest makes the recordings of tests with FFmpeg: the
// containers and codecs people's recordings come in, from a real
// recording. It imports nothing of Earshot, so that the tests of audio,
// which testkit imports, can use it too.
package ffmpegtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedFFmpeg skips t unless ffmpeg and ffprobe, which make the tests'
// recordings and which Earshot runs on them, are installed.
func NeedFFmpeg(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (%v); run scripts/setup", tool, err)
		}
	}
}

// FFmpeg makes dir/name with ffmpeg from args (its inputs and codecs)
// and returns its path.
func FFmpeg(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	NeedFFmpeg(t)
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(t.Context(), "ffmpeg", append(append([]string{"-v", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, b)
	}
	return out
}
