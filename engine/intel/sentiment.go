package intel

import (
	"bufio"
	"context"
	_ "embed"
	"math"
	"strconv"
	"strings"
	"sync"
)

// vaderLexicon is the word and mean-valence columns of the VADER lexicon
// (vaderSentiment, MIT licence, see NOTICE).
//
//go:embed vader_lexicon.tsv
var vaderLexicon string

var (
	lexOnce sync.Once
	lexicon map[string]float64
)

// lex parses the embedded lexicon once. The file is ours and checked by a
// test, so a malformed line is skipped rather than reported.
func lex() map[string]float64 {
	lexOnce.Do(func() {
		lexicon = make(map[string]float64, 7600)
		sc := bufio.NewScanner(strings.NewReader(vaderLexicon))
		for sc.Scan() {
			w, v, ok := strings.Cut(sc.Text(), "\t")
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			lexicon[w] = f
		}
	})
	return lexicon
}

// VADER's empirically derived constants (Hutto & Gilbert, 2014).
const (
	boostIncr     = 0.293
	boostDecr     = -0.293
	capsIncr      = 0.733
	negScalar     = -0.74
	normAlpha     = 15
	exclaimScale  = 0.292
	maxExclaims   = 4
	questionScale = 0.18
	maxQuestion   = 0.96
	neverScale    = 1.25
	butScale      = 0.5
)

// labelThreshold separates neutral from positive/negative segment scores.
// VADER uses 0.05 for single sentences; segment scores are length-weighted
// means that include neutral sentences, and the hosted service labels a
// score of 0.058 neutral, so a slightly wider band is used.
const labelThreshold = 0.1

var negations = wordSet(`aint arent cannot cant couldnt darent didnt doesnt ain't aren't can't couldn't daren't didn't
doesn't dont hadnt hasnt havent isnt mightnt mustnt neither don't hadn't hasn't haven't isn't mightn't mustn't neednt
needn't never none nope nor not nothing nowhere oughtnt shant shouldnt uhuh wasnt werent oughtn't shan't shouldn't
uh-uh wasn't weren't without wont wouldnt won't wouldn't rarely seldom despite`)

var boosters = func() map[string]float64 {
	m := map[string]float64{}
	for _, w := range strings.Fields(`absolutely amazingly awfully completely considerable considerably decidedly deeply
effing enormous enormously entirely especially exceptional exceptionally extreme extremely fabulously flipping flippin
frackin fracking fricking frickin frigging friggin fully fuckin fucking fuggin fugging greatly hella highly hugely
incredible incredibly intensely major majorly more most particularly purely quite really remarkably so substantially
thoroughly total totally tremendous tremendously uber unbelievably unusually utter utterly very`) {
		m[w] = boostIncr
	}
	for _, w := range strings.Fields(`almost barely hardly kinda kindof kind-of less little marginal marginally occasional
occasionally partly scarce scarcely slight slightly somewhat sorta sortof sort-of`) {
		m[w] = boostDecr
	}
	m["just enough"], m["kind of"], m["sort of"] = boostDecr, boostDecr, boostDecr
	return m
}()

var specialIdioms = map[string]float64{
	"the shit": 3, "the bomb": 3, "bad ass": 1.5, "badass": 1.5, "yeah right": -2,
	"kiss of death": -1.5, "to die for": 3, "beating heart": 3.1, "broken heart": -2.9,
}

const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// vaderTokens splits one sentence as VADER does: on white space, stripping
// surrounding punctuation from words but keeping emoticons such as ":)".
func vaderTokens(words []string, lx map[string]float64) (toks, lower []string) {
	toks = make([]string, 0, len(words))
	for _, w := range words {
		w = strings.ReplaceAll(w, "’", "'")
		s := strings.Trim(w, asciiPunct+"“”‘")
		if s == "" || (len(s) <= 2 && lx[w] != 0) {
			s = w
		}
		toks = append(toks, s)
	}
	lower = make([]string, len(toks))
	for i, t := range toks {
		lower[i] = strings.ToLower(t)
	}
	return toks, lower
}

