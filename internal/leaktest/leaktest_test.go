package leaktest

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

//go:noinline
func parkedInLeaktest(stop <-chan struct{}) { <-stop }

// waitParked waits until n goroutines are parked in parkedInLeaktest:
// a goroutine just started may not have reached it yet.
func waitParked(t *testing.T, n int) {
	t.Helper()
	WaitParked(t, n, "leaktest.parkedInLeaktest")
}

//go:noinline
func spinInLeaktest(stop *atomic.Bool, spinning chan<- struct{}) {
	close(spinning)
	for !stop.Load() {
	}
}

// TestParkedCount: a goroutine blocked on a channel is parked; one that
// runs is not, whatever it runs.
func TestParkedCount(t *testing.T) {
	var stop atomic.Bool
	spinning, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		spinInLeaktest(&stop, spinning)
	}()
	<-spinning
	if n := parkedCount([]string{"leaktest.spinInLeaktest"}); n != 0 {
		t.Errorf("a spinning goroutine counted as parked (%d)", n)
	}
	stop.Store(true)
	<-done
	wake := make(chan struct{})
	parkedDone := make(chan struct{})
	go func() {
		defer close(parkedDone)
		parkedInLeaktest(wake)
	}()
	WaitParked(t, 1, "leaktest.parkedInLeaktest")
	if n := parkedCount([]string{"leaktest.parkedInLeaktest", "no such frame"}); n != 0 {
		t.Errorf("a goroutine without every mark counted (%d)", n)
	}
	close(wake)
	<-parkedDone
}

func TestWaitSeesALeftGoroutine(t *testing.T) {
	before := Running()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		parkedInLeaktest(stop)
	}()
	waitParked(t, 1)
	leaks := Wait(before, 50*time.Millisecond)
	if len(leaks) != 1 || !strings.Contains(leaks[0], "parkedInLeaktest") {
		t.Fatalf("Wait found %d goroutines, want the parked one:\n%s", len(leaks), strings.Join(leaks, "\n\n"))
	}
	close(stop)
	<-done
	if leaks := Wait(before, time.Second); len(leaks) != 0 {
		t.Fatalf("Wait still finds %d goroutines after they ended:\n%s", len(leaks), strings.Join(leaks, "\n\n"))
	}
}

func TestRunningLeavesOutTheFramework(t *testing.T) {
	// This test's own goroutine runs project code (this function) but is
	// the framework's, not a leak.
	for _, st := range Running() {
		if strings.Contains(st, "TestRunningLeavesOutTheFramework") {
			t.Fatalf("the test's own goroutine is listed:\n%s", st)
		}
	}
}

func TestMarks(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		parkedInLeaktest(stop)
	}()
	defer func() { close(stop); <-done }()
	waitParked(t, 1) // Running with that mark finds it
	if n := len(Running("no-such-frame")); n != 0 {
		t.Errorf("%d goroutines match a mark no frame has", n)
	}
}
