package leaktest

import (
	"strings"
	"testing"
	"time"
)

//go:noinline
func parkedInLeaktest(stop <-chan struct{}) { <-stop }

// waitParked waits until n goroutines are in parkedInLeaktest: a goroutine
// just started may not have reached it yet.
func waitParked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(Running("leaktest.parkedInLeaktest")) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines parked, want %d", len(Running("leaktest.parkedInLeaktest")), n)
		}
		time.Sleep(time.Millisecond)
	}
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
