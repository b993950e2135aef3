package store

import (
	"errors"
	"testing"
	"time"
)

// addAt saves a session of kind that started at t, with one segment.
func addAt(t *testing.T, d *DB, kind string, at time.Time, status string) int64 {
	t.Helper()
	id, err := d.CreateSession(t.Context(), Session{Kind: kind, Title: kind + " " + at.Format(time.DateOnly), Started: at, Status: status})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddSegment(t.Context(), Segment{SessionID: id, Text: "pruned words " + kind}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestPruneDeletesOlderButNotRunning(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	old := addAt(t, d, KindCaptions, now.AddDate(0, 0, -40), StatusDone)
	oldFile := addAt(t, d, KindFile, now.AddDate(0, 0, -31), StatusFailed)
	running := addAt(t, d, KindCaptions, now.AddDate(0, 0, -50), StatusRunning)
	recent := addAt(t, d, KindSynthesis, now.AddDate(0, 0, -29), StatusDone)

	cutoff := RetentionCutoff(now, 30)
	if n, err := d.CountOlder(ctx, cutoff); err != nil || n != 2 {
		t.Fatalf("CountOlder = %d, %v; want 2", n, err)
	}
	n, err := d.Prune(ctx, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2", n, err)
	}
	for _, id := range []int64{old, oldFile} {
		if _, err := d.Session(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("session %d after prune: %v, want not found", id, err)
		}
	}
	for _, id := range []int64{running, recent} {
		if _, err := d.Session(ctx, id); err != nil {
			t.Errorf("session %d after prune: %v", id, err)
		}
	}
	// The search index forgot the deleted sessions' words.
	hits, err := d.Search(ctx, "pruned", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Errorf("search after prune: %d hits, want 2 (running and recent)", len(hits))
	}
	if _, err := d.Prune(ctx, time.Time{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Prune(zero) = %v, want ErrInvalid", err)
	}
}

func TestPruneManyBatches(t *testing.T) {
	d := openTest(t)
	now := time.Now()
	const n = pruneBatch*2 + 7
	for i := range n {
		if _, err := d.CreateSession(t.Context(), Session{Kind: KindAnalysis, Started: now.Add(-time.Duration(i+1) * time.Hour * 24 * 10), Status: StatusDone}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Prune(t.Context(), now)
	if err != nil || got != n {
		t.Fatalf("Prune = %d, %v; want %d", got, err, n)
	}
	if left, _ := d.Sessions(t.Context(), Filter{}); len(left) != 0 {
		t.Errorf("%d sessions left", len(left))
	}
}

func TestRetentionCutoff(t *testing.T) {
	now := time.Date(2026, 3, 31, 8, 0, 0, 0, time.UTC)
	if c := RetentionCutoff(now, 0); !c.IsZero() {
		t.Errorf("0 days: %v, want zero", c)
	}
	if c := RetentionCutoff(now, 7); !c.Equal(time.Date(2026, 3, 24, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("7 days: %v", c)
	}
}

func TestSpace(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	empty, err := d.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Bytes() <= 0 || len(empty.Sessions) != 0 {
		t.Fatalf("empty history: %+v", empty)
	}
	now := time.Now()
	for range 3 {
		addAt(t, d, KindCaptions, now, StatusDone)
	}
	id := addAt(t, d, KindFile, now, StatusDone)
	big := make([]byte, 0, 200_000)
	big = append(big, `"`...)
	for len(big) < 199_000 {
		big = append(big, "some transcript words "...)
	}
	big = append(big, `"`...)
	if err := d.SaveResponse(ctx, id, big, string(big)); err != nil {
		t.Fatal(err)
	}
	sp, err := d.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Sessions[KindCaptions] != 3 || sp.Sessions[KindFile] != 1 {
		t.Errorf("sessions by kind: %v", sp.Sessions)
	}
	if sp.Bytes() < empty.Bytes()+200_000 {
		t.Errorf("space grew from %d to %d bytes after saving 400 kB", empty.Bytes(), sp.Bytes())
	}
}

func TestSessionsDatesAndPages(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var ids []int64 // oldest first
	for i := range 10 {
		kind := KindCaptions
		if i%2 == 1 {
			kind = KindAgent
		}
		ids = append(ids, addAt(t, d, kind, day.AddDate(0, 0, i), StatusDone))
	}
	// Two sessions at the same instant: the cursor tells them apart by id.
	twin := addAt(t, d, KindCaptions, day.AddDate(0, 0, 9), StatusDone)

	got, err := d.Sessions(ctx, Filter{Since: day.AddDate(0, 0, 3), Until: day.AddDate(0, 0, 6)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{ids[5], ids[4], ids[3]}; !sameIDs(got, want) {
		t.Errorf("days 3 to 5: %v, want %v", idsOf(got), want)
	}
	got, err = d.Sessions(ctx, Filter{Kind: KindAgent, Since: day.AddDate(0, 0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{ids[9], ids[7], ids[5]}; !sameIDs(got, want) {
		t.Errorf("agent since day 4: %v, want %v", idsOf(got), want)
	}

	// Paging with the cursor walks every session once, newest first.
	var walked []int64
	f := Filter{Limit: 3}
	for {
		page, err := d.Sessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		walked = append(walked, idsOf(page)...)
		f.Before = CursorOf(page[len(page)-1])
	}
	want := []int64{twin, ids[9], ids[8], ids[7], ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}
	if len(walked) != len(want) {
		t.Fatalf("walked %v, want %v", walked, want)
	}
	for i := range want {
		if walked[i] != want[i] {
			t.Fatalf("walked %v, want %v", walked, want)
		}
	}
}

func idsOf(list []Session) []int64 {
	out := make([]int64, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func sameIDs(list []Session, want []int64) bool {
	got := idsOf(list)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestSettingsRetention(t *testing.T) {
	d := openTest(t)
	s := DefaultSettings()
	if s.RetentionDays != 0 {
		t.Errorf("default retention %d, want 0 (keep everything)", s.RetentionDays)
	}
	s.RetentionDays = 90
	if err := d.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	got, err := d.LoadSettings(t.Context())
	if err != nil || got.RetentionDays != 90 {
		t.Errorf("loaded %d, %v; want 90", got.RetentionDays, err)
	}
	for _, bad := range []int{-1, MaxRetentionDays + 1} {
		s.RetentionDays = bad
		if err := s.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%d days: %v, want ErrInvalid", bad, err)
		}
	}
}

func TestSessionsByID(t *testing.T) {
	d := openTest(t)
	now := time.Now()
	a := addAt(t, d, KindCaptions, now, StatusDone)
	b := addAt(t, d, KindAgent, now, StatusDone)
	got, err := d.SessionsByID(t.Context(), []int64{b, a, 9999})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[a].Kind != KindCaptions || got[b].Kind != KindAgent || got[a].Segments != 1 {
		t.Errorf("SessionsByID = %+v", got)
	}
	if got, err := d.SessionsByID(t.Context(), nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
	if _, err := d.SessionsByID(t.Context(), make([]int64, MaxHits+1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("too many ids: %v, want ErrInvalid", err)
	}
}
