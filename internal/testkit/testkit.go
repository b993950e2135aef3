// Package testkit holds what the test suites of several packages need
// alike: a log destination safe for concurrent writers, a fast clock for
// paced replays, and a measure of how closely two transcripts agree. It is
// imported by tests only.
package testkit

import (
	"bytes"
	"strings"
	"sync"

	"github.com/earshot-app/earshot/internal/clock"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers: the
// destination of a logger that the goroutines under test write to while
// the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes returns a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// FastClock is a clock running Factor times faster than the system's
// from Origin on, so that a paced replay of a recording takes a fraction
// of its length while keeping its rhythm.
type FastClock = clock.Scaled

// Words splits a transcript into lower-case words without punctuation.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'')
	})
}

// WordOverlap is 2·LCS/(len(a)+len(b)) over the words of two transcripts:
// 1 when they are equal, 0 when they share no word in order.
func WordOverlap(a, b string) float64 {
	x, y := Words(a), Words(b)
	if len(x)+len(y) == 0 {
		return 1
	}
	return 2 * float64(CommonWords(x, y)) / float64(len(x)+len(y))
}

// CommonWords is the length of the longest common subsequence of two
// lists of words: how many of them appear in both, in order.
func CommonWords(x, y []string) int {
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for i := range x {
		for j := range y {
			if x[i] == y[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// WordErrorRate is the word-level edit distance from the words of ref to
// those of hyp over the number of reference words.
func WordErrorRate(ref, hyp string) float64 {
	r, h := Words(ref), Words(hyp)
	if len(r) == 0 {
		return float64(len(h))
	}
	prev := make([]int, len(h)+1)
	cur := make([]int, len(h)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(r); i++ {
		cur[0] = i
		for j := 1; j <= len(h); j++ {
			sub := prev[j-1]
			if r[i-1] != h[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(h)]) / float64(len(r))
}
