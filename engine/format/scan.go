package format

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/earshot-app/earshot/api"
)

// Kind says what a Phrase is.
type Kind uint8

// The kinds of phrase Scan recognises.
const (
	KindCardinal   Kind = iota + 1 // "twenty five" -> 25, "three point five" -> 3.5
	KindOrdinal                    // "twenty first" -> 21st
	KindYear                       // "nineteen eighty four" -> 1984 (spoken as two halves)
	KindDigits                     // "one two three" -> 123: a run of single digits that is nothing more specific
	KindPhone                      // 7, 10, or 11 (leading 1) spoken digits -> 555-212-9333
	KindSSN                        // 9 spoken digits after "social security" or "ssn" -> 123-45-6789
	KindCreditCard                 // 13 to 19 spoken digits that pass the Luhn check
	KindMoney                      // "ten dollars" -> $10, "five dollars and fifty cents" -> $5.50
	KindPercent                    // "five percent" -> 5%
	KindTime                       // "three thirty p m" -> 3:30 PM, "three o'clock" -> 3 o'clock
	KindDate                       // "july fourth twenty twenty" -> July 4 2020, "the fourth of july" -> 4th of July
	KindEmail                      // "jane at example dot com" -> jane@example.com
	KindURL                        // "example dot com" -> example.com
)

var kindNames = [...]string{
	KindCardinal: "cardinal", KindOrdinal: "ordinal", KindYear: "year", KindDigits: "digits",
	KindPhone: "phone", KindSSN: "ssn", KindCreditCard: "credit_card", KindMoney: "money",
	KindPercent: "percent", KindTime: "time", KindDate: "date", KindEmail: "email", KindURL: "url",
}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Phrase is a run of spoken words that the formatting rules recognise as one
// written token, found by Scan.
type Phrase struct {
	// Span is the half-open range of input words the phrase covers.
	Span Span
	Kind Kind
	// Text is the phrase as smart formatting writes it ("$10", "3:30 PM").
	Text string
	// Small marks a number that smart formatting leaves spelled out: a single
	// number word below ten ("five", "third") or a run of just two single
	// digits, with no unit after it.
	Small bool
}

// digitRunPause is the longest pause, in seconds, inside a run of single
// digits. A compound number is spoken fluently, so a sentence pause ends it;
// people pause between the groups of a phone or card number, so digit runs
// tolerate more.
const digitRunPause = 1.2

// scanner holds the lower-cased tokens and which neighbours may join.
type scanner struct {
	tok       []string
	words     []api.Word
	blocked   []bool // word belongs to a Replacement
	boundary  []bool // boundary[i]: word i ends a recogniser utterance
	hardBreak []bool // hardBreak[i]: nothing joins word i and word i+1
	tightGap  float64
	lastSSN   int // end of the last social security number found, or -1
}

// newScanner prepares words for scanning. boundaries are indexes of words
// after which no phrase may continue; blocked words (nil for none) belong to
// replacements and are never part of a phrase.
func newScanner(words []api.Word, boundaries []int, blocked []bool, sentencePause float64) *scanner {
	n := len(words)
	s := &scanner{
		tok:       make([]string, n),
		words:     words,
		blocked:   blocked,
		boundary:  make([]bool, n),
		hardBreak: make([]bool, n),
		tightGap:  sentencePause,
		lastSSN:   -1,
	}
	if s.blocked == nil {
		s.blocked = make([]bool, n)
	}
	for i, w := range words {
		s.tok[i] = strings.ToLower(strings.TrimSpace(w.Word))
	}
	for _, b := range boundaries {
		if b >= 0 && b < n {
			s.boundary[b] = true
			s.hardBreak[b] = true
		}
	}
	for i := 0; i+1 < n; i++ {
		if speakerChange(words[i], words[i+1]) || s.blocked[i] || s.blocked[i+1] {
			s.hardBreak[i] = true
		}
	}
	return s
}

// gap returns the silence between word i and word i+1.
func (s *scanner) gap(i int) float64 {
	return s.words[i+1].Start - s.words[i].End
}

// tight reports whether word i and word i+1 may belong to one compound phrase.
func (s *scanner) tight(i int) bool {
	return i >= 0 && i+1 < len(s.tok) && !s.hardBreak[i] && s.gap(i) < s.tightGap
}

// loose reports whether word i and word i+1 may belong to one digit run.
func (s *scanner) loose(i int) bool {
	return i >= 0 && i+1 < len(s.tok) && !s.hardBreak[i] && s.gap(i) < max(s.tightGap, digitRunPause)
}

