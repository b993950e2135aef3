package format

import (
	"strconv"
	"strings"
)

// wordKind classifies a spoken number word for the cardinal grammar.
type wordKind uint8

const (
	kindZero    wordKind = iota + 1 // zero
	kindUnit                        // one .. nine
	kindTeen                        // ten .. nineteen
	kindTens                        // twenty .. ninety
	kindHundred                     // hundred
	kindScale                       // thousand, million, billion, trillion
)

// numWord is the grammar entry of one spoken number word.
type numWord struct {
	kind    wordKind
	value   int64
	ordinal bool
}

// numberWords holds every spoken word the cardinal grammar understands, in the
// CMU dictionary's lower-case spelling.
var numberWords = map[string]numWord{
	"zero": {kindZero, 0, false},

	"one": {kindUnit, 1, false}, "two": {kindUnit, 2, false}, "three": {kindUnit, 3, false},
	"four": {kindUnit, 4, false}, "five": {kindUnit, 5, false}, "six": {kindUnit, 6, false},
	"seven": {kindUnit, 7, false}, "eight": {kindUnit, 8, false}, "nine": {kindUnit, 9, false},

	"ten": {kindTeen, 10, false}, "eleven": {kindTeen, 11, false}, "twelve": {kindTeen, 12, false},
	"thirteen": {kindTeen, 13, false}, "fourteen": {kindTeen, 14, false}, "fifteen": {kindTeen, 15, false},
	"sixteen": {kindTeen, 16, false}, "seventeen": {kindTeen, 17, false}, "eighteen": {kindTeen, 18, false},
	"nineteen": {kindTeen, 19, false},

	"twenty": {kindTens, 20, false}, "thirty": {kindTens, 30, false}, "forty": {kindTens, 40, false},
	"fifty": {kindTens, 50, false}, "sixty": {kindTens, 60, false}, "seventy": {kindTens, 70, false},
	"eighty": {kindTens, 80, false}, "ninety": {kindTens, 90, false},

	"hundred":  {kindHundred, 100, false},
	"thousand": {kindScale, 1_000, false}, "million": {kindScale, 1_000_000, false},
	"billion": {kindScale, 1_000_000_000, false}, "trillion": {kindScale, 1_000_000_000_000, false},

	"first": {kindUnit, 1, true}, "second": {kindUnit, 2, true}, "third": {kindUnit, 3, true},
	"fourth": {kindUnit, 4, true}, "fifth": {kindUnit, 5, true}, "sixth": {kindUnit, 6, true},
	"seventh": {kindUnit, 7, true}, "eighth": {kindUnit, 8, true}, "ninth": {kindUnit, 9, true},

	"tenth": {kindTeen, 10, true}, "eleventh": {kindTeen, 11, true}, "twelfth": {kindTeen, 12, true},
	"thirteenth": {kindTeen, 13, true}, "fourteenth": {kindTeen, 14, true}, "fifteenth": {kindTeen, 15, true},
	"sixteenth": {kindTeen, 16, true}, "seventeenth": {kindTeen, 17, true}, "eighteenth": {kindTeen, 18, true},
	"nineteenth": {kindTeen, 19, true},

	"twentieth": {kindTens, 20, true}, "thirtieth": {kindTens, 30, true}, "fortieth": {kindTens, 40, true},
	"fiftieth": {kindTens, 50, true}, "sixtieth": {kindTens, 60, true}, "seventieth": {kindTens, 70, true},
	"eightieth": {kindTens, 80, true}, "ninetieth": {kindTens, 90, true},

	"hundredth":  {kindHundred, 100, true},
	"thousandth": {kindScale, 1_000, true}, "millionth": {kindScale, 1_000_000, true},
	"billionth": {kindScale, 1_000_000_000, true}, "trillionth": {kindScale, 1_000_000_000_000, true},
}

