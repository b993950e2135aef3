package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/engine"
	"github.com/gen2brain/malgo"
)

// speakText is the 30-word text of the time-to-first-audio measurement.
const speakText = "Thanks for calling. I can help you with your order today. Please tell me the number on your receipt, and I will look up the details for you right away."

// speakRuns is how many syntheses each WebSocket is measured over.
const speakRuns = 30

// speakRate is the sample rate of the streamed audio (linear16).
const speakRate = 24000

// speakRun is one synthesis: time from Speak+Flush sent to the first
// binary frame, and from that frame to the playback device taking it.
type speakRun struct {
	firstAudio time.Duration
	playStart  time.Duration
}

// speakTable measures the time to first audio on both speak WebSockets,
// and how soon playback starts once the first frame is in, playing into
// miniaudio's null device (real time, no sound card).
func speakTable(ctx context.Context, local *engine.Local) error {
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	pb, err := device.OpenPlayback(ctx, device.PlaybackConfig{Backends: []malgo.Backend{device.NullBackend}, SampleRate: speakRate})
	if err != nil {
		return fmt.Errorf("open the null playback device: %w", err)
	}
	defer pb.Close()
	endpoints := []struct {
		name string
		once func(context.Context) (speakRun, error)
	}{
		{"/v1/speak", func(ctx context.Context) (speakRun, error) { return speakV1Once(ctx, client, pb) }},
		{"/v2/speak", func(ctx context.Context) (speakRun, error) { return speakV2Once(ctx, client, pb) }},
	}
	fmt.Println("### Time to first audio (speak WebSockets)")
	fmt.Println()
	fmt.Printf("A 30-word text sent as one Speak and a Flush on a fresh connection, engine on loopback, linear16 at %d Hz; "+
		"%d runs per endpoint. First audio: from sending Speak+Flush to the first binary frame at the client. Playback: "+
		"the frames written, as they arrive, to `audio/device` Playback on miniaudio's null device (real time, %v jitter buffer, %v period); "+
		"from the first frame at the client to the device taking the stream's first samples.\n\n",
		speakRate, speakRuns, device.DefaultJitterBuffer, device.DefaultPeriod)
	fmt.Println("| endpoint | measure | runs | median | p90 | max | target |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for _, ep := range endpoints {
		var first, play []float64
		for range speakRuns {
			r, err := ep.once(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", ep.name, err)
			}
			first = append(first, ms(r.firstAudio))
			play = append(play, ms(r.playStart))
		}
		fmt.Printf("| %s | Speak+Flush -> first frame | %d | %.1f ms | %.1f ms | %.1f ms | median < 60 ms |\n",
			ep.name, len(first), median(first), speakQuantile(first, 0.9), slices.Max(first))
		fmt.Printf("| %s | first frame -> playback starts | %d | %.1f ms | %.1f ms | %.1f ms | < 30 ms |\n",
			ep.name, len(play), median(play), speakQuantile(play, 0.9), slices.Max(play))
	}
	fmt.Println()
	return nil
}

// speakQuantile returns the p-th quantile (nearest rank) of xs.
func speakQuantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// player feeds the frames of one synthesis to the playback device and
// reports when playback started, counted from the first frame.
type player struct {
	pb    *device.Playback
	first time.Time
	pcm   []int16
}

func (p *player) frame(ctx context.Context, data []byte) error {
	if p.first.IsZero() {
		p.first = time.Now()
	}
	p.pcm = audio.BytesToInt16(p.pcm[:0], data)
	return p.pb.Write(ctx, p.pcm)
}

// finish ends the stream, waits for the device to start it and stops it.
func (p *player) finish(ctx context.Context) (time.Duration, error) {
	p.pb.End()
	defer p.pb.Stop()
	for {
		if s := p.pb.Started(); !s.IsZero() {
			return s.Sub(p.first), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

var errNoAudio = errors.New("no audio")

func speakV1Once(ctx context.Context, client *api.Client, pb *device.Playback) (speakRun, error) {
	st, err := client.SpeakStream(ctx, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16", SampleRate: speakRate})
	if err != nil {
		return speakRun{}, err
	}
	defer st.Close()
	return speakOnce(ctx, st, pb, func(m api.SpeakMessage) (bool, error) {
		switch m := m.(type) {
		case *api.Flushed:
			return true, nil
		case *api.SpeakWarning:
			return false, fmt.Errorf("warning %s: %s", m.Code, m.Description)
		}
		return false, nil
	})
}

func speakV2Once(ctx context.Context, client *api.Client, pb *device.Playback) (speakRun, error) {
	st, err := client.SpeechStream(ctx, api.SpeakV2Options{Model: "flux-kit-en", Encoding: "linear16", SampleRate: speakRate})
	if err != nil {
		return speakRun{}, err
	}
	defer st.Close()
	return speakOnce(ctx, st, pb, func(m api.SpeechMessage) (bool, error) {
		switch m := m.(type) {
		case *api.SpeechMetadata:
			return true, nil
		case *api.SpeechError:
			return false, m.Err()
		}
		return false, nil
	})
}

// speakStream is what a measurement uses of either speak WebSocket.
type speakStream[M any] interface {
	Next(ctx context.Context) (M, error)
	Speak(ctx context.Context, text string) error
	Flush(ctx context.Context) error
}

// speakOnce measures one utterance on st, whose first message (Metadata
// or Connected) it skips: it speaks speakText, flushes and plays the
// audio on pb until ended reports the utterance's end or an error.
func speakOnce[M any](ctx context.Context, st speakStream[M], pb *device.Playback, ended func(M) (bool, error)) (speakRun, error) {
	if _, err := st.Next(ctx); err != nil {
		return speakRun{}, err
	}
	pl := &player{pb: pb}
	start := time.Now()
	if err := st.Speak(ctx, speakText); err != nil {
		return speakRun{}, err
	}
	if err := st.Flush(ctx); err != nil {
		return speakRun{}, err
	}
	var r speakRun
	for {
		m, err := st.Next(ctx)
		if err != nil {
			return r, err
		}
		if a, ok := any(m).(*api.SpeakAudio); ok {
			if r.firstAudio == 0 {
				r.firstAudio = time.Since(start)
			}
			if err := pl.frame(ctx, a.Data); err != nil {
				return r, err
			}
			continue
		}
		end, err := ended(m)
		if err != nil {
			return r, err
		}
		if !end {
			continue
		}
		if r.firstAudio == 0 {
			return r, errNoAudio
		}
		r.playStart, err = pl.finish(ctx)
		return r, err
	}
}
