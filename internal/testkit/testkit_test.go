package testkit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestWordOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"Hello, world.", "hello world", 1},
		{"the cat sat", "the dog sat", 2 * 2.0 / 6},
		{"one two", "three four", 0},
		{"a b c d", "d c b a", 2 * 1.0 / 8},
		{"It's ten", "it's 10", 2 * 1.0 / 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q~%q", tt.a, tt.b), func(t *testing.T) {
			if got := WordOverlap(tt.a, tt.b); got != tt.want {
				t.Errorf("WordOverlap = %v, want %v", got, tt.want)
			}
			if got := WordOverlap(tt.b, tt.a); got != tt.want {
				t.Errorf("WordOverlap reversed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("%d bytes written, want 800", n)
	}
}

func TestFastClock(t *testing.T) {
	c := FastClock{Origin: time.Now(), Factor: 20}
	start := time.Now()
	tm := c.NewTimer(time.Second) // 50 ms of real time
	<-tm.C()
	if real := time.Since(start); real > 500*time.Millisecond {
		t.Errorf("a 1 s timer at 20x took %v", real)
	}
	if d := c.Now().Sub(c.Origin); d < time.Second {
		t.Errorf("the clock advanced %v after its 1 s timer fired", d)
	}
	if tm.Stop() {
		t.Error("Stop reports a fired timer as stopped")
	}
}