func isUpper(s string) bool {
	hasUpper := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			return false
		case r >= 'A' && r <= 'Z':
			hasUpper = true
		}
	}
	return hasUpper
}

func negated(w string) bool { return negations[w] || strings.Contains(w, "n't") }

// vader returns the VADER compound score in -1..1 of one sentence.
func vader(words []string) float64 {
	lx := lex()
	toks, low := vaderTokens(words, lx)
	if len(toks) == 0 {
		return 0
	}
	caps := 0
	for _, t := range toks {
		if isUpper(t) {
			caps++
		}
	}
	capDiff := caps > 0 && caps < len(toks)

	vals := make([]float64, len(toks))
	for i, t := range toks {
		w := low[i]
		if _, ok := boosters[w]; ok {
			continue
		}
		if w == "kind" && i+1 < len(low) && low[i+1] == "of" {
			continue
		}
		v, ok := lx[w]
		if !ok {
			continue
		}
		if w == "no" && i+1 < len(low) {
			if _, next := lx[low[i+1]]; next {
				v = 0 // "no" as a determiner: "no problems"
			}
		}
		if (i > 0 && low[i-1] == "no") || (i > 1 && low[i-2] == "no") ||
			(i > 2 && low[i-3] == "no" && (low[i-1] == "or" || low[i-1] == "nor")) {
			v = lx[w] * negScalar
		}
		if capDiff && isUpper(t) {
			v += math.Copysign(capsIncr, v)
		}
		for k := 0; k < 3 && i > k; k++ {
			prev := i - (k + 1)
			if _, inLex := lx[low[prev]]; !inLex {
				s := boostScalar(toks[prev], low[prev], v, capDiff)
				switch k {
				case 1:
					s *= 0.95
				case 2:
					s *= 0.9
				}
				v += s
				v = negationCheck(v, low, k, i)
				if k == 2 {
					v = idiomCheck(v, low, i)
				}
			}
		}
		v = leastCheck(v, low, i)
		vals[i] = v
	}

	// "but" shifts weight to the clause after it.
	for bi, w := range low {
		if w != "but" {
			continue
		}
		for i := range vals {
			switch {
			case i < bi:
				vals[i] *= 1 - butScale
			case i > bi:
				vals[i] *= 1 + butScale
			}
		}
		break
	}

	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	if sum == 0 {
		return 0
	}
	sum += math.Copysign(punctEmphasis(words), sum)
	c := sum / math.Sqrt(sum*sum+normAlpha)
	return math.Max(-1, math.Min(1, c))
}

func boostScalar(word, lower string, valence float64, capDiff bool) float64 {
	s, ok := boosters[lower]
	if !ok {
		return 0
	}
	if valence < 0 {
		s = -s
	}
	if capDiff && isUpper(word) {
		if valence > 0 {
			s += capsIncr
		} else {
			s -= capsIncr
		}
	}
	return s
}

func negationCheck(v float64, low []string, k, i int) float64 {
	switch k {
	case 0:
		if negated(low[i-1]) {
			return v * negScalar
		}
	case 1:
		switch {
		case low[i-2] == "never" && (low[i-1] == "so" || low[i-1] == "this"):
			return v * neverScale
		case low[i-2] == "without" && low[i-1] == "doubt":
		case negated(low[i-2]):
			return v * negScalar
		}
	case 2:
		switch {
		case low[i-3] == "never" && (low[i-2] == "so" || low[i-2] == "this" || low[i-1] == "so" || low[i-1] == "this"):
			return v * neverScale
		case low[i-3] == "without" && (low[i-2] == "doubt" || low[i-1] == "doubt"):
		case negated(low[i-3]):
			return v * negScalar
		}
	}
	return v
}

