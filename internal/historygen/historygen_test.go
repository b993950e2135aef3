package historygen_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/historygen"
	"github.com/earshot-app/earshot/store"
)

func TestFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	n, err := historygen.Fill(t.Context(), path, historygen.Config{Captions: 1005, PerSess: 10, Words: 12, Start: start, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n != 101 {
		t.Errorf("%d sessions, want 101", n)
	}
	list, err := db.Sessions(t.Context(), store.Filter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Segments != 5 || list[1].Segments != 10 || !list[0].Started.Equal(start.Add(100*time.Hour)) {
		t.Errorf("newest sessions: %+v", list)
	}
	hits, err := db.Search(t.Context(), "the", 5)
	if err != nil || len(hits) != 5 {
		t.Errorf("search: %d hits, %v; want 5: the captions are indexed", len(hits), err)
	}
	if _, err := historygen.Fill(t.Context(), path, historygen.Config{PerSess: 0, Words: 12}); err == nil {
		t.Error("no captions per session was taken")
	}
}
