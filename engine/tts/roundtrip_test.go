package tts

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/internal/testkit"
)

// roundTripText is a reading of ordinary, varied sentences, spoken as
// one text so that the splitting and joining are exercised too.
var roundTripText = []string{
	"The weather was cold and windy this morning.",
	"She bought three apples and a loaf of bread at the market.",
	"Please call me back when you get home tonight.",
	"The train to the city leaves every hour.",
	"We need to finish the report before the meeting on Friday.",
	"My brother plays the piano in a small band.",
	"The children were playing in the park after school.",
	"Can you tell me where the nearest bank is?",
	"He forgot his keys on the kitchen table again.",
	"The company will open a new office next year.",
	"I would like a cup of coffee with milk, please.",
	"They walked along the river until the sun went down.",
}

var decoder struct {
	once sync.Once
	d    *sphinx.Decoder
	err  error
}

// recognise transcribes 16-bit audio at rate with pocketsphinx.
func recognise(t testing.TB, pcm []int16, rate int) string {
	t.Helper()
	decoder.once.Do(func() {
		decoder.d, decoder.err = sphinx.NewDecoder(context.Background(), sphinx.Config{})
	})
	if decoder.err != nil {
		t.Skipf("pocketsphinx model not available: %v", decoder.err)
	}
	f := make([]float32, len(pcm))
	for i, s := range pcm {
		f[i] = float32(s) / 32768
	}
	if rate != sphinx.SampleRate {
		var err error
		if f, err = audio.Resample(f, rate, sphinx.SampleRate, 1); err != nil {
			t.Fatal(err)
		}
	}
	s16 := make([]int16, len(f))
	for i, x := range f {
		s16[i] = int16(max(-32768, min(32767, math.Round(float64(x)*32768))))
	}
	rs, err := decoder.d.Transcribe(context.Background(), s16)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range rs {
		texts = append(texts, r.Text)
	}
	return strings.Join(texts, " ")
}

// wordErrorRate is testkit's.
func wordErrorRate(ref, hyp string) float64 { return testkit.WordErrorRate(ref, hyp) }

func TestWordErrorRate(t *testing.T) {
	for _, tt := range []struct {
		ref, hyp string
		want     float64
	}{
		{"a b c d", "a b c d", 0},
		{"a b c d", "a x c d", 0.25},
		{"a b c d", "a c d", 0.25},
		{"a b c d", "a b y c d", 0.25},
		{"Hello, world.", "hello world", 0},
	} {
		if got := wordErrorRate(tt.ref, tt.hyp); got != tt.want {
			t.Errorf("wordErrorRate(%q, %q) = %v, want %v", tt.ref, tt.hyp, got, tt.want)
		}
	}
}

// TestRoundTrip is the must-show: English sentences spoken by the
// default English voice and recognised by the engine's own pocketsphinx
// give the text back with a word error rate under 15 %. The defaults of
// /v1/speak (aura-asteria-en), of aura-2 (aura-2-thalia-en) and of the
// agent (flux-kit-en) are the same flite voice at the same pitch, and
// flite's output is deterministic, so one measurement covers all three;
// the test checks that too. BenchmarkRoundTrip measures every English
// voice.
func TestRoundTrip(t *testing.T) {
	text := strings.Join(roundTripText, " ")
	v := mustVoice(t, DefaultVoice)
	for _, name := range []string{"aura-2-thalia-en", DefaultFluxVoice} {
		if w := mustVoice(t, name); w.backend != v.backend || w.id != v.id || w.pitch != v.pitch {
			t.Fatalf("%s is not the same voice as %s: measure it separately", name, DefaultVoice)
		}
	}
	r := speak(t, v, text, Params{})
	if again := speak(t, mustVoice(t, DefaultFluxVoice), text, Params{}); !equalPCM(again.pcm, r.pcm) {
		t.Fatalf("%s and %s speak differently", DefaultVoice, DefaultFluxVoice)
	}
	hyp := recognise(t, r.pcm, v.NativeRate)
	wer := wordErrorRate(text, hyp)
	t.Logf("%s (%s): WER %.1f %%", v.Name, v.Engine, 100*wer)
	if wer >= 0.15 {
		t.Errorf("WER %.1f %% >= 15 %%\nref: %s\nhyp: %s", 100*wer, text, hyp)
	}
}

// BenchmarkRoundTrip reports the round-trip word error rate of every
// English voice (metric "WER%"); run with -benchtime=1x.
func BenchmarkRoundTrip(b *testing.B) {
	text := strings.Join(roundTripText, " ")
	for _, v := range Voices() {
		if v.Language != "en" {
			continue
		}
		b.Run(v.Name, func(b *testing.B) {
			var wer float64
			for b.Loop() {
				var pcm []int16
				err := synth(b).Synthesize(context.Background(), v, text, Params{}, func(c Chunk) error {
					pcm = append(pcm, c.PCM...)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				wer = wordErrorRate(text, recognise(b, pcm, v.NativeRate))
			}
			b.ReportMetric(100*wer, "WER%")
		})
	}
}
