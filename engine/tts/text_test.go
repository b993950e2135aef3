package tts

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-app/earshot/internal/textseg"
)

func TestStripMarkup(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		stripped bool
	}{
		{"Hello there.", "Hello there.", false},
		{"a < b and c > d", "a < b and c > d", false},
		{"<speak>Hello <break time=\"1s\"/>world.</speak>", "Hello world.", true},
		{"<speak>Hello<break time='500ms'/>world</speak>", "Hello world", true},
		{"Tom &amp; Jerry", "Tom & Jerry", true},
		{"&lt;b&gt; is bold", "<b> is bold", true},
		{"caf&#233; &#x263A;", "café ☺", true},
		{"AT&T and R&D", "AT&T and R&D", false},
		{"&#0; &#xZZ; &bogus;", "&#0; &#xZZ; &bogus;", false},
		{"one <!-- a comment --> two", "one two", true},
		{"<?xml version=\"1.0\"?><speak>Hi</speak>", "Hi", true},
		{"<prosody rate=\"slow\">slowly</prosody> said", "slowly said", true},
		{"unclosed <tag never ends", "unclosed <tag never ends", false},
		{"<p>Para one.</p><p>Para two.</p>", "Para one. Para two.", true},
		{"x <a title=\"a > b\">y</a>", "x y", true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, stripped := StripMarkup(tt.in)
			if got != tt.want || stripped != tt.stripped {
				t.Errorf("StripMarkup(%q) = %q, %v; want %q, %v", tt.in, got, stripped, tt.want, tt.stripped)
			}
		})
	}
}

func pieceTexts(text string, ps []Piece) []string {
	var out []string
	for _, p := range ps {
		out = append(out, text[p.Start:p.End])
	}
	return out
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "  \n", nil},
		{"one", "Hello.", []string{"Hello."}},
		{"sentences", "Hi there. How are you? Fine!", []string{"Hi there.", "How are you?", "Fine!"}},
		{"abbreviation", "Mr. Smith met Dr. Jones. They spoke.", []string{"Mr. Smith met Dr. Jones.", "They spoke."}},
		{"initial", "J. R. Smith wrote it.", []string{"J. R. Smith wrote it."}},
		{"decimal", "It costs 3.50 dollars. Cheap.", []string{"It costs 3.50 dollars.", "Cheap."}},
		{"lower case after period", "Use approx. three cups.", []string{"Use approx. three cups."}},
		{"quotes", "He said \"Stop.\" Then he left.", []string{"He said \"Stop.\"", "Then he left."}},
		{"blank line", "Title\n\nBody text here.", []string{"Title", "Body text here."}},
		{"no final punctuation", "just some words", []string{"just some words"}},
		{
			"long first sentence cut at a clause",
			"When the rain finally stopped, we walked down to the harbour and watched the boats come in.",
			[]string{"When the rain finally stopped,", "we walked down to the harbour and watched the boats come in."},
		},
		{
			"long first sentence without punctuation",
			"one two three four five six seven eight nine ten eleven twelve",
			[]string{"one two three four five six", "seven eight nine ten eleven twelve"},
		},
		{"first sentence a little long stays whole", "One two three four five six seven eight.", []string{"One two three four five six seven eight."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := pieceTexts(tt.in, Split(tt.in))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitBoundaries(t *testing.T) {
	text := "Well, this is a rather long sentence that keeps going on and on, with a clause; and another one after that, until it finally ends. Short."
	ps := Split(text)
	if len(ps) < 3 {
		t.Fatalf("pieces %q", pieceTexts(text, ps))
	}
	if ps[len(ps)-1].Boundary != SentenceEnd {
		t.Errorf("last piece ends with %v", ps[len(ps)-1].Boundary)
	}
	clauses := 0
	for _, p := range ps {
		if p.Boundary == ClauseEnd {
			clauses++
			if !textseg.EndsClause(text[p.Start:p.End]) {
				t.Errorf("clause piece %q does not end at a clause mark", text[p.Start:p.End])
			}
		}
	}
	if clauses == 0 {
		t.Errorf("no clause boundary in %q", pieceTexts(text, ps))
	}
}

// checkSplit holds Split's contract: pieces in order, trimmed, each
// word of the text in exactly one piece.
func checkSplit(t *testing.T, text string) {
	ps := Split(text)
	var got []string
	prev := 0
	for _, p := range ps {
		if p.Start < prev || p.End <= p.Start || p.End > len(text) {
			t.Fatalf("bad piece %+v after %d in %q", p, prev, text)
		}
		prev = p.End
		for _, w := range words(text[p.Start:p.End]) {
			got = append(got, text[p.Start+w.start:p.Start+w.end])
		}
	}
	var want []string
	for _, w := range words(text) {
		want = append(want, text[w.start:w.end])
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("pieces of %q lose or repeat words: %q", text, pieceTexts(text, ps))
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"", "Hello. World!", "a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p", "Mr. X. Y.\n\nZ", "é… ¿Qué? ¡Sí!", "\xff\xfe. a", strings.Repeat("word ", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkSplit(t, text)
		s := sanitize(text)
		if len(s) != len(text) || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Fatalf("sanitize(%q) = %q", text, s)
		}
	})
}

func FuzzStripMarkup(f *testing.F) {
	for _, s := range []string{"", "<speak>Hi</speak>", "a < b", "&amp;&#65;&#x41;&#1114112;", "<!-- x", "<a b='>'>c", "<![CDATA[x]]>", "&#99999999999;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, stripped := StripMarkup(text)
		if !stripped && out != text {
			t.Fatalf("StripMarkup(%q) changed the text to %q without reporting it", text, out)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("StripMarkup(%q) = %q: invalid UTF-8", text, out)
		}
	})
}

// TestDependencies fences the package: it sits at the bottom of the engine
// and imports only the standard library and textseg (which imports only
// the standard library).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, ".") && dep != "github.com/earshot-app/earshot/engine/tts" && dep != "github.com/earshot-app/earshot/internal/textseg" {
			t.Errorf("imports %s; only the standard library is allowed", dep)
		}
	}
}

func TestSplitJapanese(t *testing.T) {
	text := "としょかんは あさ くじに あきます。ろくじに しまります！"
	got := pieceTexts(text, Split(text))
	want := []string{"としょかんは あさ くじに あきます。", "ろくじに しまります！"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Split = %q, want %q", got, want)
	}
}
