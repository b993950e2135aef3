package clock

import (
	"slices"
	"testing"
	"time"
)

func TestFakeTimersFireInOrder(t *testing.T) {
	f := NewFake(time.Unix(1000, 0))
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(time.Second)
	tick := f.NewTicker(750 * time.Millisecond)
	f.Advance(999 * time.Millisecond)
	select {
	case <-b.C():
		t.Fatal("b fired before its time")
	default:
	}
	if got := <-tick.C(); !got.Equal(time.Unix(1000, 750e6)) {
		t.Errorf("tick at %v", got)
	}
	f.Advance(time.Millisecond)
	if got := <-b.C(); !got.Equal(time.Unix(1001, 0)) {
		t.Errorf("b at %v, want 1001", got)
	}
	if !a.Stop() {
		t.Error("a was not active")
	}
	f.Advance(5 * time.Second)
	select {
	case <-a.C():
		t.Fatal("a stopped but fired")
	default:
	}
	// The ticker's channel holds one tick; the others were dropped.
	<-tick.C()
	select {
	case <-tick.C():
		t.Fatal("a second tick was kept")
	default:
	}
	tick.Stop()
	if n := f.Waiters(); n != 0 {
		t.Errorf("%d waiters after stopping everything", n)
	}
	if !f.Now().Equal(time.Unix(1006, 0)) {
		t.Errorf("now %v, want 1006", f.Now())
	}
}

func TestFakeReset(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Hour)
	tm.Stop()
	if tm.Reset(time.Second) {
		t.Error("a stopped timer reported active")
	}
	f.Advance(time.Second)
	<-tm.C()
}

func TestWaitForWaiters(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := f.NewTimer(time.Second)
		<-tm.C()
	}()
	if !f.WaitForWaiters(1, nil) {
		t.Fatal("no waiter")
	}
	f.Advance(time.Second)
	<-done
	stop := make(chan struct{})
	close(stop)
	if f.WaitForWaiters(1, stop) {
		t.Error("a waiter after the timer fired")
	}
}

func TestRealClock(t *testing.T) {
	c := Or(nil)
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	tk.Stop()
	if c.Now().IsZero() {
		t.Error("zero time")
	}
}

func TestWaitForNoWaiters(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	tk := f.NewTicker(time.Second)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tm.Stop()
		tk.Stop()
	}()
	if !f.WaitForNoWaiters(nil) {
		t.Fatal("WaitForNoWaiters returned false without done")
	}
	if n := f.Waiters(); n != 0 {
		t.Errorf("%d waiters after WaitForNoWaiters", n)
	}
	<-stopped
	f.NewTimer(time.Second)
	done := make(chan struct{})
	close(done)
	if f.WaitForNoWaiters(done) {
		t.Error("no waiters reported with a timer waiting")
	}
}

func TestFakeAfterFunc(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	var ran []string
	f.AfterFunc(2*time.Second, func() { ran = append(ran, "b") })
	a := f.AfterFunc(time.Second, func() {
		ran = append(ran, "a")
		if len(ran) > 1 {
			return // run again by Reset
		}
		// The clock reads the timer's time, and may be used from fn.
		if got := f.Since(time.Unix(0, 0)); got != time.Second {
			t.Errorf("a ran at %v, want 1s", got)
		}
		f.AfterFunc(500*time.Millisecond, func() { ran = append(ran, "a2") })
	})
	stopped := f.AfterFunc(time.Second, func() { ran = append(ran, "stopped") })
	if !stopped.Stop() {
		t.Error("a waiting AfterFunc reported inactive")
	}
	if a.C() != nil {
		t.Error("an AfterFunc timer has a channel")
	}
	f.Advance(999 * time.Millisecond)
	if len(ran) != 0 {
		t.Fatalf("ran %v before its time", ran)
	}
	f.Advance(5 * time.Second)
	if want := []string{"a", "a2", "b"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if a.Stop() {
		t.Error("a fired AfterFunc reported active")
	}
	if got := f.Since(time.Unix(0, 0)); got != 5999*time.Millisecond {
		t.Errorf("Since = %v", got)
	}
	// Reset arms a fired one again.
	a.Reset(time.Second)
	f.Advance(time.Second)
	if ran[len(ran)-1] != "a" {
		t.Errorf("reset AfterFunc did not run again: %v", ran)
	}
}

func TestRealAfterFunc(t *testing.T) {
	for _, c := range []Clock{Real{}, Scaled{Origin: time.Now(), Factor: 10}} {
		done := make(chan struct{})
		c.AfterFunc(time.Millisecond, func() { close(done) })
		<-done
		if c.Since(c.Now().Add(-time.Hour)) < time.Hour {
			t.Errorf("%T: Since an hour ago is under an hour", c)
		}
	}
}

// TestFakeResetDropsUnread: as with time.Timer since Go 1.23, a time
// delivered but not read is gone after Reset or Stop, so a loop that
// resets its timer on every message never reads a stale firing.
func TestFakeResetDropsUnread(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second) // delivered, not read
	tm.Reset(time.Second)
	select {
	case <-tm.C():
		t.Fatal("a stale time after Reset")
	default:
	}
	f.Advance(time.Second)
	tm.Stop()
	select {
	case <-tm.C():
		t.Fatal("a stale time after Stop")
	default:
	}
}
