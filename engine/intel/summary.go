package intel

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
)

// Summary tuning. These are round numbers chosen by reasoning about news
// and meeting text, not fitted to any evaluation set.
const (
	// maxNeighbours bounds each sentence's edges in the similarity graph,
	// so long documents cost O(n) memory, not O(n^2).
	maxNeighbours = 24
	// damping is PageRank's usual continuation probability.
	damping = 0.85
	// positionWeight mixes the lead prior into the final score; news text
	// puts its point first, and the prior also steers the random walk.
	positionWeight = 0.35
	// redundancy is the cosine similarity above which a candidate repeats an
	// already chosen sentence and is skipped.
	redundancy = 0.5
	// idealWords is the sentence length at which the length factor is 1:
	// very short sentences carry little, very long ones eat the budget.
	idealWords = 14
)

// summaryLen is how many sentences a summary of n sentences has: 1 for a
// short text, about 4 for a news article, growing like the square root so
// that a long meeting still gets a summary, not an abridgement.
func summaryLen(n int) int {
	if n <= 0 {
		return 0
	}
	k := int(math.Ceil(0.6 * math.Sqrt(float64(n))))
	return min(max(k, 1), n, 40)
}

// sentVec is a sparse, L2-normalised TF-IDF vector of a sentence's stems.
type sentVec struct {
	terms []int32
	wts   []float64
}

func (d *doc) sentenceVectors(c *checker) ([]sentVec, error) {
	ids := map[string]int32{}
	tfs := make([]map[int32]float64, len(d.sents))
	var df []int
	for si, s := range d.sents {
		tf := map[int32]float64{}
		for _, w := range d.lower[s.start : s.end+1] {
			if err := c.check(); err != nil {
				return nil, err
			}
			if !isContent(w) {
				continue
			}
			st := stem(w)
			id, ok := ids[st]
			if !ok {
				id = int32(len(df))
				ids[st] = id
				df = append(df, 0)
			}
			if tf[id] == 0 {
				df[id]++
			}
			tf[id]++
		}
		tfs[si] = tf
	}
	n := float64(len(d.sents))
	// Terms in a large share of a long document's sentences say little and
	// would make the similarity graph dense; idf already weighs them low.
	maxDF := len(d.sents)
	if len(d.sents) > 200 {
		maxDF = len(d.sents) / 10
	}
	vecs := make([]sentVec, len(d.sents))
	for si, tf := range tfs {
		v := sentVec{}
		norm := 0.0
		for id, f := range tf {
			if df[id] > maxDF {
				continue
			}
			w := (1 + math.Log(f)) * math.Log(1+n/float64(df[id]))
			v.terms = append(v.terms, id)
			v.wts = append(v.wts, w)
			norm += w * w
		}
		sort.Sort(byTerm(v))
		if norm > 0 {
			norm = math.Sqrt(norm)
			for i := range v.wts {
				v.wts[i] /= norm
			}
		}
		vecs[si] = v
	}
	return vecs, nil
}

// byTerm orders a vector's entries by term id, so that sums are computed
// in the same order on every run and results are reproducible.
type byTerm sentVec

func (v byTerm) Len() int           { return len(v.terms) }
func (v byTerm) Less(i, j int) bool { return v.terms[i] < v.terms[j] }
func (v byTerm) Swap(i, j int) {
	v.terms[i], v.terms[j] = v.terms[j], v.terms[i]
	v.wts[i], v.wts[j] = v.wts[j], v.wts[i]
}

type edge struct {
	to  int32
	sim float64
}

// topEdges keeps the maxNeighbours strongest edges offered, as a min-heap
// on strength, in O(log k) per offer.
type topEdges []edge

// weaker orders edges by strength, then by index so results do not depend
// on the order edges were offered in.
func weaker(a, b edge) bool { return a.sim < b.sim || (a.sim == b.sim && a.to > b.to) }

