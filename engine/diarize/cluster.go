package diarize

import (
	"context"
	"fmt"
	"math"
)

// linkage is what agglomerate needs of a clustering criterion over items
// 0..n-1, each starting as its own cluster, named by its lowest item.
type linkage interface {
	// dist is the merge cost of clusters a and b; lower merges first.
	dist(a, b int) float64
	// merge folds cluster b into cluster a.
	merge(a, b int)
}

// agglomerate clusters n items bottom-up, always merging the pair with the
// lowest cost, while that cost is below stop. It returns each item's
// cluster index, numbered from 0 in no particular order. Each row keeps
// its nearest neighbour, so a merge costs O(n) cost evaluations plus a
// rescan of the rows that pointed at the merged pair.
func agglomerate(ctx context.Context, n int, l linkage, stop float64) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	d := make([][]float64, n)
	for i := range d {
		d[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("diarize: clustering: %w", err)
		}
		for j := i + 1; j < n; j++ {
			d[i][j] = l.dist(i, j)
			d[j][i] = d[i][j]
		}
	}
	active := make([]bool, n)
	for i := range active {
		active[i] = true
	}
	nn := make([]int, n)
	rescan := func(i int) {
		nn[i] = -1
		for j := 0; j < n; j++ {
			if j != i && active[j] && (nn[i] < 0 || d[i][j] < d[i][nn[i]]) {
				nn[i] = j
			}
		}
	}
	for i := range nn {
		rescan(i)
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	for left := n; left > 1; left-- {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("diarize: clustering: %w", err)
		}
		a, best := -1, math.Inf(1)
		for i := 0; i < n; i++ {
			if active[i] && nn[i] >= 0 && d[i][nn[i]] < best {
				a, best = i, d[i][nn[i]]
			}
		}
		if a < 0 || !(best < stop) {
			break
		}
		b := nn[a]
		if b < a {
			a, b = b, a
		}
		l.merge(a, b)
		active[b] = false
		parent[b] = a
		for k := 0; k < n; k++ {
			if active[k] && k != a {
				d[a][k] = l.dist(a, k)
				d[k][a] = d[a][k]
			}
		}
		rescan(a)
		for k := 0; k < n; k++ {
			if !active[k] || k == a {
				continue
			}
			if nn[k] == a || nn[k] == b {
				rescan(k)
			} else if d[k][a] < d[k][nn[k]] {
				nn[k] = a
			}
		}
	}
	root := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	index := map[int]int{}
	out := make([]int, n)
	for i := range out {
		r := root(i)
		k, ok := index[r]
		if !ok {
			k = len(index)
			index[r] = k
		}
		out[i] = k
	}
	return out, nil
}
