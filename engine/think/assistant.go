// Package think is the local engine's "think" step of the voice agent:
// what answers the person. Its built-in assistant needs nothing
// installed; it is not a language model, and says so.
package think

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Model is the built-in assistant's entry in the think-model list.
const (
	ModelID       = "earshot-assistant"
	ModelName     = "Earshot built-in assistant (rules, not a language model)"
	ModelProvider = "earshot"
)

// Message is a turn of the conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Assistant answers what rules can answer well: arithmetic, the time and
// the date, unit conversions, definitions from WordNet, translations
// from FreeDict's dictionaries, greetings; otherwise it says plainly
// what it can do. Its zero value uses the dictionaries where Debian
// installs them.
type Assistant struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// WordNetDir holds WordNet's database (index.noun, data.noun...);
	// "" means DefaultWordNetDir.
	WordNetDir string
	// DictDir holds FreeDict's dictionaries for dictd
	// (freedict-eng-fra.index, freedict-eng-fra.dict.dz...); "" means
	// DefaultDictDir.
	DictDir string
}

// Capabilities says what the assistant can do, as it tells the person.
const Capabilities = "I am Earshot's built-in assistant, not a language model. I can do arithmetic, like what is two plus two, and tell the time and the date. I also convert units, define words, and translate words to and from French, Spanish and German. For other questions, choose a language model in Settings."

// Reply answers the last thing the person said; what the rules cannot
// answer gets what the assistant can do.
func (a Assistant) Reply(history []Message) string {
	if answer, ok := a.Answer(history); ok {
		return answer
	}
	return "I cannot answer that. " + Capabilities
}

// Answer answers the last thing the person said, when a rule can: ok is
// false when none can.
func (a Assistant) Answer(history []Message) (answer string, ok bool) {
	var last string
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "user" {
			last = history[i].Content
			break
		}
	}
	words := tokens(last)
	if len(words) == 0 {
		return "I did not catch that. " + Capabilities, true
	}
	if answer, ok := arithmetic(words); ok {
		return answer, true
	}
	said := phrase(words)
	if answer, ok := a.translation(said); ok {
		return answer, true
	}
	if answer, ok := convertUnits(last); ok {
		return answer, true
	}
	if answer, ok := a.define(said); ok {
		return answer, true
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	switch {
	case has(words, "time") && (has(words, "what") || has(words, "tell")):
		return "It is " + now().Format("3:04 PM") + ".", true
	case (has(words, "date") || has(words, "day") || has(words, "today")) && (has(words, "what") || has(words, "which") || has(words, "tell")):
		return "Today is " + now().Format("Monday, 2 January 2006") + ".", true
	case has(words, "hello") || has(words, "hi") || has(words, "hey"):
		return "Hello! What can I do for you?", true
	case has(words, "thank") || has(words, "thanks"):
		return "You are welcome.", true
	case has(words, "help") || (has(words, "what") && has(words, "can") && has(words, "you")):
		return Capabilities, true
	}
	// Last, as it is asked of any word: "what is a platypus".
	return a.whatIsA(said)
}

// politeLead matches what may come before a question and not change it:
// "please", "can you tell me".
const politeLead = `(?:(?:please|hey|so|and|ok|okay|can you|could you|would you|will you|do you know|tell me|i want to know|i'd like to know) )*`

// phrase is words as one lower-case text, "please" at its end left out,
// a hyphen joining the words either side of it ("eau-de-vie").
func phrase(words []string) string {
	s := strings.ReplaceAll(strings.Join(words, " "), " - ", "-")
	return strings.TrimSuffix(s, " please")
}

// tokens lower-cases text and splits it into words and symbols: "2+2?"
// gives "2", "+", "2".
func tokens(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' && cur.Len() > 0 && isDigits(cur.String()):
			cur.WriteRune(r)
		case r == '\'':
			// "what's" stays one word.
			cur.WriteRune(r)
		case strings.ContainsRune("+-*/×÷x", r):
			flush()
			out = append(out, string(r))
		default:
			flush()
		}
	}
	flush()
	for i, w := range out {
		out[i] = strings.TrimSuffix(w, ".")
	}
	return out
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' {
			return false
		}
	}
	return s != ""
}

func has(words []string, w string) bool {
	for _, x := range words {
		if x == w || strings.TrimSuffix(x, "'s") == w {
			return true
		}
	}
	return false
}

// operators, as spoken and written.
var operators = map[string]string{
	"plus": "+", "add": "+", "+": "+", "and": "+",
	"minus": "-", "less": "-", "-": "-",
	"times": "*", "multiplied": "*", "*": "*", "×": "*", "x": "*",
	"divided": "/", "over": "/", "/": "/", "÷": "/",
}

var operatorWords = map[string]string{"+": "plus", "-": "minus", "*": "times", "/": "divided by"}

// arithmetic answers "what is two plus two" (or "2 + 2", "seven times
// six") in words.
func arithmetic(words []string) (string, bool) {
	// Find the operator between two numbers.
	for i, w := range words {
		op, ok := operators[w]
		if !ok || (w == "and" && !has(words, "add")) {
			continue
		}
		left, ok := numberBefore(words[:i])
		if !ok {
			continue
		}
		rest := words[i+1:]
		if len(rest) > 0 && rest[0] == "by" {
			rest = rest[1:]
		}
		right, ok := numberAfter(rest)
		if !ok {
			continue
		}
		var v float64
		switch op {
		case "+":
			v = left + right
		case "-":
			v = left - right
		case "*":
			v = left * right
		case "/":
			if right == 0 {
				return "Dividing by zero has no answer.", true
			}
			v = left / right
		}
		return sentence(spell(left) + " " + operatorWords[op] + " " + spell(right) + " is " + spell(v) + "."), true
	}
	return "", false
}

// numberBefore reads the number that ends words.
func numberBefore(words []string) (float64, bool) {
	for start := 0; start < len(words); start++ {
		if v, ok := parseNumber(words[start:]); ok {
			return v, true
		}
	}
	return 0, false
}

// numberAfter reads the longest number that starts words.
func numberAfter(words []string) (float64, bool) {
	for end := len(words); end > 0; end-- {
		if v, ok := parseNumber(words[:end]); ok {
			return v, true
		}
	}
	return 0, false
}

var small = map[string]int{
	"zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19,
}

var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

// parseNumber reads all of words as one number: digits ("42", "3.5"), or
// words ("forty two", "one hundred and five", "three thousand"), with
// "minus" or "negative" before it.
func parseNumber(words []string) (float64, bool) {
	if len(words) == 0 {
		return 0, false
	}
	if len(words) == 1 {
		if v, err := strconv.ParseFloat(words[0], 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v, true
		}
	}
	if words[0] == "negative" {
		v, ok := parseNumber(words[1:])
		return -v, ok
	}
	total, current, any := 0, 0, false
	for i, w := range words {
		switch {
		case small[w] != 0 || w == "zero" || w == "oh":
			current += small[w]
		case tens[w] != 0:
			current += tens[w]
		case w == "hundred":
			if current == 0 {
				current = 1
			}
			current *= 100
		case w == "thousand" || w == "million":
			if current == 0 {
				current = 1
			}
			scale := 1000
			if w == "million" {
				scale = 1000000
			}
			total += current * scale
			current = 0
		case w == "and" && i > 0 && i < len(words)-1:
			continue
		case w == "a" && i == 0 && len(words) > 1:
			continue
		default:
			return 0, false
		}
		any = true
		if total > 1e12 || current > 1e12 {
			return 0, false
		}
	}
	return float64(total + current), any
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

// sentence capitalises the first letter.
func sentence(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
