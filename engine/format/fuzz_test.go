package format

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// fuzzVocab mixes number words, unit words, question openers, address
// words and a few awkward strings.
var fuzzVocab = []string{
	"zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "fifteen", "nineteen", "twenty", "thirty", "ninety",
	"hundred", "thousand", "million", "trillion", "a", "and", "point",
	"first", "second", "third", "twelfth", "twentieth", "hundredth",
	"dollars", "dollar", "cents", "euros", "percent", "per", "cent", "o'clock", "p", "m", "am", "pm", "a.m.",
	"at", "dot", "com", "uk", "jane", "example", "look",
	"may", "march", "july", "november", "of", "the", "mr", "dr", "monday",
	"i", "i'm", "what", "what's", "how", "many", "is", "do", "you", "have",
	"social", "security", "ssn", "number", "call", "my",
	"é", "İstanbul", "[x]", "ǆ", "x\u0301",
}

// sameWords compares word lists field by field, floats by their bits so
// that NaN equals NaN.
func sameWords(a, b []api.Word) bool {
	if len(a) != len(b) {
		return false
	}
	bits := math.Float64bits
	for i := range a {
		x, y := a[i], b[i]
		if bits(x.Start) != bits(y.Start) || bits(x.End) != bits(y.End) || bits(x.Confidence) != bits(y.Confidence) {
			return false
		}
		x.Start, x.End, x.Confidence, y.Start, y.End, y.Confidence = 0, 0, 0, 0, 0, 0
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// checkResult asserts the invariants every Apply result keeps.
func checkResult(t *testing.T, in, before []api.Word, opts Options, res Result) {
	t.Helper()
	if !sameWords(in, before) {
		t.Fatal("Apply modified its input")
	}
	if len(res.Words) != len(res.Spans) {
		t.Fatalf("%d words but %d spans", len(res.Words), len(res.Spans))
	}
	if len(res.Words) > len(in) {
		t.Fatalf("%d output words from %d input words", len(res.Words), len(in))
	}
	next := 0
	for k, sp := range res.Spans {
		if sp.Start != next || sp.End <= sp.Start {
			t.Fatalf("span %d = %v does not continue at %d", k, sp, next)
		}
		next = sp.End
		w := res.Words[k]
		if math.Float64bits(w.Start) != math.Float64bits(in[sp.Start].Start) ||
			math.Float64bits(w.End) != math.Float64bits(in[sp.End-1].End) {
			t.Fatalf("word %d timing %v..%v, want %v..%v", k, w.Start, w.End, in[sp.Start].Start, in[sp.End-1].End)
		}
		if (opts.Punctuate || opts.SmartFormat) != (w.PunctuatedWord != "") {
			t.Fatalf("word %d punctuated_word %q with punctuation %v", k, w.PunctuatedWord, opts.Punctuate || opts.SmartFormat)
		}
	}
	if next != len(in) {
		t.Fatalf("spans end at %d, want %d", next, len(in))
	}
	if !opts.SmartFormat && !opts.Numerals && len(opts.Replace) == 0 {
		if len(res.Words) != len(in) {
			t.Fatalf("word count changed without formatting: %d -> %d", len(in), len(res.Words))
		}
		for k := range in {
			if res.Words[k].Word != in[k].Word {
				t.Fatalf("word %d changed without formatting: %q -> %q", k, in[k].Word, res.Words[k].Word)
			}
		}
	}
	for k, e := range res.SentenceEnds {
		if e < 0 || e >= len(res.Words) || k > 0 && e <= res.SentenceEnds[k-1] {
			t.Fatalf("bad sentence ends %v for %d words", res.SentenceEnds, len(res.Words))
		}
	}
	if len(res.Words) > 0 {
		if res.SentenceEnds[len(res.SentenceEnds)-1] != len(res.Words)-1 {
			t.Fatalf("last word does not end a sentence: %v", res.SentenceEnds)
		}
		if Transcript(res.Words) == "" {
			t.Fatal("empty transcript for non-empty words")
		}
	}
	for a := -1; a <= len(in)+1; a++ {
		for _, b := range []int{a, a + 1, a + 3, len(in) + 1} {
			j, k := res.Map(a, b)
			if j < 0 || j > k || k > len(res.Words) {
				t.Fatalf("Map(%d, %d) = %d, %d out of range %d", a, b, j, k, len(res.Words))
			}
		}
	}
	p := Paragraphs(res.Words, res.SentenceEnds, ParagraphOptions{})
	total := 0
	for _, para := range p.Paragraphs {
		total += para.NumWords
	}
	if total != len(res.Words) || len(res.Words) > 0 && !strings.HasPrefix(p.Transcript, "\n") {
		t.Fatalf("paragraphs hold %d of %d words; transcript %q", total, len(res.Words), p.Transcript)
	}
	us := Utterances(res.Words, UtteranceOptions{}, func() string { return "id" })
	total = 0
	for _, u := range us {
		total += len(u.Words)
	}
	if total != len(res.Words) {
		t.Fatalf("utterances hold %d of %d words", total, len(res.Words))
	}
}

// FuzzApply feeds arbitrary word lists, timings (including overlaps, NaN and
// infinities), speakers, boundaries and replacements to Apply and checks
// its invariants.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0x03, 0x00, 5, 10, 19, 10, 40, 10, 2, 10})
	f.Add([]byte{0x01, 0x01, 3, 30, 3, 30, 3, 30, 1, 200, 2, 10, 1, 10})
	f.Add([]byte{0x07, 0x02, 60, 10, 62, 10, 52, 10, 63, 10, 55, 10, 64, 10})
	f.Add([]byte{0x0b, 0x03, 33, 255, 34, 254, 35, 0, 11, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		flags, mode := data[0], data[1]
		data = data[2:]
		opts := Options{
			Punctuate:     flags&1 != 0,
			SmartFormat:   flags&2 != 0,
			Numerals:      flags&4 != 0,
			SentencePause: float64(flags>>4) / 10,
		}
		var in []api.Word
		tm := 0.0
		for i := 0; i+1 < len(data) && len(in) < 200; i += 2 {
			w := api.Word{Word: fuzzVocab[int(data[i])%len(fuzzVocab)], Confidence: float64(data[i]) / 255}
			switch g := data[i+1]; g {
			case 255:
				tm = math.NaN()
			case 254:
				tm = math.Inf(1)
			case 253:
				tm -= 1
			default:
				tm += float64(g) / 100
			}
			w.Start = tm
			w.End = tm + 0.2
			if mode&1 != 0 {
				s := int(data[i+1] % 3)
				w.Speaker = &s
			}
			if data[i+1]%7 == 0 {
				opts.Boundaries = append(opts.Boundaries, len(in))
			}
			in = append(in, w)
		}
		if mode&2 != 0 && len(in) > 0 {
			for k := 0; k+1 < len(data); k += 5 {
				opts.Replace = append(opts.Replace, Replacement{
					Span: Span{int(data[k]) % (len(in) + 2), int(data[k+1]) % (len(in) + 2)}, Text: "[X_1]",
				})
			}
		}
		before := append([]api.Word(nil), in...)
		checkResult(t, in, before, opts, Apply(in, opts))
	})
}

// FuzzScanText feeds arbitrary text, split into words with regular timing,
// to Scan and Apply.
func FuzzScanText(f *testing.F) {
	for _, s := range []string{
		"twenty five dollars and fifty cents",
		"call five five five oh one two three at three thirty p m",
		"my social security number is one two three four five six seven eight nine",
		"jane dot doe at example dot co dot uk on the fourth of july nineteen seventy six",
		"a hundred and one thousand point point oh",
		"may may march of of the the first",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fields := strings.Fields(s)
		if len(fields) > 300 {
			fields = fields[:300]
		}
		in := make([]api.Word, len(fields))
		for i, w := range fields {
			in[i] = api.Word{Word: w, Start: float64(i) * 0.3, End: float64(i)*0.3 + 0.25, Confidence: 0.9}
		}
		end := 0
		for _, p := range Scan(in, nil) {
			if p.Span.Start < end || p.Span.End <= p.Span.Start || p.Span.End > len(in) || p.Text == "" {
				t.Fatalf("bad phrase %+v after %d of %d words", p, end, len(in))
			}
			end = p.Span.End
		}
		before := append([]api.Word(nil), in...)
		for _, opts := range []Options{{SmartFormat: true}, {Numerals: true}, {Punctuate: true, Numerals: true}} {
			checkResult(t, in, before, opts, Apply(in, opts))
		}
	})
}
