package worddiff

// maxCells bounds the table of one full alignment (one byte a cell);
// longer inputs are split in two at an optimal point first (Hirschberg's
// method), so that comparing two hour-long transcripts takes memory in
// proportion to their length, not to its square. A variable for tests.
var maxCells = 4 << 20

// Align aligns hyp against ref with the fewest substitutions, insertions
// and deletions. Among alignments of equal cost the one returned is
// always the same for the same words; it favours substitutions over a
// deletion and an insertion.
func Align(ref, hyp []string) Result {
	r := Result{RefWords: len(ref), HypWords: len(hyp)}
	// Common ends align as they are: for two runs of one recording
	// they are most of it.
	p := 0
	for p < len(ref) && p < len(hyp) && ref[p] == hyp[p] {
		p++
	}
	s := 0
	for s < len(ref)-p && s < len(hyp)-p && ref[len(ref)-1-s] == hyp[len(hyp)-1-s] {
		s++
	}
	ops := make([]Op, 0, max(len(ref), len(hyp)))
	for _, w := range ref[:p] {
		ops = append(ops, Op{Kind: Equal, Ref: w, Hyp: w})
	}
	ops = align(ops, ref[p:len(ref)-s], hyp[p:len(hyp)-s])
	for _, w := range ref[len(ref)-s:] {
		ops = append(ops, Op{Kind: Equal, Ref: w, Hyp: w})
	}
	r.Ops = ops
	for _, op := range ops {
		switch op.Kind {
		case Substitute:
			r.Substitutions++
		case Insert:
			r.Insertions++
		case Delete:
			r.Deletions++
		}
	}
	return r
}

// align appends an optimal alignment of b against a to ops.
func align(ops []Op, a, b []string) []Op {
	switch {
	case len(a) == 0:
		for _, w := range b {
			ops = append(ops, Op{Kind: Insert, Hyp: w})
		}
		return ops
	case len(b) == 0:
		for _, w := range a {
			ops = append(ops, Op{Kind: Delete, Ref: w})
		}
		return ops
	case len(a) == 1 || (len(a)+1)*(len(b)+1) <= maxCells:
		return alignTable(ops, a, b)
	}
	// Split a in half, and b where the cost of aligning the halves is
	// least: the two halves' alignments together are optimal.
	mid := len(a) / 2
	front := lastRow(a[:mid], b, false)
	back := lastRow(a[mid:], b, true)
	best, k := -1, 0
	for j := 0; j <= len(b); j++ {
		if c := front[j] + back[len(b)-j]; best < 0 || c < best {
			best, k = c, j
		}
	}
	ops = align(ops, a[:mid], b[:k])
	return align(ops, a[mid:], b[k:])
}

// lastRow returns the edit distances from all of a to each prefix of b
// (or, reversed, from a's reversal to each prefix of b's reversal), in
// space proportional to b.
func lastRow(a, b []string, reversed bool) []int {
	at := func(s []string, i int) string {
		if reversed {
			return s[len(s)-1-i]
		}
		return s[i]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := range a {
		cur[0] = i + 1
		ai := at(a, i)
		for j := range b {
			sub := prev[j]
			if ai != at(b, j) {
				sub++
			}
			cur[j+1] = min(sub, prev[j+1]+1, cur[j]+1)
		}
		prev, cur = cur, prev
	}
	return prev
}

// Steps of the traceback table.
const (
	stepDiag byte = iota // match or substitution
	stepUp               // deletion of a[i-1]
	stepLeft             // insertion of b[j-1]
)

// alignTable aligns b against a with the full table and appends the
// alignment to ops.
func alignTable(ops []Op, a, b []string) []Op {
	w := len(b) + 1
	steps := make([]byte, (len(a)+1)*w)
	prev := make([]int, w)
	cur := make([]int, w)
	for j := range prev {
		prev[j] = j
		steps[j] = stepLeft
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		steps[i*w] = stepUp
		for j := 1; j <= len(b); j++ {
			c, s := prev[j-1], stepDiag
			if a[i-1] != b[j-1] {
				c++
			}
			if d := prev[j] + 1; d < c {
				c, s = d, stepUp
			}
			if d := cur[j-1] + 1; d < c {
				c, s = d, stepLeft
			}
			cur[j] = c
			steps[i*w+j] = s
		}
		prev, cur = cur, prev
	}
	// Walk back from the end, then reverse what was appended.
	start := len(ops)
	i, j := len(a), len(b)
	for i > 0 || j > 0 {
		switch steps[i*w+j] {
		case stepDiag:
			k := Equal
			if a[i-1] != b[j-1] {
				k = Substitute
			}
			ops = append(ops, Op{Kind: k, Ref: a[i-1], Hyp: b[j-1]})
			i, j = i-1, j-1
		case stepUp:
			ops = append(ops, Op{Kind: Delete, Ref: a[i-1]})
			i--
		default:
			ops = append(ops, Op{Kind: Insert, Hyp: b[j-1]})
			j--
		}
	}
	for l, r := start, len(ops)-1; l < r; l, r = l+1, r-1 {
		ops[l], ops[r] = ops[r], ops[l]
	}
	return ops
}
