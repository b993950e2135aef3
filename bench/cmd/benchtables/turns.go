package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
)

// turnGap is the pause put between the clips for the turn measurement: a
// speaker handing over, longer than any pause inside a clip.
const turnGap = 2.0

// turnsEOTThreshold is the threshold the issue sets the target at.
const turnsEOTThreshold = 0.7

// turnConversation joins the clips with turnGap seconds of room noise
// between them, and says where the speech of each clip lies. The noise is
// the stretch before the speech of the first clip that holds no breath or
// murmur (clip 0880, before its reader starts), played forwards then
// backwards as often as needed, so that it joins without clicks.
func turnConversation(clips []clip) ([]int16, []span) {
	quiet := clips[0].pcm[:rate/10]
	for _, c := range clips {
		if c.id == "0880" {
			quiet = c.pcm[:rate/10]
		}
	}
	var pcm []int16
	var truth []span
	for _, c := range clips {
		sp, _ := speechSpan(c.pcm)
		off := float64(len(pcm)) / rate
		truth = append(truth, span{onset: off + sp.onset, offset: off + sp.offset})
		pcm = append(pcm, c.pcm...)
		pcm = append(pcm, roomNoise(quiet, int(turnGap*rate))...)
	}
	return pcm, truth
}

// roomNoise fills n samples with noise, forwards then backwards.
func roomNoise(noise []int16, n int) []int16 {
	bwd := slices.Clone(noise)
	slices.Reverse(bwd)
	out := make([]int16, 0, n)
	for i := 0; len(out) < n; i++ {
		seg := noise
		if i%2 == 1 {
			seg = bwd
		}
		out = append(out, seg[:min(len(seg), n-len(out))]...)
	}
	return out
}

// turnArrival is a TurnInfo and when it arrived, counted from the first
// frame sent.
type turnArrival struct {
	at   float64
	info *api.TurnInfo
}

// turnsOnce streams pcm to /v2/listen at real-time pace and records every
// TurnInfo.
func turnsOnce(ctx context.Context, client *api.Client, pcm []int16) ([]turnArrival, error) {
	st, err := client.Turns(ctx, api.TurnOptions{
		Model:        api.ModelFluxGeneralEN,
		Encoding:     "linear16",
		SampleRate:   rate,
		EOTThreshold: turnsEOTThreshold,
	})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var got []turnArrival
	err = streamPaced(ctx, pcm, st.Send, st.CloseStream, st.Next, func(at float64, m api.TurnMessage) {
		if ti, ok := m.(*api.TurnInfo); ok {
			got = append(got, turnArrival{at: at, info: ti})
		}
	})
	return got, err
}

// turnsTable measures the end-of-turn latency of /v2/listen: the clips,
// one turn each, separated by pauses, streamed at real-time pace; for each
// clip, the time from the end of its speech (from its energy, not from the
// recogniser) to the arrival of the EndOfTurn that closes it.
func turnsTable(ctx context.Context, local *engine.Local, runs int) error {
	clips, err := loadClips(ctx)
	if err != nil {
		return err
	}
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	pcm, truth := turnConversation(clips)
	var lat []float64
	var missed, inside int
	triggers := map[api.TurnTrigger]int{}
	for range runs {
		got, err := turnsOnce(ctx, client, pcm)
		if err != nil {
			return err
		}
		if os.Getenv("BENCH_DEBUG") != "" {
			for _, sp := range truth {
				fmt.Fprintf(os.Stderr, "truth %.2f-%.2f\n", sp.onset, sp.offset)
			}
			for _, a := range got {
				last := 0.0
				if n := len(a.info.Words); n > 0 {
					last = a.info.Words[n-1].End
				}
				fmt.Fprintf(os.Stderr, "at %.3f %s #%d win %.2f-%.2f last word end %.2f conf %.2f %s %q\n", a.at, a.info.Event, a.info.TurnIndex,
					a.info.AudioWindowStart, a.info.AudioWindowEnd, last, a.info.EndOfTurnConfidence, a.info.Trigger, a.info.Transcript)
			}
		}
		var ends []turnArrival
		for _, a := range got {
			if a.info.Event == api.EventEndOfTurn {
				ends = append(ends, a)
				triggers[a.info.Trigger]++
			}
		}
		for i, sp := range truth {
			next := math.Inf(1)
			if i+1 < len(truth) {
				next = truth[i+1].onset
			}
			found := false
			for _, a := range ends {
				// The EndOfTurn of this clip is the first to arrive after
				// its speech ended and before the next clip's began.
				if a.at >= sp.offset && a.at < next {
					lat = append(lat, a.at-sp.offset)
					found = true
					break
				}
			}
			if !found {
				missed++
			}
			for _, a := range ends {
				if a.at > sp.onset+0.3 && a.at < sp.offset {
					inside++
				}
			}
		}
	}
	fmt.Println("### End-of-turn latency at real-time pace (/v2/listen)")
	fmt.Println()
	fmt.Printf("The five LibriVox clips, one turn each, separated by %.1f s of the room's own noise (%.1f s of audio), "+
		"sent as linear16 16 kHz in %d ms frames on the wall clock to /v2/listen with model %s and eot_threshold %.1f, %d runs; "+
		"the end of speech comes from each clip's energy, not from the recogniser.\n\n",
		turnGap, float64(len(pcm))/rate, frameMs, api.ModelFluxGeneralEN, turnsEOTThreshold, runs)
	fmt.Println("| measure | samples | median | p90 | max | target |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	if len(lat) > 0 {
		fmt.Printf("| end of speech -> EndOfTurn | %d | %.0f ms | %.0f ms | %.0f ms | < 700 ms |\n\n", len(lat),
			1000*median(lat), 1000*quantile(lat, 0.9), 1000*quantile(lat, 1))
	}
	fmt.Printf("Turns not ended before the next began: %d of %d; EndOfTurn inside a clip's speech: %d; triggers: %v.\n\n",
		missed, len(truth)*runs, inside, triggers)
	return nil
}
