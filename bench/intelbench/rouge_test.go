package intelbench

import (
	"math"
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		text string
		stem bool
		want []string
	}{
		{"punctuation and case", "Hello, World! It's 3.5%", false, []string{"hello", "world", "it", "s", "3", "5"}},
		{"non-ascii separates", "café—naïve", false, []string{"caf", "na", "ve"}},
		{"empty", " ,.; ", false, nil},
		{"stemmed", "Police killed the gunmen", true, []string{"polic", "kill", "the", "gunmen"}},
		{"short words unstemmed", "was its ties", true, []string{"was", "its", "ti"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokenize(tt.text, tt.stem); !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q, %v) = %q, want %q", tt.text, tt.stem, got, tt.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The expected values are worked out by hand in each case's comment.
func TestRouge(t *testing.T) {
	tests := []struct {
		name      string
		cand, ref string
		stem      bool
		r1, rl    Score
	}{
		// 5 shared unigrams (the x2, cat, on, mat) of 6 each side; LCS
		// "the cat on the mat" = 5.
		{"one word swapped", "the cat sat on the mat", "the cat is on the mat", false,
			Score{5.0 / 6, 5.0 / 6, 5.0 / 6}, Score{5.0 / 6, 5.0 / 6, 5.0 / 6}},
		// Lin (2004): without stemming police, the, gunman of 4; LCS 3.
		{"Lin's example unstemmed", "police kill the gunman", "police killed the gunman", false,
			Score{0.75, 0.75, 0.75}, Score{0.75, 0.75, 0.75}},
		// With stemming killed = kill, all four match.
		{"Lin's example stemmed", "police kill the gunman", "police killed the gunman", true,
			Score{1, 1, 1}, Score{1, 1, 1}},
		// Same words, order changed: ROUGE-1 3/4, LCS "the gunman" 2/4.
		{"order matters for L", "the gunman kill police", "police killed the gunman", false,
			Score{0.75, 0.75, 0.75}, Score{0.5, 0.5, 0.5}},
		// P = 2/4, R = 2/2, F = 2*0.5*1/1.5 = 2/3.
		{"longer candidate", "a b c d", "a c", false,
			Score{0.5, 1, 2.0 / 3}, Score{0.5, 1, 2.0 / 3}},
		// Clipped counts: "the" counts once. P = 1/4, R = 1/2, F = 1/3.
		{"clipping", "the the the the", "the cat", false,
			Score{0.25, 0.5, 1.0 / 3}, Score{0.25, 0.5, 1.0 / 3}},
		{"nothing shared", "alpha beta", "gamma delta", false, Score{}, Score{}},
		{"empty candidate", "", "gamma delta", false, Score{}, Score{}},
		{"empty reference", "gamma", "", false, Score{}, Score{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := Tokenize(tt.cand, tt.stem), Tokenize(tt.ref, tt.stem)
			for _, m := range []struct {
				name      string
				got, want Score
			}{{"ROUGE-1", Rouge1(c, r), tt.r1}, {"ROUGE-L", RougeL(c, r), tt.rl}} {
				if !near(m.got.Precision, m.want.Precision) || !near(m.got.Recall, m.want.Recall) || !near(m.got.F1, m.want.F1) {
					t.Errorf("%s = %+v, want %+v", m.name, m.got, m.want)
				}
			}
		})
	}
}

func TestLCS(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a b c d e f", "a c e", 3},
		{"a b c b d a b", "b d c a b a", 4}, // the textbook CLRS example: "b c b a"
		{"x y z", "z y x", 1},
		{"", "a", 0},
	}
	for _, tt := range tests {
		t.Run(tt.a+"|"+tt.b, func(t *testing.T) {
			if got := lcs(Tokenize(tt.a, false), Tokenize(tt.b, false)); got != tt.want {
				t.Errorf("lcs = %d, want %d", got, tt.want)
			}
		})
	}
}

// FuzzRouge checks the scorer's invariants on any pair of texts: scores in
// 0..1, LCS never above the unigram overlap, and swapping the texts swaps
// precision and recall.
func FuzzRouge(f *testing.F) {
	f.Add("the cat sat on the mat", "the cat is on the mat")
	f.Add("", "x")
	f.Add("Généralisations!! 123 oscillators", "generalization oscillator")
	f.Fuzz(func(t *testing.T, a, b string) {
		ca, cb := Tokenize(a, true), Tokenize(b, true)
		r1, rl := Rouge1(ca, cb), RougeL(ca, cb)
		for _, s := range []Score{r1, rl} {
			for _, v := range []float64{s.Precision, s.Recall, s.F1} {
				if v < 0 || v > 1 || math.IsNaN(v) {
					t.Fatalf("score %+v out of range", s)
				}
			}
		}
		if rl.Recall > r1.Recall+1e-12 {
			t.Fatalf("ROUGE-L recall %v above ROUGE-1 recall %v", rl.Recall, r1.Recall)
		}
		if sw := Rouge1(cb, ca); !near(sw.Precision, r1.Recall) || !near(sw.Recall, r1.Precision) {
			t.Fatalf("swapped %+v, not the mirror of %+v", sw, r1)
		}
	})
}
