package engine

import "sync"

// Weights of work against the concurrency allowance: the service limits
// concurrent open connections, and compute-heavy features such as
// diarization lower the allowance.
const (
	weightRequest = 1
	weightHeavy   = 1 // added on top of weightRequest for each heavy feature
)

// limiter counts the weight of open connections against a maximum. It is
// safe for concurrent use.
type limiter struct {
	mu   sync.Mutex // guards used
	used int
	max  int
}

func newLimiter(max int) *limiter { return &limiter{max: max} }

// acquire takes weight from the allowance, or reports false when it would
// exceed it (the caller answers 429).
func (l *limiter) acquire(weight int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used+weight > l.max {
		return false
	}
	l.used += weight
	return true
}

// release gives weight back.
func (l *limiter) release(weight int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used -= weight
	if l.used < 0 {
		l.used = 0
	}
}

// inUse returns the weight currently taken.
func (l *limiter) inUse() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}
