package intel

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestVaderReference(t *testing.T) {
	// Compound scores published with the reference VADER implementation.
	tests := []struct {
		text string
		want float64
	}{
		{"VADER is smart, handsome, and funny.", 0.8316},
		{"VADER is smart, handsome, and funny!", 0.8439},
		{"VADER is very smart, handsome, and funny.", 0.8545},
		{"VADER is VERY SMART, handsome, and FUNNY.", 0.9227},
		{"VADER is VERY SMART, handsome, and FUNNY!!!", 0.9342},
		{"The book was good.", 0.4404},
		{"At least it isn't a horrible book.", 0.431},
		{"Today SUX!", -0.5461},
		{"Make sure you :) or :D today!", 0.8633},
		{"Not bad at all", 0.431},
		{"The book was kind of good.", 0.3832},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := vader(strings.Fields(tt.text)); math.Abs(got-tt.want) > 5e-4 {
				t.Errorf("vader = %.4f, want %.4f", got, tt.want)
			}
		})
	}
}

func TestVaderRules(t *testing.T) {
	v := func(s string) float64 { return vader(strings.Fields(s)) }
	tests := []struct {
		name string
		ok   bool
	}{
		{"positive", v("The service was good.") >= 0.05},
		{"negative", v("The service was terrible.") <= -0.05},
		{"neutral", v("The meeting is on Tuesday at noon.") == 0},
		{"negation flips", v("The service was not good.") < 0},
		{"contraction negates", v("I don't like it.") < 0},
		{"intensifier", v("The service was very good.") > v("The service was good.")},
		{"dampener", v("The service was slightly good.") < v("The service was good.")},
		{"exclamation", v("The service was good!!!") > v("The service was good.")},
		{"caps emphasis", v("The service was GOOD.") > v("The service was good.")},
		{"but: clause after wins", v("The food was good, but the service was terrible.") < 0},
		{"but: reversed", v("The food was terrible, but the service was great.") > 0},
		{"never so", v("I have never been so happy.") > v("I have been happy.")},
		{"no determiner", v("No problems at all.") == v("No problems at all.") && v("There were no problems.") > v("There were problems.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Fail()
			}
		})
	}
}

func TestSentimentSegments(t *testing.T) {
	text := "Hi. Thank you for calling from premier phone services. This call may be recorded for quality and training purposes."
	segs, avg, err := newDoc(text).sentiments(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// As in the service's documented example: a greeting merged with the
	// thanks (positive), then the neutral recording notice.
	if len(segs) != 2 || segs[0].EndWord != 8 || segs[0].Sentiment != Positive || segs[1].Sentiment != Neutral {
		t.Fatalf("segments %+v", segs)
	}
	want := (segs[0].Score*9 + segs[1].Score*10) / 19
	if math.Abs(avg.Score-want) > 1e-12 || avg.Sentiment != Positive {
		t.Fatalf("average %+v, want word-weighted %.4f positive", avg, want)
	}

	text = "The movie was not good. The food was VERY good!!! It was okay, but the service was terrible."
	segs, _, err = newDoc(text).sentiments(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range segs {
		got = append(got, s.Sentiment)
	}
	if strings.Join(got, ",") != "negative,positive,negative" {
		t.Fatalf("labels %v for %+v", got, segs)
	}
}

func TestSummaryCentral(t *testing.T) {
	// The central sentence shares its words with most others; the
	// off-topic ones share nothing. It sits in the middle, so the lead prior
	// alone would not pick it.
	sents := []string{
		"Gardeners often talk about the weather in spring.",
		"The city council approved the new budget for public libraries on Monday.",
		"Library staff said the budget will extend opening hours at public libraries.",
		"The council budget for public libraries grows by ten percent, funding libraries, staff and longer opening hours across the city.",
		"Critics of the council said the library budget is still too small.",
		"Several public libraries will also get new computers from the budget.",
		"A local bakery won a prize for its sourdough bread.",
		"The council will review the libraries budget again next year.",
		"Parents welcomed longer opening hours at the libraries.",
	}
	text := strings.Join(sents, " ")
	sum, err := newDoc(text).summarize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum, sents[3]) {
		t.Errorf("summary %q misses the central sentence", sum)
	}
	for _, off := range []string{sents[0], sents[6]} {
		if strings.Contains(sum, off) {
			t.Errorf("summary %q contains off-topic %q", sum, off)
		}
	}
}

func TestSummaryShape(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		minS      int
		maxS      int
		maxFactor float64 // summary words / text words
	}{
		{"one sentence", "Only one sentence here.", 1, 1, 1},
		{"paragraph", genDoc(80, 1), 1, 3, 0.6},
		{"article", genDoc(600, 2), 3, 6, 0.25},
		{"long", genDoc(20000, 3), 10, 40, 0.05},
	}
	prev := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDoc(tt.text)
			sum, err := d.summarize(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sd := newDoc(sum)
			if n := len(sd.sents); n < tt.minS || n > tt.maxS || n < prev {
				t.Errorf("%d summary sentences, want %d..%d and >= %d", n, tt.minS, tt.maxS, prev)
			}
			prev = len(sd.sents)
			if f := float64(len(sd.words)) / float64(len(d.words)); f > tt.maxFactor {
				t.Errorf("summary is %.2f of the text", f)
			}
			// Sentences come from the text, in document order, never twice.
			at := 0
			for _, s := range sd.sents {
				part := " " + sd.text(s) + " "
				i := strings.Index((" " + tt.text + " ")[at:], part)
				if i < 0 {
					t.Fatalf("summary sentence %q not found in order", part)
				}
				at += i + len(part) - 1
			}
		})
	}
}

