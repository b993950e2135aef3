package format

import (
	"sort"
	"strings"

	"github.com/earshot-app/earshot/api"
)

// DefaultSentencePause is the silence, in seconds, that ends a sentence when
// Options.SentencePause is zero.
const DefaultSentencePause = 0.6

// Options selects what Apply does. The zero value changes nothing but the
// sentence analysis.
type Options struct {
	// Punctuate fills PunctuatedWord: sentence capitals, "I", and a period
	// or question mark at the end of each sentence (punctuate=true).
	Punctuate bool
	// SmartFormat writes numbers, money, percentages, times, dates, phone
	// and card numbers, e-mail addresses, domains and titles the way they
	// are read, and implies Punctuate (smart_format=true).
	SmartFormat bool
	// Numerals writes spoken numbers as digits and nothing else
	// (numerals=true). SmartFormat includes it.
	Numerals bool
	// Boundaries are the indexes of the input words that end a recogniser
	// utterance: a sentence always ends there and no formatted token spans
	// one. Indexes out of range are ignored.
	Boundaries []int
	// SentencePause is the silence, in seconds, at or above which a sentence
	// ends; zero or less means DefaultSentencePause.
	SentencePause float64
	// Replace lists runs of input words to be written as one fixed token,
	// which is how redaction ("[SSN_1]") enters the word list. Invalid or
	// overlapping entries are ignored.
	Replace []Replacement
}

// Span is a half-open range [Start, End) of word indexes.
type Span struct {
	Start, End int
}

// Len returns the number of words in the span.
func (s Span) Len() int { return s.End - s.Start }

// Replacement writes the input words of Span as the single token Text, in
// both word and punctuated_word, keeping the span's timing.
type Replacement struct {
	Span Span
	Text string
}

// Result is the formatted word list of one alternative.
type Result struct {
	// Words are the output words. Words the formatting rules join (smart
	// formatting, numerals, replacements) become one word that starts where
	// the first spoken word starts and ends where the last one ends, as the
	// hosted service does ("twenty five" -> one word "25").
	Words []api.Word
	// Spans[i] is the range of input words that Words[i] came from. Spans
	// partition the input in order.
	Spans []Span
	// SentenceEnds are the indexes of the output words that end a sentence,
	// ascending; the last word is always one. They are computed whether or
	// not punctuation was asked for, for Paragraphs.
	SentenceEnds []int
}

// token is one output word being built.
type token struct {
	word    api.Word
	span    Span
	display string // the punctuated form before sentence marks
	plain   bool   // an ordinary spoken word: smart word rules may apply
}

// Apply formats the recogniser's words of one alternative. The input is not
// modified. PunctuatedWord of the output is set when Punctuate or SmartFormat
// is on and empty otherwise; input PunctuatedWord values are ignored.
func Apply(words []api.Word, opts Options) Result {
	n := len(words)
	pause := opts.SentencePause
	if !(pause > 0) {
		pause = DefaultSentencePause
	}
	reps := validReplacements(opts.Replace, n)
	blocked := make([]bool, n)
	for _, r := range reps {
		for k := r.Span.Start; k < r.Span.End; k++ {
			blocked[k] = true
		}
	}
	s := newScanner(words, opts.Boundaries, blocked, pause)
	var phrases []phrase
	switch {
	case opts.SmartFormat:
		phrases = s.scan(true)
	case opts.Numerals:
		phrases = s.scan(false)
	}

	toks := make([]token, 0, n)
	ri, pi := 0, 0
	for i := 0; i < n; {
		switch {
		case ri < len(reps) && reps[ri].Span.Start == i:
			r := reps[ri]
			ri++
			toks = append(toks, mergedToken(words, r.Span, r.Text, r.Text))
			i = r.Span.End
		case pi < len(phrases) && phrases[pi].Span.Start == i:
			p := phrases[pi]
			pi++
			toks = appendPhrase(toks, words, s, p, opts.SmartFormat)
			i = p.Span.End
		default:
			toks = append(toks, plainToken(words, i))
			i++
		}
	}

	if opts.SmartFormat {
		smartWords(toks)
	}
	ends := sentenceEnds(toks, s, pause)
	if opts.Punctuate || opts.SmartFormat {
		punctuate(toks, ends)
	}

	res := Result{Words: make([]api.Word, len(toks)), Spans: make([]Span, len(toks)), SentenceEnds: ends}
	for k, t := range toks {
		t.word.PunctuatedWord = ""
		if opts.Punctuate || opts.SmartFormat {
			t.word.PunctuatedWord = t.display
		}
		res.Words[k] = t.word
		res.Spans[k] = t.span
	}
	return res
}

