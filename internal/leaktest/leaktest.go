// Package leaktest finds goroutines that outlive the tests that started
// them. Every goroutine in Earshot has an owner that stops it and waits
// for it; the test suites of the packages that start goroutines hold that
// with these functions, at the end of a test or of the whole binary.
package leaktest

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Module marks the frames of Earshot's own code in a goroutine dump.
const Module = "github.com/earshot-app/earshot/"

// DefaultWait is how long goroutines get to end after their owner was
// stopped: long enough for a socket's reader to see its close under the
// race detector on a loaded machine.
const DefaultWait = 5 * time.Second

var header = regexp.MustCompile(`^goroutine (\d+) `)

// Snapshot is the set of goroutines running at one moment, as stacks
// keyed by goroutine id.
type Snapshot map[string]string

// Running returns the goroutines whose stack contains one of marks
// (Module when none is given), leaving out the caller's own and those of
// the test framework: the goroutines running a test function or TestMain
// are not leaks.
func Running(marks ...string) Snapshot {
	if len(marks) == 0 {
		marks = []string{Module}
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := Snapshot{}
	for i, st := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // the caller
		}
		m := header.FindStringSubmatch(st)
		if m == nil || !containsAny(st, marks) || framework(st) {
			continue
		}
		out[m[1]] = st
	}
	return out
}

// framework reports whether st is a goroutine of the test framework that
// runs project code: a test function, or TestMain on the main goroutine.
func framework(st string) bool {
	return strings.Contains(st, "created by testing.(*T).Run") ||
		strings.Contains(st, "created by testing.runTests") ||
		strings.Contains(st, "\nmain.main()")
}

func containsAny(s string, marks []string) bool {
	for _, m := range marks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// Wait waits until every goroutine matching marks (see Running) is one of
// before, and returns the stacks of the others still running after
// timeout. A nil before expects none at all.
func Wait(before Snapshot, timeout time.Duration, marks ...string) []string {
	deadline := time.Now().Add(timeout)
	for {
		var extra []string
		for id, st := range Running(marks...) {
			if _, ok := before[id]; !ok {
				extra = append(extra, st)
			}
		}
		if len(extra) == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Check fails t if a goroutine matching marks that started during t is
// still running once t and the cleanups registered after this call have
// ended. Call it first in a test that does not run in parallel with
// others, so that no other test's goroutines come and go meanwhile.
func Check(t testing.TB, marks ...string) {
	t.Helper()
	before := Running(marks...)
	t.Cleanup(func() {
		if leaks := Wait(before, DefaultWait, marks...); len(leaks) > 0 {
			t.Errorf("%d goroutines left running:\n\n%s", len(leaks), strings.Join(leaks, "\n\n"))
		}
	})
}

// Report is for TestMain, once every test has run: it returns a
// description of the goroutines matching marks still running after
// DefaultWait, or "" when there are none.
func Report(marks ...string) string {
	leaks := Wait(nil, DefaultWait, marks...)
	if len(leaks) == 0 {
		return ""
	}
	return "goroutines left after the tests:\n\n" + strings.Join(leaks, "\n\n")
}

// parked matches the header of a goroutine blocked until another wakes
// it: on a channel, a select, a lock, a condition, a wait group or the
// network.
var parked = regexp.MustCompile(`^goroutine \d+ \[(chan receive|chan send|select|select \(no cases\)|sync\.Mutex\.Lock|sync\.RWMutex\.R?Lock|sync\.Cond\.Wait|sync\.WaitGroup\.Wait|semacquire|IO wait)[,\]]`)

// ParkPatience bounds WaitParked: only a fault takes that long.
const ParkPatience = time.Minute

// WaitParked waits until at least n goroutines whose stacks contain every
// one of marks are parked, waiting for something else to wake them. A
// test uses it where a goroutine must have reached its wait before the
// test acts (a Stop waiting for the session's end, a Get waiting for a
// decoder), instead of sleeping and hoping; it fails t after
// ParkPatience.
func WaitParked(t testing.TB, n int, marks ...string) {
	t.Helper()
	if len(marks) == 0 {
		t.Fatal("WaitParked: name the function the goroutines wait in")
	}
	deadline := time.Now().Add(ParkPatience)
	for {
		got := parkedCount(marks)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d goroutines in %s parked after %v", got, n, strings.Join(marks, ", "), ParkPatience)
		}
		time.Sleep(time.Millisecond)
	}
}

// parkedCount counts the parked goroutines whose stacks contain every
// one of marks.
func parkedCount(marks []string) int {
	n := 0
	for _, st := range Running(marks[0]) {
		if parked.MatchString(st) && containsAll(st, marks) {
			n++
		}
	}
	return n
}

func containsAll(s string, marks []string) bool {
	for _, m := range marks {
		if !strings.Contains(s, m) {
			return false
		}
	}
	return true
}
