package tts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// thirtyWords is a 30-word English text of two sentences.
const thirtyWords = "Thank you for calling the city library, where our opening hours are nine to six on weekdays. " +
	"If you would like to renew a book, please stay on the line."

var errFirst = errors.New("first chunk")

// BenchmarkTimeToFirstAudio measures the time from Synthesize to the first
// emitted chunk for a 30-word English text (metric "ms-first"), per
// library. Synthesis is stopped at the first chunk.
func BenchmarkTimeToFirstAudio(b *testing.B) {
	if n := len(strings.Fields(thirtyWords)); n != 30 {
		b.Fatalf("text has %d words", n)
	}
	for _, name := range []string{DefaultVoice, "aura-orion-en", "aura-arcas-en", "aura-2-celeste-es"} {
		b.Run(name, func(b *testing.B) {
			v := mustVoice(b, name)
			text := thirtyWords
			if v.Language == "es" {
				text = "Gracias por llamar a la biblioteca de la ciudad, donde abrimos de nueve a seis entre semana. Si quiere renovar un libro, por favor no cuelgue todavía."
			}
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				err := synth(b).Synthesize(context.Background(), v, text, Params{}, func(Chunk) error {
					total += time.Since(start)
					return errFirst
				})
				if !errors.Is(err, errFirst) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-first")
		})
	}
}

// BenchmarkRealTimeFactor measures synthesis time over audio duration for
// a paragraph (metric "RTF"; 0.02 means fifty times faster than real time).
func BenchmarkRealTimeFactor(b *testing.B) {
	text := strings.Repeat(thirtyWords+" ", 4)
	for _, name := range []string{DefaultVoice, "aura-orion-en", "aura-arcas-en", "aura-2-odysseus-en", "aura-2-celeste-es"} {
		b.Run(name, func(b *testing.B) {
			v := mustVoice(b, name)
			var audio, spent float64
			for b.Loop() {
				start := time.Now()
				n := 0
				err := synth(b).Synthesize(context.Background(), v, text, Params{}, func(c Chunk) error {
					n += len(c.PCM)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start).Seconds()
				audio += float64(n) / float64(v.NativeRate)
			}
			b.ReportMetric(spent/audio, "RTF")
		})
	}
}
