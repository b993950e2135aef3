package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func TestParagraphs(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		opts      ParagraphOptions
		want      string // paragraphs transcript
		numWords  []int
		sentences []int // sentences per paragraph
	}{
		{
			name: "one paragraph", in: "hello there / how are you",
			want: "\nHello there. How are you?", numWords: []int{5}, sentences: []int{2},
		},
		{
			name: "long pause", in: "hello there // how are you",
			want: "\nHello there.\n\nHow are you?", numWords: []int{2, 3}, sentences: []int{1, 1},
		},
		{
			name: "custom pause", in: "hello there / how are you", opts: ParagraphOptions{Pause: 0.5},
			want: "\nHello there.\n\nHow are you?", numWords: []int{2, 3}, sentences: []int{1, 1},
		},
		{
			name: "speaker change", in: "hi@0 there@0 / fine@0 hello@1 you@1 // and@1 more@1",
			want:     "\nSpeaker 0: Hi there. Fine.\n\nSpeaker 1: Hello you.\n\nAnd more.",
			numWords: []int{3, 2, 2}, sentences: []int{2, 1, 1},
		},
		{
			name: "length", in: "one two / three four / five six", opts: ParagraphOptions{MaxWords: 3},
			want: "\nOne two. Three four.\n\nFive six.", numWords: []int{4, 2}, sentences: []int{2, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Apply(mkWords(tc.in), Options{Punctuate: true})
			p := Paragraphs(res.Words, res.SentenceEnds, tc.opts)
			if p.Transcript != tc.want {
				t.Errorf("transcript = %q, want %q", p.Transcript, tc.want)
			}
			var nw, ns []int
			for _, para := range p.Paragraphs {
				nw = append(nw, para.NumWords)
				ns = append(ns, len(para.Sentences))
				if para.Start != para.Sentences[0].Start || para.End != para.Sentences[len(para.Sentences)-1].End {
					t.Errorf("paragraph times %v..%v disagree with its sentences", para.Start, para.End)
				}
			}
			if !reflect.DeepEqual(nw, tc.numWords) || !reflect.DeepEqual(ns, tc.sentences) {
				t.Errorf("num_words %v sentences %v, want %v %v", nw, ns, tc.numWords, tc.sentences)
			}
		})
	}
}

func TestParagraphsSentenceTimes(t *testing.T) {
	in := mkWords("hello there / how are you")
	res := Apply(in, Options{Punctuate: true})
	p := Paragraphs(res.Words, res.SentenceEnds, ParagraphOptions{})
	want := []api.Sentence{
		{Text: "Hello there.", Start: in[0].Start, End: in[1].End},
		{Text: "How are you?", Start: in[2].Start, End: in[4].End},
	}
	if !reflect.DeepEqual(p.Paragraphs[0].Sentences, want) {
		t.Errorf("sentences = %+v, want %+v", p.Paragraphs[0].Sentences, want)
	}
}

func TestParagraphsBadEnds(t *testing.T) {
	ws := mkWords("a b c d")
	for _, ends := range [][]int{nil, {-1, 9}, {2, 1, 1}, {3, 3}} {
		p := Paragraphs(ws, ends, ParagraphOptions{})
		total := 0
		for _, para := range p.Paragraphs {
			total += para.NumWords
		}
		if total != len(ws) {
			t.Errorf("ends %v: paragraphs hold %d words, want %d", ends, total, len(ws))
		}
	}
	p := Paragraphs(nil, nil, ParagraphOptions{})
	if p.Transcript != "" || p.Paragraphs == nil || len(p.Paragraphs) != 0 {
		t.Errorf("Paragraphs(nil) = %+v", p)
	}
	b, err := json.Marshal(p)
	if err != nil || string(b) != `{"transcript":"","paragraphs":[]}` {
		t.Errorf("empty paragraphs encode as %s (%v)", b, err)
	}
}

// TestParagraphsFixture runs a recorded response's words through
// punctuation and paragraphs and compares the paragraph structure with what
// the hosted service produced for the same words.
func TestParagraphsFixture(t *testing.T) {
	matches, _ := filepath.Glob("../../../shared/fixtures/recorded/listen-rest/f3b6208a-*-response.json")
	if len(matches) == 0 {
		t.Skip("recorded fixtures not present")
	}
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Results struct {
			Channels []struct {
				Alternatives []struct {
					Words      []api.Word     `json:"words"`
					Paragraphs api.Paragraphs `json:"paragraphs"`
				} `json:"alternatives"`
			} `json:"channels"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	alt := resp.Results.Channels[0].Alternatives[0]
	spoken := make([]api.Word, len(alt.Words))
	for i, w := range alt.Words {
		spoken[i] = api.Word{Word: w.Word, Start: w.Start, End: w.End, Confidence: w.Confidence}
	}
	res := Apply(spoken, Options{SmartFormat: true})
	got := Paragraphs(res.Words, res.SentenceEnds, ParagraphOptions{})
	want := alt.Paragraphs
	if len(got.Paragraphs) != len(want.Paragraphs) {
		t.Fatalf("got %d paragraphs, want %d", len(got.Paragraphs), len(want.Paragraphs))
	}
	for i := range want.Paragraphs {
		g, w := got.Paragraphs[i], want.Paragraphs[i]
		if g.NumWords != w.NumWords || g.Start != w.Start || g.End != w.End || len(g.Sentences) != len(w.Sentences) {
			t.Errorf("paragraph %d: num_words %d start %v end %v sentences %d; want %d %v %v %d",
				i, g.NumWords, g.Start, g.End, len(g.Sentences), w.NumWords, w.Start, w.End, len(w.Sentences))
		}
	}
	if !strings.HasPrefix(got.Transcript, "\n") || strings.Count(got.Transcript, "\n") != strings.Count(want.Transcript, "\n") {
		t.Errorf("transcript shape %q differs from %q", got.Transcript, want.Transcript)
	}
	if first, last := res.Words[0].PunctuatedWord, res.Words[len(res.Words)-1].PunctuatedWord; first != "We" || last != "america." {
		t.Errorf("first and last punctuated words = %q %q", first, last)
	}
}
