// Package clock is the time source that sessions, paced audio sources and
// their tests share: the system's time in the app, and a fake one in tests
// that moves only when the test moves it, so that nothing waits on the
// wall clock to find out what happened.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and hands out timers and tickers.
type Clock interface {
	Now() time.Time
	// Since returns the time passed since t: Now().Sub(t).
	Since(t time.Time) time.Duration
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f once d has passed, unless the Timer it returns
	// is stopped first; see time.AfterFunc. The Timer's C is nil. The
	// real clocks call f on a goroutine of its own; Fake calls it from
	// Advance.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the part of time.Timer a Clock hands out.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; see time.Timer.Stop.
	Stop() bool
	// Reset makes the timer fire after d; see time.Timer.Reset.
	Reset(d time.Duration) bool
}

// Ticker is the part of time.Ticker a Clock hands out.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the system's clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Since returns time.Since(t).
func (Real) Since(t time.Time) time.Duration { return time.Since(t) }

// AfterFunc returns time.AfterFunc(d, f).
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

// NewTimer returns a time.Timer firing after d.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker returns a time.Ticker of period d.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time        { return t.t.C }
func (t realTimer) Stop() bool                 { return t.t.Stop() }
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// Or returns c, or the system's clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Scaled is a Clock running Factor times faster than the system's from
// Origin on: a recording replayed on it takes 1/Factor of its length and
// keeps its rhythm.
type Scaled struct {
	Origin time.Time
	Factor float64
}

// Now returns Origin plus Factor times the real time since Origin.
func (c Scaled) Now() time.Time {
	return c.Origin.Add(time.Duration(float64(time.Since(c.Origin)) * c.Factor))
}

// Since returns the scaled time passed since t.
func (c Scaled) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// AfterFunc calls f after d of scaled time.
func (c Scaled) AfterFunc(d time.Duration, f func()) Timer {
	return scaledTimer{time.AfterFunc(c.real(d), f), c}
}

// NewTimer returns a timer firing after d of scaled time.
func (c Scaled) NewTimer(d time.Duration) Timer { return scaledTimer{time.NewTimer(c.real(d)), c} }

// NewTicker returns a ticker of period d of scaled time.
func (c Scaled) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(c.real(d))} }

func (c Scaled) real(d time.Duration) time.Duration { return time.Duration(float64(d) / c.Factor) }

type scaledTimer struct {
	t *time.Timer
	c Scaled
}

func (t scaledTimer) C() <-chan time.Time        { return t.t.C }
func (t scaledTimer) Stop() bool                 { return t.t.Stop() }
func (t scaledTimer) Reset(d time.Duration) bool { return t.t.Reset(t.c.real(d)) }

// Fake is a Clock that moves only through Advance. Its timers and tickers
// fire, in order of their deadlines, as Advance passes them; a channel
// that is not read in time drops the tick, as time.Ticker does. The
// functions of AfterFunc run in Advance's goroutine, in the same order,
// so they have run when Advance returns. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex // guards now, waiters, changed
	now     time.Time
	waiters []*fakeTimer
	changed chan struct{} // closed when a timer is added or removed, then replaced
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer firing once Advance passes now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Since returns the fake time passed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// AfterFunc returns a timer that calls fn, from Advance, once Advance
// passes now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	t := &fakeTimer{f: f, fn: fn}
	t.Reset(d)
	return t
}

// NewTicker returns a ticker firing every d of fake time.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker period")
	}
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), period: d}
	t.Reset(d)
	return fakeTicker{t}
}

// Advance moves the clock d forward, firing every timer and tick whose
// time comes, in order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	for {
		var next *fakeTimer
		for _, w := range f.waiters {
			if !w.when.After(end) && (next == nil || w.when.Before(next.when)) {
				next = w
			}
		}
		if next == nil {
			break
		}
		if next.when.After(f.now) {
			f.now = next.when // never back, should Advances overlap
		}
		if next.period > 0 {
			next.when = next.when.Add(next.period)
		} else {
			f.remove(next)
		}
		if next.fn != nil {
			// Unlocked, so that fn may use the clock.
			f.mu.Unlock()
			next.fn()
			f.mu.Lock()
			continue
		}
		select {
		case next.c <- f.now:
		default:
		}
	}
	if end.After(f.now) {
		f.now = end
	}
	f.mu.Unlock()
}

// Waiters returns how many timers and tickers are waiting to fire.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// WaitForWaiters blocks until at least n timers or tickers are waiting,
// or done is closed; it reports whether they are. Tests call it before
// Advance so that the code under test has set its timer first.
func (f *Fake) WaitForWaiters(n int, done <-chan struct{}) bool {
	return f.waitWaiters(func(w int) bool { return w >= n }, done)
}

// WaitForNoWaiters blocks until no timer or ticker is waiting (all fired
// or stopped), or done is closed; it reports whether none is.
func (f *Fake) WaitForNoWaiters(done <-chan struct{}) bool {
	return f.waitWaiters(func(w int) bool { return w == 0 }, done)
}

// waitWaiters blocks until ok holds of the number of waiters, or done is
// closed; it reports whether ok holds.
func (f *Fake) waitWaiters(ok func(int) bool, done <-chan struct{}) bool {
	for {
		f.mu.Lock()
		if ok(len(f.waiters)) {
			f.mu.Unlock()
			return true
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

func (f *Fake) add(t *fakeTimer) {
	f.waiters = append(f.waiters, t)
	f.signal()
}

func (f *Fake) remove(t *fakeTimer) bool {
	for i, w := range f.waiters {
		if w == t {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			f.signal()
			return true
		}
	}
	return false
}

// signal wakes the waits for a change of the waiters.
func (f *Fake) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	f      *Fake
	c      chan time.Time // nil for AfterFunc's
	fn     func()         // AfterFunc's function
	when   time.Time
	period time.Duration
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// Stop and Reset drop a time that was delivered and not read, as
// time.Timer does since Go 1.23: after either, C delivers only a time
// still to come.
func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	return t.f.remove(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	active := t.f.remove(t)
	t.when = t.f.now.Add(d)
	t.f.add(t)
	return active
}

// drain drops an unread time. f.mu is held, so Advance cannot deliver
// meanwhile.
func (t *fakeTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}

// fakeTicker is a periodic fakeTimer with Ticker's Stop.
type fakeTicker struct{ *fakeTimer }

func (t fakeTicker) Stop() { t.fakeTimer.Stop() }

var (
	_ Clock = Real{}
	_ Clock = (*Fake)(nil)
	_ Clock = Scaled{}
)
