package sessions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestRetentionPrunesAtStartAndDaily keeps 30 days of history: a prune
// runs at start, and again each time a day passes on the fake clock; a
// running session is never deleted, and Stop waits for the goroutine.
func TestRetentionPrunesAtStartAndDaily(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	db := openDB(t)
	w := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, nil)
	s, err := w.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.RetentionDays = 30
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	add := func(age time.Duration, status string) int64 {
		t.Helper()
		id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "x", Started: start.Add(-age), Status: status})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	const day = 24 * time.Hour
	old := add(31*day, store.StatusDone)
	running := add(60*day, store.StatusRunning)
	nextDay := add(29*day+12*time.Hour, store.StatusDone) // past 30 days after one more day
	kept := add(time.Hour, store.StatusDone)

	fake := clock.NewFake(start)
	pruned := make(chan int, 4)
	r := w.StartRetention(ctx, fake, func(n int, err error) {
		if err != nil {
			t.Error(err)
		}
		pruned <- n
	})
	defer r.Stop()
	if n := <-pruned; n != 1 {
		t.Errorf("first prune deleted %d, want 1", n)
	}
	if _, err := db.Session(ctx, old); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the 31-day-old session: %v, want deleted", err)
	}
	if !fake.WaitForWaiters(1, ctx.Done()) {
		t.Fatal("the retention set no ticker")
	}
	fake.Advance(sessions.PruneEvery)
	if n := <-pruned; n != 1 {
		t.Errorf("second prune deleted %d, want 1", n)
	}
	if _, err := db.Session(ctx, nextDay); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the session past 30 days on the next day: %v, want deleted", err)
	}
	for _, id := range []int64{running, kept} {
		if _, err := db.Session(ctx, id); err != nil {
			t.Errorf("session %d: %v, want kept", id, err)
		}
	}
	r.Stop()
	r.Stop() // twice is fine
}

func TestPruneHistoryKeepsEverythingByDefault(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	db := openDB(t)
	w := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, nil)
	if _, err := db.CreateSession(ctx, store.Session{Kind: store.KindFile, Started: time.Now().AddDate(-5, 0, 0), Status: store.StatusDone}); err != nil {
		t.Fatal(err)
	}
	n, err := w.PruneHistory(ctx, time.Now())
	if err != nil || n != 0 {
		t.Errorf("PruneHistory = %d, %v; want nothing deleted", n, err)
	}
	if c, err := w.CountExpired(ctx, 365, time.Now()); err != nil || c != 1 {
		t.Errorf("CountExpired(365) = %d, %v; want 1", c, err)
	}
	sp, err := w.HistorySpace(ctx)
	if err != nil || sp.Bytes() == 0 || sp.Sessions[store.KindFile] != 1 {
		t.Errorf("HistorySpace = %+v, %v", sp, err)
	}
}

func TestSearchHistory(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	db := openDB(t)
	w := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, nil)
	now := time.Now()
	add := func(kind string, age time.Duration, texts ...string) int64 {
		t.Helper()
		id, err := db.CreateSession(ctx, store.Session{Kind: kind, Title: kind, Started: now.Add(-age), Status: store.StatusDone})
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: i, Start: float64(5 * i), Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	const day = 24 * time.Hour
	old := add(store.KindCaptions, 10*day, "budget talk", "more budget budget")
	agent := add(store.KindAgent, day, "the budget please")
	recent := add(store.KindCaptions, time.Hour, "no match here", "budget at last")

	hits, err := w.SearchHistory(ctx, "budget", 10, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, h := range hits {
		seen[h.Session.ID]++
		if h.Session.ID != h.SessionID || h.Session.Kind == "" {
			t.Errorf("hit %+v lacks its session", h)
		}
	}
	if len(hits) != 3 || seen[old] != 1 || seen[agent] != 1 || seen[recent] != 1 {
		t.Errorf("one hit a session: %+v", hits)
	}
	for _, h := range hits {
		if h.Session.ID == recent && h.Start != 5 {
			t.Errorf("the recent session's hit at %v s, want 5", h.Start)
		}
	}
	hits, err = w.SearchHistory(ctx, "budget", 10, store.Filter{Kind: store.KindCaptions, Since: now.Add(-2 * day)})
	if err != nil || len(hits) != 1 || hits[0].Session.ID != recent {
		t.Errorf("captions of the last two days: %+v, %v", hits, err)
	}
	hits, err = w.SearchHistory(ctx, "budget", 1, store.Filter{})
	if err != nil || len(hits) != 1 {
		t.Errorf("limit 1: %d hits, %v", len(hits), err)
	}
}