// speakerChange reports whether two diarised words have different speakers.
func speakerChange(a, b api.Word) bool {
	return a.Speaker != nil && b.Speaker != nil && *a.Speaker != *b.Speaker
}

// phrase is a Phrase plus what numerals mode needs.
type phrase struct {
	Phrase
	plain    string // numerals text: digits without separators
	digitRun bool   // a run of single digits: numerals converts each word on its own
}

// Scan finds the phrases in spoken words that smart formatting rewrites
// (numbers, money, percentages, times, dates, phone and card numbers, e-mail
// addresses and domains), in order and without overlap. boundaries are the
// indexes of words that end a recogniser utterance: no phrase runs past one,
// nor across a speaker change or a pause of DefaultSentencePause or more
// (1.2 s for runs of single digits, as people pause between the groups of a
// phone number).
func Scan(words []api.Word, boundaries []int) []Phrase {
	ps := newScanner(words, boundaries, nil, DefaultSentencePause).scan(true)
	out := make([]Phrase, len(ps))
	for i, p := range ps {
		out[i] = p.Phrase
	}
	return out
}

// scan walks the tokens left to right and takes the first rule that matches
// at each position. With composite false only numbers and digit runs are
// recognised (numerals mode).
func (s *scanner) scan(composite bool) []phrase {
	var out []phrase
	for i := 0; i < len(s.tok); {
		if s.blocked[i] {
			i++
			continue
		}
		p, ok := s.at(i, composite)
		if !ok {
			i++
			continue
		}
		out = append(out, p)
		i = p.Span.End
	}
	return out
}

// at tries every rule at token i.
func (s *scanner) at(i int, composite bool) (phrase, bool) {
	if composite {
		if p, ok := s.email(i); ok {
			return p, true
		}
		if p, ok := s.url(i); ok {
			return p, true
		}
		if p, ok := s.clockTime(i); ok {
			return p, true
		}
		if p, ok := s.date(i); ok {
			return p, true
		}
	}
	if p, ok := s.digitRun(i, composite); ok {
		return p, true
	}
	return s.number(i, composite)
}

// digitRun recognises two or more single digits spoken one by one. "oh" is a
// zero inside a run, never at its start. A digit that begins a compound
// ("two hundred", "three point five") is left to the number rule.
func (s *scanner) digitRun(i int, composite bool) (phrase, bool) {
	d, ok := digitValue(s.tok[i], false)
	if !ok || s.startsCompound(i) {
		return phrase{}, false
	}
	b := []byte{d}
	j := i + 1
	for j < len(s.tok) && s.loose(j-1) {
		d, ok := digitValue(s.tok[j], true)
		if !ok || s.startsCompound(j) {
			break
		}
		b = append(b, d)
		j++
	}
	if len(b) < 2 {
		return phrase{}, false
	}
	digits := string(b)
	p := phrase{Phrase: Phrase{Span: Span{i, j}, Kind: KindDigits, Text: digits, Small: len(b) == 2}, plain: digits, digitRun: true}
	if composite {
		p.Kind, p.Text = s.classifyRun(i, j, digits)
	}
	return p, true
}

// startsCompound reports whether the digit at token i is the first word of a
// larger number ("two hundred", "three point five").
func (s *scanner) startsCompound(i int) bool {
	if s.tok[i] == "oh" || !s.tight(i) {
		return false
	}
	next := s.tok[i+1]
	return isScaleWord(next) || next == "point"
}

// classifyRun decides what the run of spoken digits d at tokens [i, end) is,
// from its length, the Luhn check and the words before it.
func (s *scanner) classifyRun(i, end int, d string) (Kind, string) {
	switch {
	case len(d) == 9 && (s.ssnContext(i) || s.lastSSN >= 0 && i-s.lastSSN <= 8):
		s.lastSSN = end
		return KindSSN, d[:3] + "-" + d[3:5] + "-" + d[5:]
	case len(d) >= 13 && len(d) <= 19 && luhnValid(d):
		return KindCreditCard, d
	case len(d) == 10:
		return KindPhone, d[:3] + "-" + d[3:6] + "-" + d[6:]
	case len(d) == 11 && d[0] == '1':
		return KindPhone, "1-" + d[1:4] + "-" + d[4:7] + "-" + d[7:]
	case len(d) == 7:
		return KindPhone, d[:3] + "-" + d[3:]
	}
	return KindDigits, d
}

