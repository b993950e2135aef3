package diarize

import (
	"slices"
	"testing"
)

func TestNoSingleFlips(t *testing.T) {
	// score prefers speaker 1 for every word.
	prefer1 := func(_, s int) (float64, float64) {
		if s == 1 {
			return 1, 0.9
		}
		return 0, 0.6
	}
	tests := []struct {
		name string
		in   []int
		want []int
	}{
		{"no flips", []int{0, 0, 1, 1}, []int{0, 0, 1, 1}},
		{"flip inside a run", []int{0, 0, 1, 0, 0}, []int{0, 0, 0, 0, 0}},
		{"lone first word", []int{1, 0, 0}, []int{0, 0, 0}},
		{"lone last word", []int{0, 0, 1}, []int{0, 0, 0}},
		{"between two speakers goes to the better fit", []int{0, 0, 2, 1, 1}, []int{0, 0, 1, 1, 1}},
		{"alternating", []int{0, 1, 0, 1, 0, 1}, nil}, // only checks the invariant
		{"one word", []int{3}, []int{3}},
		{"empty", []int{}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := labels{speaker: slices.Clone(tt.in), conf: make([]float64, len(tt.in))}
			noSingleFlips(l, prefer1)
			if tt.want != nil && !slices.Equal(l.speaker, tt.want) {
				t.Errorf("got %v, want %v", l.speaker, tt.want)
			}
			assertRunsOfTwo(t, l.speaker)
		})
	}
}

// assertRunsOfTwo fails if any speaker run is a single word (unless there
// is only one word).
func assertRunsOfTwo(t *testing.T, speaker []int) {
	t.Helper()
	if len(speaker) < 2 {
		return
	}
	for i := range speaker {
		left := i > 0 && speaker[i-1] == speaker[i]
		right := i < len(speaker)-1 && speaker[i+1] == speaker[i]
		if !left && !right {
			t.Fatalf("word %d is a one-word speaker run: %v", i, speaker)
		}
	}
}

func TestFillGaps(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want []int
	}{
		{"middle", []int{0, -1, 1}, []int{0, 0, 1}},
		{"leading", []int{-1, -1, 2}, []int{2, 2, 2}},
		{"trailing", []int{1, -1}, []int{1, 1}},
		{"none decided", []int{-1, -1}, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := labels{speaker: slices.Clone(tt.in), conf: make([]float64, len(tt.in))}
			fillGaps(l)
			if !slices.Equal(l.speaker, tt.want) {
				t.Errorf("got %v, want %v", l.speaker, tt.want)
			}
		})
	}
}

func TestRenumber(t *testing.T) {
	s := []int{5, 5, 2, 7, 2, 5}
	renumber(s)
	if want := []int{0, 0, 1, 2, 1, 0}; !slices.Equal(s, want) {
		t.Errorf("got %v, want %v", s, want)
	}
}
