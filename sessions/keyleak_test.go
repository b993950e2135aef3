package sessions_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// keyForms are the ways a key could be written down by mistake.
func keyForms(key api.Secret) map[string]string {
	k := key.Reveal()
	return map[string]string{
		"plain":          k,
		"base64":         base64.StdEncoding.EncodeToString([]byte(k)),
		"base64 url":     base64.RawURLEncoding.EncodeToString([]byte(k)),
		"basic auth":     base64.StdEncoding.EncodeToString([]byte(":" + k)),
		"basic auth key": base64.StdEncoding.EncodeToString([]byte(k + ":")),
		"hex":            hex.EncodeToString([]byte(k)),
		"random part":    strings.TrimPrefix(k, "leakcheck-"),
	}
}

// TestKeyDoesNotLeak runs captions, a file transcription, a refused file,
// a synthesis on each speak endpoint, an analysis and settings through a
// workspace logging at Debug, then looks for the key in the history's
// files (syntheses keep their audio there) and in the log.
func TestKeyDoesNotLeak(t *testing.T) {
	t.Parallel()
	eng := keyedEngine(t)
	key := eng.Key
	ctx := testContext(t, time.Minute)
	var logs testkit.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	w := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, log)
	if src, err := w.SaveKey(key); err != nil || src != sessions.KeyKeyring {
		t.Fatalf("SaveKey: %v, %v", src, err)
	}
	s := store.DefaultSettings()
	s.Backend = sessions.BackendCustom
	s.CustomURL = eng.URL.String()
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Info(ctx); err != nil {
		t.Fatalf("Info: %v", err)
	}

	// Live captions of a line, as fast as the engine takes them.
	src, err := audio.NewReplay(mono16k, loadPCM(t, librivoxPath("0930")), audio.ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "0930"})
	if err != nil {
		t.Fatal(err)
	}
	rec := record(c, nil)
	<-c.Done()
	if err := c.Stop(); err != nil {
		t.Fatalf("captions: %v", err)
	}
	rec.wait(t)
	if len(rec.finals()) == 0 {
		t.Error("no captions: the key was not exercised")
	}
	// A file, and a file the engine refuses: error paths log and save too.
	if _, err := w.TranscribeFile(ctx, librivoxPath("0880"), nil); err != nil {
		t.Fatalf("TranscribeFile: %v", err)
	}
	junk := filepath.Join(dir, "notes.wav")
	if err := os.WriteFile(junk, []byte("this is not audio at all, but it says it is"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := w.TranscribeFile(ctx, junk, nil); err == nil {
		t.Error("the engine took a file that is not audio")
	}
	// A synthesis on each speak endpoint, and an analysis: their streams,
	// requests and history entries carry no key either.
	voices, err := w.Voices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, voice := range []string{"aura-asteria-en", "flux-kit-en"} {
		syn, err := voices.Synthesize(ctx, sessions.SynthesisRequest{Text: "The key stays in the keyring.", Voice: voice, Speed: 1, Silent: true})
		if err != nil {
			t.Fatalf("Synthesize with %s: %v", voice, err)
		}
		<-syn.Done()
		if r := syn.Result(); len(r.PCM) == 0 || r.SessionID == 0 {
			t.Errorf("%s: %d samples, session %d: the key was not exercised", voice, len(r.PCM), r.SessionID)
		}
	}
	doc := sessions.AnalysisInput{Text: "I want to cancel my subscription. The support team was wonderful, but the bill was wrong twice."}
	if _, err := w.Analyze(ctx, doc, sessions.AllFeatures(), nil); err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	s.InputDevice = "hw:1"
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	list, err := w.Sessions(ctx, store.Filter{})
	if err != nil || len(list) != 6 {
		t.Fatalf("history lists %d sessions (%v), want 6", len(list), err)
	}

	files := func() map[string][]byte {
		out := map[string][]byte{}
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			b, err := os.ReadFile(path + suffix)
			if err == nil {
				out[filepath.Base(path+suffix)] = b
			} else if !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		return out
	}
	open := files() // the WAL still holds the recent writes
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	after := files()
	if len(after[filepath.Base(path)]) == 0 {
		t.Fatal("the history file is empty")
	}
	written := logs.Bytes()
	if !bytes.Contains(written, []byte("level=DEBUG")) {
		t.Errorf("the log has no Debug records, so it proves nothing:\n%s", written)
	}
	for form, k := range keyForms(key) {
		for name, b := range open {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("%s (open) holds the key (%s)", name, form)
			}
		}
		for name, b := range after {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("%s holds the key (%s)", name, form)
			}
		}
		if bytes.Contains(written, []byte(k)) {
			t.Errorf("the log holds the key (%s)", form)
		}
	}
}
