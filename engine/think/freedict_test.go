package think

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testdata/dictd is a tiny English-French and French-English dictionary
// in dictd's format, its text not compressed (.dict); dictzipDir
// compresses it.

func TestDecodeDictNumber(t *testing.T) {
	for s, want := range map[string]int64{"A": 0, "B": 1, "/": 63, "BA": 64, "b6r": 27*4096 + 58*64 + 43, "BT9MO": 1*64*64*64*64 + 19*64*64*64 + 61*64*64 + 12*64 + 14} {
		if got, err := decodeDictNumber(s); err != nil || got != want {
			t.Errorf("decodeDictNumber(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "A=", "é", "AAAAAAAAAAA"} {
		if _, err := decodeDictNumber(s); err == nil {
			t.Errorf("decodeDictNumber(%q) gave no error", s)
		}
	}
}

func TestParseEntry(t *testing.T) {
	e := parseEntry("cat /kˈat/\nKatze <fem> [zool.]\n      \"long-hair cat\"  - Langhaarkatze\n   Synonym: {feline}\n\n see: {cats}, {house cat}\n")
	if e.headword != "cat" || len(e.senses) != 1 || !reflect.DeepEqual(e.senses[0].words, []string{"Katze"}) || e.senses[0].marked {
		t.Errorf("parseEntry: %+v", e)
	}
	e = parseEntry("cat /kæt/\n1. mégère, peau de vache, rosse\n2. chat\n")
	if len(e.senses) != 2 || !reflect.DeepEqual(e.senses[0].words, []string{"mégère", "peau de vache", "rosse"}) || !reflect.DeepEqual(e.senses[1].words, []string{"chat"}) {
		t.Errorf("parseEntry, numbered senses: %+v", e)
	}
	e = parseEntry("eat /ˈiːt/ (ate /ˈeɪt/ <>, eaten /ˈiːtən/ <>) <v>\netw. essen, jdm./einer Sache zuvorkommen <v, trans> [cook.]\n         Note: Tier\n")
	if e.headword != "eat" || len(e.senses) != 1 || !reflect.DeepEqual(e.senses[0].words, []string{"essen", "einer Sache zuvorkommen"}) {
		t.Errorf("parseEntry, grammar and abbreviations: %+v", e)
	}
	e = parseEntry("car /kˈɑː/\n [coll.] Schlitten <masc> [ugs.]  [auto]\n")
	if len(e.senses) != 1 || !e.senses[0].marked || !reflect.DeepEqual(e.senses[0].words, []string{"Schlitten"}) {
		t.Errorf("parseEntry, a colloquial sense: %+v", e)
	}
	e = parseEntry("Hello? /həlˈəʊ/\nJa, bitte?, Ja?\n")
	if len(e.senses) != 1 || !e.senses[0].marked || !reflect.DeepEqual(e.senses[0].words, []string{"Ja", "bitte"}) {
		t.Errorf("parseEntry, a question: %+v", e)
	}
	if e := parseEntry(""); e.headword != "" || len(e.senses) != 0 {
		t.Errorf("parseEntry of nothing: %+v", e)
	}
}

func TestDictKey(t *testing.T) {
	for in, want := range map[string]string{"Eau-de-Vie": "eaudevie", "  peau  de vache ": "peau de vache", "l'eau": "leau", "Grüß dich!": "grüß dich", "chou\u2010fleur": "choufleur"} {
		if got := dictKey(in); got != want {
			t.Errorf("dictKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTranslate(t *testing.T) {
	fra, _ := languageNamed("french")
	for _, chunkLen := range []int{0, 16, 64, 58315} {
		dir := dictzipDir(t, chunkLen)
		for _, tt := range []struct {
			from, to language
			term     string
			want     []string
		}{
			// "chat" gives "cat" back; "chipie" and "rosse" do not.
			{english, fra, "cat", []string{"chat"}},
			{english, fra, "dog", []string{"chien", "toutou"}},
			{english, fra, "the dog", []string{"chien", "toutou"}},
			{english, fra, "house", []string{"maison"}},
			// "eau" gives "water" back first; "aquatique" only as "water-".
			{english, fra, "water", []string{"eau"}},
			{english, fra, "good morning", []string{"bonjour"}},
			{fra, english, "chien", []string{"dog"}},
			{fra, english, "le chien", []string{"dog"}},
			{fra, english, "eau-de-vie", []string{"brandy"}},
			{fra, english, "toutou", []string{"dog", "doggy"}},
		} {
			got, err := translate(dir, tt.from, tt.to, tt.term)
			if err != nil || !reflect.DeepEqual(got.words, tt.want) {
				t.Errorf("chunks of %d: translate(%s, %s, %q) = %q, %v; want %q", chunkLen, tt.from.code, tt.to.code, tt.term, got.words, err, tt.want)
			}
		}
		if _, err := translate(dir, english, fra, "xyzzy"); !errors.Is(err, errUnknownWord) {
			t.Errorf("translate xyzzy: %v", err)
		}
		deu, _ := languageNamed("german")
		if _, err := translate(dir, english, deu, "dog"); !errors.Is(err, errNoDictionary) {
			t.Errorf("translate to German: %v", err)
		}
	}
	// The text not compressed, as dictd also keeps it.
	got, err := translate("testdata/dictd", english, fra, "cat")
	if err != nil || !reflect.DeepEqual(got.words, []string{"chat"}) {
		t.Errorf("from a .dict: %q, %v", got.words, err)
	}
}

func TestTranslationQuestions(t *testing.T) {
	a := Assistant{WordNetDir: fixtureWordNet, DictDir: dictzipDir(t, 64), Now: fixedNow}
	for _, tt := range []struct{ in, want string }{
		{"how do you say cat in french", "Cat in French is chat."},
		{"How do I say dog in French?", "Dog in French is chien or toutou."},
		{"what is house in french", "House in French is maison."},
		{"translate the dog into french", "Dog in French is chien or toutou."},
		{"what's the french word for water", "Water in French is eau."},
		{"translate cat from english to french", "Cat in French is chat."},
		{"what does chien mean in english", "Chien is French for dog."},
		{"what does chien mean in french", "Chien is French for dog."},
		{"what does the french word maison mean", "Maison is French for house or home."},
		{"translate le chien from french", "Chien is French for dog."},
		{"translate eau-de-vie from french into english", "Eau-de-vie is French for brandy."},
		{"please translate chat into english", "Chat is French for cat."},
		{"how do you say xyzzy in french", "I cannot find xyzzy in my English-French dictionary."},
		{"what does xyzzy mean in english", "I cannot find xyzzy in my French dictionary."},
		{"translate dog into german", "I have no English-German dictionary on this machine. Install the Debian package dict-freedict-eng-deu."},
		{"what does gato mean in spanish", "I have no Spanish-English dictionary on this machine. Install the Debian package dict-freedict-spa-eng."},
		{"translate chat from french to german", "I only translate between English and French, Spanish or German."},
		// Not translations.
		{"what time is it in german", "I do not know the time zone of german. I know cities such as Tokyo and New York, and zones such as UTC."},
		{"what does dog mean", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
		{"what does the english word dog mean", "Dog, as a noun: a tame animal kept by people for company or work; barks."},
	} {
		if got := a.Reply([]Message{{Role: "user", Content: tt.in}}); got != tt.want {
			t.Errorf("Reply(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	none := Assistant{WordNetDir: fixtureWordNet, DictDir: t.TempDir()}
	if got := none.Reply([]Message{{Role: "user", Content: "what does chien mean in english"}}); got != "I have no dictionaries to English on this machine. Install the Debian packages dict-freedict-fra-eng, dict-freedict-spa-eng and dict-freedict-deu-eng." {
		t.Errorf("without dictionaries: %q", got)
	}
}

// TestFreeDictInstalled asks Debian's dict-freedict packages, where they
// are installed.
func TestFreeDictInstalled(t *testing.T) {
	if _, err := os.Stat(filepath.Join(DefaultDictDir, "freedict-eng-fra.index")); err != nil {
		t.Skip("FreeDict's dictionaries are not installed: ", err)
	}
	var a Assistant
	for _, tt := range []struct{ in, want string }{
		{"how do you say cat in french", "Cat in French is chat."},
		{"what is house in spanish", "House in Spanish is casa."},
		{"translate dog into german", "Dog in German is Hund."},
		{"what does chien mean in english", "Chien is French for dog."},
		{"translate le chien from french", "Chien is French for dog."},
		{"what does gato mean in spanish", "Gato is Spanish for cat."},
		{"how do you say house in german", "House in German is Haus."},
		{"what does hund mean in english", "Hund is German for dog"},
		{"how do you say tree in german", "Tree in German is Baum."},
		{"how do you say book in spanish", "Book in Spanish is libro."},
	} {
		got := a.Reply([]Message{{Role: "user", Content: tt.in}})
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Reply(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Every dictionary that is installed reads, compressed with chunks.
	names, _ := filepath.Glob(filepath.Join(DefaultDictDir, "freedict-*.dict.dz"))
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Stat()
		dz, err := openDictzip(f, info.Size())
		if err != nil || dz.chunkLen == 0 {
			t.Errorf("%s: %v, chunks of %d", name, err, dz.chunkLen)
		} else if text, err := dz.read(0, 200); err != nil || !strings.HasPrefix(string(text), "00-database") && len(text) != 200 {
			t.Errorf("%s: %q, %v", name, text, err)
		}
		f.Close()
	}
}

func FuzzParseDictIndexLine(f *testing.F) {
	f.Add("cat\tb6r\t1")
	f.Add("dog\tBN4d3\tGe")
	f.Add("\t\t")
	f.Add("x\t//////////\t+")
	f.Fuzz(func(t *testing.T, line string) {
		_, off, n, err := parseDictIndexLine(line)
		if err == nil && (off < 0 || n < 0) {
			t.Fatalf("%q: offset %d, length %d", line, off, n)
		}
	})
}

func FuzzParseEntry(f *testing.F) {
	f.Add("cat /kæt/\n1. mégère, peau de vache, rosse\n2. chat\n")
	f.Add("dog /dˈɒɡ/\nHund <masc> [zool.]\n      \"train a dog\"  - einen Hund abrichten\n   Synonym: {dawg}\n")
	f.Add(" [comp.] computer maker <n>\n((<[{/")
	f.Add("x\n1. \n2. ,,;;//\n3. (a) [b] <c> {d} /e/")
	f.Fuzz(func(t *testing.T, text string) {
		e := parseEntry(text)
		for _, s := range e.senses {
			for _, w := range s.words {
				if w == "" || strings.ContainsAny(w, ",;\"") {
					t.Fatalf("%q: translation %q", text, w)
				}
			}
		}
	})
}