func (h *topEdges) offer(e edge) {
	t := *h
	if len(t) < maxNeighbours {
		t = append(t, e)
		for i := len(t) - 1; i > 0; {
			p := (i - 1) / 2
			if !weaker(t[i], t[p]) {
				break
			}
			t[i], t[p] = t[p], t[i]
			i = p
		}
		*h = t
		return
	}
	if !weaker(t[0], e) {
		return
	}
	t[0] = e
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(t) && weaker(t[l], t[m]) {
			m = l
		}
		if l+1 < len(t) && weaker(t[l+1], t[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		t[i], t[m] = t[m], t[i]
		i = m
	}
}

// similarityGraph computes cosine similarities through an inverted index,
// touching only sentence pairs that share a term, and keeps each sentence's
// strongest maxNeighbours edges.
func similarityGraph(vecs []sentVec, c *checker) ([][]edge, error) {
	type posting struct {
		sent int32
		wt   float64
	}
	post := map[int32][]posting{}
	for si, v := range vecs {
		for k, t := range v.terms {
			post[t] = append(post[t], posting{int32(si), v.wts[k]})
		}
	}
	graph := make([][]edge, len(vecs))
	acc := make([]float64, len(vecs))
	var touched []int32
	for si, v := range vecs {
		touched = touched[:0]
		for k, t := range v.terms {
			for _, p := range post[t] {
				if err := c.check(); err != nil {
					return nil, err
				}
				if int(p.sent) == si {
					continue
				}
				if acc[p.sent] == 0 {
					touched = append(touched, p.sent)
				}
				acc[p.sent] += v.wts[k] * p.wt
			}
		}
		var top topEdges
		for _, sj := range touched {
			top.offer(edge{sj, acc[sj]})
			acc[sj] = 0
		}
		graph[si] = top
	}
	return graph, nil
}

// pageRank is personalised PageRank on the weighted graph with teleport
// distribution prior; dangling sentences teleport too.
func pageRank(graph [][]edge, prior []float64, c *checker) ([]float64, error) {
	n := len(graph)
	out := make([]float64, n)
	for i, es := range graph {
		for _, e := range es {
			out[i] += e.sim
		}
	}
	r := slices.Clone(prior)
	next := make([]float64, n)
	for iter := 0; iter < 60; iter++ {
		if err := c.ctx.Err(); err != nil {
			return nil, err
		}
		dangling := 0.0
		for i := range next {
			next[i] = 0
			if out[i] == 0 {
				dangling += r[i]
			}
		}
		for i, es := range graph {
			if out[i] == 0 {
				continue
			}
			for _, e := range es {
				next[e.to] += r[i] * e.sim / out[i]
			}
		}
		diff := 0.0
		for i := range next {
			v := damping*(next[i]+dangling*prior[i]) + (1-damping)*prior[i]
			diff += math.Abs(v - r[i])
			r[i] = v
		}
		if diff < 1e-9 {
			break
		}
	}
	return r, nil
}

func cosine(a, b sentVec) float64 {
	s := 0.0
	for i, t := range a.terms {
		if j := slices.Index(b.terms, t); j >= 0 {
			s += a.wts[i] * b.wts[j]
		}
	}
	return s
}

// summarize is extractive: TextRank centrality with a lead prior, a length
// factor, and redundancy removal; chosen sentences are returned in document
// order.
func (d *doc) summarize(ctx context.Context) (string, error) {
	n := len(d.sents)
	k := summaryLen(n)
	if k == 0 {
		return "", nil
	}
	if k >= n {
		return strings.Join(d.words, " "), nil
	}
	c := &checker{ctx: ctx}
	vecs, err := d.sentenceVectors(c)
	if err != nil {
		return "", err
	}
	graph, err := similarityGraph(vecs, c)
	if err != nil {
		return "", err
	}
	prior := make([]float64, n)
	sum := 0.0
	for i := range prior {
		prior[i] = 1 / math.Sqrt(float64(i)+1)
		sum += prior[i]
	}
	for i := range prior {
		prior[i] /= sum
	}
	rank, err := pageRank(graph, prior, c)
	if err != nil {
		return "", err
	}
	maxRank := slices.Max(rank)
	score := make([]float64, n)
	for i, s := range d.sents {
		l := float64(s.len())
		lenFactor := math.Min(1, l/idealWords)
		if l > 3*idealWords {
			lenFactor = 3 * idealWords / l
		}
		if len(vecs[i].terms) == 0 {
			lenFactor = 0 // nothing but fillers and numbers
		}
		central := rank[i] / maxRank
		score[i] = lenFactor * ((1-positionWeight)*central + positionWeight*prior[i]/prior[0])
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	var chosen []int
	for _, i := range order {
		if len(chosen) == k {
			break
		}
		if score[i] == 0 {
			break
		}
		redundant := false
		for _, j := range chosen {
			if cosine(vecs[i], vecs[j]) > redundancy {
				redundant = true
				break
			}
		}
		if !redundant {
			chosen = append(chosen, i)
		}
	}
	if len(chosen) == 0 {
		chosen = append(chosen, 0)
	}
	slices.Sort(chosen)
	parts := make([]string, len(chosen))
	for i, j := range chosen {
		parts[i] = d.text(d.sents[j])
	}
	return strings.Join(parts, " "), nil
}
