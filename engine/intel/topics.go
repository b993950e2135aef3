package intel

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPhraseWords is the longest keyphrase; English noun phrases put their
// head last, so longer runs keep their last words.
const maxPhraseWords = 3

// modifiers are adjectives that narrow a phrase without naming a topic
// ("current phone" is about the phone); they are dropped from the start of
// a candidate.
var modifiers = wordSet(`current last next whole own main real best better full high low large early late recent
previous certain particular general specific important various similar following entire total final due possible
available likely clear main major minor further additional extra usual same latest overall`)

// phraseStat collects one candidate keyphrase (keyed by its stems).
type phraseStat struct {
	key      string
	words    int
	count    int
	sents    []int          // sentence of each occurrence, ascending
	surfaces map[string]int // lower-case surface form -> occurrences
	score    float64
}

// breaksPhrase reports whether punctuation at the end of w ends a phrase.
func breaksPhrase(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(w)
	return r != utf8.RuneError && !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// nominal reports whether a content word can be part of a keyphrase: not
// an adverb, and not obviously a past-tense verb on its own.
func nominal(w string) bool {
	if !isContent(w) || len(w) < 3 {
		return false
	}
	// Opinion words ("love", "terrible") are sentiment, not subject matter.
	if v := lex()[w]; v >= 1 || v <= -1 {
		return false
	}
	if strings.HasSuffix(w, "ly") && len(w) > 4 {
		return false
	}
	return !strings.ContainsAny(w, "'")
}

// candidates finds keyphrase candidates RAKE-style: maximal runs of nominal
// words between stop words and punctuation, plus each word of a run on its
// own, so that "phone" gathers the evidence of "phone upgrade".
func (d *doc) candidates(c *checker) (map[string]*phraseStat, map[string]int, error) {
	stats := map[string]*phraseStat{}
	freq := map[string]int{}
	add := func(ws []string, si int) {
		stems := make([]string, len(ws))
		for i, w := range ws {
			stems[i] = stem(w)
		}
		key := strings.Join(stems, " ")
		ps := stats[key]
		if ps == nil {
			ps = &phraseStat{key: key, words: len(ws), surfaces: map[string]int{}}
			stats[key] = ps
		}
		ps.count++
		if n := len(ps.sents); n == 0 || ps.sents[n-1] != si {
			ps.sents = append(ps.sents, si)
		}
		ps.surfaces[strings.Join(ws, " ")]++
	}
	for si, s := range d.sents {
		var run []string
		flush := func() {
			if len(run) == 0 {
				return
			}
			if len(run) > maxPhraseWords {
				run = run[len(run)-maxPhraseWords:]
			}
			for len(run) > 1 && modifiers[run[0]] {
				run = run[1:]
			}
			if len(run) > 1 {
				add(run, si)
			}
			for _, w := range run {
				if !(strings.HasSuffix(w, "ed") && len(w) > 4) {
					add([]string{w}, si)
				}
			}
			run = run[:0]
		}
		for i := s.start; i <= s.end; i++ {
			if err := c.check(); err != nil {
				return nil, nil, err
			}
			w := d.lower[i]
			if nominal(w) {
				freq[stem(w)]++
				run = append(run, w)
			} else {
				flush()
			}
			if breaksPhrase(d.words[i]) {
				flush()
			}
		}
		flush()
	}
	return stats, freq, nil
}

// display is how a phrase is shown: its most frequent surface form, with
// words that only ever appear capitalised (names, acronyms) kept so, and
// the first letter capitalised like the service's topics ("Phone upgrade").
func (d *doc) display(ps *phraseStat, cased map[string]string) string {
	best, bestN := "", -1
	for s, n := range ps.surfaces {
		if n > bestN || (n == bestN && s < best) {
			best, bestN = s, n
		}
	}
	ws := strings.Fields(best)
	for i, w := range ws {
		if cw, ok := cased[w]; ok {
			ws[i] = cw
		}
	}
	return capitalise(strings.Join(ws, " "))
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// casedWords maps lower-case words that never appear in lower case
// except at the start of a sentence to their written form.
func (d *doc) casedWords() map[string]string {
	lowerSeen := map[string]bool{}
	cased := map[string]string{}
	starts := map[int]bool{}
	for _, s := range d.sents {
		starts[s.start] = true
	}
	for i, w := range d.words {
		l := d.lower[i]
		t := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		switch {
		case t == l:
			lowerSeen[l] = true
		case !starts[i]:
			if _, ok := cased[l]; !ok {
				cased[l] = t
			}
		}
	}
	for l := range lowerSeen {
		delete(cased, l)
	}
	return cased
}

// salient scores candidates and keeps the few that stand out.
func salient(stats map[string]*phraseStat, freq map[string]int, contentWords int) []*phraseStat {
	var all []*phraseStat
	for _, ps := range stats {
		sum := 0.0
		for _, st := range strings.Fields(ps.key) {
			sum += math.Log1p(float64(freq[st]))
		}
		ps.score = math.Pow(float64(ps.count), 0.7) * sum
		all = append(all, ps)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].key < all[j].key
	})
	k := min(max(int(math.Round(math.Sqrt(float64(contentWords))/3)), 3), 25)
	minCount := 1
	if contentWords > 150 {
		minCount = 2
	}
	var out []*phraseStat
	for _, ps := range all {
		if len(out) == k {
			break
		}
		if ps.count < minCount {
			continue
		}
		subsumed := false
		for _, o := range out {
			// A word mostly seen inside a chosen phrase adds nothing.
			if o.words > ps.words && containsWords(o.key, ps.key) && float64(ps.count) < 1.5*float64(o.count) {
				subsumed = true
				break
			}
		}
		if !subsumed {
			out = append(out, ps)
		}
	}
	return out
}

