package think

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Translations come from FreeDict's dictionaries as Debian's
// dict-freedict-* packages install them for dictd: for each pair of
// languages an index, lines sorted by headword
//
//	headword<TAB>offset<TAB>length
//
// with offset and length in dictd's base 64, and the text, usually
// compressed with dictzip, whose entries are read at those offsets. An
// entry is plain text: the headword with its pronunciation, then its
// senses, a line each (numbered when there are several), their
// translations separated by commas, with examples, synonyms and notes on
// lines of their own.

// DefaultDictDir is where Debian's dict-freedict packages install their
// dictionaries.
const DefaultDictDir = "/usr/share/dictd"

// maxEntries bounds how many entries of one headword are read.
const maxEntries = 64

// maxChecked bounds how many translations are looked up in the
// dictionary the other way.
const maxChecked = 24

// maxSaid is how many translations are said.
const maxSaid = 3

// language is a language a dictionary translates from or to.
type language struct {
	code string // FreeDict's: eng, fra
	name string // as said: English
	// articles are what may start a phrase and not be in the index:
	// "the dog" is looked up as "dog" too.
	articles []string
}

var (
	english = language{"eng", "English", []string{"the ", "a ", "an ", "to "}}
	// foreign are the languages translated to and from English.
	foreign = []language{
		{"fra", "French", []string{"le ", "la ", "les ", "l'", "un ", "une ", "des ", "du "}},
		{"spa", "Spanish", []string{"el ", "la ", "los ", "las ", "un ", "una "}},
		{"deu", "German", []string{"der ", "die ", "das ", "ein ", "eine "}},
	}
)

// languageNamed finds a language by its English name, lower case.
func languageNamed(name string) (language, bool) {
	if name == "english" {
		return english, true
	}
	for _, l := range foreign {
		if strings.ToLower(l.name) == name {
			return l, true
		}
	}
	return language{}, false
}

// missingDictionary says that the dictionary from one language to
// another is not installed, and how to install it.
func missingDictionary(from, to language) string {
	return "I have no " + from.name + "-" + to.name + " dictionary on this machine. Install the Debian package dict-freedict-" + from.code + "-" + to.code + "."
}

// textReader reads a dictionary's text.
type textReader interface {
	read(off, n int64) ([]byte, error)
}

// plainText is a dictionary's text that is not compressed (.dict).
type plainText struct {
	r    io.ReaderAt
	size int64
}

// read gives n bytes of the text from off; fewer at its end.
func (p plainText) read(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || n > maxRead || off > p.size {
		return nil, fmt.Errorf("dictionary text: a read of %d bytes at %d", n, off)
	}
	buf := make([]byte, min(n, p.size-off))
	if _, err := p.r.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("dictionary text: %w", err)
	}
	return buf, nil
}

// dictionary is an open FreeDict dictionary.
type dictionary struct {
	from, to language
	index    lineFile
	text     textReader
	files    []*os.File
}

// openDictionary opens the dictionary from one language to another in
// dir; the error is errNoDictionary when it is not installed.
func openDictionary(dir string, from, to language) (*dictionary, error) {
	if dir == "" {
		dir = DefaultDictDir
	}
	d := &dictionary{from: from, to: to}
	if err := d.openFiles(filepath.Join(dir, "freedict-"+from.code+"-"+to.code)); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openFiles opens the index and the text, compressed (.dict.dz) or not
// (.dict).
func (d *dictionary) openFiles(base string) error {
	index, size, err := d.open(base + ".index")
	if err != nil {
		return err
	}
	d.index = lineFile{r: index, size: size}
	text, size, err := d.open(base + ".dict.dz")
	if errors.Is(err, errNoDictionary) {
		text, size, err := d.open(base + ".dict")
		if err != nil {
			return err
		}
		d.text = plainText{r: text, size: size}
		return nil
	}
	if err != nil {
		return err
	}
	dz, err := openDictzip(text, size)
	if err != nil {
		return fmt.Errorf("dictionary %s: %w", base, err)
	}
	d.text = &cachedChunks{dictzip: dz}
	return nil
}

// open opens one of the dictionary's files; the dictionary closes it.
func (d *dictionary) open(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %w", name, errNoDictionary)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("dictionary: %w", err)
	}
	d.files = append(d.files, f)
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("dictionary: %w", err)
	}
	return f, info.Size(), nil
}

// Close closes the dictionary's files.
func (d *dictionary) Close() {
	for _, f := range d.files {
		f.Close()
	}
	d.files = nil
}

