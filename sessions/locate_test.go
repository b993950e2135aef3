package sessions

import (
	"strings"
	"testing"
)

func TestLocateSnippet(t *testing.T) {
	caps := []Caption{
		{Start: 0.5, Text: "Welcome to the quarterly review."},
		{Start: 4.25, Text: "The budget grew, and the team grew too."},
		{Start: 9, Text: "Next quarter the budget shrinks."},
	}
	mark := func(w string) string { return "\x02" + w + "\x03" }
	for _, tc := range []struct {
		name, snippet string
		at            float64
		ok            bool
	}{
		{"the words around the match place it", "…and the team grew too. Next quarter the " + mark("budget") + " shrinks.", 9, true},
		{"the first of two matches", "The " + mark("budget") + " grew, and the team…", 4.25, true},
		{"a match across captions", "quarterly review. " + mark("The") + " " + mark("budget") + " grew", 4.25, true},
		{"case and punctuation differ", "the BUDGET GROW… " + mark("shrinks"), 9, true},
		{"formatted otherwise: the marked word alone", "the team grew 2 " + mark("quarterly"), 0.5, true},
		{"no mark", "the budget grew", 0, false},
		{"a word no caption holds", mark("invoice") + " was sent", 0, false},
		{"empty", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok := locateSnippet(caps, tc.snippet)
			if ok != tc.ok || at != tc.at {
				t.Errorf("locateSnippet(%q) = %v, %v; want %v, %v", tc.snippet, at, ok, tc.at, tc.ok)
			}
		})
	}
	if _, ok := locateSnippet(nil, mark("budget")); ok {
		t.Error("located in no captions")
	}
}

func FuzzLocateSnippet(f *testing.F) {
	f.Add("The budget grew", "…the \x02budget\x03 grew…")
	f.Add("", "\x02\x03")
	f.Add("a b c", "\x02a\x03\x02")
	f.Fuzz(func(t *testing.T, text, snippet string) {
		caps := []Caption{{Start: 1, Text: text}, {Start: 2, Text: strings.ToUpper(text)}}
		if at, ok := locateSnippet(caps, snippet); ok && at != 1 && at != 2 {
			t.Fatalf("located at %v, not a caption's start", at)
		}
	})
}
