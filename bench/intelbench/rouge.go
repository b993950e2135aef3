// Package intelbench measures the engine's text intelligence (summaries and
// sentiment) against judgements made by people outside the project: ROUGE
// scores against human-written references and accuracy against human
// sentiment labels. It holds the scorer, the loaders of the outside data
// sets and the code that fetches those data sets, pinned, from the Debian
// and npm registries, so that nothing of them is copied into the repository.
package intelbench

import "strings"

// Tokenize splits text the way the reference ROUGE scorers do before
// counting: lower case, every run of characters other than ASCII letters and
// digits is a separator. With stem, each token longer than three characters
// is reduced by the Porter stemmer (as rouge_score does; ROUGE-1.5.5's -m
// stems every token, which differs only on words of three letters or less,
// which the Porter algorithm leaves almost always unchanged).
func Tokenize(text string, stem bool) []string {
	var toks []string
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		t := b.String()
		b.Reset()
		if stem && len(t) > 3 {
			t = PorterStem(t)
		}
		toks = append(toks, t)
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			flush()
		}
	}
	flush()
	return toks
}

// Score is one ROUGE measure of a candidate against a reference. Each field
// is in 0..1; all are 0 when either text has no tokens.
type Score struct {
	Precision, Recall, F1 float64
}

func newScore(hits, candLen, refLen int) Score {
	if hits == 0 || candLen == 0 || refLen == 0 {
		return Score{}
	}
	p := float64(hits) / float64(candLen)
	r := float64(hits) / float64(refLen)
	return Score{Precision: p, Recall: r, F1: 2 * p * r / (p + r)}
}

// Rouge1 is ROUGE-1: the unigrams the candidate shares with the reference,
// each counted at most as often as it occurs in both (clipped counts).
func Rouge1(cand, ref []string) Score {
	counts := make(map[string]int, len(ref))
	for _, t := range ref {
		counts[t]++
	}
	hits := 0
	for _, t := range cand {
		if counts[t] > 0 {
			counts[t]--
			hits++
		}
	}
	return newScore(hits, len(cand), len(ref))
}

// RougeL is ROUGE-L at summary level without sentence splitting (rouge_score's
// "rougeL"): the longest common subsequence of the two token sequences, as a
// share of each.
func RougeL(cand, ref []string) Score {
	return newScore(lcs(cand, ref), len(cand), len(ref))
}

// lcs is the length of the longest common subsequence, in O(len(a)*len(b))
// time and O(len(b)) memory.
func lcs(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