// cachedChunks keeps the chunks a dictzip file's reads inflated, for the
// reads after them: an open dictionary lives for one question.
type cachedChunks struct {
	*dictzip
	chunks map[int64][]byte
}

// read reads as dictzip's read does.
func (c *cachedChunks) read(off, n int64) ([]byte, error) {
	if c.chunkLen == 0 {
		return c.dictzip.read(off, n)
	}
	if c.chunks == nil {
		c.chunks = map[int64][]byte{}
	}
	return c.dictzip.readWith(off, n, func(i int64) ([]byte, error) {
		if b, ok := c.chunks[i]; ok {
			return b, nil
		}
		b, err := c.dictzip.chunk(i)
		if err == nil {
			c.chunks[i] = b
		}
		return b, err
	})
}

// lookup reads the entries of a headword.
func (d *dictionary) lookup(term string) ([]dictEntry, error) {
	key := dictKey(term)
	if key == "" {
		return nil, nil
	}
	lines, err := d.index.search([]byte(key), dictIndexKey, maxEntries)
	if err != nil {
		return nil, fmt.Errorf("%s-%s index: %w", d.from.name, d.to.name, err)
	}
	var out []dictEntry
	for _, line := range lines {
		_, off, n, err := parseDictIndexLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("%s-%s index: %w", d.from.name, d.to.name, err)
		}
		text, err := d.text.read(off, n)
		if err != nil {
			return nil, fmt.Errorf("%s-%s dictionary: %w", d.from.name, d.to.name, err)
		}
		e := parseEntry(string(text))
		switch {
		case strings.EqualFold(strings.TrimRight(e.headword, "!"), strings.TrimSpace(term)):
			e.exact = 2
		case dictKey(e.headword) == key:
			e.exact = 1
		}
		out = append(out, e)
	}
	return out, nil
}

// dictIndexKey is the headword of an index line, lower case: dictd sorts
// its index without regard to case.
func dictIndexKey(line []byte) []byte {
	return []byte(strings.ToLower(string(keyBefore('\t')(line))))
}

// dictKey writes a headword as dictd's index does: lower case, letters,
// digits and single spaces only ("eau-de-vie" is "eaudevie").
func dictKey(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		case unicode.IsSpace(r):
			space = true
		}
	}
	return b.String()
}

// parseDictIndexLine reads an index line: headword, offset and length.
func parseDictIndexLine(line string) (headword string, off, n int64, err error) {
	f := strings.Split(line, "\t")
	if len(f) < 3 {
		return "", 0, 0, fmt.Errorf("index line %.40q: fewer than three fields", line)
	}
	if off, err = decodeDictNumber(f[1]); err != nil {
		return "", 0, 0, fmt.Errorf("index line %.40q: offset: %w", line, err)
	}
	if n, err = decodeDictNumber(f[2]); err != nil {
		return "", 0, 0, fmt.Errorf("index line %.40q: length: %w", line, err)
	}
	return f[0], off, n, nil
}

// dictDigits are dictd's base 64 digits, in order.
const dictDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeDictNumber reads a number in dictd's base 64, the most
// significant digit first.
func decodeDictNumber(s string) (int64, error) {
	if s == "" || len(s) > 10 {
		return 0, fmt.Errorf("%q is not a dictd number", s)
	}
	var v int64
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(dictDigits, s[i])
		if d < 0 {
			return 0, fmt.Errorf("%q is not a dictd number", s)
		}
		v = v*64 + int64(d)
	}
	return v, nil
}

// dictEntry is a dictionary entry.
type dictEntry struct {
	headword string
	senses   []dictSense
	size     int // the entry's length: common words have long entries, with examples
	// exact is 2 when its headword is what was looked up ("Hund" for
	// "hund", "Hello!" for "hello"), 1 when only its index key is
	// ("water‐", a prefix, for "water"), 0 when it is another headword
	// ("computed axial tomography (CAT)" for "cat").
	exact int
}

// dictSense is a sense of an entry: a line of translations.
type dictSense struct {
	words []string
	// marked is a sense of a region or a register, or of a question or a
	// plural: "[Am.] Waggon", "Tussi [pej.]", the "Ja?" of "Hello?".
	marked bool
}

// markedTags mark a sense as slang, colloquial, pejorative, vulgar, old
// or figurative (in English and German abbreviations).
var markedTags = []string{"[coll.]", "[ugs.]", "[slang]", "[Slang]", "[pej.]", "[vulg.]", "[obs.]", "[veraltet]", "[veraltend]", "[humor.]", "[fig.]", "[übtr.]", "[dial.]", "[Dialekt]"}

