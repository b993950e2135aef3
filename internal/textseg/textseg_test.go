package textseg

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// texts returns the text of each span.
func texts(text string, spans []Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, text[s.Start:s.End])
	}
	return out
}

func TestSentences(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"white space", " \n\t ", nil},
		{"no end", "No end", []string{"No end"}},
		{"marks", "One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"white space trimmed", "  Hi there.\n  How are you?  ", []string{"Hi there.", "How are you?"}},
		{"titles", "Mr. Smith met Dr. Jones. They talked.", []string{"Mr. Smith met Dr. Jones.", "They talked."}},
		{"more titles", "Mrs. Lee and Prof. Ng live on St. Mark's Road. Yes.", []string{"Mrs. Lee and Prof. Ng live on St. Mark's Road.", "Yes."}},
		{"initials", "J. R. R. Tolkien wrote books. He died.", []string{"J. R. R. Tolkien wrote books.", "He died."}},
		{"capital initials", "The U.S. Army and the U.K. Navy met. Then they left.", []string{"The U.S. Army and the U.K. Navy met.", "Then they left."}},
		{"latin", "Bring fruit, e.g. Apples, i.e. Red ones. Good.", []string{"Bring fruit, e.g. Apples, i.e. Red ones.", "Good."}},
		{"versus", "It was Roe v. Wade, or Smith vs. Jones. Done.", []string{"It was Roe v. Wade, or Smith vs. Jones.", "Done."}},
		{"etc before a capital", "We bought pears, apples, etc. Then we left.", []string{"We bought pears, apples, etc.", "Then we left."}},
		{"etc before lower case", "etc. and so on. Done.", []string{"etc. and so on.", "Done."}},
		{"lower case after a period", "Use approx. three cups. Stir ca. ten times.", []string{"Use approx. three cups.", "Stir ca. ten times."}},
		{"unknown abbreviation before lower case", "Mix it w. care. Serve.", []string{"Mix it w. care.", "Serve."}},
		{"number", "See No. 5 first. I said no. Then I left.", []string{"See No. 5 first.", "I said no.", "Then I left."}},
		{"month", "We met on Jan. 5 at noon. It rained.", []string{"We met on Jan. 5 at noon.", "It rained."}},
		{"decimal", "It costs 3.14 dollars. Cheap.", []string{"It costs 3.14 dollars.", "Cheap."}},
		{"number at the end", "I counted to 3. Then I stopped.", []string{"I counted to 3.", "Then I stopped."}},
		{"version", "Install v1.2. It works.", []string{"Install v1.2.", "It works."}},
		{"ellipsis", "Wait... what? Yes... Then no.", []string{"Wait... what?", "Yes...", "Then no."}},
		{"ellipsis rune", "I thought so… Then he came… and went.", []string{"I thought so…", "Then he came… and went."}},
		{"quote after the stop", `He said "stop." Then left.`, []string{`He said "stop."`, "Then left."}},
		{"curly quote and bracket", "(It was late.”) Then we slept.", []string{"(It was late.”)", "Then we slept."}},
		{"dialogue tag", `"Stop!" he said. "Why?" she asked.`, []string{`"Stop!" he said.`, `"Why?" she asked.`}},
		{"opening quote on the next", `It ended. "Good," she said.`, []string{"It ended.", `"Good," she said.`}},
		{"both marks", "Really?! Yes.", []string{"Really?!", "Yes."}},
		{"inverted marks", "¿Qué? ¡Sí! Vale.", []string{"¿Qué?", "¡Sí!", "Vale."}},
		{"Sr. in Spanish", "El Sr. García llegó. Bien.", []string{"El Sr. García llegó.", "Bien."}},
		{"blank line", "Title\n\nBody text here.", []string{"Title", "Body text here."}},
		{"blank line with spaces", "Title\r\n \r\nBody", []string{"Title", "Body"}},
		{"line break", "One line\nwraps here.", []string{"One line\nwraps here."}},
		{"cjk", "としょかんは あさ くじに あきます。ろくじに しまります！", []string{"としょかんは あさ くじに あきます。", "ろくじに しまります！"}},
		{"cjk closer", "「はい。」次です。", []string{"「はい。」", "次です。"}},
		{"no space after", "a.b.c. x?y", []string{"a.b.c. x?y"}},
		{"lone marks", "Hello . World ?", []string{"Hello .", "World ?"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(tt.text, Sentences(tt.text))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestParagraphs(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"One. Two.", []string{"One. Two."}},
		{"First paragraph. Still first.\n\nSecond  one.\r\n\r\nThird", []string{"First paragraph. Still first.", "Second  one.", "Third"}},
		{"\n\na\n \n\nb\nc\n\n", []string{"a", "b\nc"}},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got := texts(tt.text, Paragraphs(tt.text))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Paragraphs(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{" a  b\tc\n", []string{"a", "b", "c"}},
		{"x\u00a0y\u3000z", []string{"x", "y", "z"}},
		{"あきます。ろくじ「はい！」x", []string{"あきます。", "ろくじ「はい！」", "x"}},
		{"\xff\xfe a", []string{"\xff\xfe", "a"}},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got := texts(tt.text, Words(tt.text))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestComplete holds the cut of text still arriving: after the white
// space that follows the last complete sentence.
func TestComplete(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"Hello", 0},
		{"Hello.", 0},
		{"Hello. ", 7},
		{"Hello. World", 7},
		{"Hello.  World. And", 15},
		{"Dr. Smith is here", 0},
		{"J. R. Smith wrote. More", 19},
		{`He said "stop." Then`, 16},
		{"Really?! Yes", 9},
		{"3.14 is pi", 0},
		{"e.g. this", 0},
		{"Ça va? Oui", 8},
		{"Dr. ", 0},
		{"Hello. world", 0},
		{"No. ", 0},
		{"No. 5 is. ", 10},
		{"No. Way", 4},
		{"Title\n\nBody", 7},
		{"Title\n", 0},
		{"あきます。ろくじ", 0},
		{"あきます。 ろくじ", 16},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := Complete(tc.text); got != tc.want {
				t.Errorf("Complete(%q) = %d (%q), want %d", tc.text, got, tc.text[:got], tc.want)
			}
		})
	}
}

