package audio

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
)

// fakeClock is a Clock that moves only when Advance is called. Timers fire
// (without blocking) as soon as the clock reaches them.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	created chan struct{} // one token per timer created, for tests to wait on
}

func newFakeClock() *fakeClock {
	return &fakeClock{
		now:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		created: make(chan struct{}, 1024),
	}
}

type fakeTimer struct {
	clock *fakeClock
	when  time.Time
	ch    chan time.Time
	done  bool // fired or stopped; guarded by clock.mu
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, when: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.done = true
		t.ch <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	c.created <- struct{}{}
	return t
}

// Advance moves the clock on by d and fires the timers now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.when.After(c.now):
			t.done = true
			t.ch <- c.now
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
}

// pending returns the number of timers waiting to fire.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// waitTimer waits until a timer has been created (a paced Read is waiting).
func (c *fakeClock) waitTimer(t *testing.T) {
	t.Helper()
	select {
	case <-c.created:
	case <-time.After(5 * time.Second):
		t.Fatal("no timer was created")
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

// Reset makes the timer fire d after the fake now.
func (t *fakeTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	was := !t.done
	t.when, t.done = c.now.Add(d), false
	if !slices.Contains(c.timers, t) {
		c.timers = append(c.timers, t)
	}
	return was
}

// NewTicker fails the test run: the sources pace themselves with timers,
// and a ticker asked for would be a change this fake must learn first.
func (c *fakeClock) NewTicker(time.Duration) clock.Ticker {
	panic("fakeClock: a source asked for a ticker")
}

// AfterFunc fails the test run, as NewTicker does.
func (c *fakeClock) AfterFunc(time.Duration, func()) clock.Timer {
	panic("fakeClock: a source asked for AfterFunc")
}

// Since returns the fake time since t.
func (c *fakeClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// sine16 returns frames of a sine of the given frequency and peak amplitude
// (in int16 units) at rate, the same on every channel.
func sine16(freq float64, rate, frames, channels int, amp float64) []int16 {
	out := make([]int16, frames*channels)
	for i := range frames {
		v := int16(math.Round(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))))
		for c := range channels {
			out[i*channels+c] = v
		}
	}
	return out
}

func TestFrameFrames(t *testing.T) {
	tests := []struct {
		d       time.Duration
		rate    int
		want    int
		wantErr bool
	}{
		{20 * time.Millisecond, 16000, 320, false},
		{20 * time.Millisecond, 44100, 882, false},
		{10 * time.Millisecond, 11025, 110, false}, // 110.25 rounds down
		{30 * time.Millisecond, 11025, 331, false}, // 330.75 rounds up
		{time.Millisecond, 1000, 1, false},
		{time.Second, 48000, 48000, false},
		{999 * time.Microsecond, 16000, 0, true},
		{time.Second + 1, 16000, 0, true},
		{-time.Millisecond, 16000, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			got, err := FrameLen(tt.d, tt.rate)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("FrameLen(%v, %d) = %d, %v; want %d, error %v", tt.d, tt.rate, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFramesDuration(t *testing.T) {
	tests := []struct {
		n    int64
		rate int
		want time.Duration
	}{
		{320, 16000, 20 * time.Millisecond},
		{441, 44100, 10 * time.Millisecond},
		{1, 3, 333333333},
		{16000 * 86400 * 30, 16000, 30 * 24 * time.Hour}, // a month: n*1e9 overflows int64
	}
	for _, tt := range tests {
		if got := FramesDuration(tt.n, tt.rate); got != tt.want {
			t.Errorf("FramesDuration(%d, %d) = %v, want %v", tt.n, tt.rate, got, tt.want)
		}
	}
}
