package store

import (
	"strings"
	"testing"
)

func TestMatchQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"budget", `"budget"*`},
		{"budget ", `"budget"`},
		{"quarterly budget", `"quarterly" "budget"*`},
		{`"unbalanced`, `"""unbalanced"*`},
		{`say "hi"`, `"say" """hi"""*`}, // "hi" with its quotes is four characters
		{"NEAR(a b)", `"NEAR(a" "b)"`},
		{"a OR b", `"a" "OR" "b"`},
		{"the", `"the"`}, // too short to be the start of a word
		{"budget the", `"budget" "the"`},
		{"budg", `"budg"*`},
		{"été", `"été"`},
		{"text:secret", `"text:secret"*`},
		{"-- *** ^^", ""},
		{"hello --", `"hello"`}, // the last word was dropped: no prefix on the one before
		{"don't", `"don't"*`},
		{"café", `"café"*`},
		{"日本語", `"日本語"`},
		{"日本語です", `"日本語です"*`},
		{"tab\tnewline\n", `"tab" "newline"`},
		{"bad\xffutf8", `"bad" "utf8"*`},
		{"nul\x00byte", `"nul" "byte"*`},
		{"bad\xffut", `"bad" "ut"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := matchQuery(tt.in); got != tt.want {
				t.Errorf("matchQuery(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	long := strings.Repeat("word ", 100)
	if got := strings.Count(matchQuery(long), `"word"`); got != maxQueryTerms {
		t.Errorf("a query of 100 words kept %d terms, want %d", got, maxQueryTerms)
	}
	if got := matchQuery(strings.Repeat("é", maxQueryBytes)); len(got) > maxQueryBytes+8 {
		t.Errorf("a long query was not cut: %d bytes", len(got))
	}
}

// searchFixture is a small history: two caption sessions and a file.
func searchFixture(t testing.TB) (d *DB, captions, meeting, file int64) {
	d = openTest(t)
	ctx := t.Context()
	captions = newSession(t, d, "lecture")
	meeting = newSession(t, d, "meeting")
	for i, text := range []string{
		"Welcome to the lecture on photosynthesis.",
		"Plants convert light into chemical energy.",
		"The café downstairs serves photosynthesis-themed muffins.",
	} {
		if _, err := d.AddSegment(ctx, Segment{SessionID: captions, Seq: i, Start: float64(10 * i), End: float64(10*i + 9), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	for i, text := range []string{
		"Budget, budget, budget: the quarterly budget is due.",
		"Let us talk about the budget later, after lunch in the cafe.",
		`He said "don't panic" and left.`,
	} {
		if _, err := d.AddSegment(ctx, Segment{SessionID: meeting, Seq: i, Start: 60 + float64(i), End: 61 + float64(i), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if file, err = d.CreateSession(ctx, Session{Kind: KindFile, Source: "memo.wav"}); err != nil {
		t.Fatal(err)
	}
	if err := d.SaveResponse(ctx, file, []byte(`{}`), "A memo about the garden and its budget for photosynthesis lamps."); err != nil {
		t.Fatal(err)
	}
	return d, captions, meeting, file
}

func TestSearch(t *testing.T) {
	d, captions, meeting, file := searchFixture(t)
	ctx := t.Context()

	t.Run("ranked", func(t *testing.T) {
		hits, err := d.Search(ctx, "budget", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 3 {
			t.Fatalf("%d hits, want 3: %+v", len(hits), hits)
		}
		// Four times in a short segment beats once.
		if hits[0].SessionID != meeting || hits[0].Start != 60 {
			t.Errorf("best hit %+v, want the meeting's first segment", hits[0])
		}
		if !strings.Contains(hits[0].Snippet, HighlightStart+"Budget"+HighlightEnd) {
			t.Errorf("snippet %q does not mark the match", hits[0].Snippet)
		}
		var sawFile bool
		for _, h := range hits {
			if h.SessionID == file {
				sawFile = h.SegmentID == 0 && h.Start == 0
			} else if h.SegmentID <= 0 {
				t.Errorf("a caption hit without its segment: %+v", h)
			}
		}
		if !sawFile {
			t.Errorf("the file transcript is not among %+v", hits)
		}
	})

	t.Run("of some kinds", func(t *testing.T) {
		hits, err := d.Search(ctx, "budget", 10, KindFile)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].SessionID != file {
			t.Errorf("hits in files %+v, want the file's one", hits)
		}
		hits, err = d.Search(ctx, "budget", 10, KindAnalysis, KindSynthesis)
		if err != nil || len(hits) != 0 {
			t.Errorf("hits in kinds that hold none: %+v, %v", hits, err)
		}
	})

	tests := []struct {
		name, query string
		want        int // hits
	}{
		{"every word must match", "budget lunch", 1},
		{"prefix of the last word", "photosyn", 3},
		{"no prefix after a space", "photosyn ", 0},
		{"case and diacritics", "CAFE", 2},
		{"diacritics in the query", "café", 2},
		{"quotes taken literally", `"don't panic"`, 1},
		{"unbalanced quote", `"budget`, 3},
		{"operators as words", "budget OR lunch", 0}, // "or" is in no text
		{"syntax characters", `NEAR( "budget" ) AND * ^ : -`, 0},
		{"column filter syntax", "text:budget", 0},
		{"nothing to search", "?!", 0},
		{"empty", "", 0},
		{"absent word", "zebra", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := d.Search(ctx, tt.query, 10)
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			if len(hits) != tt.want {
				t.Errorf("Search(%q) = %d hits, want %d: %+v", tt.query, len(hits), tt.want, hits)
			}
		})
	}

	t.Run("limit", func(t *testing.T) {
		hits, err := d.Search(ctx, "the", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 {
			t.Errorf("limit 2 gave %d hits", len(hits))
		}
		if all, _ := d.Search(ctx, "the", 0); len(all) < 5 {
			t.Errorf("limit 0 (the default) gave %d hits", len(all))
		}
	})
	_ = captions
}