// ssnContext reports whether one of the eight words before token i names a
// social security number ("social security", "ssn", "s s n"). A nine-digit
// run within eight words after another social security number is one too
// ("... and his is ...").
func (s *scanner) ssnContext(i int) bool {
	from := max(0, i-8)
	for k := from; k < i; k++ {
		switch strings.TrimSuffix(s.tok[k], ".") {
		case "ssn":
			return true
		case "social":
			if k+1 < i && s.tok[k+1] == "security" {
				return true
			}
		case "s":
			if k+2 < i && strings.TrimSuffix(s.tok[k+1], ".") == "s" && strings.TrimSuffix(s.tok[k+2], ".") == "n" {
				return true
			}
		}
	}
	return false
}

// number recognises a cardinal, ordinal, decimal or spoken year, and in
// composite mode the unit after it: dollars, euros, percent, o'clock.
func (s *scanner) number(i int, composite bool) (phrase, bool) {
	c, ok := s.parseCardinal(i)
	if !ok {
		return phrase{}, false
	}
	span := Span{c.start, c.end}
	switch {
	case c.ordinal:
		text := groupedOrdinal(c)
		return phrase{Phrase: Phrase{Span: span, Kind: KindOrdinal, Text: text, Small: c.single && c.value < 10},
			plain: strconv.FormatInt(c.value, 10) + ordinalSuffix(c.value)}, true
	case c.year:
		d := c.digits()
		return phrase{Phrase: Phrase{Span: span, Kind: KindYear, Text: d}, plain: d}, true
	}
	if composite {
		if p, ok := s.unitAfter(c); ok {
			return p, true
		}
	}
	return phrase{Phrase: Phrase{Span: span, Kind: KindCardinal, Text: c.grouped(5), Small: c.single && c.value < 10},
		plain: c.digits()}, true
}

// groupedOrdinal writes an ordinal with thousands separators from 10,000.
func groupedOrdinal(c cardinal) string {
	return c.grouped(5) + ordinalSuffix(c.value)
}

// unitAfter recognises money, percentages and "o'clock" after a number.
func (s *scanner) unitAfter(c cardinal) (phrase, bool) {
	k := c.end
	if !s.tight(k - 1) {
		return phrase{}, false
	}
	switch s.tok[k] {
	case "dollars", "dollar", "euros", "euro":
		sym := "$"
		if strings.HasPrefix(s.tok[k], "euro") {
			sym = "€"
		}
		amount := c.grouped(4)
		end := k + 1
		if len(c.decimals) == 1 {
			amount += "0"
		}
		if c.decimals == "" {
			if cents, n, ok := s.cents(end); ok {
				amount += "." + cents
				end += n
			}
		}
		return phrase{Phrase: Phrase{Span: Span{c.start, end}, Kind: KindMoney, Text: sym + amount}, plain: c.digits()}, true
	case "percent":
		return phrase{Phrase: Phrase{Span: Span{c.start, k + 1}, Kind: KindPercent, Text: c.grouped(5) + "%"}, plain: c.digits()}, true
	case "per":
		if s.tight(k) && s.tok[k+1] == "cent" {
			return phrase{Phrase: Phrase{Span: Span{c.start, k + 2}, Kind: KindPercent, Text: c.grouped(5) + "%"}, plain: c.digits()}, true
		}
	case "o'clock":
		if c.single && c.value >= 1 && c.value <= 12 {
			return phrase{Phrase: Phrase{Span: Span{c.start, k + 1}, Kind: KindTime, Text: c.digits() + " o'clock"}, plain: c.digits()}, true
		}
	}
	return phrase{}, false
}

// cents recognises "and fifty cents" after "dollars" at token k.
func (s *scanner) cents(k int) (string, int, bool) {
	if k >= len(s.tok) || !s.tight(k-1) || s.tok[k] != "and" || !s.tight(k) {
		return "", 0, false
	}
	c, ok := s.parseCardinal(k + 1)
	if !ok || c.ordinal || c.year || c.decimals != "" || c.value > 99 || c.end >= len(s.tok) || !s.tight(c.end-1) {
		return "", 0, false
	}
	if w := s.tok[c.end]; w != "cents" && w != "cent" {
		return "", 0, false
	}
	return strconv.FormatInt(100+c.value, 10)[1:], c.end + 1 - k, true
}

