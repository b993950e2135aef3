package timecode

import (
	"math"
	"regexp"
	"strconv"
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		sec  float64
		want string
	}{
		{0, "0:00"},
		{7, "0:07"},
		{59.6, "0:59"}, // cut, not rounded: the word was said in the 59th second
		{60, "1:00"},
		{65, "1:05"},
		{754, "12:34"},
		{3599.99, "59:59"},
		{3600, "1:00:00"},
		{3723, "1:02:03"},
		{36000 + 59*60 + 59, "10:59:59"},
		{-1, "0:00"},
		{math.NaN(), "0:00"},
		{math.Inf(-1), "0:00"},
		{math.Inf(1), "100000:00:00"},
	} {
		if got := Of(tt.sec); got != tt.want {
			t.Errorf("Of(%g) = %q, want %q", tt.sec, got, tt.want)
		}
	}
	if got := Duration(62*time.Second + 900*time.Millisecond); got != "1:02" {
		t.Errorf("Duration = %q", got)
	}
}

func TestFine(t *testing.T) {
	for _, tt := range []struct {
		sec    float64
		digits int
		want   string
	}{
		{62.35, 2, "1:02.35"},
		{2.3, 2, "0:02.30"}, // 2.3*100 is 229.99999999999997
		{0.1 + 0.2, 1, "0:00.3"},
		{1.005, 2, "0:01.00"},
		{3723.5, 3, "1:02:03.500"},
		{59.999, 2, "0:59.99"},
		{12, 0, "0:12"},
		{12.5, -4, "0:12"},
		{12.5, 9, "0:12.500"},
		{-3, 2, "0:00.00"},
	} {
		if got := Fine(tt.sec, tt.digits); got != tt.want {
			t.Errorf("Fine(%g, %d) = %q, want %q", tt.sec, tt.digits, got, tt.want)
		}
	}
}

// FuzzFine holds the shape of every time written, and that it reads back
// to the time given, cut to what is shown.
func FuzzFine(f *testing.F) {
	for _, s := range []float64{0, 0.5, 59.999, 3600, 1e9, -1, math.NaN()} {
		f.Add(s, 2)
	}
	shape := regexp.MustCompile(`^(?:[1-9][0-9]*:[0-5][0-9]|[0-9]|[1-5][0-9]):[0-5][0-9](?:\.[0-9]{1,3})?$`)
	f.Fuzz(func(t *testing.T, sec float64, digits int) {
		s := Fine(sec, digits)
		if !shape.MatchString(s) {
			t.Fatalf("Fine(%g, %d) = %q", sec, digits, s)
		}
		if sec < 0 || math.IsNaN(sec) || sec > maxSeconds {
			return
		}
		back := readBack(t, s)
		step := math.Pow10(-min(max(digits, 0), 3))
		if back > sec+1e-6 || sec-back >= step+1e-6 {
			t.Fatalf("Fine(%g, %d) = %q reads back as %g", sec, digits, s, back)
		}
	})
}

// readBack reads a time Fine wrote.
func readBack(t *testing.T, s string) float64 {
	t.Helper()
	total := 0.0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ':' {
			v, err := strconv.ParseFloat(s[start:i], 64)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			total = total*60 + v
			start = i + 1
		}
	}
	return total
}
