package engine

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/earshot-app/earshot/api"
)

// roundTripSentences are ordinary English sentences, written for this
// test, in everyday words.
var roundTripSentences = []string{
	"The weather was cold and windy this morning.",
	"She opened the window to let the fresh air in.",
	"We walked along the river after dinner.",
	"My brother bought a new car last week.",
	"Please close the door when you leave the room.",
	"The children played in the garden all afternoon.",
	"He reads the newspaper every day before work.",
	"They moved to a small house near the station.",
	"I would like a cup of tea with milk.",
	"The meeting will start at the same time tomorrow.",
}

// normWords lower-cases text and splits it into words without punctuation.
func normWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// editDistance is the word-level Levenshtein distance.
func editDistance(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			cost := 1
			if ref[i-1] == hyp[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// roundTripVoices are the default English voices: the /v1/speak default,
// flite's slt (which the aura-2 default, aura-2-thalia-en, shares), and a
// masculine voice, flite's rms.
var roundTripVoices = []string{api.DefaultSpeakModel, "aura-orion-en"}

// TestSpeakRoundTrip (must show): sentences synthesised by /v1/speak with
// the default English voices and transcribed by /v1/listen of the same
// engine come back with a word error rate under 15 %. The voices run in
// parallel: recognition takes most of the time.
func TestSpeakRoundTrip(t *testing.T) {
	t.Parallel()
	c := newClient(t, shared)
	text := strings.Join(roundTripSentences, " ")
	ref := normWords(text)
	errs := make([]int, len(roundTripVoices))
	t.Run("voices", func(t *testing.T) {
		for i, voice := range roundTripVoices {
			t.Run(voice, func(t *testing.T) {
				t.Parallel()
				// Made once the subtest has its slot: parallel tests wait
				// for one, and on 2 busy cores that wait took 14 minutes.
				// The bound is for a hang.
				ctx := testContext(t, 10*time.Minute)
				resp, err := c.Speak(ctx, text, api.SpeakOptions{Model: voice, Encoding: "linear16", Container: "wav", SampleRate: 16000})
				if err != nil {
					t.Fatalf("Speak: %v", err)
				}
				wav, err := io.ReadAll(resp.Body)
				resp.Close()
				if err != nil {
					t.Fatalf("read audio: %v", err)
				}
				res, err := c.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{})
				if err != nil {
					t.Fatalf("Transcribe: %v", err)
				}
				hyp := normWords(res.Transcript())
				errs[i] = editDistance(ref, hyp)
				t.Logf("WER %.1f%% (%d errors in %d words): %q", 100*float64(errs[i])/float64(len(ref)), errs[i], len(ref), strings.Join(hyp, " "))
			})
		}
	})
	if t.Failed() {
		return // a voice that failed has no errors counted
	}
	total := 0
	for _, e := range errs {
		total += e
	}
	wer := float64(total) / float64(len(ref)*len(roundTripVoices))
	t.Logf("overall WER %.1f%% over %d words", 100*wer, len(ref)*len(roundTripVoices))
	if wer >= 0.15 {
		t.Errorf("word error rate %.1f%%, want under 15%%", 100*wer)
	}
}
