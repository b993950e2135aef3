package diarize

import (
	"math"

	"github.com/earshot-app/earshot/api"
)

// sequential is single-pass speaker clustering, the v1 algorithm: words
// are cut into word-aligned chunks of about a second of speech, and each
// chunk, in time order, joins the known speaker for which ΔBIC prefers one
// model over two, the lowest ΔBIC winning, or starts a new speaker when
// every ΔBIC is positive (and the chunk is long enough to tell). A joined
// speaker's statistics grow with the chunk, so its model sharpens as the
// speech goes on, and a number once given never changes.
type sequential struct {
	p        params
	speakers []gauss
	logDet   []float64 // of each speaker's covariance
}

// chunks splits the words into runs of at least p.onChunk frames, also
// ending one at a pause of p.pause once it holds half that; a short
// tail joins the chunk before it.
func (q *sequential) chunks(words []api.Word, f *feats) [][2]int {
	var out [][2]int
	start := 0
	for w := range words {
		n := f.first[w+1] - f.first[start]
		pause := w+1 < len(words) && words[w+1].Start-words[w].End >= q.p.pause
		if n >= q.p.onChunk || (pause && n >= q.p.onChunk/2) {
			out = append(out, [2]int{start, w + 1})
			start = w + 1
		}
	}
	if start < len(words) {
		if len(out) > 0 && f.first[len(words)]-f.first[start] < q.p.onChunk/2 {
			out[len(out)-1][1] = len(words)
		} else {
			out = append(out, [2]int{start, len(words)})
		}
	}
	return out
}

// label assigns the chunks of words to speakers, updating q, and returns
// the words' labels with no single-word flips.
func (q *sequential) label(words []api.Word, f *feats) labels {
	l := newLabels(len(words))
	chunks := q.chunks(words, f)
	dist := make([][]float64, len(chunks)) // ΔBIC of a chunk to each speaker, when assigned
	size := make([]float64, len(chunks))
	chunkOf := make([]int, len(words))
	for c, ch := range chunks {
		for w := ch[0]; w < ch[1]; w++ {
			chunkOf[w] = c
		}
		var g gauss
		for i := f.first[ch[0]]; i < f.first[ch[1]]; i++ {
			g.add(&f.frames[i])
		}
		if g.n == 0 {
			continue
		}
		size[c] = g.n
		ld := g.logDet()
		d := make([]float64, len(q.speakers))
		best := -1
		for s := range q.speakers {
			d[s] = deltaBIC(&g, &q.speakers[s], ld, q.logDet[s], q.p.onLambda)
			if best < 0 || d[s] < d[best] {
				best = s
			}
		}
		isNew := best < 0 || (d[best] >= 0 && int(g.n) >= q.p.onMinNew)
		if isNew {
			q.speakers = append(q.speakers, g)
			q.logDet = append(q.logDet, ld)
			best = len(q.speakers) - 1
			d = append(d, 0)
		} else {
			q.speakers[best].merge(&g)
			q.logDet[best] = q.speakers[best].logDet()
		}
		dist[c] = d
		conf := q.marginConf(d, best, g.n, isNew)
		for w := ch[0]; w < ch[1]; w++ {
			if f.first[w] < f.first[w+1] {
				l.speaker[w], l.conf[w] = best, conf
			}
		}
	}
	fillGaps(l)
	noSingleFlips(l, func(w, s int) (float64, float64) {
		c := chunkOf[w]
		if s >= len(dist[c]) || size[c] == 0 {
			// A speaker that did not exist when this chunk was heard,
			// or a chunk without frames.
			return math.Inf(-1), l.conf[w]
		}
		return -dist[c][s], q.marginConf(dist[c], s, size[c], false)
	})
	return l
}

// marginConf turns the ΔBIC of a chunk of n frames against each speaker
// into a confidence for speaker s: a logistic of the per-frame margin
// between s and the nearest alternative (another speaker, or a new
// speaker, whose ΔBIC is 0), so 0.5 is a tie. For a chunk that has just
// started a new speaker, the margin is the ΔBIC of the nearest old one.
func (q *sequential) marginConf(d []float64, s int, n float64, isNew bool) float64 {
	own, alt := d[s], 0.0
	if isNew {
		own, alt = 0, math.Inf(1)
	}
	for i := range d {
		if i != s {
			alt = math.Min(alt, d[i])
		}
	}
	if math.IsInf(alt, 1) {
		return 0.5 // the first speaker: nothing yet to compare with
	}
	return 1 / (1 + math.Exp(-q.p.onConfScale*(alt-own)/n))
}

// clusterV1 is batch v1: sequential clustering of the whole recording.
func clusterV1(p params, words []api.Word, f *feats) labels {
	q := &sequential{p: p}
	return q.label(words, f)
}
