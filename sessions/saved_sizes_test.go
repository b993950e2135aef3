package sessions_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// checkSavedLength checks that a saved file has its real length in its
// header, not a stream's "unknown": the WAV sizes match the file, the
// FLAC sample count is set, and ffprobe (which reads those headers) gives
// about the second that was saved.
func checkSavedLength(t *testing.T, enc string, buf *bytes.Buffer) {
	t.Helper()
	b := buf.Bytes()
	switch enc {
	case api.EncodingLinear16, api.EncodingMulaw, api.EncodingAlaw:
		riff := binary.LittleEndian.Uint32(b[4:8])
		if int(riff) != len(b)-8 {
			t.Errorf("RIFF size %#x, want %d (the file less 8 bytes)", riff, len(b)-8)
		}
		i := bytes.Index(b, []byte("data"))
		if i < 0 {
			t.Fatal("no data chunk")
		}
		if data := binary.LittleEndian.Uint32(b[i+4 : i+8]); int(data) != len(b)-i-8 {
			t.Errorf("data size %#x, want %d", data, len(b)-i-8)
		}
	case api.EncodingFLAC:
		v := binary.BigEndian.Uint64(b[18:26])
		if rate, n := v>>44, v&(1<<36-1); rate != 48000 || n < 47000 || n > 49000 {
			t.Errorf("STREAMINFO: rate %d, %d samples; want 48000 and about 48000", rate, n)
		}
		if sum := b[26:42]; bytes.Equal(sum, make([]byte, 16)) {
			t.Error("STREAMINFO has no MD5")
		}
	}
	path := filepath.Join(t.TempDir(), "saved"+sessions.SaveExtension(enc))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || d < 0.9 || d > 1.2 {
		t.Errorf("ffprobe gives the %s file %q s, want about 1", enc, strings.TrimSpace(string(out)))
	}
}
