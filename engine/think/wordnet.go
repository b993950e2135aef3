package think

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Definitions come from WordNet's database as Debian's wordnet-base
// installs it. Each part of speech has an index file, lines sorted by
// lemma:
//
//	lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
//
// and a data file whose synsets are read at the byte offsets the index
// gives: the synset's words, pointers, and after " | " its gloss. The
// .exc files map irregular forms to their lemmas ("geese goose").

// DefaultWordNetDir is where Debian's wordnet-base installs WordNet.
const DefaultWordNetDir = "/usr/share/wordnet"

// noWordNet is said when WordNet is not installed.
const noWordNet = "I have no dictionary on this machine. Install the Debian package wordnet-base to let me define words."

var (
	// errNoDictionary is a dictionary that is not installed.
	errNoDictionary = errors.New("dictionary not installed")
	// errUnknownWord is a word the dictionary does not have.
	errUnknownWord = errors.New("word not in the dictionary")
)

// wordNet is WordNet's database in a directory.
type wordNet struct {
	dir string
	// nounsOnly looks up nouns only: "what is a run" asks for the noun.
	nounsOnly bool
}

// partOfSpeech is one of WordNet's four files.
type partOfSpeech struct {
	file string // the file names' suffix: index.noun
	name string // as said: "a noun"
}

var partsOfSpeech = []partOfSpeech{{"noun", "a noun"}, {"verb", "a verb"}, {"adj", "an adjective"}, {"adv", "an adverb"}}

// definition is the first sense of a word.
type definition struct {
	word  string // as the synset writes it, with spaces
	pos   string // as said: "a noun"
	gloss string // the definition, without the examples
}

// answer says the definition as a sentence.
func (d definition) answer() string {
	gloss := strings.TrimRight(d.gloss, " ;,:")
	if !strings.HasSuffix(gloss, ".") && !strings.HasSuffix(gloss, "?") && !strings.HasSuffix(gloss, "!") {
		gloss += "."
	}
	return sentence(d.word) + ", as " + d.pos + ": " + gloss
}

// indexEntry is a line of an index file.
type indexEntry struct {
	lemma     string
	tagSenses int     // how many of its senses were seen tagged in a corpus: how common it is
	offsets   []int64 // its synsets in the data file, the most common first
	pos       partOfSpeech
}

// define finds the first sense of word (or of its lemma: "geese" is
// defined as "goose"), in the part of speech the word is most often used
// as. The error is errNoDictionary when WordNet is not installed and
// errUnknownWord when it lacks the word.
func (w wordNet) define(word string) (definition, error) {
	lemma := lemmaKey(word)
	if lemma == "" {
		return definition{}, errUnknownWord
	}
	installed := false
	for _, p := range partsOfSpeech {
		if _, err := os.Stat(w.path("index." + p.file)); err == nil {
			installed = true
		}
	}
	if !installed {
		return definition{}, errNoDictionary
	}
	entries, err := w.entries([]string{lemma}, nil)
	if err != nil {
		return definition{}, err
	}
	if len(entries) == 0 {
		entries, err = w.entries(nil, func(p partOfSpeech) ([]string, error) { return w.baseForms(p, lemma) })
		if err != nil {
			return definition{}, err
		}
	}
	if len(entries) == 0 {
		return definition{}, errUnknownWord
	}
	best := entries[0]
	for _, e := range entries[1:] {
		if e.tagSenses > best.tagSenses {
			best = e
		}
	}
	p := best.pos
	s, err := w.synset(p, best.offsets[0])
	if err != nil {
		return definition{}, err
	}
	return definition{word: s.wordFor(best.lemma), pos: p.name, gloss: s.definition()}, nil
}

// entries looks up, in each part of speech, the first of its forms that
// the index has: forms, or what formsOf gives for that part of speech.
func (w wordNet) entries(forms []string, formsOf func(partOfSpeech) ([]string, error)) ([]indexEntry, error) {
	var out []indexEntry
	parts := partsOfSpeech
	if w.nounsOnly {
		parts = parts[:1]
	}
	for _, p := range parts {
		candidates := forms
		if formsOf != nil {
			var err error
			if candidates, err = formsOf(p); err != nil {
				return nil, err
			}
		}
		for _, form := range candidates {
			lines, err := searchFile(w.path("index."+p.file), form, ' ', 1)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(lines) == 0 {
				continue
			}
			e, err := parseIndexLine(string(lines[0]))
			if err != nil {
				return nil, fmt.Errorf("wordnet index.%s: %w", p.file, err)
			}
			e.pos = p
			out = append(out, e)
			break
		}
	}
	return out, nil
}