func TestSummaryRedundancy(t *testing.T) {
	s := "The central bank raised interest rates by half a point to fight inflation."
	text := s + " " + s + " Markets fell sharply after the announcement on Wednesday. " +
		"Analysts expect another rate rise before the end of the year. Mortgage holders will pay more each month."
	sum, err := newDoc(text).summarize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(sum, s) > 1 {
		t.Errorf("summary repeats a sentence: %q", sum)
	}
}

func TestTopics(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"call", callText, []string{"Refund", "Billing"}},
		{"names keep case", "We moved the database to Postgres last year. Postgres handles the load well. " +
			"The database migration took two weeks, and the database team is happy with Postgres.", []string{"Postgres", "Database"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, err := newDoc(tt.text).topics(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkSegments(t, tt.text, segmentsOf(segs))
			got := names(segs)
			for _, w := range tt.want {
				if !contains(got, w) {
					t.Errorf("topics %v lack %q", got, w)
				}
			}
			for _, n := range got {
				if n == "Love" || n == "Terrible" || n == "Last" {
					t.Errorf("topics %v contain non-topic %q", got, n)
				}
			}
		})
	}
}

func segmentsOf(ls []LabeledSegment) []Segment {
	out := make([]Segment, len(ls))
	for i, l := range ls {
		out[i] = l.Segment
	}
	return out
}

func TestIntents(t *testing.T) {
	tests := []struct {
		text string
		want []string // nil: no intent
	}{
		{"Can I upgrade my phone?", []string{"Upgrade phone"}},
		{"I want to cancel my subscription.", []string{"Cancel subscription"}},
		{"I'd like to request a refund for last month.", []string{"Request refund"}},
		{"I have a question about billing.", []string{"Ask about billing"}},
		{"Please reset my password.", []string{"Reset password"}},
		{"Could you send the invoice again?", []string{"Send invoice"}},
		{"Cancel my gym membership.", []string{"Cancel gym membership"}},
		{"I need to sign up for the premium plan.", []string{"Sign up for premium plan"}},
		{"I'm calling to book an appointment and to pay my bill.", []string{"Book appointment", "Pay bill"}},
		{"I don't want to cancel my subscription.", nil},
		{"My order arrived late.", nil},
		{"The weather is nice today.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			segs, err := newDoc(tt.text).intents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkSegments(t, tt.text, segmentsOf(segs))
			got := names(segs)
			if len(got) != len(tt.want) {
				t.Fatalf("intents %v, want %v", got, tt.want)
			}
			for _, w := range tt.want {
				if !contains(got, w) {
					t.Errorf("intents %v lack %q", got, w)
				}
			}
		})
	}
}

func TestLexicon(t *testing.T) {
	lx := lex()
	if len(lx) < 7000 || lx["good"] <= 0 || lx["terrible"] >= 0 {
		t.Fatalf("lexicon: %d entries, good=%v terrible=%v", len(lx), lx["good"], lx["terrible"])
	}
}