// clockTime recognises an hour with optional minutes and "a m", "p m" or
// "o'clock": "three thirty p m" -> 3:30 PM, "eleven a m" -> 11 AM.
func (s *scanner) clockTime(i int) (phrase, bool) {
	h, ok := numberWords[s.tok[i]]
	if !ok || h.ordinal || !(h.kind == kindUnit || h.kind == kindTeen && h.value <= 12) {
		return phrase{}, false
	}
	j := i + 1
	minutes := int64(-1)
	if s.tight(i) {
		switch m, ok := numberWords[s.tok[j]]; {
		case s.tok[j] == "oh":
			if s.tight(j) {
				if u, ok := numberWords[s.tok[j+1]]; ok && !u.ordinal && u.kind == kindUnit {
					minutes, j = u.value, j+2
				}
			}
		case ok && !m.ordinal && m.kind == kindTeen:
			minutes, j = m.value, j+1
		case ok && !m.ordinal && m.kind == kindTens && m.value <= 50:
			minutes, j = m.value, j+1
			if s.tight(j - 1) {
				if u, ok := numberWords[s.tok[j]]; ok && !u.ordinal && u.kind == kindUnit {
					minutes, j = minutes+u.value, j+1
				}
			}
		}
	}
	text := strconv.FormatInt(h.value, 10)
	if minutes >= 0 {
		text += ":" + strconv.FormatInt(100+minutes, 10)[1:]
	}
	if j < len(s.tok) && s.tight(j-1) {
		if meridiem, n := s.meridiem(j); n > 0 {
			return phrase{Phrase: Phrase{Span: Span{i, j + n}, Kind: KindTime, Text: text + " " + meridiem}, plain: text}, true
		}
	}
	// Without "a m" or "p m", hour and minutes make a time only after a word
	// that introduces one: "at five thirty", "until ten fifteen".
	if minutes >= 0 && i > 0 && timePrepositions[s.tok[i-1]] {
		return phrase{Phrase: Phrase{Span: Span{i, j}, Kind: KindTime, Text: text}, plain: text}, true
	}
	return phrase{}, false
}

// timePrepositions introduce a clock time spoken without "a m" or "p m".
var timePrepositions = map[string]bool{
	"at": true, "by": true, "until": true, "till": true, "around": true, "from": true,
	"before": true, "after": true, "since": true,
}

// meridiem recognises "am", "a.m.", "a m" (and the same for pm) at token j,
// returning the written form and the number of tokens.
func (s *scanner) meridiem(j int) (string, int) {
	switch s.tok[j] {
	case "am", "a.m.":
		return "AM", 1
	case "pm", "p.m.":
		return "PM", 1
	case "a", "a.", "p", "p.":
		if s.tight(j) && strings.TrimSuffix(s.tok[j+1], ".") == "m" {
			if s.tok[j][0] == 'a' {
				return "AM", 2
			}
			return "PM", 2
		}
	}
	return "", 0
}

// months maps spoken month names to their written form. "may" and "march"
// are also a verb and only count with an ordinal day or a year after them.
var months = map[string]string{
	"january": "January", "february": "February", "march": "March", "april": "April",
	"may": "May", "june": "June", "july": "July", "august": "August", "september": "September",
	"october": "October", "november": "November", "december": "December",
}

// isYearLike reports whether a parsed number can be the year of a date.
func isYearLike(c cardinal) bool {
	return !c.ordinal && c.decimals == "" && (c.year || c.scaled && c.value >= 1000 && c.value <= 2999)
}

// isDayLike reports whether a parsed number can be the day of a month.
func isDayLike(c cardinal) bool {
	return !c.year && !c.scaled && c.decimals == "" && c.value >= 1 && c.value <= 31
}

// date recognises "month day [year]", "month year" and "ordinal of month
// [year]". The written form follows the hosted service's documented example
// ("November 2 2022"): day without suffix, no comma.
func (s *scanner) date(i int) (phrase, bool) {
	if month, ok := months[s.tok[i]]; ok {
		if !s.tight(i) {
			return phrase{}, false
		}
		c, ok := s.parseCardinal(i + 1)
		if !ok {
			return phrase{}, false
		}
		if isYearLike(c) {
			return phrase{Phrase: Phrase{Span: Span{i, c.end}, Kind: KindDate, Text: month + " " + c.digits()}}, true
		}
		if !isDayLike(c) {
			return phrase{}, false
		}
		text := month + " " + strconv.FormatInt(c.value, 10)
		end := c.end
		hasYear := false
		if end < len(s.tok) && s.tight(end-1) {
			if y, ok := s.parseCardinal(end); ok && isYearLike(y) {
				text += " " + y.digits()
				end = y.end
				hasYear = true
			}
		}
		if (s.tok[i] == "may" || s.tok[i] == "march") && !c.ordinal && !hasYear {
			return phrase{}, false
		}
		return phrase{Phrase: Phrase{Span: Span{i, end}, Kind: KindDate, Text: text}}, true
	}
	c, ok := s.parseCardinal(i)
	if !ok || !c.ordinal || !isDayLike(c) || c.end+1 >= len(s.tok) || !s.tight(c.end-1) || s.tok[c.end] != "of" || !s.tight(c.end) {
		return phrase{}, false
	}
	month, ok := months[s.tok[c.end+1]]
	if !ok {
		return phrase{}, false
	}
	text := strconv.FormatInt(c.value, 10) + ordinalSuffix(c.value) + " of " + month
	end := c.end + 2
	if end < len(s.tok) && s.tight(end-1) {
		if y, ok := s.parseCardinal(end); ok && isYearLike(y) {
			text += " " + y.digits()
			end = y.end
		}
	}
	return phrase{Phrase: Phrase{Span: Span{i, end}, Kind: KindDate, Text: text}}, true
}

