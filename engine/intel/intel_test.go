package intel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

var all = Options{Summarize: true, Sentiment: true, Topics: true, Intents: true}

const callText = "Hi there. I love my current phone, but want a new one. Can I upgrade my phone? " +
	"Also I want to cancel my gym membership, and I'd like to request a refund for last month. " +
	"The refund should cover the whole month. I have a question about billing. " +
	"My last refund took weeks and the billing team never called me back, which was terrible."

// checkSegments asserts that a segment's indices are in range and its text
// is exactly those words of strings.Fields(text), and that segments are
// ascending and disjoint.
func checkSegments(t testing.TB, text string, segs []Segment) {
	t.Helper()
	words := strings.Fields(text)
	prevEnd := -1
	for _, s := range segs {
		if s.StartWord <= prevEnd || s.EndWord < s.StartWord || s.EndWord >= len(words) {
			t.Fatalf("segment %d..%d out of order or range (prev end %d, %d words)", s.StartWord, s.EndWord, prevEnd, len(words))
		}
		if want := strings.Join(words[s.StartWord:s.EndWord+1], " "); s.Text != want {
			t.Fatalf("segment %d..%d text %q, want %q", s.StartWord, s.EndWord, s.Text, want)
		}
		prevEnd = s.EndWord
	}
}

// checkResult asserts every invariant of a Result for text.
func checkResult(t testing.TB, text string, r *Result) {
	t.Helper()
	var segs []Segment
	for _, s := range r.Sentiments {
		segs = append(segs, s.Segment)
		if s.Score < -1 || s.Score > 1 || math.IsNaN(s.Score) || s.Sentiment != label(s.Score) {
			t.Fatalf("bad sentiment segment %+v", s)
		}
	}
	checkSegments(t, text, segs)
	if r.Average.Score < -1 || r.Average.Score > 1 || math.IsNaN(r.Average.Score) {
		t.Fatalf("bad average %+v", r.Average)
	}
	for _, ls := range [][]LabeledSegment{r.Topics, r.Intents} {
		segs = segs[:0]
		for _, s := range ls {
			segs = append(segs, s.Segment)
			if len(s.Labels) == 0 {
				t.Fatalf("segment without labels %+v", s)
			}
			for _, l := range s.Labels {
				if l.Name == "" || l.Confidence <= 0 || l.Confidence > 1 {
					t.Fatalf("bad label %+v", l)
				}
			}
		}
		checkSegments(t, text, segs)
	}
	if len(r.Summary) > len(text) {
		t.Fatalf("summary longer than the text")
	}
}

func names(segs []LabeledSegment) []string {
	var out []string
	for _, s := range segs {
		for _, l := range s.Labels {
			out = append(out, l.Name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestAnalyzeOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"none", Options{}},
		{"summary", Options{Summarize: true}},
		{"sentiment", Options{Sentiment: true}},
		{"topics", Options{Topics: true}},
		{"intents", Options{Intents: true}},
		{"all", all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Analyze(context.Background(), callText, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, callText, r)
			if (r.Summary != "") != tt.opts.Summarize {
				t.Errorf("summary %q with Summarize=%v", r.Summary, tt.opts.Summarize)
			}
			if (len(r.Sentiments) > 0) != tt.opts.Sentiment || (r.Average.Sentiment != "") != tt.opts.Sentiment {
				t.Errorf("sentiments %v average %v with Sentiment=%v", r.Sentiments, r.Average, tt.opts.Sentiment)
			}
			if (len(r.Topics) > 0) != tt.opts.Topics {
				t.Errorf("topics %v with Topics=%v", r.Topics, tt.opts.Topics)
			}
			if (len(r.Intents) > 0) != tt.opts.Intents {
				t.Errorf("intents %v with Intents=%v", r.Intents, tt.opts.Intents)
			}
		})
	}
}