// idiomCheck applies multi-word idioms and boosters ending at or around i
// (i >= 3).
func idiomCheck(v float64, low []string, i int) float64 {
	j := func(ws ...string) string { return strings.Join(ws, " ") }
	for _, seq := range []string{
		j(low[i-1], low[i]), j(low[i-2], low[i-1], low[i]), j(low[i-2], low[i-1]),
		j(low[i-3], low[i-2], low[i-1]), j(low[i-3], low[i-2]),
	} {
		if s, ok := specialIdioms[seq]; ok {
			v = s
			break
		}
	}
	if i+1 < len(low) {
		if s, ok := specialIdioms[j(low[i], low[i+1])]; ok {
			v = s
		}
	}
	if i+2 < len(low) {
		if s, ok := specialIdioms[j(low[i], low[i+1], low[i+2])]; ok {
			v = s
		}
	}
	for _, seq := range []string{j(low[i-3], low[i-2], low[i-1]), j(low[i-3], low[i-2]), j(low[i-2], low[i-1])} {
		if s, ok := boosters[seq]; ok {
			v += s
		}
	}
	return v
}

func leastCheck(v float64, low []string, i int) float64 {
	if i == 0 || low[i-1] != "least" {
		return v
	}
	if _, ok := lex()["least"]; ok {
		return v
	}
	if i > 1 && (low[i-2] == "at" || low[i-2] == "very") {
		return v
	}
	return v * negScalar
}

// punctEmphasis is VADER's boost for "!" and repeated "?".
func punctEmphasis(words []string) float64 {
	ep, qm := 0, 0
	for _, w := range words {
		ep += strings.Count(w, "!")
		qm += strings.Count(w, "?")
	}
	e := float64(min(ep, maxExclaims)) * exclaimScale
	switch {
	case qm > 3:
		e += maxQuestion
	case qm > 1:
		e += float64(qm) * questionScale
	}
	return e
}

func label(score float64) string {
	switch {
	case score >= labelThreshold:
		return Positive
	case score <= -labelThreshold:
		return Negative
	}
	return Neutral
}

// Segmenting: sentences are grouped into units of at least minUnitWords
// (so "Hi." is not a segment of its own, as in the service's examples), then
// neighbouring units with the same label merge while the result stays under
// maxSegWords.
const (
	minUnitWords = 8
	maxSegWords  = 60
)

type scored struct {
	span
	sum float64 // score x words, so merging is a weighted mean
}

func (d *doc) sentiments(ctx context.Context) ([]SentimentSegment, Sentiment, error) {
	c := checker{ctx: ctx}
	var units []scored
	var cur scored
	open := false
	for _, s := range d.sents {
		if err := c.checkN(s.len()); err != nil {
			return nil, Sentiment{}, err
		}
		sc := vader(d.words[s.start : s.end+1])
		if !open {
			cur, open = scored{span: s}, true
		} else {
			cur.end = s.end
		}
		cur.sum += sc * float64(s.len())
		// A short neutral sentence ("Hi.") leans on the next one; a short
		// opinion ("Not good.") stands alone.
		if cur.len() >= minUnitWords || label(sc) != Neutral {
			units, open = append(units, cur), false
		}
	}
	if open {
		if n := len(units); n > 0 && units[n-1].len()+cur.len() <= maxSegWords {
			units[n-1].end, units[n-1].sum = cur.end, units[n-1].sum+cur.sum
		} else {
			units = append(units, cur)
		}
	}
	var merged []scored
	for _, u := range units {
		if n := len(merged); n > 0 {
			m := &merged[n-1]
			if label(m.sum/float64(m.len())) == label(u.sum/float64(u.len())) && m.len()+u.len() <= maxSegWords {
				m.end, m.sum = u.end, m.sum+u.sum
				continue
			}
		}
		merged = append(merged, u)
	}
	out := make([]SentimentSegment, 0, len(merged))
	total, words := 0.0, 0
	for _, m := range merged {
		score := m.sum / float64(m.len())
		out = append(out, SentimentSegment{Segment: d.segment(m.span), Sentiment: label(score), Score: score})
		total += m.sum
		words += m.len()
	}
	avg := 0.0
	if words > 0 {
		avg = total / float64(words)
	}
	return out, Sentiment{Sentiment: label(avg), Score: avg}, nil
}