// digitValue returns the digit a spoken single-digit word stands for. "oh"
// counts only where the caller has already established a digit context.
func digitValue(w string, ohIsZero bool) (byte, bool) {
	if w == "oh" {
		return '0', ohIsZero
	}
	nw, ok := numberWords[w]
	if !ok || nw.ordinal || (nw.kind != kindUnit && nw.kind != kindZero) {
		return 0, false
	}
	return byte('0' + nw.value), true
}

// isScaleWord reports whether w multiplies what precedes it ("hundred",
// "thousand", ...), which is what lets "a" stand for one.
func isScaleWord(w string) bool {
	nw, ok := numberWords[w]
	return ok && !nw.ordinal && (nw.kind == kindHundred || nw.kind == kindScale)
}

// isPlainNumber reports whether w may follow "and" inside a cardinal
// ("one hundred and three").
func isPlainNumber(w string) bool {
	nw, ok := numberWords[w]
	return ok && (nw.kind == kindUnit || nw.kind == kindTeen || nw.kind == kindTens)
}

// cardinal is the result of parsing one spoken cardinal or ordinal number.
type cardinal struct {
	start, end int // half-open token range
	value      int64
	ordinal    bool
	decimals   string // digits after "point"
	scaled     bool   // used hundred/thousand/...: never a spoken year pair
	year       bool   // "nineteen eighty four": a spoken year pair
	single     bool   // one number word and nothing else
}

// grammar states of parseCardinal.
type cardState uint8

const (
	stStart cardState = iota
	stZero
	stUnit
	stTeen
	stTens
	stHundred
	stScale
	stAnd
)

// parseCardinal parses the longest spoken number that starts at token i. The
// grammar is the ordinary English one: units, teens and tens combine as
// "twenty five"; hundred multiplies 1..99; thousand, million, billion and
// trillion multiply what precedes them and must decrease; "and" may follow
// hundred or a scale word; an ordinal word ends the number; "a" stands for
// one before a scale word ("a hundred"). Sequences the grammar does not
// allow ("five six", "twenty thirty") end the number before the offending
// word, so they come out as separate numbers.
func (s *scanner) parseCardinal(i int) (cardinal, bool) {
	c := cardinal{start: i}
	var total, cur int64
	state := stStart
	lastScale := int64(1) << 62
	j := i
	if s.tok[i] == "a" && s.tight(i) && isScaleWord(s.tok[i+1]) {
		cur, state, j = 1, stUnit, i+1
	}
loop:
	for j < len(s.tok) {
		if j > i && !s.tight(j-1) {
			break
		}
		w := s.tok[j]
		if w == "and" {
			if (state == stHundred || state == stScale) && s.tight(j) && isPlainNumber(s.tok[j+1]) {
				state = stAnd
				j++
				continue
			}
			break
		}
		nw, ok := numberWords[w]
		if !ok {
			break
		}
		switch nw.kind {
		case kindZero:
			if state != stStart {
				break loop
			}
			state = stZero
			j++
			break loop
		case kindUnit:
			switch state {
			case stStart, stTens, stHundred, stScale, stAnd:
			default:
				break loop
			}
			cur += nw.value
			state = stUnit
		case kindTeen, kindTens:
			switch state {
			case stStart, stHundred, stScale, stAnd:
			default:
				break loop
			}
			cur += nw.value
			if nw.kind == kindTeen {
				state = stTeen
			} else {
				state = stTens
			}
		case kindHundred:
			if state != stUnit && state != stTeen && state != stTens || cur < 1 || cur > 99 {
				break loop
			}
			cur *= 100
			c.scaled = true
			state = stHundred
		case kindScale:
			if state != stUnit && state != stTeen && state != stTens && state != stHundred || nw.value >= lastScale || cur < 1 {
				break loop
			}
			total += cur * nw.value
			cur = 0
			lastScale = nw.value
			c.scaled = true
			state = stScale
		}
		j++
		if nw.ordinal {
			c.ordinal = true
			break
		}
	}
	if state == stStart || j == i || (j == i+1 && s.tok[i] == "a") {
		return cardinal{}, false
	}
	c.end = j
	c.value = total + cur
	c.single = c.end-c.start == 1
	if c.ordinal {
		return c, true
	}
	// A spoken year: "nineteen eighty four", "twenty twenty", "nineteen oh
	// five". Only a first half of 14..20 qualifies: lower halves collide with
	// clock times ("eleven thirty") and are rare as years.
	if !c.scaled && c.value >= 14 && c.value <= 20 && c.end-c.start == 1 && s.tight(c.end-1) {
		if tail, n, ok := s.yearTail(c.end); ok {
			c.value = c.value*100 + tail
			c.end += n
			c.year = true
			c.single = false
			return c, true
		}
	}
	// Decimals: "three point one four".
	if c.end < len(s.tok) && s.tight(c.end-1) && s.tok[c.end] == "point" && s.tight(c.end) {
		var b strings.Builder
		k := c.end + 1
		for k < len(s.tok) {
			d, ok := digitValue(s.tok[k], true)
			if !ok || (k > c.end+1 && !s.tight(k-1)) {
				break
			}
			b.WriteByte(d)
			k++
		}
		if b.Len() > 0 {
			c.decimals = b.String()
			c.end = k
			c.single = false
		}
	}
	return c, true
}

