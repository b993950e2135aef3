// Package think is the local engine's "think" step of the voice agent:
// what answers the person. Its built-in assistant needs nothing
// installed; it is not a language model, and says so.
package think

import (
	"regexp"
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
// the date (here or in a city), unit conversions, definitions from WordNet, translations
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
const Capabilities = "I am Earshot's built-in assistant, not a language model. I can do arithmetic, like what is two plus three times four, and tell the date and the time, here or in a city. I also convert units, define words, and translate words to and from French, Spanish and German. For other questions, choose a language model in Settings."

// Reply answers the last thing the person said; what the rules cannot
// answer is refused, saying why.
func (a Assistant) Reply(history []Message) string {
	if answer, ok := a.Answer(history); ok {
		return answer
	}
	return refusal(lastSaid(history))
}

// Answer answers the last thing the person said, when a rule can read
// all of it: ok is false when none can.
func (a Assistant) Answer(history []Message) (answer string, ok bool) {
	last := lastSaid(history)
	words := tokens(last)
	if len(words) == 0 {
		return "I did not catch that. " + Capabilities, true
	}
	if answer, ok := arithmetic(last); ok {
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
	if q, ok := askedClock(last); ok {
		return a.clock(q)
	}
	switch {
	case greeting.MatchString(said):
		return "Hello! What can I do for you?", true
	case thanks.MatchString(said):
		return "You are welcome.", true
	case has(words, "help") || (has(words, "what") && has(words, "can") && has(words, "you")):
		return Capabilities, true
	}
	// Last, as it is asked of any word: "what is a platypus".
	return a.whatIsA(said)
}

// A greeting or thanks alone; with a question after it, the question
// is what is answered.
var (
	greeting = regexp.MustCompile(`^(?:(?:hello|hi|hey|hiya|good (?:morning|afternoon|evening))(?: there| again| everyone| earshot)? ?)+(?:how are you(?: doing)?(?: today)?)?$`)
	thanks   = regexp.MustCompile(`^(?:ok |okay |great )?(?:thank you|thanks|thankyou|cheers)(?: very much| so much| a lot)?(?: earshot)?$`)
)

// refusal says why the assistant cannot answer text: what it could not
// read in it, or, for other questions, what it can do.
func refusal(text string) string {
	if q, ok := askedClock(text); ok {
		return clockRefusal(q)
	}
	if looksLikeArithmetic(text) {
		return "I could not work that out. I can do sums such as two plus three times four, in words or in digits."
	}
	return "I cannot answer that. " + Capabilities
}

// lastSaid is the last thing the person said.
func lastSaid(history []Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "user" {
			return history[i].Content
		}
	}
	return ""
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
func tokens(text string) []string { return split(text, "+-*/×÷x") }

// split lower-cases text and splits it into words and symbols, the
// characters of symbols. "what's" is one word, and so are "forty-two",
// "3.5" and ".5"; an x between digits is a symbol ("2x3").
func split(text, symbols string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	rs := []rune(strings.ToLower(strings.ReplaceAll(text, "’", "'")))
	next := func(i int) rune {
		if i+1 < len(rs) {
			return rs[i+1]
		}
		return 0
	}
	for i, r := range rs {
		switch {
		case r == 'x' && strings.ContainsRune(symbols, r) && isDigits(cur.String()) && unicode.IsDigit(next(i)):
			flush()
			out = append(out, "x")
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			cur.WriteRune(r)
		case r == '.' && unicode.IsDigit(next(i)) && (cur.Len() == 0 || isDigits(cur.String())):
			cur.WriteRune(r)
		case r == '-' && unicode.IsLetter(next(i)) && cur.Len() > 0 && !isDigits(cur.String()):
			cur.WriteRune(r)
		case strings.ContainsRune(symbols, r):
			flush()
			out = append(out, string(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// withoutThousands takes the digit group separators out of numbers:
// "1,000,000" is 1000000.
func withoutThousands(text string) string {
	for {
		t := thousands.ReplaceAllString(text, "$1$2")
		if t == text {
			return t
		}
		text = t
	}
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

// sentence capitalises the first letter.
func sentence(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
