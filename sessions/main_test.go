package sessions_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/leaktest"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// The shared local engine: started by the first end-to-end test that
// needs it, closed by TestMain once every test has run. Tests that need
// another configuration (a known key) start their own.
var (
	sharedOnce   sync.Once
	sharedEngine *engine.Local
	sharedErr    error
)

// The shared keyed engine: one that accepts only a key the tests know,
// for the tests of custom backends, tokens and key leaks. Its key is
// distinctive ("leakcheck-" and random hex) so a search for it finds
// nothing else.
var (
	keyedOnce   sync.Once
	keyedShared *engine.Local
	keyedErr    error
)

// sharedMaxConnections leaves room for the end-to-end tests running at
// once, each with its reconnections and batch requests.
const sharedMaxConnections = 16

func TestMain(m *testing.M) {
	code := m.Run()
	for _, l := range []*engine.Local{sharedEngine, keyedShared} {
		if l == nil {
			continue
		}
		if err := l.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "closing a shared engine: %v\n", err)
			code = 1
		}
	}
	http.DefaultClient.CloseIdleConnections()
	// Every goroutine of the module (sessions, sockets, engines, proxies,
	// event queues) must be gone once every test has ended.
	if leaks := leaktest.Report(); leaks != "" {
		fmt.Fprintln(os.Stderr, leaks)
		code = 1
	}
	os.Exit(code)
}

// localEngine returns the shared engine, starting it on first use.
func localEngine(t *testing.T) *engine.Local {
	t.Helper()
	sharedOnce.Do(func() {
		sharedEngine, sharedErr = engine.StartLocal(engine.Config{MaxConnections: sharedMaxConnections})
	})
	if sharedErr != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", sharedErr)
	}
	return sharedEngine
}

// keyedEngine returns the shared keyed engine, starting it on first use.
func keyedEngine(t *testing.T) *engine.Local {
	t.Helper()
	keyedOnce.Do(func() {
		b := make([]byte, 16)
		if _, keyedErr = rand.Read(b); keyedErr != nil {
			return
		}
		keyedShared, keyedErr = engine.StartLocal(engine.Config{
			Key:            api.Secret("leakcheck-" + hex.EncodeToString(b)),
			MaxConnections: sharedMaxConnections,
		})
	})
	if keyedErr != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", keyedErr)
	}
	return keyedShared
}

// startEngine starts an engine of the test's own, closed at its end.
func startEngine(t *testing.T, cfg engine.Config) *engine.Local {
	t.Helper()
	l, err := engine.StartLocal(cfg)
	if err != nil {
		t.Fatalf("StartLocal: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the engine: %v", err)
		}
	})
	return l
}

// newClient returns an API client of the engine at ep, with an HTTP
// client of the test's own whose idle connections are closed at its end.
func newClient(t *testing.T, ep api.Endpoint, key api.Secret) *api.Client {
	t.Helper()
	hc := &http.Client{}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := api.NewClient(api.Config{Endpoint: ep, APIKey: key, HTTPClient: hc})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// testContext is the context of a test, ended by a generous timeout so a
// hung session fails its test instead of the whole binary.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// openDB opens a fresh history in the test's temporary folder.
func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("closing the history: %v", err)
		}
	})
	return db
}

// --- recordings ------------------------------------------------------------

// The LibriVox recordings pocketsphinx ships: five consecutive lines of
// one reading, one reader, 16 kHz mono 16-bit.
const librivoxDir = "/usr/share/pocketsphinx/test/data/librivox"

var librivoxIDs = []string{"0870", "0880", "0890", "0920", "0930"}

func librivoxPath(id string) string {
	return filepath.Join(librivoxDir, "sense_and_sensibility_01_austen_64kb-"+id+".wav")
}

// readFile reads a test file, skipping the test when the system package
// that ships it is missing.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("test file missing (scripts/setup installs it): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadPCM decodes a recording to 16 kHz mono.
func loadPCM(t testing.TB, path string) []int16 {
	t.Helper()
	b, err := audio.Decode(context.Background(), bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	pcm, err := audio.To16kMono(b)
	if err != nil {
		t.Fatalf("convert %s: %v", path, err)
	}
	return pcm
}

// line is one line of the reading, placed in the joined recording.
type line struct {
	id         string
	start, end float64 // seconds in the joined recording
}

// lineGap is the silence put between the lines when they are joined: a
// reader's pause between sentences.
const lineGap = 0.5

// reading joins the five LibriVox lines, lineGap of silence after each,
// into one recording, and says where each line lies in it.
func reading(t testing.TB) ([]int16, []line) {
	t.Helper()
	var pcm []int16
	var lines []line
	for _, id := range librivoxIDs {
		p := loadPCM(t, librivoxPath(id))
		start := float64(len(pcm)) / 16000
		pcm = append(pcm, p...)
		lines = append(lines, line{id: id, start: start, end: float64(len(pcm)) / 16000})
		pcm = append(pcm, make([]int16, int(lineGap*16000))...)
	}
	return pcm, lines
}

// mono16k is the format of the recordings above.
var mono16k = audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}

// --- text ------------------------------------------------------------------

// captionsText joins the captions' texts.
func captionsText(caps []sessions.Caption) string {
	var parts []string
	for _, c := range caps {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, " ")
}