// FuzzSearch feeds arbitrary text to Search: whatever the user types, it
// must not fail, and a word that is in the history must still be found
// beside it.
func FuzzSearch(f *testing.F) {
	for _, seed := range []string{
		"budget", `"unbalanced`, `a"b"c`, "NEAR(a b, 3)", "a OR b NOT c", "text:x", "*", "^start", "(", ")",
		"-x", "+y", "{a b}: c", "a AND", "\x00", "\xff\xfe", "日本語 テキスト", "café ", "'", `""`, "'\"*",
		strings.Repeat("(", 100), strings.Repeat("a ", 40),
	} {
		f.Add(seed)
	}
	d, _, _, _ := searchFixture(f)
	f.Fuzz(func(t *testing.T, q string) {
		hits, err := d.Search(t.Context(), q, 5)
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		if len(hits) > 5 {
			t.Fatalf("Search(%q) returned %d hits, over the limit", q, len(hits))
		}
		// The query is a conjunction: with "budget" in front, any hit also
		// holds budget; and "budget" alone is found whatever follows a space.
		hits, err = d.Search(t.Context(), "budget "+q+" ", 5)
		if err != nil {
			t.Fatalf("Search(budget %q): %v", q, err)
		}
		if matchQuery(q) == "" && len(hits) != 3 {
			t.Fatalf("Search(budget %q) = %d hits; the extra words hold nothing to search, want 3", q, len(hits))
		}
		// Any kind is a kind to filter by, never syntax: one that is not a
		// kind of the history finds nothing.
		hits, err = d.Search(t.Context(), "budget ", 5, q)
		if err != nil {
			t.Fatalf("Search(budget) in kind %q: %v", q, err)
		}
		if q != KindCaptions && q != KindFile && len(hits) != 0 {
			t.Fatalf("Search(budget) in kind %q found %+v", q, hits)
		}
	})
}
