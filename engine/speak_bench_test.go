package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// firstAudioText is the 30-word text of the time-to-first-audio
// measurement.
const firstAudioText = "Thanks for calling. I can help you with your order today. Please tell me the number on your receipt, and I will look up the details for you right away."

func TestFirstAudioTextLength(t *testing.T) {
	if n := len(strings.Fields(firstAudioText)); n != 30 {
		t.Errorf("%d words, want 30", n)
	}
}

// BenchmarkSpeakFirstAudio measures the time from sending Speak and Flush
// on a WebSocket to the first binary frame of audio at the client, engine
// on loopback, for /v1/speak and /v2/speak. It reports the median and the
// 90th percentile (ms).
func BenchmarkSpeakFirstAudio(b *testing.B) {
	ctx := context.Background()
	c, err := api.NewClient(api.Config{Endpoint: shared.Endpoint(), APIKey: shared.Key})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("v1", func(b *testing.B) {
		// A stream takes 20 flushes a minute: each measurement opens its own.
		var lat []time.Duration
		for b.Loop() {
			b.StopTimer()
			st, err := c.SpeakStream(ctx, api.SpeakOptions{Model: "aura-2-thalia-en"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.Next(ctx); err != nil { // Metadata
				b.Fatal(err)
			}
			b.StartTimer()
			lat = append(lat, timeFirstAudio(ctx, b, st, api.TypeFlushed))
			st.Close()
		}
		reportLatency(b, lat)
	})
	b.Run("v2", func(b *testing.B) {
		st, err := c.SpeechStream(ctx, api.SpeakV2Options{Model: "flux-kit-en"})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Next(ctx); err != nil { // Connected
			b.Fatal(err)
		}
		var lat []time.Duration
		for b.Loop() {
			lat = append(lat, timeFirstAudio(ctx, b, st, api.TypeSpeechMetadata))
		}
		reportLatency(b, lat)
	})
}

// speakClient is what the measurement needs of a client of either speak
// WebSocket.
type speakClient[M interface{ MessageType() string }] interface {
	Speak(ctx context.Context, text string) error
	Flush(ctx context.Context) error
	Next(ctx context.Context) (M, error)
}

// timeFirstAudio sends firstAudioText and a Flush, reads the answers up to
// the message of type last, and returns the time to the first audio. A
// warning fails the benchmark: the audio would not be what is measured.
func timeFirstAudio[M interface{ MessageType() string }](ctx context.Context, b *testing.B, st speakClient[M], last string) time.Duration {
	b.Helper()
	start := time.Now()
	if err := st.Speak(ctx, firstAudioText); err != nil {
		b.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	var first time.Duration
	for {
		m, err := st.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		switch m.MessageType() {
		case api.TypeAudio:
			if first == 0 {
				first = time.Since(start)
			}
		case api.TypeWarning:
			b.Fatalf("warning %+v", m)
		case last:
			if first == 0 {
				b.Fatalf("%s before any audio", last)
			}
			return first
		}
	}
}

// reportLatency reports the median and 90th percentile of lat in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "ms-median")
	b.ReportMetric(ms(lat[(len(lat)*9)/10]), "ms-p90")
	b.ReportMetric(0, "ns/op")
}
