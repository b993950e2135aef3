package diarize

import (
	"context"
	"fmt"
	"math"

	"github.com/earshot-app/earshot/api"
)

// bicLinkage merges full-covariance Gaussians by ΔBIC.
type bicLinkage struct {
	g      []gauss
	ld     []float64
	lambda float64
}

func (b *bicLinkage) dist(i, j int) float64 {
	return deltaBIC(&b.g[i], &b.g[j], b.ld[i], b.ld[j], b.lambda)
}

func (b *bicLinkage) merge(i, j int) {
	b.g[i].merge(&b.g[j])
	b.ld[i] = b.g[i].logDet()
}

// wordSegments splits the words into runs: a run ends at a pause of at
// least p.pause once it holds minSeg frames, or at the first word
// boundary after maxSeg frames. Speaker changes mostly fall on pauses, and
// whole words keep a change from splitting a word's frames.
func wordSegments(p params, words []api.Word, f *feats, minSeg, maxSeg int) [][2]int {
	var segs [][2]int
	start, frames := 0, 0
	for i := range words {
		if i > start {
			pause := words[i].Start - words[i-1].End
			if (frames >= minSeg && pause >= p.pause) || frames >= maxSeg {
				segs = append(segs, [2]int{start, i})
				start, frames = i, 0
			}
		}
		frames += f.first[i+1] - f.first[i]
	}
	if start < len(words) {
		segs = append(segs, [2]int{start, len(words)})
	}
	return segs
}

// clusterV2 clusters word-aligned segments by BIC, resegments them, and
// then places each speaker change on the best word boundary.
func clusterV2(ctx context.Context, p params, words []api.Word, f *feats) (labels, error) {
	l := newLabels(len(words))
	if len(f.frames) == 0 {
		fillGaps(l)
		return l, nil
	}
	// Every segment but the last holds at least minSeg frames, so there
	// are at most about maxItems of them.
	minSeg := max(p.v2MinSeg, len(f.frames)/maxItems+1)
	segs := wordSegments(p, words, f, minSeg, max(p.v2MaxSeg, minSeg))
	units := make([][2]int, len(segs)) // segments as frame ranges
	link := &bicLinkage{g: make([]gauss, len(segs)), ld: make([]float64, len(segs)), lambda: p.v2LambdaInit}
	for s, seg := range segs {
		units[s] = [2]int{f.first[seg[0]], f.first[seg[1]]}
		for i := units[s][0]; i < units[s][1]; i++ {
			link.g[s].add(&f.frames[i])
		}
		link.ld[s] = link.g[s].logDet()
	}
	segSpeaker, err := agglomerate(ctx, len(segs), link, 0)
	if err != nil {
		return labels{}, err
	}
	models, err := resegment(ctx, p, f.frames, units, segSpeaker)
	if err != nil {
		return labels{}, err
	}
	// Words take their segment's speaker; one Viterbi pass over words with
	// the final models (not re-estimated: word-sized units would let the
	// models drift towards sounds instead of voices) moves each change to
	// the best word boundary.
	wordUnits := make([][2]int, len(words))
	for s, seg := range segs {
		for w := seg[0]; w < seg[1]; w++ {
			l.speaker[w] = segSpeaker[s]
			wordUnits[w] = [2]int{f.first[w], f.first[w+1]}
		}
	}
	viterbi(p, f.frames, wordUnits, models, l.speaker)
	// ll[w][s]: mean per-frame log-likelihood of word w under speaker s.
	ll := make([][]float64, len(words))
	for w := range words {
		ll[w] = make([]float64, len(models))
		fr := f.word(w)
		for s := range models {
			for i := range fr {
				ll[w][s] += models[s].logLik(&fr[i])
			}
			if len(fr) > 0 {
				ll[w][s] /= float64(len(fr))
			}
		}
	}
	// score is the word's fit to speaker s and the posterior of s among
	// all speakers, from per-frame log-likelihoods scaled by v2ConfScale
	// (frames overlap and correlate, so the word's frame count is not
	// its weight of evidence).
	score := func(w, s int) (float64, float64) {
		var z float64
		for o := range models {
			z += math.Exp(p.v2ConfScale * (ll[w][o] - ll[w][s]))
		}
		return ll[w][s], 1 / z
	}
	for w := range words {
		if f.first[w] == f.first[w+1] || l.speaker[w] < 0 {
			l.speaker[w] = -1
			continue
		}
		_, l.conf[w] = score(w, l.speaker[w])
	}
	fillGaps(l)
	noSingleFlips(l, func(w, s int) (float64, float64) {
		if f.first[w] == f.first[w+1] {
			return 0, l.conf[w]
		}
		return score(w, s)
	})
	return l, nil
}

