// Package count says how many of something there are, in words: the one
// place where a number meets a noun ("1 caption", "7 replies",
// "12,000 words"), for the app, the command line and the exports alike.
package count

import (
	"strconv"
	"strings"
)

// Of says n of noun, the noun in the singular ("reply", "action item"),
// n with thousands separators: "1 reply", "0 replies", "1,024 words".
func Of(n int, noun string) string {
	return Digits(n) + " " + Noun(n, noun)
}

// Noun is noun, given in the singular, in the form n of it takes: as is
// for one, else its plural, made by English's rules for the nouns the app
// counts (reply, replies; match, matches; analysis, analyses). Of a noun
// of several words, the last is made plural.
func Noun(n int, noun string) string {
	if n == 1 || n == -1 {
		return noun
	}
	head, last := "", noun
	if i := strings.LastIndexByte(noun, ' '); i >= 0 {
		head, last = noun[:i+1], noun[i+1:]
	}
	return head + plural(last)
}

// plural is the plural of one English word.
func plural(w string) string {
	lower := strings.ToLower(w)
	switch {
	case w == "":
		return w
	case strings.HasSuffix(lower, "sis"): // analysis, synthesis
		return w[:len(w)-2] + "es"
	case strings.HasSuffix(lower, "y") && len(w) > 1 && !strings.ContainsAny(lower[len(lower)-2:len(lower)-1], "aeiou"):
		return w[:len(w)-1] + "ies" // reply, entity; not day, key
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return w + "es"
	}
	return w + "s"
}

// Digits writes n with a comma between thousands: 1234567 is
// "1,234,567".
func Digits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
