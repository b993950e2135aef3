package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-app/earshot/internal/leaktest"
)

// recordedDir holds the recorded traffic of the hosted service, outside the
// project; tests that need it skip when it is absent.
const recordedDir = "../../shared/fixtures/recorded"

// recorded returns the files of a recorded folder matching pattern, or
// skips the test when the recordings are not on this machine.
func recorded(t testing.TB, sub, pattern string) []string {
	t.Helper()
	dir := filepath.Join(recordedDir, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("recorded fixtures not available: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	return files
}

// readRecorded reads every file matching pattern, or nothing when the
// recordings are absent (for fuzz seeds, which must not skip).
func readRecorded(sub, pattern string) [][]byte {
	files, _ := filepath.Glob(filepath.Join(recordedDir, sub, pattern))
	var out [][]byte
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkNoLeak fails the test if goroutines of the stream machinery (the
// socket's and the WebSocket library's) that it started outlive it. It
// runs at cleanup, after the test's own cleanups (registered later) have
// closed streams and servers.
func checkNoLeak(t *testing.T) {
	t.Helper()
	leaktest.Check(t, "earshot/api.(*socket)", "github.com/coder/websocket.")
}

func newDebugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
