package format

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func TestSmartFormat(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// Cardinals.
		{"compound", "twenty five", "25."},
		{"hundred and", "one hundred and three", "103."},
		{"a hundred", "a hundred", "100."},
		{"a thousand people", "a thousand people", "1000 people."},
		{"thousands grouped from ten thousand", "twelve thousand five hundred", "12,500."},
		{"four digits not grouped", "four thousand five hundred", "4500."},
		{"millions", "one million two hundred thousand", "1,200,000."},
		{"scale after scale must decrease", "one thousand thousand", "1000 thousand."},
		{"teen hundreds", "fifteen hundred", "1500."},
		{"zero", "zero", "Zero."},
		{"words below ten stay spelled", "i have two cats", "I have two cats."},
		{"one of them", "one of them", "One of them."},
		{"adjacent units are separate numbers", "five six", "Five six."},
		{"adjacent tens are separate numbers", "thirty forty", "30 40."},
		{"decimal", "three point five", "3.5."},
		{"decimal with oh", "twenty point oh five", "20.05."},
		{"point alone is a word", "the point is", "The point is."},
		{"plural hundreds is not a number", "hundreds of people", "Hundreds of people."},
		{"and at the end stays", "two hundred and", "200 and."},
		// Years.
		{"year pair", "in nineteen eighty four", "In 1984."},
		{"year twenty", "twenty twenty four", "2024."},
		{"year oh", "nineteen oh five", "1905."},
		{"year scaled", "two thousand twenty four", "2024."},
		{"year hundred", "nineteen hundred", "1900."},
		{"low pair is not a year", "eleven thirty", "11 30."},
		// Ordinals.
		{"ordinal compound", "the twenty first century", "The 21st century."},
		{"ordinal ten", "the tenth time", "The 10th time."},
		{"ordinal below ten stays", "the third time", "The third time."},
		{"ordinal teen", "the thirteenth floor", "The 13th floor."},
		{"ordinal hundredth", "the one hundredth day", "The 100th day."},
		{"ordinal second as time unit", "wait a second", "Wait a second."},
		// Units.
		{"percent", "five percent", "5%."},
		{"per cent", "ten per cent", "10%."},
		{"dollars", "ten dollars", "$10."},
		{"dollar", "one dollar", "$1."},
		{"a hundred dollars", "a hundred dollars", "$100."},
		{"money grouped from a thousand", "four thousand five hundred dollars", "$4,500."},
		{"dollars and cents", "five dollars and fifty cents", "$5.50."},
		{"decimal dollars", "three point five dollars", "$3.50."},
		{"euros", "ten euros", "€10."},
		// Times.
		{"time pm", "three thirty p m", "3:30 PM."},
		{"time am", "eleven a m", "11 AM."},
		{"time oh", "nine oh five a m", "9:05 AM."},
		{"time pm word", "eight thirty seven pm", "8:37 PM."},
		{"time o'clock", "three o'clock", "3 o'clock."},
		{"time after at", "meet at five thirty", "Meet at 5:30."},
		// Dates.
		{"date month ordinal year", "november second twenty twenty two", "November 2 2022."},
		{"date month ordinal year 2", "july twelfth nineteen seventy six", "July 12 1976."},
		{"date of month", "the fourth of july", "The 4th of July."},
		{"date month year", "july nineteen ninety", "July 1990."},
		{"date may ordinal", "on may fifth", "On May 5."},
		{"may as a verb", "you may one day", "You may one day."},
		{"march as a verb", "we march twenty miles", "We march 20 miles."},
		{"month cardinal day", "july four", "July 4."},
		// Digit runs.
		{"phone ten", "five five five two one two nine three three three", "555-212-9333."},
		{"phone seven", "five five five one two three four", "555-1234."},
		{"phone eleven", "one eight zero zero five five five one two one two", "1-800-555-1212."},
		{"phone with oh", "five five five oh one two three", "555-0123."},
		{"three digits", "nine one one", "911."},
		{"two digits stay words", "five seven", "Five seven."},
		{"oh first is a word", "oh five five", "Oh five five."},
		{"oh inside is zero", "five oh one", "501."},
		{"ssn", "my social security number is one two three four five six seven eight nine", "My social security number is 123-45-6789."},
		{"nine digits without context", "one two three four five six seven eight nine", "123456789."},
		{"card", "four one one one one one one one one one one one one one one one", "4111111111111111."},
		{"digit before hundred starts a number", "one two hundred", "One 200."},
		// Addresses and titles.
		{"email", "write to jane at example dot com", "Write to jane@example.com."},
		{"email first keeps case", "jane at example dot com", "jane@example.com."},
		{"email dotted local", "john dot smith at mail dot example dot org", "john.smith@mail.example.org."},
		{"look at is not an email", "look at example dot com", "Look at example.com."},
		{"url", "go to www dot example dot co dot uk", "Go to www.example.co.uk."},
		{"dot without tld", "a polka dot dress", "A polka dot dress."},
		{"title", "and mr john dashwood had then leisure", "And Mr. John dashwood had then leisure."},
		{"title at end keeps one period", "i saw the dr", "I saw the Dr."},
		{"days and months", "on monday in june", "On Monday in June."},
		{"pronoun i", "i think i'm right and i'll go", "I think I'm right and I'll go."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Apply(mkWords(tc.in), Options{SmartFormat: true})
			if got := Transcript(res.Words); got != tc.want {
				t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNumerals(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"compound", "twenty five", "25"},
		{"digits stay separate", "nine two eight four", "9 2 8 4"},
		{"small numbers", "i have two cats", "i have 2 cats"},
		{"lone one stays", "one of them", "one of them"},
		{"one in a compound", "twenty one", "21"},
		{"units stay words", "ten dollars", "10 dollars"},
		{"no separators", "twelve thousand", "12000"},
		{"decimal", "three point five", "3.5"},
		{"small ordinal stays", "the third time", "the third time"},
		{"ordinal", "the twenty first", "the 21st"},
		{"year", "nineteen eighty four", "1984"},
		{"oh in a run", "five oh one", "5 0 1"},
		{"no composite rules", "jane at example dot com", "jane at example dot com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Apply(mkWords(tc.in), Options{Numerals: true})
			if got := Transcript(res.Words); got != tc.want {
				t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
			}
			for _, w := range res.Words {
				if w.PunctuatedWord != "" {
					t.Errorf("numerals without punctuation set punctuated_word %q", w.PunctuatedWord)
				}
			}
		})
	}
}