func TestAnalyzeOddInput(t *testing.T) {
	long := strings.Repeat("word ", 5000) // no punctuation at all
	tests := map[string]string{
		"empty":        "",
		"space":        " \n\t ",
		"one word":     "refund",
		"punctuation":  "... !!! ??? ,,, -- :)",
		"non-English":  "Der Kunde möchte sein Abonnement kündigen. 我想取消订阅。 Хочу вернуть деньги!",
		"binary-ish":   "\x00\x01\xff\xfe PK\x03\x04 \xc3\x28 \u200b\u00a0 !!?",
		"unpunctuated": long,
		"abbreviation": "Mr. Smith met Dr. Jones at 5 p.m. in the U.S. office. They agreed.",
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Analyze(context.Background(), text, all)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, text, r)
			if len(strings.Fields(text)) == 0 && (r.Summary != "" || len(r.Sentiments) != 0 || r.Average.Sentiment != Neutral) {
				t.Errorf("empty text gave %+v", r)
			}
		})
	}
}

func TestAnalyzeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Analyze(ctx, callText, all); !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze on a cancelled context: %v, want context.Canceled", err)
	}
	// The loops check ctx too, not only the entry.
	d := newDoc(genDoc(5000, 1))
	steps := map[string]func() error{
		"summary":   func() error { _, err := d.summarize(ctx); return err },
		"sentiment": func() error { _, _, err := d.sentiments(ctx); return err },
		"topics":    func() error { _, err := d.topics(ctx); return err },
		"intents":   func() error { _, err := d.intents(ctx); return err },
	}
	for name, f := range steps {
		t.Run(name, func(t *testing.T) {
			if err := f(); !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
		})
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"One. Two! Three? Four", 4},
		{"Mr. Smith met Dr. Jones. They talked.", 2},
		{"J. R. R. Tolkien wrote books. He died.", 2},
		{"It costs 3.5 dollars. Cheap.", 2},
		{"He said \"stop.\" Then left.", 2},
		{"etc. and so on. Done.", 2},
		{strings.Repeat("a ", 100), 3},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := newDoc(tt.text).sents; len(got) != tt.want {
				t.Errorf("got %d sentences %v, want %d", len(got), got, tt.want)
			}
		})
	}
}

// genDoc builds a deterministic document of about n words from a varied
// vocabulary, with sentiment, topic and intent material.
func genDoc(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	subj := []string{"The customer", "Our team", "The new release", "My account", "The billing system", "Support", "The refund", "This contract", "The meeting", "Sales"}
	verb := []string{"improved", "broke", "delayed", "changed", "helped", "confused", "covered", "reviewed", "approved", "rejected"}
	obj := []string{"the quarterly budget", "the mobile app", "a late payment", "the data migration", "my phone upgrade", "the hiring plan", "the shipping cost", "our cloud storage", "the sales forecast", "the security audit"}
	tail := []string{"very well", "badly", "last week", "again", "without any warning", "as expected", "quite slowly", "for the third time", "on Monday", "today"}
	extra := []string{"I want to cancel my subscription.", "Can you send the invoice?", "This is not good at all!", "Honestly, it was great.", "I'd like to request a refund.", "We should schedule a review.", "I have a question about pricing."}
	var b strings.Builder
	words := 0
	for words < n {
		var s string
		if r.IntN(4) == 0 {
			s = extra[r.IntN(len(extra))]
		} else {
			s = fmt.Sprintf("%s %s %s %s.", subj[r.IntN(len(subj))], verb[r.IntN(len(verb))], obj[r.IntN(len(obj))], tail[r.IntN(len(tail))])
		}
		b.WriteString(s)
		b.WriteByte(' ')
		words += len(strings.Fields(s))
	}
	return b.String()
}

func TestAnalyzeHuge(t *testing.T) {
	text := genDoc(50000, 2)
	r, err := Analyze(context.Background(), text, all)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, text, r)
	if n := len(strings.Fields(r.Summary)); n == 0 || n > len(strings.Fields(text))/20 {
		t.Errorf("summary of 50k words has %d words", n)
	}
}

func BenchmarkAnalyze50k(b *testing.B) {
	text := genDoc(50000, 3)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Analyze(context.Background(), text, all); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"", "a", callText, "Not bad. VERY good!!! But awful??", "\x00\xff\xfe", "Mr. J. Smith... etc. e.g. :) :(", "我想取消订阅。", strings.Repeat("cancel my ", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		// analyze, not Analyze: a panic must fail the fuzzer, not be
		// recovered into an error.
		r, err := analyze(context.Background(), text, all)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, text, r)
	})
}
