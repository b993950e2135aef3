package store

import (
	"fmt"
	"testing"
	"time"
)

// TestSearchWithin checks a search among some sessions along each of its
// paths: the wanted sessions' matches among the newest scanned, their
// own stretches of the index when the newest matches are others' (an
// old agent conversation under thousands of newer captions), and the
// scan carried on when the wanted sessions are too many to seek one by
// one; also dates, the better match first, and file transcripts.
func TestSearchWithin(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	create := func(kind string, started time.Time, title string) int64 {
		t.Helper()
		id, err := d.CreateSession(ctx, Session{Kind: kind, Title: title, Started: started, Status: StatusDone})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	fill := func(session int64, n int, text func(i int) string) { fillSegments(t, d, session, n, 3, text) }
	// Oldest: 2,100 one-caption sessions of captions, then an agent
	// conversation of 300 captions (one with the word three times), then
	// a file, then 4,500 newer captions of another session.
	var small []int64
	for i := range bySessionMax + 100 {
		id := create(KindCaptions, day.Add(time.Duration(i)*time.Minute), fmt.Sprintf("short %d", i))
		fill(id, 1, func(int) string { return "the short one" })
		small = append(small, id)
	}
	agent := create(KindAgent, day.AddDate(0, 0, 10), "old agent")
	fill(agent, 300, func(i int) string {
		if i == 150 {
			return "the the the agent said so"
		}
		return fmt.Sprintf("the agent answer %d", i)
	})
	file := create(KindFile, day.AddDate(0, 0, 11), "memo.wav")
	if err := d.SaveResponse(ctx, file, []byte(`{}`), "the memo of the file"); err != nil {
		t.Fatal(err)
	}
	big := create(KindConversation, day.AddDate(0, 0, 20), "new and long")
	fill(big, scanWindow+500, func(i int) string { return fmt.Sprintf("the newer remark %d", i) })

	search := func(q string, f Filter) []Hit {
		t.Helper()
		hits, err := d.SearchWithin(ctx, q, 20, f)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	// The agent's matches are all older than the newest scanWindow.
	hits := search("the ", Filter{Kind: KindAgent})
	if len(hits) != 20 {
		t.Fatalf("the, among agents: %d hits, want 20", len(hits))
	}
	if h := hits[0]; h.SessionID != agent || h.Start != 450 || h.Title != "old agent" ||
		h.Snippet != HighlightStart+"the"+HighlightEnd+" "+HighlightStart+"the"+HighlightEnd+" "+HighlightStart+"the"+HighlightEnd+" agent said so" {
		t.Errorf("the, among agents: first hit %+v, want the caption with the word three times at 450 s", h)
	}
	for _, h := range hits {
		if h.SessionID != agent || h.SegmentID == 0 {
			t.Errorf("the, among agents: hit %+v is not one of the agent's captions", h)
		}
	}
	// Files: the transcript alone, a whole-word match not taken from captions.
	if hits := search("the ", Filter{Kinds: []string{KindFile}}); len(hits) != 1 || hits[0].SessionID != file || hits[0].SegmentID != 0 {
		t.Errorf("the, among files: %+v, want the memo's transcript", hits)
	}
	// 2,100 small sessions of captions: more than are sought one by one.
	hits = search("the ", Filter{Kind: KindCaptions})
	if len(hits) != 20 {
		t.Fatalf("the, among captions: %d hits, want 20", len(hits))
	}
	for _, h := range hits {
		if h.SessionID < small[0] || h.SessionID > small[len(small)-1] {
			t.Errorf("the, among captions: hit %+v is not one of the short sessions", h)
		}
		if h.SessionID < small[len(small)-rankWindow] {
			t.Errorf("the, among captions: hit %+v is older than the newest %d matches", h, rankWindow)
		}
	}
	// Dates: the first 10 short sessions only; then the agent's and the
	// file's days.
	hits = search("short ", Filter{Since: day, Until: day.Add(10 * time.Minute)})
	if len(hits) != 10 {
		t.Errorf("short, in the first ten minutes: %d hits, want 10", len(hits))
	}
	for _, h := range hits {
		if h.SessionID > small[9] {
			t.Errorf("short, in the first ten minutes: hit %+v is of a later session", h)
		}
	}
	hits = search("the ", Filter{Since: day.AddDate(0, 0, 10), Until: day.AddDate(0, 0, 12)})
	seen := map[int64]bool{}
	for _, h := range hits {
		seen[h.SessionID] = true
	}
	if len(hits) != 20 || !seen[file] || !seen[agent] || len(seen) != 2 {
		t.Errorf("the, from day 10 to 12: %d hits in sessions %v, want 20 in the agent's and the file's", len(hits), seen)
	}
	// Both kinds at once, and kinds no session has.
	if hits := search("agent said", Filter{Kinds: []string{KindFile, KindAgent}}); len(hits) != 1 || hits[0].Start != 450 {
		t.Errorf("agent said, among files and agents: %+v, want the agent's caption at 450 s", hits)
	}
	if hits := search("the ", Filter{Kinds: []string{KindAnalysis}}); len(hits) != 0 {
		t.Errorf("the, among analyses: %+v, want none", hits)
	}
}

func TestMergeSpans(t *testing.T) {
	got := mergeSpans([]span{{1, 10}, {50, 60}, {12, 20}, {100, 200}, {150, 160}, {61, 70}}, 2)
	want := []span{{100, 200}, {50, 70}, {1, 20}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mergeSpans = %v, want %v", got, want)
	}
	if got := mergeSpans(nil, 5); len(got) != 0 {
		t.Errorf("mergeSpans(nil) = %v", got)
	}
}

// fillSegments writes n segments of session in one transaction, through
// AddSegment's insert (the search index's triggers see them as they see
// AddSegment's): segment i says text(i), from every*i to every*i+2 s.
func fillSegments(t testing.TB, d *DB, session int64, n int, every float64, text func(i int) string) {
	t.Helper()
	ctx := t.Context()
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, insertSegmentSQL)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		at := every * float64(i)
		if _, err := stmt.ExecContext(ctx, session, i, at, at+2, nil, text(i), "", 0.9, 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	stmt.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