// resegment refines the speaker of each unit (a range of frames; -1 for
// an empty unit) by Viterbi decoding with one Gaussian per speaker,
// re-estimating the Gaussians from the result, until the labels stop
// changing or p.v2ResegRounds rounds. Speakers left with fewer than
// p.v2MinSpeaker frames are dissolved, and speakers that ΔBIC (weight
// p.v2Lambda) now prefers as one are merged, each followed by more
// rounds. It returns the final models, indexed by the labels it leaves in
// speaker.
func resegment(ctx context.Context, p params, frames []vec, units [][2]int, speaker []int) ([]model, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("diarize: resegmentation: %w", err)
		}
		stats := compact(frames, units, speaker)
		models := make([]model, len(stats))
		for s := range stats {
			models[s] = newModel(&stats[s])
		}
		for round := 0; round < p.v2ResegRounds; round++ {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("diarize: resegmentation: %w", err)
			}
			if !viterbi(p, frames, units, models, speaker) {
				break
			}
			stats = compact(frames, units, speaker)
			models = models[:len(stats)]
			for s := range stats {
				models[s] = newModel(&stats[s])
			}
		}
		// Dissolve the smallest speaker under the minimum, if any.
		small, smallest := -1, float64(p.v2MinSpeaker)
		for s := range stats {
			if stats[s].n < smallest && len(stats) > 1 {
				small, smallest = s, stats[s].n
			}
		}
		if small >= 0 {
			relabelNearest(frames, units, models, speaker, small)
			continue
		}
		// Merge the pair ΔBIC now prefers as one, if any.
		a, b, best := -1, -1, 0.0
		for i := range stats {
			for j := i + 1; j < len(stats); j++ {
				d := deltaBIC(&stats[i], &stats[j], stats[i].logDet(), stats[j].logDet(), p.v2Lambda)
				if d < best {
					a, b, best = i, j, d
				}
			}
		}
		if a < 0 {
			return models, nil
		}
		for u, s := range speaker {
			if s == b {
				speaker[u] = a
			}
		}
	}
}

// compact renumbers the labels in speaker to 0..k-1 (empty units get -1)
// and returns each speaker's statistics.
func compact(frames []vec, units [][2]int, speaker []int) []gauss {
	index := map[int]int{}
	for u, s := range speaker {
		if s < 0 || units[u][0] == units[u][1] {
			speaker[u] = -1
			continue
		}
		if _, ok := index[s]; !ok {
			index[s] = len(index)
		}
	}
	stats := make([]gauss, len(index))
	for u, s := range speaker {
		if s < 0 {
			continue
		}
		k := index[s]
		speaker[u] = k
		for i := units[u][0]; i < units[u][1]; i++ {
			stats[k].add(&frames[i])
		}
	}
	return stats
}

// unitLogLik is the summed log-likelihood of a unit's frames under m.
func unitLogLik(frames []vec, unit [2]int, m *model) float64 {
	var ll float64
	for i := unit[0]; i < unit[1]; i++ {
		ll += m.logLik(&frames[i])
	}
	return ll
}

// relabelNearest moves every unit of speaker gone to the other speaker
// whose model fits its frames best.
func relabelNearest(frames []vec, units [][2]int, models []model, speaker []int, gone int) {
	for u, s := range speaker {
		if s != gone {
			continue
		}
		best, bestLL := -1, math.Inf(-1)
		for o := range models {
			if o == gone {
				continue
			}
			if ll := unitLogLik(frames, units[u], &models[o]); best < 0 || ll > bestLL {
				best, bestLL = o, ll
			}
		}
		speaker[u] = best
	}
}

// viterbi relabels the units that have frames by the best speaker path:
// each unit scores the summed log-likelihood of its frames under a
// speaker, and changing speaker between units costs p.v2Switch. Empty
// units keep their labels. It reports whether any label changed.
func viterbi(p params, frames []vec, units [][2]int, models []model, speaker []int) bool {
	k := len(models)
	var seq []int // units with frames
	for u := range units {
		if units[u][0] < units[u][1] {
			seq = append(seq, u)
		}
	}
	if len(seq) == 0 || k < 2 {
		return false
	}
	back := make([][]int, len(seq))
	cost := make([]float64, k)
	next := make([]float64, k)
	for t, u := range seq {
		back[t] = make([]int, k)
		for s := range k {
			e := unitLogLik(frames, units[u], &models[s])
			if t == 0 {
				next[s] = e
				continue
			}
			from, best := s, cost[s]
			for o := range k {
				if o != s && cost[o]-p.v2Switch > best {
					from, best = o, cost[o]-p.v2Switch
				}
			}
			next[s] = best + e
			back[t][s] = from
		}
		cost, next = next, cost
	}
	s := 0
	for o := range k {
		if cost[o] > cost[s] {
			s = o
		}
	}
	changed := false
	for t := len(seq) - 1; t >= 0; t-- {
		if speaker[seq[t]] != s {
			speaker[seq[t]] = s
			changed = true
		}
		s = back[t][s]
	}
	return changed
}