// TestCompleteClause holds the cut of a long text still arriving with no
// complete sentence: after the last clause end within the limit.
func TestCompleteClause(t *testing.T) {
	for _, tc := range []struct {
		text string
		max  int
		want int
	}{
		{"", 10, 0},
		{"one, two, three", 100, 10},
		{"one, two, three, ", 100, 17},
		{"one, two, three,", 100, 10}, // the last comma's word may go on
		{"one, two, three", 8, 5},     // "one, two," is 9 characters
		{"one, two, three", 9, 10},
		{"as follows: a list; and — so", 100, 28},
		{"no clause ends here at all", 100, 0},
		{"comma,in a word", 100, 0},
		{"ça, oui", 3, 5}, // runes, not bytes
		{"ça, oui", 2, 0},
		{"first, ", 0, 0},
	} {
		if got := CompleteClause(tc.text, tc.max); got != tc.want {
			t.Errorf("CompleteClause(%q, %d) = %d (%q), want %d", tc.text, tc.max, got, tc.text[:got], tc.want)
		}
	}
}

func TestEndsInStop(t *testing.T) {
	for w, want := range map[string]bool{
		"end.": true, "Dr.": true, "why?": true, "no!": true, "so…": true, "what⁉": true, `said."`: true, "(end.)": true,
		"終わり。": true, "word": false, "3.14": false, "this,": false, "": false, `"quote"`: false,
	} {
		if got := EndsInStop(w); got != want {
			t.Errorf("EndsInStop(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestEndsClause(t *testing.T) {
	for w, want := range map[string]bool{
		"stopped,": true, "this;": true, "as follows:": true, "so—": true, "so–": true, "-": true, "--": true,
		`said,"`: true, "(aside,)": true, "、": true, "word": false, "end.": false, "": false, "a-b": false,
	} {
		if got := EndsClause(w); got != want {
			t.Errorf("EndsClause(%q) = %v, want %v", w, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	first := Limit{Max: 6, Whole: 8, Reach: 9, Words: true}
	rest := Limit{Max: 24, Whole: 32, Reach: 36, Words: true}
	chars := Limit{Max: 20}
	for _, tt := range []struct {
		name        string
		text        string
		first, rest Limit
		want        []string
		bounds      []Boundary
	}{
		{"sentences", "Hi there. How are you? Fine!", first, rest, []string{"Hi there.", "How are you?", "Fine!"}, []Boundary{SentenceEnd, SentenceEnd, SentenceEnd}},
		{
			"clause", "When the rain finally stopped, we walked down to the harbour and watched the boats come in.", first, rest,
			[]string{"When the rain finally stopped,", "we walked down to the harbour and watched the boats come in."},
			[]Boundary{ClauseEnd, SentenceEnd},
		},
		{
			"clause within reach", "One two three four five six seven eight, nine ten.", first, rest,
			[]string{"One two three four five six seven eight,", "nine ten."},
			[]Boundary{ClauseEnd, SentenceEnd},
		},
		{
			"words", "one two three four five six seven eight nine ten eleven twelve", first, rest,
			[]string{"one two three four five six", "seven eight nine ten eleven twelve"},
			[]Boundary{WordEnd, SentenceEnd},
		},
		{"a little long stays whole", "One two three four five six seven eight.", first, rest, []string{"One two three four five six seven eight."}, []Boundary{SentenceEnd}},
		{
			"characters", "Short one. A longer sentence, with a clause and no other mark at all.", chars, chars,
			[]string{"Short one.", "A longer sentence,", "with a clause and no", "other mark at all."},
			[]Boundary{SentenceEnd, ClauseEnd, WordEnd, SentenceEnd},
		},
		{
			"long word", "abcdefghijklmnopqrstuvwxyz12345 end", Limit{Max: 10}, Limit{Max: 10},
			[]string{"abcdefghij", "klmnopqrst", "uvwxyz1234", "5 end"},
			[]Boundary{InWord, InWord, InWord, SentenceEnd},
		},
		{"runes not bytes", "ééééé ééééé", Limit{Max: 11}, Limit{Max: 11}, []string{"ééééé ééééé"}, []Boundary{SentenceEnd}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps := Split(tt.text, tt.first, tt.rest)
			var got []string
			var bounds []Boundary
			for _, p := range ps {
				got = append(got, tt.text[p.Start:p.End])
				bounds = append(bounds, p.Boundary)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Split(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if len(bounds) != len(tt.bounds) {
				t.Fatalf("boundaries %v, want %v", bounds, tt.bounds)
			}
			for i := range bounds {
				if bounds[i] != tt.bounds[i] {
					t.Errorf("boundaries %v, want %v", bounds, tt.bounds)
					break
				}
			}
		})
	}
}

func TestChunks(t *testing.T) {
	for _, tt := range []struct {
		text string
		size int
		want []string
	}{
		{"", 10, nil},
		{"One. Two. Three.", 100, []string{"One. Two. Three."}},
		{"One. Two. Three.", 9, []string{"One. Two.", "Three."}},
		{"Mr. Smith came. Dr. Jones too.", 16, []string{"Mr. Smith came.", "Dr. Jones too."}},
		{"A sentence, much longer than the limit, is cut at clauses.", 25, []string{"A sentence,", "much longer than the", "limit, is cut at clauses."}},
		{"Hi.  Folded\n\nspace.", 17, []string{"Hi.  Folded\n\nspace."}},
		{"abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"x", 0, []string{"x"}},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got := texts(tt.text, Chunks(tt.text, tt.size))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Chunks(%q, %d) = %q, want %q", tt.text, tt.size, got, tt.want)
			}
		})
	}
}

// checkCover fails t unless spans are in order, not empty, trimmed, and
// all of text outside them is white space.
func checkCover(t *testing.T, what, text string, spans []Span) {
	t.Helper()
	prev := 0
	for _, s := range spans {
		if s.Start < prev || s.End <= s.Start || s.End > len(text) {
			t.Fatalf("%s of %q: bad span %+v after %d: %q", what, text, s, prev, texts(text, spans))
		}
		if strings.TrimFunc(text[prev:s.Start], unicode.IsSpace) != "" {
			t.Fatalf("%s of %q: %q left out before %+v", what, text, text[prev:s.Start], s)
		}
		if r, _ := utf8.DecodeRuneInString(text[s.Start:]); unicode.IsSpace(r) {
			t.Fatalf("%s of %q: span %q starts with white space", what, text, text[s.Start:s.End])
		}
		if r, _ := utf8.DecodeLastRuneInString(text[:s.End]); unicode.IsSpace(r) {
			t.Fatalf("%s of %q: span %q ends with white space", what, text, text[s.Start:s.End])
		}
		prev = s.End
	}
	if strings.TrimFunc(text[prev:], unicode.IsSpace) != "" {
		t.Fatalf("%s of %q: %q left out at the end", what, text, text[prev:])
	}
}

var seeds = []string{
	"", "Hello. World!", "Mr. X. Y.\n\nZ", "é… ¿Qué? ¡Sí!", "\xff\xfe. a", "…”) x", "a\n\nb",
	"U.S. e.g. No. 5 Jan. etc. a.m. Then", "「はい。」次です。", `"Stop!" he said.`, "3.14. . .. ...",
	"a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p", strings.Repeat("word ", 80),
}

// FuzzSentences: splitting never panics, gives no empty sentence, and its
// spans cover the text in order, leaving out white space only; Words and
// Paragraphs hold the same.
func FuzzSentences(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkCover(t, "Sentences", text, Sentences(text))
		checkCover(t, "Paragraphs", text, Paragraphs(text))
		ws := Words(text)
		checkCover(t, "Words", text, ws)
		if n := len(strings.Fields(text)); len(ws) < n {
			t.Fatalf("%d words in %q, fewer than its %d fields", len(ws), text, n)
		}
	})
}

// FuzzComplete: the cuts of text still arriving (Complete, CompleteClause)
// are within it, on a rune boundary, after white space, and never inside
// a word; a clause cut is within its limit.
func FuzzComplete(f *testing.F) {
	for _, s := range []string{"", "Hello. World", "Dr. Who? Yes! No.", `"Stop." he said. `, "a.b. c", "Ça va? Oui. ", "\xff. x", ".  ", "?\u00a0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkCut(t, text, Complete(text))
		clause := CompleteClause(text, 40)
		checkCut(t, text, clause)
		if clause > 0 && utf8.RuneCountInString(strings.TrimRightFunc(text[:clause], unicode.IsSpace)) > 40 {
			t.Fatalf("clause cut %d of %q beyond 40 characters", clause, text)
		}
	})
}

// checkCut holds a cut of text still arriving: within it, on a rune
// boundary, after white space, and never inside a word.
func checkCut(t *testing.T, text string, cut int) {
	t.Helper()
	if cut < 0 || cut > len(text) {
		t.Fatalf("cut %d outside %q", cut, text)
	}
	if cut == 0 {
		return
	}
	onBoundary := cut == len(text)
	for i := range text {
		onBoundary = onBoundary || i == cut
	}
	if !onBoundary {
		t.Fatalf("cut %d inside a rune of %q", cut, text)
	}
	r, _ := utf8.DecodeLastRuneInString(text[:cut])
	if !unicode.IsSpace(r) {
		t.Fatalf("cut %d of %q not after white space", cut, text)
	}
	if cut < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[cut:]); unicode.IsSpace(r) {
			t.Fatalf("cut %d of %q leaves white space behind", cut, text)
		}
	}
}

// FuzzChunks: chunks cover the text in order and none is longer than the
// size once its white space is folded.
func FuzzChunks(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, uint8(10))
	}
	f.Fuzz(func(t *testing.T, text string, size uint8) {
		cs := Chunks(text, int(size))
		checkCover(t, "Chunks", text, cs)
		for _, c := range cs {
			if n := utf8.RuneCountInString(strings.Join(strings.Fields(text[c.Start:c.End]), " ")); n > max(int(size), 1) {
				t.Fatalf("chunk %q of %d characters, size %d", text[c.Start:c.End], n, size)
			}
		}
	})
}

// TestImports fences the package to the standard library: the engine's
// lowest packages import it.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s; only the standard library is allowed", f, p)
			}
		}
	}
}

// BenchmarkSentences splits a text of about 50,000 words, as the text
// intelligence does.
func BenchmarkSentences(b *testing.B) {
	text := strings.Repeat("Mr. Smith met Dr. Jones at 3.14 p.m. on Jan. 5, and they talked about the U.S. budget for a while. Was it good? \"Yes!\" he said. ", 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Sentences(text)
	}
}
