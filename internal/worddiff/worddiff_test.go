package worddiff

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  \t\n", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"HELLO hello Hello.", []string{"hello", "hello", "hello"}},
		{"I don't know; it's 3.5 o'clock.", []string{"i", "don't", "know", "it's", "3.5", "o'clock"}},
		{"She paid $1,000 for 2 of them", []string{"she", "paid", "1000", "for", "2", "of", "them"}},
		{"five 5 5th", []string{"five", "5", "5th"}},
		{"cold-hearted, rather—selfish / mean", []string{"cold", "hearted", "rather", "selfish", "mean"}},
		{"'quoted' words", []string{"quoted", "words"}},
		{"It\u2019s Zoë's CAFÉ", []string{"it's", "zoë's", "café"}},
		{"end. 3. 4", []string{"end", "3", "4"}},
		{"... ?!", nil},
	} {
		if got := Words(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCompareKnown checks alignments and error rates worked out by hand.
func TestCompareKnown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ref, hyp string
		s, d, i  int
		wer      float64
		inline   string
	}{
		{"equal", "the cat sat", "The cat, sat.", 0, 0, 0, 0, "the cat sat"},
		{"one substitution", "the cat sat on the mat", "the cat sat on a mat", 1, 0, 0, 1.0 / 6, "the cat sat on [-the-]{+a+} mat"},
		{"one deletion", "he was not an ill disposed young man", "he was not an disposed young man", 0, 1, 0, 1.0 / 8, "he was not an [-ill-] disposed young man"},
		{"one insertion", "he might even have been made amiable", "he might even have been made amiable himself", 0, 0, 1, 1.0 / 7, "he might even have been made amiable {+himself+}"},
		{"all three", "a b c d e f", "a x c e f g", 1, 1, 1, 3.0 / 6, "a [-b-]{+x+} c [-d-] e f {+g+}"},
		{"substitutions tie with an insertion and a deletion", "a b c d e", "a x c e f", 3, 0, 0, 3.0 / 5, "a [-b-]{+x+} c [-d-]{+e+} [-e-]{+f+}"},
		{"empty both", "", "", 0, 0, 0, 0, ""},
		{"empty hypothesis", "one two three", "", 0, 3, 0, 1, "[-one-] [-two-] [-three-]"},
		{"empty reference", "", "one two", 0, 0, 2, 1, "{+one+} {+two+}"},
		{"all different", "alpha beta gamma", "delta epsilon zeta", 3, 0, 0, 1, "[-alpha-]{+delta+} [-beta-]{+epsilon+} [-gamma-]{+zeta+}"},
		{"longer hypothesis, all wrong", "yes", "no no no", 1, 0, 2, 3, ""},
		{"repeated words", "the the the", "the the", 0, 1, 0, 1.0 / 3, ""},
		{"repeated words, inserted", "to be or not to be", "to be or not to be to be", 0, 0, 2, 2.0 / 6, "to be or not to be {+to+} {+be+}"},
		{"numbers as written", "five dollars", "5 dollars", 1, 0, 0, 0.5, "[-five-]{+5+} dollars"},
		{"shift by one", "a b c d", "b c d e", 0, 1, 1, 0.5, "[-a-] b c d {+e+}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(tc.ref, tc.hyp)
			if r.Substitutions != tc.s || r.Deletions != tc.d || r.Insertions != tc.i {
				t.Errorf("S=%d D=%d I=%d, want S=%d D=%d I=%d (%s)", r.Substitutions, r.Deletions, r.Insertions, tc.s, tc.d, tc.i, r.Inline())
			}
			if math.Abs(r.WER()-tc.wer) > 1e-12 {
				t.Errorf("WER %g, want %g", r.WER(), tc.wer)
			}
			if tc.inline != "" && r.Inline() != tc.inline {
				t.Errorf("inline %q, want %q", r.Inline(), tc.inline)
			}
			checkResult(t, Words(tc.ref), Words(tc.hyp), r)
		})
	}
}

