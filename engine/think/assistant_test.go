package think

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones do not depend on the machine's
)

// TestAssistant asks the questions the rules answer, and those they
// must refuse rather than answer in part, on a Friday afternoon in UTC.
func TestAssistant(t *testing.T) {
	a := Assistant{Now: fixedNow}
	cannot := "I cannot answer that. " + Capabilities
	noSum := "I could not work that out. I can do sums such as two plus three times four, in words or in digits."
	tests := []struct{ in, want string }{
		// Arithmetic, read in full, with precedence.
		{"what is two plus two", "Two plus two is four."},
		{"What's 2 + 2?", "Two plus two is four."},
		{"what is seven times six", "Seven times six is forty-two."},
		{"what is two plus three times four", "Two plus three times four is fourteen."},
		{"one is two plus two", "Two plus two is four."}, // "what is", as the recogniser hears it
		{"five twenty is two plus two is four", noSum},
		{"(2+3)*4", "Open bracket two plus three close bracket times four is twenty."},
		{"what is open bracket two plus three close bracket times four", "Open bracket two plus three close bracket times four is twenty."},
		{"multiply two plus three by four", "Open bracket two plus three close bracket times four is twenty."},
		{"what's 15% of 80", "Fifteen percent of eighty is twelve."},
		{"what is 10 plus 15 percent of 80", "Ten plus fifteen percent of eighty is twenty-two."},
		{"what is five squared", "Five squared is twenty-five."},
		{"what is two plus three squared", "Two plus three squared is eleven."},
		{"what is three cubed", "Three cubed is twenty-seven."},
		{"what is the square root of 16", "The square root of sixteen is four."},
		{"what is the square root of two", "The square root of two is about 1.4142."},
		{"what is two to the power of ten", "Two to the power of ten is one thousand and twenty-four."},
		{"how much is one hundred and five minus twenty", "One hundred and five minus twenty is eighty-five."},
		{"what is two hundred and five plus one", "Two hundred and five plus one is two hundred and six."},
		{"what is twenty-five plus two", "Twenty-five plus two is twenty-seven."},
		{"what is minus five plus three", "Minus five plus three is minus two."},
		{"what is -5 * -3", "Minus five times minus three is fifteen."},
		{"what is 7 minus 10", "Seven minus ten is minus three."},
		{"what is 2.5 times 4", "2.5 times four is ten."},
		{"what is three point five times two", "3.5 times two is seven."},
		{"what is 0.1 + 0.2", "0.1 plus 0.2 is 0.3."},
		{"what is ten divided by four", "Ten divided by four is 2.5."},
		{"what is one divided by three", "One divided by three is about 0.3333."},
		{"what is 1,000,000 divided by 4", "1000000 divided by four is two hundred and fifty thousand."},
		{"what is three thousand times three thousand", "Three thousand times three thousand is 9000000."},
		{"what is 2 x 3", "Two times three is six."},
		{"what does 6 times 7 make", "Six times seven is forty-two."},
		{"add five and six", "Five plus six is eleven."},
		{"subtract three from ten", "Ten minus three is seven."},
		{"what is nine divided by zero", "Nine divided by zero has no answer: no number can be divided by zero."},
		{"what is the square root of minus four", "The square root of minus four is not a real number."},
		{"what is 10 to the power of 100", "That is too large a number for me to work out."},
		{"what is two plus three apples", noSum},
		{"what is 10 percent", noSum},
		{"what is two plus", noSum},
		{"what is five twenty", cannot},
		// The time, here and in a place the time-zone database names.
		{"what time is it", "It is 3:04 PM."},
		{"what time is it in Tokyo", "In Tokyo it is 12:04 AM on Saturday."},
		{"what time is it in new york", "In New York it is 10:04 AM on Friday."},
		{"what time is it now in New York City", "In New York it is 10:04 AM on Friday."},
		{"What time is it in UTC?", "In UTC it is 3:04 PM on Friday."},
		{"what's the time in Europe/Paris", "In Paris it is 4:04 PM on Friday."},
		{"what time is it in buenos aires", "In Buenos Aires it is 12:04 PM on Friday."},
		{"what time is it in dar es salaam", "In Dar es Salaam it is 6:04 PM on Friday."},
		{"what time is it in Narnia", "I do not know the time zone of Narnia. I know cities such as Tokyo and New York, and zones such as UTC."},
		{"what time does the shop open", cannot},
		// Days: today, tomorrow, holidays on fixed dates; others refused.
		{"what day is it today", "Today is Friday, 27 November 2026."},
		{"what's the date", "Today is Friday, 27 November 2026."},
		{"what day is it tomorrow", "Tomorrow is Saturday, 28 November 2026."},
		{"what was yesterday's date", "Yesterday was Thursday, 26 November 2026."},
		{"what day is it in Tokyo", "In Tokyo, today is Saturday, 28 November 2026."},
		{"what day is Christmas", "Christmas Day is on Friday, 25 December 2026."},
		{"when is new year's eve", "New Year's Eve is on Thursday, 31 December 2026."},
		{"what day does halloween fall on", "Halloween was on Saturday, 31 October 2026. Next year it is on Sunday, 31 October 2027."},
		{"what day is easter", "I do not know when easter is. I know today's date, and the days of holidays on fixed dates, such as Christmas."},
		// Small talk, alone; with a question, the question is answered.
		{"hello", "Hello! What can I do for you?"},
		{"hi there, how are you", "Hello! What can I do for you?"},
		{"thanks a lot", "You are welcome."},
		{"hey, what is two plus two", "Two plus two is four."},
		{"hey, what is the capital of france", cannot},
		{"what can you do", Capabilities},
		{"", "I did not catch that. " + Capabilities},
		{"tell me about the weather in paris", cannot},
	}
	for _, tt := range tests {
		got := a.Reply([]Message{{Role: "assistant", Content: "Hi"}, {Role: "user", Content: tt.in}})
		if got != tt.want {
			t.Errorf("Reply(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestClockDays: the time in a zone follows its summer time, and a
// holiday's day is said as today on the day.
func TestClockDays(t *testing.T) {
	for _, tt := range []struct {
		now      time.Time
		in, want string
	}{
		{time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), "what time is it in new york", "In New York it is 8:00 AM on Wednesday."},
		{time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), "what time is it in london", "In London it is 1:00 PM on Wednesday."},
		{time.Date(2026, 12, 25, 9, 0, 0, 0, time.UTC), "when is christmas", "Christmas Day is today, Friday, 25 December 2026."},
		{time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC), "what day is new year's day", "New Year's Day was on Thursday, 1 January 2026. Next year it is on Friday, 1 January 2027."},
	} {
		a := Assistant{Now: func() time.Time { return tt.now }}
		if got := a.Reply([]Message{{Role: "user", Content: tt.in}}); got != tt.want {
			t.Errorf("at %v, Reply(%q) = %q, want %q", tt.now, tt.in, got, tt.want)
		}
	}
}

func FuzzAssistant(f *testing.F) {
	for _, s := range []string{"what is two plus two", "1e308 * 1e308", "minus minus", "a hundred thousand million", "- / + x", "0/0",
		"convert five miles to km", "define dogs", "what's a platypus", "how do you say run in german", "what does chien mean in english",
		"what time is it in Tokyo", "what's the time in America/Argentina/Buenos_Aires", "what time is it in ../../etc/passwd",
		"what day is it in new york city tomorrow", "when is new year's eve", "one is (2+3)*4"} {
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
