package format

import (
	"strconv"
	"strings"

	"github.com/earshot-app/earshot/api"
)

// Synthetic timing of words built by mkWords.
const (
	testWordLen = 0.25 // seconds each word lasts
	testGap     = 0.05 // silence between words of a phrase
)

// mkWords builds recogniser words from a spec of space-separated words.
// Every word lasts testWordLen with testGap between words; the marker "/"
// adds a 0.8 s pause (a sentence pause) and "//" a 2 s pause (a paragraph
// pause). A word written "word@N" is said by speaker N; "word#0.5" has
// confidence 0.5 (default 0.9).
func mkWords(spec string) []api.Word {
	var out []api.Word
	t := 0.0
	for _, f := range strings.Fields(spec) {
		switch f {
		case "/":
			t += 0.8
			continue
		case "//":
			t += 2
			continue
		}
		w := api.Word{Confidence: 0.9}
		if i := strings.IndexByte(f, '#'); i >= 0 {
			c, err := strconv.ParseFloat(f[i+1:], 64)
			if err != nil {
				panic(err)
			}
			w.Confidence = c
			f = f[:i]
		}
		if i := strings.IndexByte(f, '@'); i >= 0 {
			n, err := strconv.Atoi(f[i+1:])
			if err != nil {
				panic(err)
			}
			w.Speaker = &n
			f = f[:i]
		}
		w.Word = f
		w.Start = t
		w.End = t + testWordLen
		t = w.End + testGap
		out = append(out, w)
	}
	return out
}

// texts returns the Text of each word.
func texts(ws []api.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text()
	}
	return out
}
