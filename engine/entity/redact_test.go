package entity

import (
	"errors"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/format"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		values  []string
		wantErr error
		enabled bool
	}{
		{nil, nil, false},
		{[]string{"false"}, nil, false},
		{[]string{""}, nil, false},
		{[]string{"pci"}, nil, true},
		{[]string{"PII"}, nil, true},
		{[]string{"numbers"}, nil, true},
		{[]string{"true"}, nil, true},
		{[]string{"aggressive_numbers"}, nil, true},
		{[]string{"ssn", "credit_card"}, nil, true},
		{[]string{"pci, numbers"}, nil, true},
		{[]string{"email_address", "phone_number", "date", "time", "money", "url"}, nil, true},
		{[]string{"phi"}, ErrUnsupportedRedaction, false},
		{[]string{"name"}, ErrUnsupportedRedaction, false},
		{[]string{"pci", "location_address"}, ErrUnsupportedRedaction, false},
		{[]string{"cardinal"}, ErrUnknownRedaction, false},
		{[]string{"percent"}, ErrUnknownRedaction, false},
		{[]string{"bogus"}, ErrUnknownRedaction, false},
		{[]string{"pci,bogus"}, ErrUnknownRedaction, false},
	}
	for _, tc := range tests {
		p, err := ParsePolicy(tc.values)
		if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
			t.Errorf("ParsePolicy(%q) error = %v, want %v", tc.values, err, tc.wantErr)
			continue
		}
		if err != nil {
			var re *RedactionError
			if !errors.As(err, &re) || re.Value == "" {
				t.Errorf("ParsePolicy(%q) error %v is not a *RedactionError naming the value", tc.values, err)
			}
			continue
		}
		if p.Enabled() != tc.enabled {
			t.Errorf("ParsePolicy(%q).Enabled() = %v, want %v", tc.values, p.Enabled(), tc.enabled)
		}
	}
}

func TestRedactionErrorText(t *testing.T) {
	_, err := ParsePolicy([]string{"Bogus"})
	if err == nil || err.Error() != "redact=bogus: unknown redact value" {
		t.Errorf("error text = %v", err)
	}
}

// pipeline runs the engine's order of work: detect on spoken words, redact,
// format with the replacements, then re-index the entities.
func pipeline(t *testing.T, spoken string, redact []string, smart bool) (string, []api.Entity) {
	t.Helper()
	words := mkWords(spoken)
	pol, err := ParsePolicy(redact)
	if err != nil {
		t.Fatal(err)
	}
	reps, ents := Redact(Detect(words, nil), pol)
	res := format.Apply(words, format.Options{Punctuate: true, SmartFormat: smart, Replace: reps})
	ents = res.RemapEntities(ents)
	for _, e := range ents {
		if e.StartWord < 0 || e.EndWord > len(res.Words) || e.StartWord >= e.EndWord {
			t.Fatalf("entity %+v out of range of %d words", e, len(res.Words))
		}
	}
	return format.Transcript(res.Words), ents
}