func TestPunctuate(t *testing.T) {
	tests := []struct {
		name, in string
		bounds   []int
		want     string
	}{
		{"pause ends a sentence", "hello there / how are you", nil, "Hello there. How are you?"},
		{"short pause does not", "hello there how are you", nil, "Hello there how are you."},
		{"boundary ends a sentence", "yes it is no it isn't", []int{2}, "Yes it is. No it isn't."},
		{"out of range boundaries ignored", "yes it is", []int{-1, 7}, "Yes it is."},
		{"speaker change", "hi@0 there@0 hello@1", nil, "Hi there. Hello."},
		{"wh question", "what is this", nil, "What is this?"},
		{"wh contraction", "what's up", nil, "What's up?"},
		{"wh alone", "why", nil, "Why?"},
		{"how many", "how many people came", nil, "How many people came?"},
		{"wh clause", "when i was young i ran", nil, "When I was young I ran."},
		{"exclamation is not a question", "what a day", nil, "What a day."},
		{"inversion", "do you know", nil, "Do you know?"},
		{"inversion with noun", "is the shop open", nil, "Is the shop open?"},
		{"imperative do", "do the dishes", nil, "Do the dishes."},
		{"imperative have", "have a nice day", nil, "Have a nice day."},
		{"wish may", "may the best team win", nil, "May the best team win."},
		{"may i", "may i come in", nil, "May I come in?"},
		{"negative inversion", "don't you see", nil, "Don't you see?"},
		{"statement", "the shop is open", nil, "The shop is open."},
		{"number across a sentence pause", "i counted twenty / five people came", nil, "I counted twenty. Five people came."},
		{"number across a boundary", "i counted twenty five people", []int{2}, "I counted twenty. Five people."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Apply(mkWords(tc.in), Options{Punctuate: true, Boundaries: tc.bounds})
			if got := Transcript(res.Words); got != tc.want {
				t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSmartFormatAtSentenceBoundaries(t *testing.T) {
	// The hard case: a number split by a sentence pause is two numbers,
	// each formatted in its own sentence.
	res := Apply(mkWords("i counted twenty / five people came / it was twenty five"), Options{SmartFormat: true})
	want := "I counted 20. Five people came. It was 25."
	if got := Transcript(res.Words); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := []int{2, 5, 8}; !reflect.DeepEqual(res.SentenceEnds, want) {
		t.Errorf("SentenceEnds = %v, want %v", res.SentenceEnds, want)
	}
}

func TestMergedWordShape(t *testing.T) {
	in := mkWords("it costs twenty#0.8 five#0.6 dollars#0.95 today")
	res := Apply(in, Options{SmartFormat: true})
	if len(res.Words) != 4 {
		t.Fatalf("got %d words %q, want 4", len(res.Words), texts(res.Words))
	}
	got := res.Words[2]
	want := api.Word{Word: "$25", PunctuatedWord: "$25", Start: in[2].Start, End: in[4].End, Confidence: 0.6}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged word = %+v, want %+v", got, want)
	}
	if want := []Span{{0, 1}, {1, 2}, {2, 5}, {5, 6}}; !reflect.DeepEqual(res.Spans, want) {
		t.Errorf("Spans = %v, want %v", res.Spans, want)
	}
	if res.Words[3].PunctuatedWord != "today." || res.Words[3].Word != "today" {
		t.Errorf("last word = %+v", res.Words[3])
	}
}

func TestMergedWordKeepsSpeaker(t *testing.T) {
	in := mkWords("twenty@1 five@1 people@1")
	res := Apply(in, Options{SmartFormat: true})
	if res.Words[0].Speaker == nil || *res.Words[0].Speaker != 1 {
		t.Errorf("speaker of merged word = %v, want 1", res.Words[0].Speaker)
	}
}

func TestNoFormatting(t *testing.T) {
	in := mkWords("twenty five dollars")
	in[0].PunctuatedWord = "stale"
	res := Apply(in, Options{})
	if len(res.Words) != len(in) {
		t.Fatalf("got %d words, want %d", len(res.Words), len(in))
	}
	for i, w := range res.Words {
		if w.Word != in[i].Word || w.Start != in[i].Start || w.End != in[i].End || w.PunctuatedWord != "" {
			t.Errorf("word %d = %+v, want the input word without punctuated_word", i, w)
		}
	}
	if in[0].PunctuatedWord != "stale" {
		t.Error("Apply modified its input")
	}
}

func TestPunctuateKeepsWordCount(t *testing.T) {
	in := mkWords("twenty five dollars / what is it")
	res := Apply(in, Options{Punctuate: true})
	if len(res.Words) != len(in) {
		t.Fatalf("punctuation changed the word count: %d, want %d", len(res.Words), len(in))
	}
	want := []string{"Twenty", "five", "dollars.", "What", "is", "it?"}
	if got := texts(res.Words); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReplace(t *testing.T) {
	in := mkWords("my number is five five five two one two nine three three three thanks")
	res := Apply(in, Options{SmartFormat: true, Replace: []Replacement{
		{Span: Span{3, 13}, Text: "[PHONE_NUMBER_1]"},
		{Span: Span{4, 6}, Text: "overlaps"},    // overlaps: ignored
		{Span: Span{12, 20}, Text: "out"},       // out of range: ignored
		{Span: Span{1, 1}, Text: "empty range"}, // empty: ignored
	}})
	want := "My number is [PHONE_NUMBER_1] thanks."
	if got := Transcript(res.Words); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	w := res.Words[3]
	if w.Word != "[PHONE_NUMBER_1]" || w.Start != in[3].Start || w.End != in[12].End {
		t.Errorf("replacement word = %+v", w)
	}
}

func TestReplaceAtSentenceStart(t *testing.T) {
	in := mkWords("five five five two two one one one one")
	res := Apply(in, Options{Punctuate: true, Replace: []Replacement{{Span: Span{0, 9}, Text: "[SSN_1]"}}})
	if got := Transcript(res.Words); got != "[SSN_1]." {
		t.Errorf("got %q", got)
	}
}

func TestMap(t *testing.T) {
	res := Apply(mkWords("it costs twenty five dollars today"), Options{SmartFormat: true})
	// Output: It(0) costs(1) $25(2, input 2..5) today(3, input 5).
	tests := []struct {
		start, end int
		want       [2]int
	}{
		{0, 1, [2]int{0, 1}},
		{2, 5, [2]int{2, 3}},
		{3, 4, [2]int{2, 3}},
		{1, 6, [2]int{1, 4}},
		{5, 6, [2]int{3, 4}},
		{4, 4, [2]int{2, 2}},
		{-3, 2, [2]int{0, 2}},
		{4, 99, [2]int{2, 4}},
		{7, 9, [2]int{4, 4}},
	}
	for _, tc := range tests {
		s, e := res.Map(tc.start, tc.end)
		if [2]int{s, e} != tc.want {
			t.Errorf("Map(%d, %d) = %d, %d, want %v", tc.start, tc.end, s, e, tc.want)
		}
	}
	if s, e := (Result{}).Map(0, 3); s != 0 || e != 0 {
		t.Errorf("empty Map = %d, %d", s, e)
	}
	ents := res.RemapEntities([]api.Entity{{Label: "MONEY", StartWord: 2, EndWord: 5}})
	if ents[0].StartWord != 2 || ents[0].EndWord != 3 {
		t.Errorf("RemapEntities = %+v", ents[0])
	}
}

func TestEmpty(t *testing.T) {
	res := Apply(nil, Options{SmartFormat: true})
	if res.Words == nil || len(res.Words) != 0 || len(res.SentenceEnds) != 0 {
		t.Errorf("Apply(nil) = %+v, want empty non-nil words", res)
	}
	if got := Transcript(nil); got != "" {
		t.Errorf("Transcript(nil) = %q", got)
	}
}

func TestTranscript(t *testing.T) {
	ws := []api.Word{{Word: "hello", PunctuatedWord: "Hello,"}, {Word: ""}, {Word: "world"}}
	if got := Transcript(ws); got != "Hello, world" {
		t.Errorf("Transcript = %q", got)
	}
}

func TestScanKinds(t *testing.T) {
	tests := []struct {
		in   string
		want []Phrase
	}{
		{"call five five five two one two nine three three three", []Phrase{{Span{1, 11}, KindPhone, "555-212-9333", false}}},
		{"the third", []Phrase{{Span{1, 2}, KindOrdinal, "3rd", true}}},
		{"five seven", []Phrase{{Span{0, 2}, KindDigits, "57", true}}},
		{"in nineteen eighty four", []Phrase{{Span{1, 4}, KindYear, "1984", false}}},
		{"four four four four nine nine nine nine three three three three two two two two",
			[]Phrase{{Span{0, 16}, KindCreditCard, "4444999933332222", false}}},
		{"four four four four nine nine nine nine three three three three two two two one",
			[]Phrase{{Span{0, 16}, KindDigits, "4444999933332221", false}}},
	}
	for _, tc := range tests {
		if got := Scan(mkWords(tc.in), nil); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Scan(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSecondSSNFollowsFirst(t *testing.T) {
	in := "my social security number is five five five two two one one one one and his is six six six two two one three three three"
	ps := Scan(mkWords(in), nil)
	if len(ps) != 2 || ps[0].Kind != KindSSN || ps[1].Kind != KindSSN || ps[1].Text != "666-22-1333" {
		t.Errorf("Scan = %+v, want two SSNs", ps)
	}
}

func TestDigitRunToleratesGroupPauses(t *testing.T) {
	// Groups of a phone number read with 0.8 s pauses still make one number
	// and no sentence ends inside it.
	res := Apply(mkWords("call five five five / two one two / nine three three three now"), Options{SmartFormat: true})
	if got, want := Transcript(res.Words), "Call 555-212-9333 now."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestKindString(t *testing.T) {
	if KindCreditCard.String() != "credit_card" || Kind(99).String() != "Kind(99)" {
		t.Errorf("Kind.String: %q %q", KindCreditCard, Kind(99))
	}
}

func TestLuhn(t *testing.T) {
	for _, tc := range []struct {
		d    string
		want bool
	}{
		{"4111111111111111", true}, {"4111111111111112", false}, {"79927398713", true},
		{"", false}, {"12a4", false},
	} {
		if got := luhnValid(tc.d); got != tc.want {
			t.Errorf("luhnValid(%q) = %v", tc.d, got)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "123": "123", "1234": "1,234", "123456": "123,456", "1234567": "1,234,567"} {
		if got := groupThousands(in); got != want {
			t.Errorf("groupThousands(%q) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int64]string{1: "st", 2: "nd", 3: "rd", 4: "th", 11: "th", 12: "th", 13: "th", 21: "st", 111: "th", 122: "nd"} {
		if got := ordinalSuffix(n); got != want {
			t.Errorf("ordinalSuffix(%d) = %q, want %q", n, got, want)
		}
	}
}

// BenchmarkApply measures smart formatting, paragraphs and utterances of a
// 1,000-word transcript, about six minutes of speech.
func BenchmarkApply(b *testing.B) {
	spec := strings.Repeat("and mr john dashwood paid twenty five dollars on july fourth nineteen eighty four / "+
		"call five five five two one two nine three three three / what is the time it is three thirty p m // ", 29)
	ws := mkWords(spec)
	b.ReportAllocs()
	for b.Loop() {
		res := Apply(ws, Options{SmartFormat: true})
		_ = Paragraphs(res.Words, res.SentenceEnds, ParagraphOptions{})
		_ = Utterances(res.Words, UtteranceOptions{}, func() string { return "id" })
	}
	b.ReportMetric(float64(len(ws)), "words/op")
}
