package sessions_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// TestSearchLocatesFileHits: a word said late in a real recording,
// transcribed as a file by the local engine, is found by a search with
// the time of the caption that holds it, as a caption's hit is.
func TestSearchLocatesFileHits(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	db := openDB(t)
	ws := rerunWorkspace(t, db, "nova-3")
	path, _, _ := readingFile(t, 1500*time.Millisecond, "0870", "0920")
	res, err := ws.TranscribeFile(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ws.Transcript(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Captions) < 2 {
		t.Fatalf("the reading came back as %d captions, want the two lines apart", len(tr.Captions))
	}
	// A word of the last caption that no other holds.
	last := tr.Captions[len(tr.Captions)-1]
	var earlier []string
	for _, c := range tr.Captions[:len(tr.Captions)-1] {
		earlier = append(earlier, strings.Fields(strings.ToLower(c.Text))...)
	}
	word := ""
	for _, w := range strings.Fields(strings.ToLower(last.Text)) {
		w = strings.Trim(w, ".,?!;:")
		if len(w) > len(word) && !slices.Contains(earlier, w) {
			word = w
		}
	}
	if word == "" || last.Start <= 0 {
		t.Fatalf("no word only in the last caption %+v", last)
	}
	hits, err := ws.SearchHistory(ctx, word+" ", 10, store.Filter{Kind: store.KindFile})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].SessionID != res.SessionID {
		t.Fatalf("%q: hits %+v, want the file", word, hits)
	}
	if h := hits[0]; !h.Located || h.Start != last.Start {
		t.Errorf("%q: located %v at %.2f s, want the last caption's start, %.2f s", word, h.Located, h.Start, last.Start)
	}
	raw, err := ws.Search(ctx, word+" ", 10)
	if err != nil || len(raw) != 1 {
		t.Fatalf("%q: %v, %v", word, raw, err)
	}
	if at, ok := ws.LocateHit(ctx, raw[0]); !ok || at != last.Start {
		t.Errorf("LocateHit = %.2f, %v; want %.2f", at, ok, last.Start)
	}
}

// readingFile writes the LibriVox lines ids, each followed by pause of
// silence, as one 16 kHz WAV file, and returns its path, its samples and
// its bytes.
func readingFile(t *testing.T, pause time.Duration, ids ...string) (string, []int16, []byte) {
	t.Helper()
	var pcm []int16
	for _, id := range ids {
		pcm = append(pcm, loadPCM(t, librivoxPath(id))...)
		pcm = append(pcm, make([]int16, int(pause.Seconds()*16000))...)
	}
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, pcm, 16000, 1); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "reading.wav")
	if err := os.WriteFile(path, wav.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, pcm, wav.Bytes()
}
