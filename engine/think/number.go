package think

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Numbers as they are said and written: "forty-two", "one hundred and
// five", "three point one four", "2.5", "5 million".

var small = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19,
}

var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

var scales = map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}

// digitNames are the digits said one by one after "point".
var digitNames = map[string]byte{
	"zero": '0', "oh": '0', "nought": '0', "one": '1', "two": '2', "three": '3', "four": '4',
	"five": '5', "six": '6', "seven": '7', "eight": '8', "nine": '9',
}

// writtenNumber is a number in digits: "42", "3.5", ".5", "1e9".
var writtenNumber = regexp.MustCompile(`^(?:\d+(?:\.\d+)?|\.\d+)(?:e\d+)?$`)

// parseNumber reads all of words as one number.
func parseNumber(words []string) (float64, bool) {
	v, n := numberAt(words)
	return v, n > 0 && n == len(words)
}

// numberAt reads the longest number that starts words: in digits, with
// a scale after them ("5 million"), or in words. n is how many words it
// took, 0 when words do not start with a number. A sign is not part of
// a number: "minus" is the arithmetic's.
func numberAt(words []string) (v float64, n int) {
	if len(words) == 0 {
		return 0, 0
	}
	if writtenNumber.MatchString(words[0]) {
		v, err := strconv.ParseFloat(words[0], 64)
		if err != nil || math.IsInf(v, 0) {
			return 0, 0
		}
		if len(words) > 1 && scales[words[1]] != 0 {
			return v * scales[words[1]], 2
		}
		return v, 1
	}
	whole, n := wholeAt(words)
	if n < len(words) && words[n] == "point" {
		var digits []byte
		for _, w := range words[n+1:] {
			d, ok := digitNames[w]
			if !ok {
				break
			}
			digits = append(digits, d)
		}
		if len(digits) > 0 {
			frac, _ := strconv.ParseFloat("0."+string(digits), 64)
			return whole + frac, n + 1 + len(digits)
		}
	}
	return whole, n
}

// wholeAt reads a whole number in words: "zero", "forty-two", "a
// hundred and five", "two million three hundred thousand and six".
func wholeAt(words []string) (float64, int) {
	if words[0] == "zero" {
		return 0, 1
	}
	total, n := 0.0, 0
	last := math.Inf(1) // each scale is smaller than the one before
	for n < len(words) {
		g, took := below1000(words[n:])
		if took == 0 && words[n] == "a" && n+1 < len(words) && scales[words[n+1]] != 0 {
			g, took = 1, 1 // "a thousand"
		}
		if took == 0 {
			break
		}
		s := 0.0
		if n+took < len(words) {
			s = scales[words[n+took]]
		}
		if s == 0 || s >= last {
			total += g
			n += took
			break
		}
		total += g * s
		last = s
		n += took + 1
		// "one thousand and five": "and" before the last part, when it is
		// below a hundred.
		if n+1 < len(words) && words[n] == "and" {
			if g, took := below100(words[n+1:]); took > 0 && (n+1+took == len(words) || scales[words[n+1+took]] == 0) {
				total += g
				n += 1 + took
				break
			}
		}
	}
	return total, n
}

// below1000 reads a number from one to 999 in words.
func below1000(words []string) (float64, int) {
	if len(words) >= 2 && words[1] == "hundred" && (small[words[0]] > 0 && small[words[0]] < 10 || words[0] == "a") {
		v, n := 100*float64(max(small[words[0]], 1)), 2
		rest := words[2:]
		if len(rest) > 1 && rest[0] == "and" {
			if r, took := below100(rest[1:]); took > 0 {
				return v + r, n + 1 + took
			}
		}
		if r, took := below100(rest); took > 0 {
			return v + r, n + took
		}
		return v, n
	}
	return below100(words)
}

// below100 reads a number from one to 99 in words: "seven", "forty",
// "forty two", "forty-two".
func below100(words []string) (float64, int) {
	if len(words) == 0 {
		return 0, 0
	}
	w := words[0]
	if t, u, ok := strings.Cut(w, "-"); ok && tens[t] > 0 && small[u] > 0 && small[u] < 10 {
		return float64(tens[t] + small[u]), 1
	}
	if v := small[w]; v > 0 {
		return float64(v), 1
	}
	if v := tens[w]; v > 0 {
		if len(words) > 1 && small[words[1]] > 0 && small[words[1]] < 10 {
			return float64(v + small[words[1]]), 2
		}
		return float64(v), 1
	}
	return 0, 0
}

// spell says a number in words: whole numbers in full below a million,
// others in digits.
func spell(v float64) string {
	if v != math.Trunc(v) {
		s := strconv.FormatFloat(v, 'f', 4, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return s
	}
	if v < 0 {
		return "minus " + spell(-v)
	}
	if v >= 1e6 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return words(int(v))
}

var smallNames = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
var tensNames = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

func words(n int) string {
	switch {
	case n < 20:
		return smallNames[n]
	case n < 100:
		if n%10 == 0 {
			return tensNames[n/10]
		}
		return tensNames[n/10] + "-" + smallNames[n%10]
	case n < 1000:
		if n%100 == 0 {
			return smallNames[n/100] + " hundred"
		}
		return smallNames[n/100] + " hundred and " + words(n%100)
	default:
		if n%1000 == 0 {
			return words(n/1000) + " thousand"
		}
		sep := " "
		if n%1000 < 100 {
			sep = " and "
		}
		return words(n/1000) + " thousand" + sep + words(n%1000)
	}
}
