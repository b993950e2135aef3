// Package sayable tells which characters of a text a voice of a language
// can say: the letters of its language's scripts and the digits. Letters
// of other scripts and emoji are not said (English voices say nothing
// for them; others spell them out, "caractère chinois", which is no
// better), and punctuation and white space are neither said nor missed.
// The client checks a text before it asks for a synthesis, and the local
// engine leaves out what its voices cannot say and says so.
package sayable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// languages are the languages the voices speak, by ISO 639-1 code, with
// the scripts they read.
var languages = map[string]struct {
	name    string
	scripts []*unicode.RangeTable
}{
	"en": {"English", latin},
	"es": {"Spanish", latin},
	"de": {"German", latin},
	"nl": {"Dutch", latin},
	"fr": {"French", latin},
	"it": {"Italian", latin},
	"ja": {"Japanese", []*unicode.RangeTable{unicode.Hiragana, unicode.Katakana, unicode.Han, unicode.Latin}},
}

var latin = []*unicode.RangeTable{unicode.Latin}

// LanguageName names a language code for people ("English" for "en"),
// or returns the code when it is not one of the voices' languages.
func LanguageName(lang string) string {
	if l, ok := languages[lang]; ok {
		return l.name
	}
	return lang
}

// Emoji is the name of the characters no voice says: emoji and other
// pictographic symbols.
const Emoji = "emoji and symbols"

// scriptNames names the letters of the scripts a text is most likely to
// hold; others are named from unicode.Scripts.
var scriptNames = []struct {
	table *unicode.RangeTable
	name  string
}{
	{unicode.Han, "Chinese characters"},
	{unicode.Hiragana, "Japanese kana"},
	{unicode.Katakana, "Japanese kana"},
	{unicode.Hangul, "Korean letters"},
	{unicode.Cyrillic, "Cyrillic letters"},
	{unicode.Arabic, "Arabic letters"},
	{unicode.Hebrew, "Hebrew letters"},
	{unicode.Greek, "Greek letters"},
	{unicode.Devanagari, "Devanagari letters"},
	{unicode.Thai, "Thai letters"},
	{unicode.Latin, "Latin letters"},
}

// Skipped is one kind of character a voice does not say.
type Skipped struct {
	// Name says what they are: "emoji and symbols", "Chinese characters".
	Name string
	// Count is how many the text holds; Sample up to eight of them,
	// each once, in the order found.
	Count  int
	Sample []rune
}

// Report is what a voice of one language can say of a text.
type Report struct {
	// Language is the voice's language code; Said counts the letters and
	// digits it says.
	Language string
	Said     int
	// Skipped are the characters it does not say, by kind, in the order
	// first found.
	Skipped []Skipped
}

// Check reads text for a voice speaking lang. A language it does not
// know is taken to say every letter.
func Check(lang, text string) Report {
	r := Report{Language: lang}
	l, known := languages[lang]
	for _, c := range text {
		name, said := classify(c, l.scripts, known)
		switch {
		case said:
			r.Said++
		case name != "":
			r.skip(name, c)
		}
	}
	return r
}

// classify says whether a voice reading scripts says c, or else what c
// is ("" for a character neither said nor missed).
func classify(c rune, scripts []*unicode.RangeTable, known bool) (name string, said bool) {
	switch {
	case c < 0x80:
		return "", unicode.IsLetter(c) || unicode.IsDigit(c)
	case isEmoji(c):
		return Emoji, false
	case unicode.Is(unicode.So, c):
		return Emoji, false
	case unicode.IsDigit(c) && c >= '０' && c <= '９':
		return "", true
	case unicode.IsLetter(c) || unicode.IsDigit(c):
		if !known || unicode.IsOneOf(scripts, c) {
			return "", true
		}
		return scriptName(c), false
	}
	return "", false
}

// isEmoji reports the blocks of pictographs: emoji, their skin tones,
// playing cards and game pieces, and the older symbols and dingbats.
func isEmoji(c rune) bool {
	return c >= 0x1F000 && c <= 0x1FAFF || c >= 0x2600 && c <= 0x27BF
}

func scriptName(c rune) string {
	for _, s := range scriptNames {
		if unicode.Is(s.table, c) {
			return s.name
		}
	}
	for name, t := range unicode.Scripts {
		if unicode.Is(t, c) {
			return "letters of the " + strings.ReplaceAll(name, "_", " ") + " script"
		}
	}
	return "letters of another script"
}

func (r *Report) skip(name string, c rune) {
	for i := range r.Skipped {
		s := &r.Skipped[i]
		if s.Name == name {
			s.Count++
			if len(s.Sample) < 8 && !strings.ContainsRune(string(s.Sample), c) {
				s.Sample = append(s.Sample, c)
			}
			return
		}
	}
	r.Skipped = append(r.Skipped, Skipped{Name: name, Count: 1, Sample: []rune{c}})
}

// Nothing reports whether the text has characters, none of which the
// voice says.
func (r Report) Nothing() bool { return r.Said == 0 && len(r.Skipped) > 0 }

// String says what the voice does not say: "3 emoji and symbols (😀 🎉
// 👍) and 4 Chinese characters (你 好 世 界)"; "" for nothing.
func (r Report) String() string {
	var parts []string
	for _, s := range r.Skipped {
		sample := make([]string, len(s.Sample))
		for i, c := range s.Sample {
			sample[i] = string(c)
		}
		more := ""
		if s.Count > len(s.Sample) {
			more = " …"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s%s)", strconv.Itoa(s.Count), s.Name, strings.Join(sample, " "), more))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Strip returns text with every character a voice of lang does not say
// (see Check) replaced by spaces of the same length in bytes, so that
// byte offsets into it stay those of text.
func Strip(lang, text string) string {
	l, known := languages[lang]
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRuneInString(text[i:])
		if name, said := classify(c, l.scripts, known); !said && name != "" || isJoiner(c) {
			if !changed {
				b.Grow(len(text))
				b.WriteString(text[:i])
				changed = true
			}
			b.WriteString(strings.Repeat(" ", size))
		} else if changed {
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	if !changed {
		return text
	}
	return b.String()
}

// isJoiner reports the parts of emoji sequences that are no character of
// their own: the zero-width joiner, variation selectors, the keycap.
func isJoiner(c rune) bool {
	return c == 0x200D || c == 0xFE0E || c == 0xFE0F || c == 0x20E3 || c >= 0xE0020 && c <= 0xE007F
}
