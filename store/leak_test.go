package store

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// TestKeyNeverReachesTheDatabase runs a realistic session with a key in a
// SecretStore beside the database, tries to slip the key in through the
// fields that could carry one, and then reads every file of the database
// (db, -wal, -shm), open and closed, for the key's bytes.
func TestKeyNeverReachesTheDatabase(t *testing.T) {
	useMockKeyring(t, nil)
	ctx := t.Context()
	const key = "dg_3f9a1c77e2b84d6a9c0e5b1f2a7d8c4e6b0a9f13"
	const marker = "xylophonist" // a word of the transcript: shows the scan reads what was written

	secrets := NewFallback(Keyring{})
	if err := secrets.Set(api.Secret(key)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, err := Open(ctx, filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// What the captions session saves: its options as a query.
	opts := url.Values{"model": {"nova-3"}, "diarize": {"true"}, "smart_format": {"true"}, "interim_results": {"true"},
		"encoding": {"linear16"}, "sample_rate": {"16000"}, "channels": {"1"}}
	optJSON, _ := json.Marshal(opts)
	start := time.Now()
	id, err := d.CreateSession(ctx, Session{Kind: KindCaptions, Title: "Weekly sync", Source: "USB microphone",
		Backend: "Hosted service", Model: "nova-3", Options: string(optJSON), Started: start})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		sp := i % 3
		text := fmt.Sprintf("segment %d where the %s plays the budget theme again", i, marker)
		words, _ := json.Marshal([]map[string]any{
			{"word": "segment", "start": float64(i) * 2, "end": float64(i)*2 + 0.4, "confidence": 0.98, "speaker": sp},
			{"word": marker, "start": float64(i)*2 + 0.5, "end": float64(i)*2 + 1.1, "confidence": 0.91, "speaker": sp},
		})
		if _, err := d.AddSegment(ctx, Segment{SessionID: id, Seq: i, Start: float64(i) * 2, End: float64(i)*2 + 1.9,
			Speaker: &sp, Text: text, Words: string(words), Confidence: 0.95}); err != nil {
			t.Fatal(err)
		}
	}
	// The service's answer as a hosted service sends it: no key in it.
	file, err := d.CreateSession(ctx, Session{Kind: KindFile, Source: "interview.wav", Backend: "Hosted service", Model: "nova-3",
		Options: `{"model":["nova-3"],"punctuate":["true"]}`})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"metadata":{"request_id":"5b2f0c1e","model_info":{"name":"2-general-nova"}},"results":{"channels":[{"alternatives":[{"transcript":"the ` + marker + ` arrived","confidence":0.97}]}]}}`)
	if err := d.SaveResponse(ctx, file, body, "the "+marker+" arrived"); err != nil {
		t.Fatal(err)
	}
	settings := DefaultSettings()
	settings.Backend, settings.Region, settings.Diarize, settings.ShortLivedTokens = BackendHosted, "eu", true, true
	if err := d.SaveSettings(ctx, settings); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishSession(ctx, id, start.Add(400*time.Second), 400, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishSession(ctx, file, time.Time{}, 61.2, StatusDone, ""); err != nil {
		t.Fatal(err)
	}

	// The ways a careless caller could hand the key to the store.
	if _, err := d.CreateSession(ctx, Session{Kind: KindCaptions, Options: `{"model":["nova-3"],"token":["` + key + `"]}`}); !errors.Is(err, ErrInvalid) {
		t.Errorf("options with a token: %v, want ErrInvalid", err)
	}
	if _, err := d.CreateSession(ctx, Session{Kind: KindAgent, Details: `{"auth":{"Authorization":"Token ` + key + `"}}`}); !errors.Is(err, ErrInvalid) {
		t.Errorf("details with an Authorization: %v, want ErrInvalid", err)
	}
	withKey := settings
	withKey.Backend, withKey.CustomURL = BackendCustom, "https://"+key+"@speech.example.org"
	if err := d.SaveSettings(ctx, withKey); !errors.Is(err, ErrInvalid) {
		t.Errorf("a custom URL with the key: %v, want ErrInvalid", err)
	}
	withKey.CustomURL = "https://speech.example.org/?key=" + key
	if err := d.SaveSettings(ctx, withKey); !errors.Is(err, ErrInvalid) {
		t.Errorf("a custom URL with the key as a parameter: %v, want ErrInvalid", err)
	}

	open := scanDir(t, dir, key, marker)
	if !open.marker {
		t.Fatal("the scan of the open database found none of the transcript: it proves nothing")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	closed := scanDir(t, dir, key, marker)
	if !closed.marker {
		t.Fatal("the closed database holds none of the transcript: it proves nothing")
	}
	if len(open.files) < 2 {
		t.Errorf("while open, only %v: the write-ahead log was not scanned", open.files)
	}
	if got, err := secrets.Get(); err != nil || got.Reveal() != key {
		t.Errorf("the key is no longer in its store: %v", err)
	}
}

type scanResult struct {
	files  []string
	marker bool
}

// scanDir reads every file in dir and fails the test where key appears,
// raw, hex or base64 encoded.
func scanDir(t *testing.T, dir, key, marker string) scanResult {
	t.Helper()
	forms := map[string][]byte{
		"raw":    []byte(key),
		"hex":    []byte(hex.EncodeToString([]byte(key))),
		"base64": []byte(base64.StdEncoding.EncodeToString([]byte(key))),
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var r scanResult
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		r.files = append(r.files, fmt.Sprintf("%s (%d bytes)", e.Name(), len(b)))
		for form, k := range forms {
			if i := bytes.Index(b, k); i >= 0 {
				t.Errorf("%s holds the key (%s) at byte %d", e.Name(), form, i)
			}
		}
		if bytes.Contains(b, []byte(marker)) {
			r.marker = true
		}
	}
	t.Logf("scanned %v", r.files)
	return r
}
