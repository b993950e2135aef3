package format

import "github.com/earshot-app/earshot/api"

// DefaultUttSplit is the pause, in seconds, that ends an utterance when
// UtteranceOptions.Split is zero (the service's utt_split default).
const DefaultUttSplit = 0.8

// Utterance is one entry of results.utterances.
type Utterance = api.Utterance

// UtteranceOptions tunes Utterances.
type UtteranceOptions struct {
	// Split is the pause between words, in seconds, at or above which an
	// utterance ends (utt_split); zero or less means DefaultUttSplit.
	Split float64
	// Channel is the audio channel the words came from.
	Channel int
}

// Utterances splits the words of one channel into utterances
// (utterances=true): a new utterance starts after a pause of at least
// opts.Split seconds and when the diarised speaker changes. Each carries the
// mean confidence of its words, its transcript built from punctuated words,
// copies of its words, the speaker of its first word, and an id from newID
// (the server passes a UUID generator; tests pass a deterministic one; nil
// leaves ids empty).
func Utterances(words []api.Word, opts UtteranceOptions, newID func() string) []Utterance {
	split := opts.Split
	if !(split > 0) {
		split = DefaultUttSplit
	}
	out := []Utterance{}
	start := 0
	for i := range words {
		last := i == len(words)-1
		if !last && words[i+1].Start-words[i].End < split && !speakerChange(words[i], words[i+1]) {
			continue
		}
		ws := append([]api.Word(nil), words[start:i+1]...)
		var sum float64
		for _, w := range ws {
			sum += w.Confidence
		}
		u := Utterance{
			Start:      ws[0].Start,
			End:        ws[len(ws)-1].End,
			Confidence: sum / float64(len(ws)),
			Channel:    opts.Channel,
			Transcript: Transcript(ws),
			Words:      ws,
			Speaker:    copyInt(ws[0].Speaker),
		}
		if newID != nil {
			u.ID = newID()
		}
		out = append(out, u)
		start = i + 1
	}
	return out
}
