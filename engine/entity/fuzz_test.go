package entity

import (
	"math"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/format"
)

var fuzzVocab = []string{
	"zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "twelve", "nineteen", "twenty", "thirty", "hundred", "thousand", "a", "and", "point",
	"first", "third", "dollars", "cents", "percent", "o'clock", "p", "m", "at", "dot", "com",
	"jane", "may", "july", "of", "the", "social", "security", "ssn", "is", "his", "é", "[x]",
}

// FuzzDetectRedact feeds arbitrary word lists and redact values through
// detection, redaction and formatting and checks that nothing panics,
// entities stay in range and in order, and redaction keeps the timeline.
func FuzzDetectRedact(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "numbers")
	f.Add([]byte{37, 38, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, "pii,pci")
	f.Add([]byte{4, 4, 4, 4, 9, 9, 9, 9, 3, 3, 3, 3, 2, 2, 2, 2}, "aggressive_numbers")
	f.Add([]byte{33, 31, 32, 34, 200, 255}, "email_address, url , ssn")
	f.Fuzz(func(t *testing.T, data []byte, redact string) {
		var words []api.Word
		var bounds []int
		tm := 0.0
		for i, b := range data {
			if i >= 300 {
				break
			}
			gap := float64(b%16) / 10
			if b == 255 {
				gap = math.NaN()
			}
			tm += gap
			words = append(words, api.Word{Word: fuzzVocab[int(b)%len(fuzzVocab)], Start: tm, End: tm + 0.2, Confidence: float64(b) / 255})
			if b%11 == 0 {
				bounds = append(bounds, i)
			}
		}
		ents := Detect(words, bounds)
		end := 0
		for _, e := range ents {
			if e.StartWord < end || e.EndWord <= e.StartWord || e.EndWord > len(words) {
				t.Fatalf("entity %+v out of order or range (prev end %d, %d words)", e, end, len(words))
			}
			end = e.EndWord
			if e.Label == "" || e.Value == "" || e.RawValue == "" {
				t.Fatalf("incomplete entity %+v", e)
			}
			for _, w := range words[e.StartWord:e.EndWord] {
				if e.Confidence > w.Confidence {
					t.Fatalf("entity confidence %v above word confidence %v", e.Confidence, w.Confidence)
				}
			}
		}
		pol, err := ParsePolicy(strings.Split(redact, ";"))
		if err != nil {
			return
		}
		reps, red := Redact(ents, pol)
		if len(red) != len(ents) {
			t.Fatalf("Redact returned %d entities for %d", len(red), len(ents))
		}
		res := format.Apply(words, format.Options{SmartFormat: true, Boundaries: bounds, Replace: reps})
		if len(words) > 0 && (res.Words[0].Start != words[0].Start && !math.IsNaN(words[0].Start) ||
			res.Words[len(res.Words)-1].End != words[len(words)-1].End && !math.IsNaN(words[len(words)-1].End)) {
			t.Fatal("formatting changed the timeline")
		}
		for _, e := range res.RemapEntities(red) {
			if e.StartWord < 0 || e.EndWord > len(res.Words) || e.StartWord >= e.EndWord {
				t.Fatalf("remapped entity %+v out of range of %d words", e, len(res.Words))
			}
		}
		for _, r := range reps {
			found := false
			for _, w := range res.Words {
				found = found || w.Word == r.Text
			}
			if !found {
				t.Fatalf("placeholder %q missing from the words", r.Text)
			}
		}
	})
}
