package textseg

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"Hello", 1},
		{"Hello, world!", 4},
		{"I'll say it's 3.5 kg.", 8}, // I'll, say, it's, 3, ., 5, kg, .
		{"don’t stop", 2},
		{"'quoted'", 2}, // a closing apostrophe stays with its word (students')
		{"café naïve 東京", 3},
		{"$25 -- 10%", 6},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Tokens(tc.in); got != tc.want {
				t.Errorf("Tokens(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestFirstTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"One two. Three four five.", 10, "One two. Three four five."},
		{"One two. Three four five.", 4, "One two."},
		{"One two. Three four five.", 2, "One two"},
		{"One two three four.", 2, "One two"},
		{"Hello, world! More here.", 4, "Hello, world!"},
		{"Words", 0, ""},
		{"", 3, ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := FirstTokens(tc.in, tc.n)
			if got != tc.want {
				t.Errorf("FirstTokens(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if n := Tokens(got); n > tc.n {
				t.Errorf("FirstTokens(%q, %d) holds %d tokens", tc.in, tc.n, n)
			}
		})
	}
}

func FuzzFirstTokens(f *testing.F) {
	f.Add("One two. Three four five.", 3)
	f.Add("don’t stop 東京。", 1)
	f.Fuzz(func(t *testing.T, text string, n int) {
		got := FirstTokens(text, n%1000)
		if !strings.HasPrefix(text, got) {
			t.Fatalf("FirstTokens(%q, %d) = %q, not a start of the text", text, n%1000, got)
		}
		if m := Tokens(got); n%1000 >= 0 && m > n%1000 {
			t.Fatalf("FirstTokens(%q, %d) holds %d tokens", text, n%1000, m)
		}
	})
}