func TestRedact(t *testing.T) {
	const cardAndMore = "my card is four four four four nine nine nine nine three three three three two two two two " +
		"my phone is five five five two one two nine three three three and i have two cats and three hundred dollars"
	tests := []struct {
		name   string
		in     string
		redact []string
		smart  bool
		want   string
	}{
		{
			"documented ssn example",
			"my social security number is five five five two two one one one one and his is six six six two two one three three three",
			[]string{"ssn"}, false,
			"My social security number is [SSN_1] and his is [SSN_2].",
		},
		{"same value same placeholder", "my ssn is one two three four five six seven eight nine / again one two three four five six seven eight nine",
			[]string{"ssn"}, true, "My ssn is [SSN_1]. Again [SSN_1]."},
		{"pci", cardAndMore, []string{"pci"}, true,
			"My card is [CREDIT_CARD_1] my phone is 555-212-9333 and I have two cats and $300."},
		{"pii", cardAndMore, []string{"pii"}, true,
			"My card is 4444999933332222 my phone is [PHONE_NUMBER_1] and I have two cats and $300."},
		{"numbers", cardAndMore, []string{"numbers"}, true,
			"My card is [CREDIT_CARD_1] my phone is [PHONE_NUMBER_1] and I have two cats and [MONEY_1]."},
		{"aggressive numbers", cardAndMore, []string{"aggressive_numbers"}, true,
			"My card is [CREDIT_CARD_1] my phone is [PHONE_NUMBER_1] and I have [NUMERICAL_PII_1] cats and [MONEY_1]."},
		{"numbers keep short numbers", "twenty five people and one hundred twenty five more", []string{"true"}, true,
			"25 people and [NUMERICAL_PII_1] more."},
		{"email", "write to jane at example dot com today", []string{"email_address"}, true,
			"Write to [EMAIL_ADDRESS_1] today."},
		{"numbers leave email", "write to jane at example dot com today", []string{"aggressive_numbers"}, true,
			"Write to jane@example.com today."},
		{"nothing", "my ssn is one two three four five six seven eight nine", nil, true,
			"My ssn is 123-45-6789."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := pipeline(t, tc.in, tc.redact, tc.smart)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRedactEntities(t *testing.T) {
	transcript, ents := pipeline(t, "call five five five two one two nine three three three about two cats", []string{"phone_number"}, true)
	if transcript != "Call [PHONE_NUMBER_1] about two cats." {
		t.Fatalf("transcript %q", transcript)
	}
	want := []api.Entity{
		{Label: LabelPhoneNumber, Value: "[PHONE_NUMBER_1]", RawValue: "[PHONE_NUMBER_1]", Confidence: 0.9, StartWord: 1, EndWord: 2},
		{Label: LabelCardinal, Value: "2", RawValue: "two", Confidence: 0.9, StartWord: 3, EndWord: 4},
	}
	if !reflect.DeepEqual(ents, want) {
		t.Errorf("entities = %+v\nwant %+v", ents, want)
	}
}

func TestRedactKeepsTiming(t *testing.T) {
	words := mkWords("ssn one two three four five six seven eight nine ok")
	reps, _ := Redact(Detect(words, nil), mustPolicy(t, "ssn"))
	res := format.Apply(words, format.Options{Replace: reps})
	if len(res.Words) != 3 {
		t.Fatalf("words %+v", res.Words)
	}
	w := res.Words[1]
	if w.Word != "[SSN_1]" || w.Start != words[1].Start || w.End != words[9].End || w.PunctuatedWord != "" {
		t.Errorf("redacted word = %+v", w)
	}
}

func TestRedactDisabledAndOverlaps(t *testing.T) {
	ents := []api.Entity{
		{Label: LabelSSN, Value: "a", StartWord: 0, EndWord: 3},
		{Label: LabelSSN, Value: "b", StartWord: 2, EndWord: 4}, // overlaps the first
		{Label: LabelSSN, Value: "c", StartWord: 5, EndWord: 5}, // empty
		{Label: LabelSSN, Value: "d", StartWord: -2, EndWord: 1},
	}
	reps, out := Redact(ents, Policy{})
	if reps != nil || !reflect.DeepEqual(out, ents) {
		t.Errorf("zero policy redacted: %v %+v", reps, out)
	}
	reps, out = Redact(ents, mustPolicy(t, "ssn"))
	if len(reps) != 1 || reps[0].Span != (format.Span{Start: 0, End: 3}) || out[1].Value != "b" || out[0].Value != "[SSN_1]" {
		t.Errorf("reps %+v entities %+v", reps, out)
	}
	if ents[0].Value != "a" {
		t.Error("Redact modified its input")
	}
}

func mustPolicy(t *testing.T, v ...string) Policy {
	t.Helper()
	p, err := ParsePolicy(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
