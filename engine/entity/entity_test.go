package entity

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// mkWords builds recogniser words from space-separated words, 0.25 s each
// with 0.05 s between them; "/" adds a 0.8 s pause and "word#0.5" sets a
// confidence (default 0.9).
func mkWords(spec string) []api.Word {
	var out []api.Word
	t := 0.0
	for _, f := range strings.Fields(spec) {
		if f == "/" {
			t += 0.8
			continue
		}
		w := api.Word{Confidence: 0.9}
		if i := strings.IndexByte(f, '#'); i >= 0 {
			c, err := strconv.ParseFloat(f[i+1:], 64)
			if err != nil {
				panic(err)
			}
			w.Confidence, f = c, f[:i]
		}
		w.Word, w.Start, w.End = f, t, t+0.25
		t = w.End + 0.05
		out = append(out, w)
	}
	return out
}

// ent is the part of an entity the tables compare.
type ent struct {
	label, value, raw string
	start, end        int
}

func simplify(es []api.Entity) []ent {
	var out []ent
	for _, e := range es {
		out = append(out, ent{e.Label, e.Value, e.RawValue, e.StartWord, e.EndWord})
	}
	return out
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ent
	}{
		{"cardinal", "about twenty five people", []ent{{LabelCardinal, "25", "twenty five", 1, 3}}},
		{"a hundred", "a hundred people", []ent{{LabelCardinal, "100", "a hundred", 0, 2}}},
		{"small cardinal", "two cats", []ent{{LabelCardinal, "2", "two", 0, 1}}},
		{"lone one is not a number", "one of them is the one", nil},
		{"one in a compound", "one hundred", []ent{{LabelCardinal, "100", "one hundred", 0, 2}}},
		{"oh alone is not a number", "oh no", nil},
		{"decimal", "three point five", []ent{{LabelCardinal, "3.5", "three point five", 0, 3}}},
		{"ordinal", "the third time", []ent{{LabelOrdinal, "3rd", "third", 1, 2}}},
		{"ordinal compound", "the twenty first century", []ent{{LabelOrdinal, "21st", "twenty first", 1, 3}}},
		{"money", "it costs ten dollars", []ent{{LabelMoney, "$10", "ten dollars", 2, 4}}},
		{"money cents", "five dollars and fifty cents", []ent{{LabelMoney, "$5.50", "five dollars and fifty cents", 0, 5}}},
		{"percent", "five percent more", []ent{{LabelPercent, "5%", "five percent", 0, 2}}},
		{"year", "in nineteen eighty four", []ent{{LabelDate, "1984", "nineteen eighty four", 1, 4}}},
		{"date", "on november second twenty twenty two", []ent{{LabelDate, "November 2 2022", "november second twenty twenty two", 1, 6}}},
		{"date of", "the fourth of july", []ent{{LabelDate, "4th of July", "fourth of july", 1, 4}}},
		{"time", "at three thirty p m", []ent{{LabelTime, "3:30 PM", "three thirty p m", 1, 5}}},
		{"phone", "call five five five two one two nine three three three",
			[]ent{{LabelPhoneNumber, "555-212-9333", "five five five two one two nine three three three", 1, 11}}},
		{"phone with oh", "five five five oh one two three",
			[]ent{{LabelPhoneNumber, "555-0123", "five five five oh one two three", 0, 7}}},
		{"ssn", "my ssn is one two three four five six seven eight nine",
			[]ent{{LabelSSN, "123-45-6789", "one two three four five six seven eight nine", 3, 12}}},
		{"credit card", "four one one one one one one one one one one one one one one one",
			[]ent{{LabelCreditCard, "4111111111111111", "four " + strings.TrimSpace(strings.Repeat("one ", 15)), 0, 16}}},
		{"luhn failure is a plain number", "four one one one one one one one one one one one one one one two",
			[]ent{{LabelCardinal, "4111111111111112", "four " + strings.TrimSpace(strings.Repeat("one ", 14)) + " two", 0, 16}}},
		{"email", "write to jane at example dot com",
			[]ent{{LabelEmailAddress, "jane@example.com", "jane at example dot com", 2, 7}}},
		{"url", "see example dot org", []ent{{LabelURL, "example.org", "example dot org", 1, 4}}},
		{"several", "two cats and twenty dogs",
			[]ent{{LabelCardinal, "2", "two", 0, 1}, {LabelCardinal, "20", "twenty", 3, 4}}},
		{"sentence pause splits a number", "i counted twenty / five people",
			[]ent{{LabelCardinal, "20", "twenty", 2, 3}, {LabelCardinal, "5", "five", 3, 4}}},
		{"no entities", "the quick brown fox", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(mkWords(tc.in), nil)
			if got == nil {
				t.Fatal("Detect returned nil, want an empty slice")
			}
			if s := simplify(got); !reflect.DeepEqual(s, tc.want) {
				t.Errorf("Detect(%q) = %+v, want %+v", tc.in, s, tc.want)
			}
		})
	}
}

func TestDetectBoundaries(t *testing.T) {
	got := simplify(Detect(mkWords("twenty five"), []int{0}))
	want := []ent{{LabelCardinal, "20", "twenty", 0, 1}, {LabelCardinal, "5", "five", 1, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDetectConfidence(t *testing.T) {
	got := Detect(mkWords("pay twenty#0.8 five#0.4 dollars#0.95"), nil)
	if len(got) != 1 || got[0].Confidence != 0.4 {
		t.Errorf("confidence = %+v, want the lowest word confidence 0.4", got)
	}
}

func TestUnformatted(t *testing.T) {
	in := []api.Entity{{Label: LabelMoney, Value: "$10", RawValue: "ten dollars"}, {Label: LabelSSN, Value: "[SSN_1]"}}
	got := Unformatted(in)
	want := []api.Entity{{Label: LabelMoney, Value: "ten dollars"}, {Label: LabelSSN, Value: "[SSN_1]"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unformatted = %+v, want %+v", got, want)
	}
	if in[0].Value != "$10" {
		t.Error("Unformatted modified its input")
	}
}