// baseForms gives the lemmas word may be an inflection of, as a part of
// speech: its irregular forms from the .exc file, then what taking off
// an ending gives ("boxes": "boxe", "box").
func (w wordNet) baseForms(p partOfSpeech, word string) ([]string, error) {
	var out []string
	lines, err := searchFile(w.path(p.file+".exc"), word, ' ', 1)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, l := range lines {
		out = append(out, strings.Fields(string(l))[1:]...)
	}
	for _, r := range detachments[p.file] {
		if base, ok := strings.CutSuffix(word, r.ending); ok && base != "" {
			out = append(out, base+r.base)
		}
	}
	return out, nil
}

// detachment is an inflectional ending and what replaces it in the
// lemma.
type detachment struct{ ending, base string }

// detachments are the regular inflections of English, by part of
// speech, as WordNet's own morphology takes them off.
var detachments = map[string][]detachment{
	"noun": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	"verb": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	"adj":  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// synset reads the synset at offset in a part of speech's data file.
func (w wordNet) synset(p partOfSpeech, offset int64) (synset, error) {
	name := w.path("data." + p.file)
	f, err := os.Open(name)
	if err != nil {
		return synset{}, fmt.Errorf("wordnet: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return synset{}, fmt.Errorf("wordnet: %w", err)
	}
	line, _, err := lineFile{r: f, size: info.Size()}.lineAt(offset)
	if err != nil {
		return synset{}, fmt.Errorf("wordnet %s: %w", name, err)
	}
	s, err := parseDataLine(string(line))
	if err != nil {
		return synset{}, fmt.Errorf("wordnet %s at %d: %w", name, offset, err)
	}
	if s.offset != offset {
		return synset{}, fmt.Errorf("wordnet %s: the synset at %d says it is at %d", name, offset, s.offset)
	}
	return s, nil
}

func (w wordNet) path(name string) string {
	dir := w.dir
	if dir == "" {
		dir = DefaultWordNetDir
	}
	return filepath.Join(dir, name)
}

// lemmaKey writes a word or phrase as WordNet's index does: lower case,
// words joined by underscores.
func lemmaKey(word string) string {
	return strings.Join(strings.Fields(strings.ToLower(word)), "_")
}

// parseIndexLine reads a line of an index file.
func parseIndexLine(line string) (indexEntry, error) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return indexEntry{}, fmt.Errorf("index line %.40q: too few fields", line)
	}
	synsets, err1 := strconv.Atoi(f[2])
	pointers, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || synsets < 1 || pointers < 0 || 4+pointers > len(f) {
		return indexEntry{}, fmt.Errorf("index line %.40q: bad counts", line)
	}
	rest := f[4+pointers:]
	if len(rest) != 2+synsets {
		return indexEntry{}, fmt.Errorf("index line %.40q: %d synsets, %d fields", line, synsets, len(rest))
	}
	tagged, err := strconv.Atoi(rest[1])
	if err != nil {
		return indexEntry{}, fmt.Errorf("index line %.40q: bad tagged sense count", line)
	}
	e := indexEntry{lemma: f[0], tagSenses: tagged}
	for _, s := range rest[2:] {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil || off < 0 {
			return indexEntry{}, fmt.Errorf("index line %.40q: bad offset %q", line, s)
		}
		e.offsets = append(e.offsets, off)
	}
	return e, nil
}

// synset is a line of a data file, as far as a definition needs it.
type synset struct {
	offset int64
	words  []string // as written, underscores for spaces
	gloss  string
}

// parseDataLine reads a line of a data file:
//
//	offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt [ptr...] [frames...] | gloss
func parseDataLine(line string) (synset, error) {
	head, gloss, _ := strings.Cut(line, " | ")
	f := strings.Fields(head)
	if len(f) < 6 {
		return synset{}, fmt.Errorf("data line %.40q: too few fields", line)
	}
	off, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return synset{}, fmt.Errorf("data line %.40q: bad offset", line)
	}
	n, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil || n == 0 || 4+2*int(n) > len(f) {
		return synset{}, fmt.Errorf("data line %.40q: bad word count", line)
	}
	s := synset{offset: off, gloss: strings.TrimSpace(gloss)}
	for i := 0; i < int(n); i++ {
		s.words = append(s.words, f[4+2*i])
	}
	return s, nil
}