func containsWords(phrase, sub string) bool {
	return strings.Contains(" "+phrase+" ", " "+sub+" ")
}

// topics reports, per sentence run, the document's salient keyphrases that
// occur in it. Confidence is salience relative to the document's strongest
// phrase, mapped to 0.5..0.99: a ranking, not a calibrated probability.
func (d *doc) topics(ctx context.Context) ([]LabeledSegment, error) {
	c := &checker{ctx: ctx}
	stats, freq, err := d.candidates(c)
	if err != nil {
		return nil, err
	}
	content := 0
	for _, f := range freq {
		content += f
	}
	top := salient(stats, freq, content)
	if len(top) == 0 {
		return nil, nil
	}
	cased := d.casedWords()
	perSent := map[int][]Label{}
	maxScore := top[0].score
	for _, ps := range top {
		l := Label{Name: d.display(ps, cased), Confidence: 0.5 + 0.49*ps.score/maxScore}
		for _, si := range ps.sents {
			perSent[si] = append(perSent[si], l)
		}
	}
	return d.labeledRuns(perSent), nil
}

// labeledRuns turns per-sentence labels into segments, merging neighbouring
// sentences that carry the same label names.
func (d *doc) labeledRuns(perSent map[int][]Label) []LabeledSegment {
	var out []LabeledSegment
	prevSent := -2
	for si, s := range d.sents {
		ls := perSent[si]
		if len(ls) == 0 {
			continue
		}
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].Confidence > ls[j].Confidence })
		if n := len(out); n > 0 && prevSent == si-1 && sameNames(out[n-1].Labels, ls) {
			out[n-1].Segment = d.segment(span{out[n-1].StartWord, s.end})
			for i := range ls {
				out[n-1].Labels[i].Confidence = max(out[n-1].Labels[i].Confidence, ls[i].Confidence)
			}
		} else {
			out = append(out, LabeledSegment{Segment: d.segment(s), Labels: append([]Label(nil), ls...)})
		}
		prevSent = si
	}
	return out
}

func sameNames(a, b []Label) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}
