package format

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// counterIDs returns a deterministic id generator.
func counterIDs() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("id-%d", n)
	}
}

func TestUtterances(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		opts  UtteranceOptions
		want  []string // transcripts
		words []int
	}{
		{"default split at 0.8 s", "hello there / how are you", UtteranceOptions{}, []string{"hello there", "how are you"}, []int{2, 3}},
		{"larger split keeps one", "hello there / how are you", UtteranceOptions{Split: 1}, []string{"hello there how are you"}, []int{5}},
		{"small split splits every gap", "a b c", UtteranceOptions{Split: 0.01}, []string{"a", "b", "c"}, []int{1, 1, 1}},
		{"speaker change", "hi@0 there@0 hello@1", UtteranceOptions{}, []string{"hi there", "hello"}, []int{2, 1}},
		{"empty", "", UtteranceOptions{}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			us := Utterances(mkWords(tc.in), tc.opts, counterIDs())
			var got []string
			var nw []int
			for _, u := range us {
				got = append(got, u.Transcript)
				nw = append(nw, len(u.Words))
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(nw, tc.words) {
				t.Errorf("utterances %q %v, want %q %v", got, nw, tc.want, tc.words)
			}
			if us == nil {
				t.Error("Utterances returned nil; want an empty slice")
			}
		})
	}
}

func TestUtteranceFields(t *testing.T) {
	in := mkWords("hello@2#0.5 there@2#1")
	res := Apply(in, Options{Punctuate: true})
	us := Utterances(res.Words, UtteranceOptions{Channel: 1}, counterIDs())
	if len(us) != 1 {
		t.Fatalf("got %d utterances", len(us))
	}
	u := us[0]
	if u.Start != in[0].Start || u.End != in[1].End || u.Confidence != 0.75 || u.Channel != 1 ||
		u.Transcript != "Hello there." || u.ID != "id-1" || u.Speaker == nil || *u.Speaker != 2 {
		t.Errorf("utterance = %+v", u)
	}
	// The words are copies: changing them leaves the input alone.
	u.Words[0].Word = "changed"
	if res.Words[0].Word != "hello" {
		t.Error("utterance words alias the input")
	}
	b, err := json.Marshal(Utterance{Words: res.Words[:1], ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"start":0,"end":0,"confidence":0,"channel":0,"transcript":"","words":[{"word":"hello","start":0,"end":0.25,"confidence":0.5,"punctuated_word":"Hello","speaker":2}],"id":"x"}`
	if string(b) != want {
		t.Errorf("wire shape\n got %s\nwant %s", b, want)
	}
}

func TestUtterancesNilID(t *testing.T) {
	us := Utterances(mkWords("a b"), UtteranceOptions{}, nil)
	if len(us) != 1 || us[0].ID != "" {
		t.Errorf("Utterances with nil newID = %+v", us)
	}
}
