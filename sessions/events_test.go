package sessions

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Events a test can tell apart by a name: I (interim), L (level), F
// (final), S (state), U (utterance end), each followed by a number.
func ev(name string) Event {
	var n int
	fmt.Sscanf(name[1:], "%d", &n)
	switch name[0] {
	case 'I':
		return &InterimEvent{Text: name}
	case 'L':
		return &LevelEvent{RMS: float64(n)}
	case 'F':
		return &FinalEvent{Caption: Caption{Seq: n, Text: name}}
	case 'S':
		return &StateEvent{State: State(n)}
	case 'U':
		return &UtteranceEndEvent{LastWordEnd: float64(n)}
	}
	panic("unknown event " + name)
}

func nameOf(e Event) string {
	switch e := e.(type) {
	case *InterimEvent:
		return e.Text
	case *LevelEvent:
		return fmt.Sprintf("L%d", int(e.RMS))
	case *FinalEvent:
		return e.Caption.Text
	case *StateEvent:
		return fmt.Sprintf("S%d", int(e.State))
	case *UtteranceEndEvent:
		return fmt.Sprintf("U%d", int(e.LastWordEnd))
	}
	return "?"
}

// blockedQueue returns a queue whose consumer has taken one event and is
// not reading: what is pushed next stays queued.
func blockedQueue(t *testing.T) *eventQueue {
	t.Helper()
	q := newEventQueue(0)
	q.push(ev("S99"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		n := len(q.q)
		q.mu.Unlock()
		if n == 0 {
			break // the deliverer holds S99, blocked on the channel
		}
		if time.Now().After(deadline) {
			t.Fatal("the deliverer did not take the first event")
		}
		time.Sleep(time.Millisecond)
	}
	return q
}

// drain reads every event until the channel closes.
func drain(q *eventQueue) []string {
	var got []string
	for e := range q.out {
		got = append(got, nameOf(e))
	}
	return got
}

func TestEventQueueCoalesces(t *testing.T) {
	tests := []struct {
		push string
		want string
	}{
		{"I1 I2 I3", "I3"},
		{"L1 L2 L3", "L3"},
		{"L1 I1 L2 I2", "L2 I2"},
		{"I1 F1 I2", "I1 F1 I2"},
		{"I1 F1 I2 I3", "I1 F1 I3"},
		{"L1 F1 L2", "L1 F1 L2"},
		{"F1 F2 F3", "F1 F2 F3"},
		{"S1 S2 S1", "S1 S2 S1"},
		{"F1 I1 S4 F2 I2 L1 I3 L2", "F1 I1 S4 F2 I3 L2"},
		// A coalesced event never moves ahead of one that is kept: the
		// newer interim is shown after the state change or utterance end
		// it followed, not before.
		{"I1 S2 I2", "I1 S2 I2"},
		{"I1 U1 I2", "I1 U1 I2"},
		{"L1 S3 L2", "L1 S3 L2"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.push, func(t *testing.T) {
			q := blockedQueue(t)
			for _, name := range strings.Fields(tc.push) {
				q.push(ev(name))
			}
			done := make(chan struct{})
			go func() { defer close(done); q.close() }()
			got := drain(q)
			<-done
			if want := strings.Fields("S99 " + tc.want); !slices.Equal(got, want) {
				t.Errorf("pushed %q, delivered %q, want %q", tc.push, got, want)
			}
		})
	}
}

// Producers racing a slow consumer: no final or state is lost or
// reordered, no interim overtakes a final pushed before it, and the last
// interim always arrives.
func TestEventQueueUnderLoad(t *testing.T) {
	q := newEventQueue(4)
	const producers, perProducer = 4, 500
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 1))
			finals := 0
			for i := range perProducer {
				switch r.IntN(4) {
				case 0:
					q.push(&FinalEvent{Caption: Caption{Seq: p*perProducer + i, Text: fmt.Sprint(p)}})
					finals++
				case 1:
					q.push(&StateEvent{State: StateLive, Attempt: p*perProducer + i})
				case 2:
					// An interim names the finals of its producer before it.
					q.push(&InterimEvent{Text: fmt.Sprint(p), Start: float64(finals)})
				default:
					q.push(&LevelEvent{RMS: float64(i)})
				}
			}
			q.push(&InterimEvent{Text: fmt.Sprint(p), Start: float64(finals), End: -1}) // the last word
		}()
	}
	type seen struct{ finals, lastSeq, lastState int }
	got := make([]seen, producers)
	for i := range got {
		got[i] = seen{lastSeq: -1, lastState: -1}
	}
	lastInterims := 0
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for e := range q.out {
			time.Sleep(time.Duration(rand.IntN(20)) * time.Microsecond) // a slow UI
			switch e := e.(type) {
			case *FinalEvent:
				var p int
				fmt.Sscan(e.Caption.Text, &p)
				if e.Caption.Seq <= got[p].lastSeq {
					t.Errorf("final %d after %d", e.Caption.Seq, got[p].lastSeq)
				}
				got[p].lastSeq = e.Caption.Seq
				got[p].finals++
			case *StateEvent:
				p := e.Attempt / perProducer
				if e.Attempt <= got[p].lastState {
					t.Errorf("state %d after %d", e.Attempt, got[p].lastState)
				}
				got[p].lastState = e.Attempt
			case *InterimEvent:
				var p int
				fmt.Sscan(e.Text, &p)
				if int(e.Start) > got[p].finals {
					t.Errorf("an interim after %d finals of producer %d arrived after only %d", int(e.Start), p, got[p].finals)
				}
				if e.End == -1 {
					lastInterims++
				}
			}
		}
	}()
	wg.Wait()
	q.close()
	<-consumed
	// Count what was pushed, with the same seeds.
	for p := range producers {
		r := rand.New(rand.NewPCG(uint64(p), 1))
		finals := 0
		for range perProducer {
			if r.IntN(4) == 0 {
				finals++
			}
		}
		if got[p].finals != finals {
			t.Errorf("producer %d: %d finals delivered of %d", p, got[p].finals, finals)
		}
	}
	// The last interim of a producer can only be replaced by another
	// producer's; at least the very last one pushed arrives.
	if lastInterims == 0 {
		t.Error("no producer's last interim arrived")
	}
}

func TestEventQueueClose(t *testing.T) {
	q := blockedQueue(t)
	for i := range 100 {
		q.push(&FinalEvent{Caption: Caption{Seq: i, Text: fmt.Sprintf("F%d", i)}})
	}
	closed := make(chan struct{})
	go func() { defer close(closed); q.close() }()
	select {
	case <-closed:
		t.Fatal("close returned before the queued events were delivered")
	case <-time.After(20 * time.Millisecond):
	}
	got := drain(q)
	<-closed
	if len(got) != 101 || got[100] != "F99" {
		t.Fatalf("delivered %d events ending %q, want 101 ending F99", len(got), got[len(got)-1])
	}
	select {
	case <-q.done:
	default:
		t.Error("the deliverer is still running after close")
	}
	q.push(ev("F100")) // after close: ignored, no panic
	q.close()          // idempotent
	if _, ok := <-q.out; ok {
		t.Error("an event arrived after close")
	}
}