// topLevelDomains are the endings that make "x dot y" a domain name.
var topLevelDomains = map[string]bool{
	"com": true, "org": true, "net": true, "edu": true, "gov": true, "io": true, "co": true,
	"uk": true, "us": true, "ca": true, "de": true, "fr": true, "info": true, "biz": true,
	"ai": true, "app": true, "dev": true, "tv": true,
}

// notEmailLocal lists words that commonly stand before "at" in speech, so
// "look at example dot com" stays a sentence rather than an address.
var notEmailLocal = map[string]bool{
	"a": true, "aim": true, "aimed": true, "all": true, "am": true, "an": true, "and": true, "are": true,
	"arrive": true, "arrived": true, "back": true, "bad": true, "be": true, "best": true, "but": true,
	"glance": true, "good": true, "great": true, "he": true, "her": true, "here": true, "him": true,
	"home": true, "i": true, "is": true, "it": true, "just": true, "laugh": true, "laughed": true,
	"live": true, "lived": true, "lives": true, "look": true, "looked": true, "looking": true, "me": true,
	"meet": true, "not": true, "off": true, "only": true, "or": true, "out": true, "over": true,
	"point": true, "pointed": true, "right": true, "see": true, "she": true, "shot": true, "smile": true,
	"smiled": true, "stare": true, "stared": true, "stay": true, "stayed": true, "staying": true,
	"that": true, "the": true, "them": true, "there": true, "they": true, "this": true, "up": true,
	"us": true, "was": true, "we": true, "were": true, "what": true, "where": true, "work": true,
	"worked": true, "works": true, "yell": true, "yelled": true, "you": true,
}

// isLabel reports whether w can be one label of a domain or address.
func isLabel(w string) bool {
	if w == "" || w == "dot" || w == "at" {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// labels reads "x dot y dot z" from token i and returns the labels and the
// end of each prefix.
func (s *scanner) labels(i int) []string {
	if !isLabel(s.tok[i]) {
		return nil
	}
	out := []string{s.tok[i]}
	j := i
	for j+2 < len(s.tok) && s.tight(j) && s.tok[j+1] == "dot" && s.tight(j+1) && isLabel(s.tok[j+2]) {
		out = append(out, s.tok[j+2])
		j += 2
	}
	return out
}

// domain recognises a dotted name ending in a known top-level domain at
// token i, returning it and its end.
func (s *scanner) domain(i int) (string, int, bool) {
	ls := s.labels(i)
	for n := len(ls); n >= 2; n-- {
		if topLevelDomains[ls[n-1]] {
			return strings.Join(ls[:n], "."), i + 2*n - 1, true
		}
	}
	return "", 0, false
}

// url recognises a spoken domain name: "example dot com" -> example.com.
func (s *scanner) url(i int) (phrase, bool) {
	name, end, ok := s.domain(i)
	if !ok {
		return phrase{}, false
	}
	return phrase{Phrase: Phrase{Span: Span{i, end}, Kind: KindURL, Text: name}}, true
}

// email recognises "local [dot local] at domain": "jane at example dot com".
func (s *scanner) email(i int) (phrase, bool) {
	local := s.labels(i)
	if len(local) == 0 || notEmailLocal[local[0]] || notEmailLocal[local[len(local)-1]] {
		return phrase{}, false
	}
	at := i + 2*len(local) - 1
	if at+1 >= len(s.tok) || s.tok[at] != "at" || !s.tight(at-1) || !s.tight(at) {
		return phrase{}, false
	}
	name, end, ok := s.domain(at + 1)
	if !ok {
		return phrase{}, false
	}
	return phrase{Phrase: Phrase{Span: Span{i, end}, Kind: KindEmail, Text: strings.Join(local, ".") + "@" + name}}, true
}
