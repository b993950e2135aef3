package think

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/wordnet is a tiny database in WordNet's format, its words and
// glosses made up for these tests.
const fixtureWordNet = "testdata/wordnet"

func TestWordNetDefine(t *testing.T) {
	wn := wordNet{dir: fixtureWordNet}
	for _, tt := range []struct{ word, want string }{
		// The most common part of speech first: dog is tagged more as a
		// noun, run as a verb.
		{"dog", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
		{"run", "Run, as a verb: to move on foot faster than walking."},
		{"Ice Cream", "Ice cream, as a noun: a sweet frozen food made from cream."},
		{"paris", "Paris, as a noun: the capital city of France."},
		{"ubiquitous", "Ubiquitous, as an adjective: found everywhere at the same time."},
		{"quickly", "Quickly, as an adverb: at a fast pace."},
		// Inflections: regular endings and the exception files.
		{"dogs", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
		{"boxes", "Box, as a noun: a container with flat sides and a lid."},
		{"geese", "Goose, as a noun: a large water bird with a long neck."},
		{"ran", "Run, as a verb: to move on foot faster than walking."},
		{"running", "Run, as a verb: to move on foot faster than walking."},
		{"happiest", "Happy, as an adjective: feeling or showing pleasure."},
		// A gloss that is only an example.
		{"saying", "Saying, as a noun: only an example, no definition."},
	} {
		d, err := wn.define(tt.word)
		if err != nil {
			t.Errorf("define(%q): %v", tt.word, err)
			continue
		}
		if got := d.answer(); got != tt.want {
			t.Errorf("define(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	for _, word := range []string{"xyzzy", "", "  ", "dogz", "the"} {
		if _, err := wn.define(word); !errors.Is(err, errUnknownWord) {
			t.Errorf("define(%q): %v, want errUnknownWord", word, err)
		}
	}
	if _, err := (wordNet{dir: t.TempDir()}).define("dog"); !errors.Is(err, errNoDictionary) {
		t.Errorf("an empty directory: %v, want errNoDictionary", err)
	}
}

func TestWordNetCorrupt(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(fixtureWordNet, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	index, data := read("index.noun"), read("data.noun")
	for name, files := range map[string][2]string{
		"truncated data":     {index, data[:len(data)/2]},
		"empty data":         {index, ""},
		"offsets off by one": {strings.ReplaceAll(index, " 00000", " 10000"), data},
		"bad counts":         {strings.ReplaceAll(index, " n 1 1 @ 1 ", " n 9 9 @ 1 "), data},
		"garbage":            {"dog \x00\xff\n" + strings.Repeat("z", 100), "\n\n\n"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.noun"), []byte(files[0]), 0o644)
		os.WriteFile(filepath.Join(dir, "data.noun"), []byte(files[1]), 0o644)
		for _, word := range []string{"dog", "box", "platypus", "goose", "zzz"} {
			// An error or a definition; never a panic.
			if d, err := (wordNet{dir: dir}).define(word); err == nil && d.gloss == "" {
				t.Errorf("%s: define(%q) gave an empty gloss", name, word)
			}
		}
	}
}

func TestDefinitionQuestions(t *testing.T) {
	a := Assistant{WordNetDir: fixtureWordNet, DictDir: dictzipDir(t, 64)}
	for _, tt := range []struct{ in, want string }{
		{"define dog", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
		{"Define the word geese, please.", "Goose, as a noun: a large water bird with a long neck."},
		{"what does ubiquitous mean", "Ubiquitous, as an adjective: found everywhere at the same time."},
		{"What is the meaning of the word dog?", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
		{"what's the definition of ice cream", "Ice cream, as a noun: a sweet frozen food made from cream."},
		{"can you tell me what is meant by platypus", "Platypus, as a noun: an egg-laying mammal with a flat bill and webbed feet."},
		{"what's a platypus", "Platypus, as a noun: an egg-laying mammal with a flat bill and webbed feet."},
		{"what is an ice cream", "Ice cream, as a noun: a sweet frozen food made from cream."},
		{"define a box", "Box, as a noun: a container with flat sides and a lid."},
		{"define run", "Run, as a verb: to move on foot faster than walking."},
		{"what is a run", "Run, as a noun: a spell of moving fast on foot."},
		{"define xyzzy", "I do not know the word xyzzy."},
		// Not English: the dictionaries to English know it.
		{"what does chien mean", "Chien is French for dog."},
		// Other rules come first.
		{"what is two plus two", "Two plus two is four."},
		// A word the dictionary lacks is refused, not read as a question
		// about today.
		{"what is a day", "I cannot answer that. " + Capabilities},
	} {
		a.Now = fixedNow
		got := a.Reply([]Message{{Role: "user", Content: tt.in}})
		if got != tt.want {
			t.Errorf("Reply(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// "What is a" is asked of words the dictionary has; others are not
	// answered as definitions.
	for _, in := range []string{"what is a xyzzy", "what is a ubiquitous", "what is a dog that barks all night"} {
		if got, ok := a.Answer([]Message{{Role: "user", Content: in}}); ok {
			t.Errorf("%s: %q", in, got)
		}
	}
	none := Assistant{WordNetDir: t.TempDir(), DictDir: t.TempDir()}
	if got := none.Reply([]Message{{Role: "user", Content: "define serendipity"}}); got != noWordNet {
		t.Errorf("without WordNet: %q", got)
	}
	if got, ok := none.Answer([]Message{{Role: "user", Content: "what is a platypus"}}); ok {
		t.Errorf("without WordNet, what is a platypus: %q", got)
	}
}

// TestWordNetInstalled asks Debian's wordnet-base, where it is
// installed.
func TestWordNetInstalled(t *testing.T) {
	if _, err := os.Stat(filepath.Join(DefaultWordNetDir, "index.noun")); err != nil {
		t.Skip("WordNet is not installed: ", err)
	}
	var a Assistant
	for _, tt := range []struct{ in, want string }{
		{"define serendipity", "Serendipity, as a noun: good luck in making unexpected and fortunate discoveries."},
		{"what does ubiquitous mean", "Ubiquitous, as an adjective: being present everywhere at once."},
		{"what does geese mean", "Goose, as a noun: "},
		{"what is the meaning of the word dog", "Dog, as a noun: a member of the genus Canis"},
		{"what's a platypus", "Platypus, as a noun: "},
		{"define ran", "Run, as a verb: "},
		{"define paris", "Paris, as a noun: "},
	} {
		got := a.Reply([]Message{{Role: "user", Content: tt.in}})
		if !strings.HasPrefix(got, tt.want) || strings.Contains(got, `"`) {
			t.Errorf("Reply(%q) = %q, want %q...", tt.in, got, tt.want)
		}
	}
}

func TestSpeakable(t *testing.T) {
	for in, want := range map[string]string{
		"a device that moves a read/write head": "a device that moves a read or write head",
		"a mixture that is 50% explosive":       "a mixture that is 50 percent explosive",
		"the firm `Smith & Sons'":               "the firm Smith and Sons'",
		"a bottle that holds 4/5 of a gallon":   "a bottle that holds 4/5 of a gallon",
	} {
		if got := speakable(in); got != want {
			t.Errorf("speakable(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseIndexLine(f *testing.F) {
	f.Add("dog n 7 5 @ ~ #m #p %p 7 1 02084071 10114209 10023039 09886220 07676602 03901548 02710044  ")
	f.Add("ubiquitous a 1 2 & + 1 1 01847516  ")
	f.Add("x n 1 99999999999 1 1 0")
	f.Add("x n -1 -1")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := parseIndexLine(line)
		if err == nil && len(e.offsets) == 0 {
			t.Fatalf("%q: an entry without synsets", line)
		}
	})
}

func FuzzParseDataLine(f *testing.F) {
	f.Add(`02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 023 @ 02083346 n 0000 | a member of the genus Canis; "the dog barked all night"  `)
	f.Add("01847516 00 s 02 omnipresent 0 ubiquitous 0 004 & 01846414 a 0000 | being present everywhere at once  ")
	f.Add("1 2 3 ff a")
	f.Add("1 2 3 0 | ")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := parseDataLine(line)
		if err != nil {
			return
		}
		if len(s.words) == 0 {
			t.Fatalf("%q: a synset without words", line)
		}
		_ = s.wordFor(s.words[0])
		_ = s.definition()
	})
}
