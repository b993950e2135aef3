package sessions_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
)

// longVoice is the voice of the report.
const longVoice = "aura-asteria-en"

// TestLongSynthesisEngine (must show): 3,000 words of real prose through
// the local engine in the app's session: every part is acknowledged, and
// the audio passes testkit.CheckLongSpeech against the voice's rate
// measured on passages of the same prose. With EARSHOT_LONG_SPEECH set,
// 20,000 characters too, each transcribed back whole.
func TestLongSynthesisEngine(t *testing.T) {
	t.Parallel()
	type long struct {
		name            string
		words, maxChars int
	}
	texts := []long{{"3000 words", 3000, 0}}
	if os.Getenv(testkit.EnvLongSpeech) != "" {
		texts = append(texts, long{"20000 characters", 0, sessions.MaxSynthesisChars})
	}
	rate, err := testkit.RatePassages()
	if err != nil {
		t.Skipf("no prose to speak: %v", err)
	}
	v := engineVoices(t, false)
	l := localEngine(t)
	c := newClient(t, l.Endpoint(), l.Key)
	// A bound for a hang: minutes of synthesis on 2 busy cores, and with
	// EARSHOT_LONG_SPEECH tens of minutes of recognition.
	bound := 20 * time.Minute
	if os.Getenv(testkit.EnvLongSpeech) != "" {
		bound = 2 * time.Hour
	}
	ctx := testContext(t, bound)
	_, sample := synthesize(ctx, t, v, sessions.SynthesisRequest{Text: rate, Voice: longVoice, Silent: true})
	wps := float64(len(strings.Fields(rate))) / sample.Duration().Seconds()
	ceiling := sync.OnceValue(func() float64 { return testkit.Covered(rate, transcribePCM(ctx, t, c, sample.PCM)) })
	for _, tt := range texts {
		t.Run(tt.name, func(t *testing.T) {
			text, err := testkit.Prose(0, tt.words, tt.maxChars)
			if err != nil {
				t.Fatal(err)
			}
			_, res := synthesize(ctx, t, v, sessions.SynthesisRequest{Text: text, Voice: longVoice, Silent: true})
			for i, p := range res.Parts {
				if !p.Spoken || p.End <= p.Start {
					t.Errorf("part %d of %d was not spoken: %+v", i+1, len(res.Parts), p)
				}
			}
			if res.Partial != nil || res.Parts[len(res.Parts)-1].End != len(res.PCM) {
				t.Errorf("partial %v; the last part ends at %d of %d samples", res.Partial, res.Parts[len(res.Parts)-1].End, len(res.PCM))
			}
			testkit.CheckLongSpeech(t, text, wps, res.PCM, sessions.SynthesisRate, func(pcm []int16) string {
				return transcribePCM(ctx, t, c, pcm)
			}, ceiling)
		})
	}
}

// transcribePCM transcribes synthesised audio with the engine.
func transcribePCM(ctx context.Context, t *testing.T, c *api.Client, pcm []int16) string {
	t.Helper()
	text, err := testkit.Transcribe(ctx, c, pcm, sessions.SynthesisRate)
	if err != nil {
		t.Error(err)
	}
	return text
}