// parseEntry reads an entry's text.
func parseEntry(text string) dictEntry {
	lines := strings.Split(strings.TrimLeft(text, "\n"), "\n")
	e := dictEntry{headword: entryHeadword(lines[0]), size: len(text)}
	// A question ("Hello?") or a plural ("Essen <pl>") is not the word
	// as it is asked for.
	odd := strings.HasSuffix(e.headword, "?") || strings.Contains(lines[0], "<pl>")
	for _, line := range lines[1:] {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, `"`) || strings.HasPrefix(t, "{") {
			continue // an example or a reference
		}
		if first, _, _ := strings.Cut(t, " "); strings.HasSuffix(first, ":") {
			continue // Synonym:, see:, Note:
		}
		if words := translations(t); len(words) > 0 {
			marked := odd || strings.HasPrefix(t, "[") || slices.ContainsFunc(markedTags, func(tag string) bool { return strings.Contains(t, tag) })
			e.senses = append(e.senses, dictSense{words: words, marked: marked})
		}
	}
	return e
}

// entryHeadword is the headword of an entry's first line, before its
// pronunciation and grammar.
func entryHeadword(line string) string {
	for _, mark := range []string{" /", " <", " ("} {
		if i := strings.Index(line, mark); i >= 0 {
			line = line[:i]
		}
	}
	return strings.TrimSpace(line)
}

// abbreviations stand for the object of a verb ("etw. essen"): they are
// not said.
var abbreviations = map[string]bool{"etw.": true, "jdm.": true, "jdn.": true, "jds.": true, "sth.": true, "sb.": true, "sb's": true}

