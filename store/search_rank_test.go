package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestSearchRanked checks, over 1,604 segments, what the history's search
// promises: the better match first (a word twice above the same word once,
// in captions of the same length: FTS5's bm25 counts occurrences, not
// proximity), the matched words marked in the snippet, the start of the
// matching caption, the session's title, kinds filtered, and a word in
// more than rankWindow captions still ranked, file transcripts included.
func TestSearchRanked(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	lecture := newSession(t, d, "Lecture on winds")
	agent, err := d.CreateSession(ctx, Session{Kind: KindAgent, Title: "Asking the agent"})
	if err != nil {
		t.Fatal(err)
	}
	file, err := d.CreateSession(ctx, Session{Kind: KindFile, Title: "memo.wav", Source: "memo.wav"})
	if err != nil {
		t.Fatal(err)
	}
	// rankWindow+600 captions with "common" in each, in one transaction.
	const filler = rankWindow + 600
	fillSegments(t, d, lecture, filler, 1, func(i int) string {
		return fmt.Sprintf("a common remark number %d about the weather today", i)
	})
	add := func(session int64, seq int, start float64, text string) {
		t.Helper()
		if _, err := d.AddSegment(ctx, Segment{SessionID: session, Seq: seq, Start: start, End: start + 2, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	add(lecture, filler, 5000.5, "the zephyr came from the west at noon")
	add(lecture, filler+1, 5010.25, "the zephyr came west the zephyr at noon")
	add(agent, 0, 7.5, "tell me what a zephyr is")
	add(lecture, filler+2, 5020, "common common common ground")
	if err := d.SaveResponse(ctx, file, []byte(`{}`), "common common common common sense"); err != nil {
		t.Fatal(err)
	}

	hits, err := d.Search(ctx, "zephyr", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("zephyr: %d hits, want 3: %+v", len(hits), hits)
	}
	if h := hits[0]; h.SessionID != lecture || h.Start != 5010.25 || h.Title != "Lecture on winds" {
		t.Errorf("zephyr: first hit %+v, want the caption with the word twice, at 5010.25 s of %q", h, "Lecture on winds")
	}
	if want := "the " + HighlightStart + "zephyr" + HighlightEnd + " came west the " + HighlightStart + "zephyr" + HighlightEnd + " at noon"; hits[0].Snippet != want {
		t.Errorf("zephyr: snippet %q, want %q", hits[0].Snippet, want)
	}
	for _, h := range hits {
		if h.SegmentID == 0 || !strings.Contains(h.Snippet, HighlightStart+"zephyr"+HighlightEnd) {
			t.Errorf("zephyr: hit %+v: no segment or no marked word", h)
		}
	}

	hits, err = d.Search(ctx, "zephyr", 20, KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].SessionID != agent || hits[0].Start != 7.5 || hits[0].Title != "Asking the agent" {
		t.Errorf("zephyr among agents: %+v, want the agent's caption at 7.5 s", hits)
	}
	if hits, _ := d.Search(ctx, "zephyr", 20, KindFile, KindAnalysis); len(hits) != 0 {
		t.Errorf("zephyr among files: %+v, want none", hits)
	}

	// "common" is in more captions than a search ranks: the newest are
	// ranked, and the file transcript with it, apart.
	hits, err = d.Search(ctx, "common", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 20 {
		t.Fatalf("common: %d hits, want 20", len(hits))
	}
	if h := hits[0]; h.SessionID != file || h.SegmentID != 0 || h.Start != 0 || h.Title != "memo.wav" {
		t.Errorf("common: first hit %+v, want the file transcript (the word four times)", h)
	}
	if h := hits[1]; h.SessionID != lecture || h.Start != 5020 {
		t.Errorf("common: second hit %+v, want the caption with the word three times, at 5020 s", h)
	}
	for _, h := range hits[2:] {
		if h.SessionID != lecture || h.Start < float64(filler-rankWindow) {
			t.Errorf("common: hit %+v is older than the newest %d matches", h, rankWindow)
		}
	}
	hits, err = d.Search(ctx, "common", 5, KindAgent)
	if err != nil || len(hits) != 0 {
		t.Errorf("common among agents: %+v, %v; want none", hits, err)
	}
}
