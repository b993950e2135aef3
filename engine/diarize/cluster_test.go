package diarize

import (
	"context"
	"errors"
	"math"
	"testing"
)

// pointLinkage clusters numbers by centroid distance, for testing the
// agglomeration itself.
type pointLinkage struct {
	sum, n []float64
}

func (p *pointLinkage) dist(a, b int) float64 {
	return math.Abs(p.sum[a]/p.n[a] - p.sum[b]/p.n[b])
}

func (p *pointLinkage) merge(a, b int) {
	p.sum[a] += p.sum[b]
	p.n[a] += p.n[b]
}

func newPoints(x ...float64) *pointLinkage {
	p := &pointLinkage{sum: x, n: make([]float64, len(x))}
	for i := range p.n {
		p.n[i] = 1
	}
	return p
}

func TestAgglomerate(t *testing.T) {
	tests := []struct {
		name   string
		points []float64
		stop   float64
		groups [][]int // items that must share a cluster; different groups differ
	}{
		{"two groups", []float64{0, 0.1, 10, 0.2, 10.1}, 1, [][]int{{0, 1, 3}, {2, 4}}},
		{"all one", []float64{0, 0.1, 0.2}, 1, [][]int{{0, 1, 2}}},
		{"all apart", []float64{0, 5, 10}, 1, [][]int{{0}, {1}, {2}}},
		{"one item", []float64{3}, 1, [][]int{{0}}},
		{"three groups", []float64{0, 20, 10, 0.5, 20.5, 10.5}, 2, [][]int{{0, 3}, {2, 5}, {1, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agglomerate(context.Background(), len(tt.points), newPoints(tt.points...), tt.stop)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for _, g := range tt.groups {
				c := got[g[0]]
				if seen[c] {
					t.Fatalf("groups share cluster %d: %v", c, got)
				}
				seen[c] = true
				for _, i := range g {
					if got[i] != c {
						t.Fatalf("items %v not together: %v", g, got)
					}
				}
			}
			for _, c := range got {
				if c < 0 || c >= len(tt.groups) {
					t.Fatalf("cluster index %d out of range: %v", c, got)
				}
			}
		})
	}
	if got, err := agglomerate(context.Background(), 0, newPoints(), 1); err != nil || got != nil {
		t.Errorf("empty input: %v, %v", got, err)
	}
}

func TestAgglomerateHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := agglomerate(ctx, 3, newPoints(0, 1, 2), 10)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
