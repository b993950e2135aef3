package api_test

import (
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// TestSpeakPaceChars: no limit until the service refuses a Speak for
// rate; then half the rate measured over the two seconds before, a
// message waiting for those sent before it to drain and for itself, and
// half again on each refusal, never below the floor.
func TestSpeakPaceChars(t *testing.T) {
	p := api.NewSpeakPace()
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for i := range 4 {
		now := at(time.Duration(i) * 100 * time.Millisecond)
		if d := p.Delay(now, 100, false); d != 0 {
			t.Fatalf("send %d waits %v before any refusal", i, d)
		}
		p.Sent(now, 100, false)
	}
	// 400 characters in the last 2 s is 200 a second: half is 100.
	p.Refused(at(time.Second))
	if r := p.CharRate(); r != 100 {
		t.Fatalf("CharRate %v after DATA-0001, want 100", r)
	}
	// Nothing leaves at once: a refused message of 300 characters waits
	// for itself, 3 s.
	if d := p.Delay(at(time.Second), 300, false); d != 3*time.Second {
		t.Errorf("300 characters at 100 a second wait %v, want 3 s", d)
	}
	// Small messages leave within the second's burst, once the ones
	// before have drained.
	p.Sent(at(4*time.Second), 300, false)
	if d := p.Delay(at(4*time.Second), 50, false); d != 2500*time.Millisecond {
		t.Errorf("after 300 characters, 50 more wait %v, want 2.5 s", d)
	}
	if d := p.Delay(at(time.Minute), 50, false); d != 0 {
		t.Errorf("50 characters after an idle minute wait %v", d)
	}
	p.Refused(at(time.Minute))
	if r := p.CharRate(); r != 50 {
		t.Fatalf("CharRate %v after a second DATA-0001, want 50", r)
	}
	for range 10 {
		p.Refused(at(time.Minute))
	}
	if r := p.CharRate(); r != api.MinSpeakCharRate {
		t.Fatalf("CharRate %v after many refusals, want the floor %d", r, api.MinSpeakCharRate)
	}
}

// TestSpeakPaceFlushes: at most MaxFlushesPerMinute Flushes in any 60 s
// (with a second's margin for the way there); a refused Flush holds the
// next for a whole window.
func TestSpeakPaceFlushes(t *testing.T) {
	p := api.NewSpeakPace()
	t0 := time.Unix(1000, 0)
	for i := range api.MaxFlushesPerMinute {
		now := t0.Add(time.Duration(i) * time.Second)
		if d := p.Delay(now, 10, true); d != 0 {
			t.Fatalf("flush %d waits %v", i+1, d)
		}
		p.Sent(now, 10, true)
	}
	now := t0.Add(30 * time.Second)
	if d := p.Delay(now, 10, true); d != 31*time.Second {
		t.Errorf("flush %d waits %v, want 31 s (the first leaves the window at 61 s)", api.MaxFlushesPerMinute+1, d)
	}
	if d := p.Delay(now, 10, false); d != 0 {
		t.Errorf("a Speak without a Flush waits %v", d)
	}
	later := t0.Add(200 * time.Second)
	if d := p.Delay(later, 10, true); d != 0 {
		t.Errorf("a flush after the window waits %v", d)
	}
	p.FlushRefused(later)
	if d := p.Delay(later.Add(10*time.Second), 10, true); d != 51*time.Second {
		t.Errorf("after EXCESSIVE_FLUSH a flush waits %v, want 51 s", d)
	}
}