// translations reads a sense's line: its translations, without sense
// numbers, grammar ("<masc>"), fields ("[zool.]"), pronunciations and
// remarks in brackets.
func translations(line string) []string {
	line = stripSenseNumber(line)
	line = strings.ReplaceAll(line, "\u2010", "-")
	line = stripEnclosed(line)
	var out []string
	for _, item := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || r == '/' }) {
		var words []string
		for _, w := range strings.Fields(item) {
			if !abbreviations[w] {
				words = append(words, w)
			}
		}
		t := strings.Trim(strings.Join(words, " "), "!?.:¡¿ ")
		if t == "" || strings.ContainsAny(t, `"…`) || contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// stripSenseNumber takes "2. " off the start of a line.
func stripSenseNumber(line string) string {
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && strings.HasPrefix(line[i:], ". ") {
		return line[i+2:]
	}
	return line
}

// stripEnclosed takes out what is between <>, [], {} and (), and
// pronunciations: /.../ after a space.
func stripEnclosed(line string) string {
	closing := map[rune]rune{'<': '>', '[': ']', '{': '}', '(': ')'}
	var b strings.Builder
	var want []rune // the closing marks awaited, innermost last
	prev := ' '
	for _, r := range line {
		switch {
		case len(want) > 0 && r == want[len(want)-1]:
			want = want[:len(want)-1]
		case closing[r] != 0:
			want = append(want, closing[r])
		case r == '/' && len(want) == 0 && unicode.IsSpace(prev):
			want = append(want, '/')
		case len(want) == 0:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// translation is what a dictionary gives for a term.
type translation struct {
	headword string   // as the dictionary writes it
	words    []string // the likeliest first, at most maxSaid
}

// sense is a candidate sense of a term, for ranking.
type sense struct {
	dictSense
	headword string
	exact    int // as its entry's
	size     int // its entry's length
	order    int
	back     []backCheck // each word looked up the other way; nil when not
}

// backCheck is what the dictionary the other way says of a translation.
type backCheck struct {
	confirmed bool // it gives the term back
	entries   int  // how many entries it has: common words have many senses
	// strong is a translation back that is the first of its sense, as
	// written: "eau" is "water", while "aquatique" is "aquatic, watery,
	// water-".
	strong bool
}

// translate finds the likeliest translations of term. Its senses are
// ranked: first those of entries whose headword is the term itself
// ("cat", not "computed axial tomography (CAT)"); then those whose words
// the dictionary the other way translates back to the term ("chat" for
// "cat", not "mégère"); then by how common they are: a sense not marked
// as slang or regional, a long entry (common words have examples), a
// translation with many entries of its own (common words have many
// senses). The error is errNoDictionary when the dictionary is not
// installed, and errUnknownWord when it lacks the term.
func translate(dir string, from, to language, term string) (translation, error) {
	d, err := openDictionary(dir, from, to)
	if err != nil {
		return translation{}, err
	}
	defer d.Close()
	var entries []dictEntry
	var looked string
	for _, t := range withoutArticle(term, from) {
		if entries, err = d.lookup(t); err != nil {
			return translation{}, err
		}
		if looked = t; len(entries) > 0 {
			break
		}
	}
	var senses []*sense
	for _, e := range entries {
		for _, ds := range e.senses {
			senses = append(senses, &sense{dictSense: ds, headword: e.headword, exact: e.exact, size: e.size, order: len(senses)})
		}
	}
	if len(senses) == 0 {
		return translation{}, errUnknownWord
	}
	sort.SliceStable(senses, func(i, j int) bool { return senses[i].before(senses[j]) })
	if back, err := openDictionary(dir, to, from); err == nil {
		checkBack(back, senses, looked)
		back.Close()
		sort.SliceStable(senses, func(i, j int) bool { return senses[i].before(senses[j]) })
	}
	out := translation{headword: looked, words: senses[0].likeliest()}
	if strings.EqualFold(senses[0].headword, looked) {
		out.headword = senses[0].headword // "Hund", not "hund"
	}
	return out, nil
}

// withoutArticle gives term, and term without an article or "to" at its
// start when it has one.
func withoutArticle(term string, l language) []string {
	out := []string{term}
	for _, a := range l.articles {
		if rest, ok := strings.CutPrefix(term, a); ok && strings.TrimSpace(rest) != "" {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// checkBack looks the first senses' words up in the dictionary the other
// way. What it cannot read there is only not confirmed: it ranks, it
// does not decide.
func checkBack(back *dictionary, senses []*sense, term string) {
	want := backKey(term)
	checked := 0
	for _, s := range senses {
		s.back = make([]backCheck, len(s.words))
		for i, w := range s.words {
			if checked >= maxChecked || i >= maxSaid {
				continue
			}
			checked++
			entries, _ := back.lookup(w)
			s.back[i].entries = len(entries)
			for _, e := range entries {
				for _, ds := range e.senses {
					if slices.ContainsFunc(ds.words, func(x string) bool { return backKey(x) == want }) {
						s.back[i].confirmed = true
					}
					if strings.EqualFold(strings.TrimPrefix(ds.words[0], "to "), term) {
						s.back[i].strong = true
					}
				}
			}
		}
	}
}

// backKey is a translation as compared with the term: an English verb's
// "to" does not count.
func backKey(s string) string {
	return strings.TrimPrefix(dictKey(s), "to ")
}

// before orders senses, the likelier first.
func (s *sense) before(o *sense) bool {
	if s.exact != o.exact {
		return s.exact > o.exact
	}
	if a, b := s.confirmed(), o.confirmed(); a != b {
		return a
	}
	if a, b := s.strong(), o.strong(); a != b {
		return a
	}
	if a, b := s.commonness(), o.commonness(); a != b {
		return a > b
	}
	return s.order < o.order
}

// confirmed is whether one of the sense's words translates back to the
// term.
func (s *sense) confirmed() bool {
	return slices.ContainsFunc(s.back, func(c backCheck) bool { return c.confirmed })
}

// strong is whether one of the sense's words translates back to the
// term first.
func (s *sense) strong() bool {
	return slices.ContainsFunc(s.back, func(c backCheck) bool { return c.strong })
}

// commonness weighs how common a sense is: its entry's length, more for
// a first translation with many entries, less when it is marked.
func (s *sense) commonness() float64 {
	w := float64(s.size)
	for _, c := range s.back {
		if c.confirmed {
			w *= 1 + math.Log(float64(max(c.entries, 1)))
			break
		}
	}
	if s.marked {
		w /= 8
	}
	return w
}

// likeliest gives the sense's words to say: those that translate back
// first, otherwise in the dictionary's order.
func (s *sense) likeliest() []string {
	var out []string
	for _, back := range []bool{true, false} {
		for i, w := range s.words {
			if len(out) < maxSaid && (s.back != nil && i < len(s.back) && s.back[i].confirmed) == back {
				out = append(out, w)
			}
		}
	}
	return out
}

// Questions that ask for a translation. L is a language's name.
var (
	// askSayIn: "how do you say cat in french", "what is house in
	// spanish", "translate dog into german".
	askSayIn = regexp.MustCompile(`^` + politeLead + `(?:how (?:do|would|can|could|should|does) (?:you|i|we|one) say|how to say|how is|how's|say|translate|what is|what's|whats|what are) (?:the )?(?:word |phrase )?(.+?) (?:said |called |written )?(?:in|into|to) (` + languageNames + `)$`)
	// askFrom: "translate le chien from french", "translate cat from
	// english to spanish".
	askFrom = regexp.MustCompile(`^` + politeLead + `(?:translate|what is|what's|whats) (?:the )?(?:word |phrase )?(.+?) from (` + languageNames + `)(?: (?:in|into|to) (` + languageNames + `))?$`)
	// askMeanIn: "what does chien mean in english", "what does gato
	// mean in spanish", "what does the german word hund mean".
	askMeanIn = regexp.MustCompile(`^` + politeLead + `(?:what does|what do|what's|whats) (?:the (` + languageNames + `) (?:word |phrase )?)?(.+?) mean(?: in (` + languageNames + `))?$`)
	// askWordFor: "what is the french for cat", "what's the german word
	// for dog".
	askWordFor = regexp.MustCompile(`^` + politeLead + `(?:what is|what's|whats|tell me) the (` + languageNames + `) (?:word |phrase )?for (?:the word )?(.+)$`)
)

// languageNames are the languages a question may name.
const languageNames = `french|spanish|german|english`

// translationAsked is what a question asks to translate: the term and
// the languages' names, from or to English. from is "" when the
// question does not say ("what does chien mean in english").
func translationAsked(phrase string) (term, from, to string, ok bool) {
	if m := askFrom.FindStringSubmatch(phrase); m != nil {
		term, from, to = m[1], m[2], m[3]
		if to == "" {
			to = "english"
		}
	} else if m := askSayIn.FindStringSubmatch(phrase); m != nil {
		term, to = m[1], m[2]
	} else if m := askMeanIn.FindStringSubmatch(phrase); m != nil && (m[1] != "" || m[3] != "") {
		term, from, to = m[2], m[1], "english"
		if from == "" && m[3] != "english" {
			from = m[3] // "what does gato mean in spanish": a Spanish word
		}
	} else if m := askWordFor.FindStringSubmatch(phrase); m != nil {
		term, to = m[2], m[1]
	} else {
		return "", "", "", false
	}
	if from == "" && to != "english" {
		from = "english"
	}
	if from == to {
		return "", "", "", false // "what does the english word cat mean" asks for a definition
	}
	return term, from, to, true
}

// translation answers a question that asks for a translation.
func (a Assistant) translation(phrase string) (string, bool) {
	term, fromName, toName, ok := translationAsked(phrase)
	if !ok {
		return "", false
	}
	if fromName == "" {
		if answer, ok := a.fromAnyLanguage(term); ok {
			return answer, true
		}
		return a.notInAnyLanguage(term), true
	}
	from, _ := languageNamed(fromName)
	to, _ := languageNamed(toName)
	if from.code != "eng" && to.code != "eng" {
		return "I only translate between English and French, Spanish or German.", true
	}
	t, err := translate(a.DictDir, from, to, term)
	switch {
	case errors.Is(err, errNoDictionary):
		return missingDictionary(from, to), true
	case errors.Is(err, errUnknownWord):
		return "I cannot find " + term + " in my " + from.name + "-" + to.name + " dictionary.", true
	case err != nil:
		return "My " + from.name + "-" + to.name + " dictionary could not be read.", true
	}
	return t.answer(from, to), true
}

// answer says a translation.
func (t translation) answer(from, to language) string {
	words := strings.Join(t.words, " or ")
	if to.code == "eng" {
		return sentence(t.headword) + " is " + from.name + " for " + words + "."
	}
	return sentence(t.headword) + " in " + to.name + " is " + words + "."
}

// fromAnyLanguage translates a word of a language not named to English:
// the first of French, Spanish and German that has it.
func (a Assistant) fromAnyLanguage(term string) (string, bool) {
	for _, l := range foreign {
		if t, err := translate(a.DictDir, l, english, term); err == nil {
			return t.answer(l, english), true
		}
	}
	return "", false
}

// notInAnyLanguage says that no dictionary to English has a word, or
// that none is installed.
func (a Assistant) notInAnyLanguage(term string) string {
	var have, packages []string
	for _, l := range foreign {
		if d, err := openDictionary(a.DictDir, l, english); err == nil {
			d.Close()
			have = append(have, l.name)
		} else {
			packages = append(packages, "dict-freedict-"+l.code+"-eng")
		}
	}
	if len(have) == 0 {
		return "I have no dictionaries to English on this machine. Install the Debian packages " + orList(packages, "and") + "."
	}
	if len(have) == 1 {
		return "I cannot find " + term + " in my " + have[0] + " dictionary."
	}
	return "I cannot find " + term + " in my " + orList(have, "or") + " dictionaries."
}

// orList joins words as said: "a, b or c".
func orList(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