// wordFor gives the synset's spelling of lemma ("Paris" for "paris"),
// with spaces, without an adjective's position marker ("away(p)").
func (s synset) wordFor(lemma string) string {
	out := lemma
	for _, w := range s.words {
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		if strings.EqualFold(w, lemma) {
			out = w
			break
		}
	}
	return strings.ReplaceAll(out, "_", " ")
}

// definition is the gloss without its quoted examples.
func (s synset) definition() string {
	gloss := s.gloss
	if i := strings.Index(gloss, `; "`); i >= 0 {
		gloss = gloss[:i]
	}
	if strings.HasPrefix(gloss, `"`) {
		// Only examples: they are what there is.
		gloss = strings.ReplaceAll(gloss, `"`, "")
	}
	return speakable(strings.TrimSpace(gloss))
}

// slashed matches words joined by a slash: "read/write".
var slashed = regexp.MustCompile(`\b([A-Za-z]+)/([A-Za-z]+)\b`)

// speakable writes the few symbols glosses use as words: "50% of"
// is "50 percent of", "his/her" "his or her".
func speakable(gloss string) string {
	gloss = slashed.ReplaceAllString(gloss, "$1 or $2")
	gloss = strings.ReplaceAll(gloss, "%", " percent")
	gloss = strings.ReplaceAll(gloss, " & ", " and ")
	return strings.ReplaceAll(gloss, "`", "")
}

// searchFile searches a sorted file for the lines whose key, the text
// before sep, is key.
func searchFile(name, key string, sep byte, limit int) ([][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open dictionary: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("dictionary %s: %w", name, err)
	}
	lines, err := lineFile{r: f, size: info.Size()}.search([]byte(key), keyBefore(sep), limit)
	if err != nil {
		return nil, fmt.Errorf("dictionary %s: %w", name, err)
	}
	return lines, nil
}

// Questions that ask what a word means.
var (
	// askDefinition: "define serendipity", "what is the meaning of the
	// word dog".
	askDefinition = regexp.MustCompile(`^` + politeLead + `(?:define|definition of|meaning of|look up|(?:what is|what's|whats|give me|tell me) the (?:definition|meaning) of) (?:the )?(?:word |term |phrase )?(.+?)(?: for me)?$`)
	// askMeaning: "what does ubiquitous mean", "what is meant by
	// serendipity".
	askMeaning = regexp.MustCompile(`^` + politeLead + `(?:(?:what does|what do|what's|whats) (?:the )?(?:english )?(?:word |term |phrase )?(.+?) mean|what is meant by (.+))$`)
	// askWhatIsA: "what's a platypus", asked only of a word WordNet has.
	askWhatIsA = regexp.MustCompile(`^(?:what is|what's|whats) (?:a|an) ([^ ]+(?: [^ ]+){0,2})$`)
)

// definitionAsked gives the word a question asks the meaning of.
func definitionAsked(phrase string) (string, bool) {
	if m := askDefinition.FindStringSubmatch(phrase); m != nil {
		return m[1], true
	}
	if m := askMeaning.FindStringSubmatch(phrase); m != nil {
		return m[1] + m[2], true
	}
	return "", false
}

// define answers a question that asks what a word means. A word WordNet
// does not have may be French, Spanish or German: the dictionaries to
// English are asked.
func (a Assistant) define(phrase string) (string, bool) {
	term, ok := definitionAsked(phrase)
	if !ok {
		return "", false
	}
	wn := wordNet{dir: a.WordNetDir}
	var err error
	for _, t := range withoutArticle(term, english) {
		var d definition
		if d, err = wn.define(t); err == nil {
			return d.answer(), true
		}
		if !errors.Is(err, errUnknownWord) {
			break
		}
	}
	if answer, ok := a.fromAnyLanguage(term); ok {
		return answer, true
	}
	switch {
	case errors.Is(err, errNoDictionary):
		return noWordNet, true
	case errors.Is(err, errUnknownWord):
		return "I do not know the word " + term + ".", true
	default:
		return "My dictionary on this machine could not be read.", true
	}
}

// whatIsA answers "what is a platypus" when WordNet has the word.
func (a Assistant) whatIsA(phrase string) (string, bool) {
	m := askWhatIsA.FindStringSubmatch(phrase)
	if m == nil {
		return "", false
	}
	d, err := wordNet{dir: a.WordNetDir, nounsOnly: true}.define(m[1])
	if err != nil {
		return "", false
	}
	return d.answer(), true
}
