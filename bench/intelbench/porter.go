package intelbench

import "strings"

// PorterStem reduces a lower-case ASCII word to its stem by the algorithm of
// M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980, as
// published (step 2 maps "abli" to "able"; the later C release's "bli" and
// "logi" departures are not applied). ROUGE stems with this algorithm, so
// scores computed with stemming are comparable with published ones. Words of
// one or two letters, and words with characters other than a-z, are
// returned unchanged (digits excepted: they count as consonants).
func PorterStem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		if c := word[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return word
		}
	}
	s := &stemmer{b: []byte(word)}
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

// stemmer holds the word being reduced; b is always the whole current word.
type stemmer struct{ b []byte }

// cons reports whether b[i] is a consonant: not a, e, i, o or u, and a y
// only when it does not follow a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// measure is m, the number of vowel-consonant sequences in b[:n]
// ([C](VC)^m[V]).
func (s *stemmer) measure(n int) int {
	m, i := 0, 0
	for i < n && s.cons(i) {
		i++
	}
	for i < n {
		for i < n && !s.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		for i < n && s.cons(i) {
			i++
		}
		m++
	}
	return m
}

// vowelIn reports whether b[:n] holds a vowel.
func (s *stemmer) vowelIn(n int) bool {
	for i := range n {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether b[:n] ends in a double consonant.
func (s *stemmer) doubleCons(n int) bool {
	return n >= 2 && s.b[n-1] == s.b[n-2] && s.cons(n-1)
}

// cvc reports whether b[:n] ends consonant-vowel-consonant with the last
// consonant not w, x or y (*o in the paper).
func (s *stemmer) cvc(n int) bool {
	if n < 3 || !s.cons(n-1) || s.cons(n-2) || !s.cons(n-3) {
		return false
	}
	c := s.b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func (s *stemmer) ends(suf string) bool {
	return strings.HasSuffix(string(s.b), suf)
}

// stem is the length of the word without suffix suf.
func (s *stemmer) stem(suf string) int { return len(s.b) - len(suf) }

func (s *stemmer) replace(suf, with string) {
	s.b = append(s.b[:s.stem(suf)], with...)
}

func (s *stemmer) step1a() {
	switch {
	case s.ends("sses"):
		s.replace("sses", "ss")
	case s.ends("ies"):
		s.replace("ies", "i")
	case s.ends("ss"):
	case s.ends("s"):
		s.replace("s", "")
	}
}

func (s *stemmer) step1b() {
	if s.ends("eed") {
		if s.measure(s.stem("eed")) > 0 {
			s.replace("eed", "ee")
		}
		return
	}
	removed := false
	for _, suf := range []string{"ed", "ing"} {
		if s.ends(suf) && s.vowelIn(s.stem(suf)) {
			s.replace(suf, "")
			removed = true
			break
		}
	}
	if !removed {
		return
	}
	n := len(s.b)
	switch {
	case s.ends("at"):
		s.replace("at", "ate")
	case s.ends("bl"):
		s.replace("bl", "ble")
	case s.ends("iz"):
		s.replace("iz", "ize")
	case s.doubleCons(n):
		if c := s.b[n-1]; c != 'l' && c != 's' && c != 'z' {
			s.b = s.b[:n-1]
		}
	case s.measure(n) == 1 && s.cvc(n):
		s.b = append(s.b, 'e')
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelIn(s.stem("y")) {
		s.replace("y", "i")
	}
}

// rule is a suffix and its replacement.
type rule struct{ suf, with string }

// Longest first wherever one suffix ends another, so that the first match
// is the longest, as the algorithm requires.
var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"abli", "able"}, {"alli", "al"}, {"entli", "ent"},
	{"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"},
	{"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"},
	{"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
}

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

// longest is the longest suffix of the word in sufs, or "".
func (s *stemmer) longest(sufs []string) string {
	best := ""
	for _, suf := range sufs {
		if len(suf) > len(best) && s.ends(suf) {
			best = suf
		}
	}
	return best
}

// applyRules replaces the longest matching suffix when the stem before it
// has m > 0; a failed condition does not fall back to a shorter suffix.
func (s *stemmer) applyRules(rules []rule) {
	sufs := make([]string, len(rules))
	for i, r := range rules {
		sufs[i] = r.suf
	}
	suf := s.longest(sufs)
	if suf == "" {
		return
	}
	for _, r := range rules {
		if r.suf == suf && s.measure(s.stem(suf)) > 0 {
			s.replace(suf, r.with)
		}
	}
}

func (s *stemmer) step2() { s.applyRules(step2Rules) }
func (s *stemmer) step3() { s.applyRules(step3Rules) }

func (s *stemmer) step4() {
	suf := s.longest(step4Suffixes)
	if suf == "" {
		return
	}
	n := s.stem(suf)
	if s.measure(n) <= 1 {
		return
	}
	if suf == "ion" && (n == 0 || (s.b[n-1] != 's' && s.b[n-1] != 't')) {
		return
	}
	s.b = s.b[:n]
}

func (s *stemmer) step5() {
	if s.ends("e") {
		n := s.stem("e")
		if m := s.measure(n); m > 1 || (m == 1 && !s.cvc(n)) {
			s.b = s.b[:n]
		}
	}
	if n := len(s.b); n > 0 && s.b[n-1] == 'l' && s.doubleCons(n) && s.measure(n) > 1 {
		s.b = s.b[:n-1]
	}
}