// validReplacements returns the usable replacements sorted by start: inside
// the input, non-empty, not overlapping an earlier one.
func validReplacements(in []Replacement, n int) []Replacement {
	out := make([]Replacement, 0, len(in))
	for _, r := range in {
		if r.Span.Start >= 0 && r.Span.End <= n && r.Span.Start < r.Span.End && r.Text != "" {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Span.Start < out[b].Span.Start })
	kept := out[:0]
	end := 0
	for _, r := range out {
		if r.Span.Start >= end {
			kept = append(kept, r)
			end = r.Span.End
		}
	}
	return kept
}

// plainToken is input word i unchanged.
func plainToken(words []api.Word, i int) token {
	w := words[i]
	return token{word: w, span: Span{i, i + 1}, display: w.Word, plain: true}
}

// mergedToken joins the input words of span into one output word. It takes
// the first word's speaker and language, the span's timing, and the lowest
// confidence of its words: the token is only right if every word was.
func mergedToken(words []api.Word, span Span, word, display string) token {
	w := words[span.Start]
	w.End = words[span.End-1].End
	for _, x := range words[span.Start+1 : span.End] {
		w.Confidence = min(w.Confidence, x.Confidence)
	}
	w.Word = word
	return token{word: w, span: span, display: display}
}

// appendPhrase writes one recognised phrase in smart or numerals style.
func appendPhrase(toks []token, words []api.Word, s *scanner, p phrase, smart bool) []token {
	keep := func() []token {
		for k := p.Span.Start; k < p.Span.End; k++ {
			toks = append(toks, plainToken(words, k))
		}
		return toks
	}
	if smart {
		if p.Small {
			return keep()
		}
		return append(toks, mergedToken(words, p.Span, strings.ToLower(p.Text), p.Text))
	}
	switch {
	case p.digitRun:
		for k := p.Span.Start; k < p.Span.End; k++ {
			d, _ := digitValue(s.tok[k], true)
			toks = append(toks, mergedToken(words, Span{k, k + 1}, string(d), string(d)))
		}
		return toks
	case p.Kind == KindOrdinal && p.Small, p.Span.Len() == 1 && s.tok[p.Span.Start] == "one":
		return keep()
	}
	return append(toks, mergedToken(words, p.Span, p.plain, p.plain))
}

// Map converts a half-open range of input word indexes into the half-open
// range of output words that cover it. An empty range maps to the empty
// range at the output word holding start; indexes are clamped to the input.
func (r Result) Map(start, end int) (int, int) {
	n := len(r.Spans)
	if n == 0 {
		return 0, 0
	}
	start = min(max(start, 0), r.Spans[n-1].End)
	end = min(max(end, start), r.Spans[n-1].End)
	j := sort.Search(n, func(k int) bool { return r.Spans[k].End > start })
	if start == end {
		return j, j
	}
	k := sort.Search(n, func(k int) bool { return r.Spans[k].Start >= end })
	return j, k
}

// RemapEntities returns entities whose StartWord and EndWord (half-open, as
// the service sends them) index the input words, re-indexed to the output
// words.
func (r Result) RemapEntities(ents []api.Entity) []api.Entity {
	out := make([]api.Entity, len(ents))
	for i, e := range ents {
		e.StartWord, e.EndWord = r.Map(e.StartWord, e.EndWord)
		out[i] = e
	}
	return out
}

// Transcript joins the punctuated form of each word (the bare word where
// there is none) with single spaces, which is how the service builds an
// alternative's and an utterance's transcript.
func Transcript(words []api.Word) string {
	var b strings.Builder
	for _, w := range words {
		t := w.Text()
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}
