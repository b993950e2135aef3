package ui

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/earshot-app/earshot/store"
)

// TestCaptionsHistoryShowsItsOwnKinds: after a restart, the Captions
// tab's history lists and searches what was transcribed (live, from a
// file, as a conversation), not the syntheses and analyses of the Voices
// and Analyze tabs, which keep their own histories.
func TestCaptionsHistoryShowsItsOwnKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 4, 10, 0, 0, 0, time.Local)
	add := func(kind, title, text string) {
		t.Helper()
		ctx := context.Background()
		id, err := db.CreateSession(ctx, store.Session{Kind: kind, Title: title, Started: started})
		if err != nil {
			t.Fatal(err)
		}
		started = started.Add(time.Minute)
		if kind == store.KindCaptions {
			_, err = db.AddSegment(ctx, store.Segment{SessionID: id, Text: text, End: 2})
		} else {
			err = db.SaveResponse(ctx, id, []byte("{}"), text)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishSession(ctx, id, started, 60, store.StatusDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	add(store.KindCaptions, "Standup", "the budget is due on friday")
	add(store.KindFile, "Interview.wav", "we spoke about the budget")
	add(store.KindSynthesis, "Hello there", "budget announcement read aloud")
	add(store.KindAnalysis, "Quarterly report", "the budget grew by ten percent")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	h := newHarnessWith(t, harnessConfig{dbPath: path}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	h.waitFor(t, "the history to be listed", func() bool { return len(h.captions.history.rows) > 0 })
	if got, want := h.historyTitles(), []string{"Interview.wav", "Standup"}; !slices.Equal(got, want) {
		t.Errorf("the Captions history lists %q, want %q", got, want)
	}

	h.ui(func() { h.captions.history.search.SetText("budget") })
	var found []string
	h.waitFor(t, "the search", func() bool {
		found = nil
		for _, r := range h.captions.history.rows {
			if r.snippet != "" {
				found = append(found, r.s.Title)
			}
		}
		return len(found) > 0
	})
	slices.Sort(found)
	if want := []string{"Interview.wav", "Standup"}; !slices.Equal(found, want) {
		t.Errorf("a search in the Captions history finds %q, want %q", found, want)
	}
}
