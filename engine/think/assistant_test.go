package think

import (
	"testing"
	"time"
)

func TestAssistant(t *testing.T) {
	now := time.Date(2026, 11, 27, 15, 4, 0, 0, time.UTC)
	a := Assistant{Now: func() time.Time { return now }}
	tests := []struct{ in, want string }{
		{"what is two plus two", "Two plus two is four."},
		{"What's 2 + 2?", "Two plus two is four."},
		{"what is seven times six", "Seven times six is forty-two."},
		{"what is two plus three times four", "Two plus three times four is fourteen."},
		{"(2+3)*4", "Open bracket two plus three close bracket times four is twenty."},
		{"what's 15% of 80", "Fifteen percent of eighty is twelve."},
		{"what is twenty-five plus two", "Twenty-five plus two is twenty-seven."},
		{"how much is one hundred and five minus twenty", "One hundred and five minus twenty is eighty-five."},
		{"what is ten divided by four", "Ten divided by four is 2.5."},
		{"what is one divided by three", "One divided by three is about 0.3333."},
		{"what is nine divided by zero", "Nine divided by zero has no answer: no number can be divided by zero."},
		{"what is two plus three apples", "I could not work that out. I can do sums such as two plus three times four, in words or in digits."},
		{"what is three thousand times three thousand", "Three thousand times three thousand is 9000000."},
		{"add five and six", "Five plus six is eleven."},
		{"what time is it", "It is 3:04 PM."},
		{"what day is it today", "Today is Friday, 27 November 2026."},
		{"hello", "Hello! What can I do for you?"},
		{"what can you do", Capabilities},
		{"", "I did not catch that. " + Capabilities},
		{"tell me about the weather in paris", "I cannot answer that. " + Capabilities},
	}
	for _, tt := range tests {
		got := a.Reply([]Message{{Role: "assistant", Content: "Hi"}, {Role: "user", Content: tt.in}})
		if got != tt.want {
			t.Errorf("Reply(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzAssistant(f *testing.F) {
	for _, s := range []string{"what is two plus two", "1e308 * 1e308", "minus minus", "a hundred thousand million", "- / + x", "0/0",
		"convert five miles to km", "define dogs", "what's a platypus", "how do you say run in german", "what does chien mean in english"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := (Assistant{}).Reply([]Message{{Role: "user", Content: s}}); got == "" {
			t.Fatalf("no reply to %q", s)
		}
	})
}

// fixedNow is a clock for tests: a Friday afternoon.
func fixedNow() time.Time { return time.Date(2026, 11, 27, 15, 4, 0, 0, time.UTC) }