// yearTail parses the second half of a spoken year at token i: "oh five",
// a teen, or tens with an optional unit. It returns the value and the number
// of tokens used.
func (s *scanner) yearTail(i int) (int64, int, bool) {
	if i >= len(s.tok) {
		return 0, 0, false
	}
	if s.tok[i] == "oh" {
		if s.tight(i) {
			if nw, ok := numberWords[s.tok[i+1]]; ok && !nw.ordinal && nw.kind == kindUnit {
				return nw.value, 2, true
			}
		}
		return 0, 0, false
	}
	nw, ok := numberWords[s.tok[i]]
	if !ok || nw.ordinal {
		return 0, 0, false
	}
	switch nw.kind {
	case kindTeen:
		return nw.value, 1, true
	case kindTens:
		if s.tight(i) {
			if u, ok := numberWords[s.tok[i+1]]; ok && !u.ordinal && u.kind == kindUnit {
				return nw.value + u.value, 2, true
			}
		}
		return nw.value, 1, true
	}
	return 0, 0, false
}

// digits writes the number as plain digits, with its decimals.
func (c cardinal) digits() string {
	s := strconv.FormatInt(c.value, 10)
	if c.decimals != "" {
		s += "." + c.decimals
	}
	return s
}

// grouped writes the number with thousands separators when it has at least
// minDigits integer digits (smart formatting groups 10,000 and above, money
// from 1,000).
func (c cardinal) grouped(minDigits int) string {
	s := strconv.FormatInt(c.value, 10)
	if len(s) >= minDigits {
		s = groupThousands(s)
	}
	if c.decimals != "" {
		s += "." + c.decimals
	}
	return s
}

// groupThousands inserts commas into a string of digits.
func groupThousands(d string) string {
	if len(d) <= 3 {
		return d
	}
	var b strings.Builder
	first := len(d) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(d[:first])
	for k := first; k < len(d); k += 3 {
		b.WriteByte(',')
		b.WriteString(d[k : k+3])
	}
	return b.String()
}

// ordinalSuffix returns "st", "nd", "rd" or "th" for n.
func ordinalSuffix(n int64) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// luhnValid reports whether a string of digits passes the Luhn check used by
// payment card numbers.
func luhnValid(d string) bool {
	if d == "" {
		return false
	}
	sum := 0
	double := false
	for k := len(d) - 1; k >= 0; k-- {
		n := int(d[k] - '0')
		if n < 0 || n > 9 {
			return false
		}
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}