// TestAlignLong checks that splitting long inputs (Hirschberg) still
// finds an alignment of least cost.
func TestAlignLong(t *testing.T) {
	old := maxCells
	maxCells = 16 // every input of more than a few words is split
	t.Cleanup(func() { maxCells = old })
	ref := strings.Fields(strings.Repeat("and mister john dashwood had then leisure to consider how much ", 6))
	hyp := strings.Fields(strings.Repeat("and mr john guess what and then at leisure to consider how much ", 6))
	r := Align(ref, hyp)
	checkResult(t, ref, hyp, r)
	maxCells = old
	whole := Align(ref, hyp)
	if r.Errors() != whole.Errors() || r.Errors() != distance(ref, hyp) {
		t.Errorf("split alignment %d errors, whole %d, distance %d", r.Errors(), whole.Errors(), distance(ref, hyp))
	}
}

// checkResult checks that the operations rebuild both sides, that the
// counts agree with them, and that the cost is the edit distance.
func checkResult(t *testing.T, ref, hyp []string, r Result) {
	t.Helper()
	var gotRef, gotHyp []string
	s, d, i := 0, 0, 0
	for _, op := range r.Ops {
		switch op.Kind {
		case Equal:
			if op.Ref != op.Hyp {
				t.Fatalf("equal op %+v with different words", op)
			}
			gotRef, gotHyp = append(gotRef, op.Ref), append(gotHyp, op.Hyp)
		case Substitute:
			if op.Ref == op.Hyp {
				t.Fatalf("substitution %+v of a word by itself", op)
			}
			s++
			gotRef, gotHyp = append(gotRef, op.Ref), append(gotHyp, op.Hyp)
		case Delete:
			d++
			gotRef = append(gotRef, op.Ref)
		case Insert:
			i++
			gotHyp = append(gotHyp, op.Hyp)
		default:
			t.Fatalf("op of kind %v", op.Kind)
		}
	}
	if !slices.Equal(gotRef, ref) || !slices.Equal(gotHyp, hyp) {
		t.Fatalf("ops rebuild %q / %q, want %q / %q", gotRef, gotHyp, ref, hyp)
	}
	if s != r.Substitutions || d != r.Deletions || i != r.Insertions || r.RefWords != len(ref) || r.HypWords != len(hyp) {
		t.Fatalf("counts %+v, ops say S=%d D=%d I=%d", r, s, d, i)
	}
	if want := distance(ref, hyp); r.Errors() != want {
		t.Fatalf("%d errors, the edit distance is %d", r.Errors(), want)
	}
}

// distance is the plain word-level edit distance, for checking.
func distance(a, b []string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j-1]+c, d[i-1][j]+1, d[i][j-1]+1)
		}
	}
	return d[len(a)][len(b)]
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Equal: "equal", Substitute: "substitute", Insert: "insert", Delete: "delete", Kind(9): "unknown"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}

func FuzzCompare(f *testing.F) {
	f.Add("the cat sat on the mat", "the cat sat on a mat", uint8(0))
	f.Add("", "x", uint8(3))
	f.Add("1,000.5 don't-stop", "\xff\xfe 'x' 3.", uint8(9))
	f.Fuzz(func(t *testing.T, ref, hyp string, cells uint8) {
		old := maxCells
		maxCells = int(cells) + 1 // also the split path
		defer func() { maxCells = old }()
		r := Compare(ref, hyp)
		if len(r.Ops) > 0 && len(Words(ref))*len(Words(hyp)) < 400 {
			checkResult(t, Words(ref), Words(hyp), r)
		}
		if w := r.WER(); w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			t.Fatalf("WER %g", w)
		}
		if self := Compare(ref, ref); self.WER() != 0 || self.Errors() != 0 {
			t.Fatalf("a text against itself: %+v", self)
		}
		for _, w := range Words(ref) {
			if w == "" || !utf8.ValidString(w) && utf8.ValidString(ref) {
				t.Fatalf("word %q of %q", w, ref)
			}
		}
	})
}
