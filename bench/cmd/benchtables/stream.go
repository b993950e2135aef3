package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
)

const (
	rate    = 16000
	frameMs = 20
)

// span is where speech is in the streamed audio, in seconds.
type span struct{ onset, offset float64 }

// speechSpan finds where speech starts and ends in a clip from its energy,
// independently of the recogniser: the first and last runs of at least
// 50 ms of 10 ms frames clearly above the clip's noise floor.
func speechSpan(pcm []int16) (span, float64) {
	const frame = rate / 100
	n := len(pcm) / frame
	rms := make([]float64, n)
	for i := range n {
		var s float64
		for _, v := range pcm[i*frame : (i+1)*frame] {
			s += float64(v) * float64(v)
		}
		rms[i] = math.Sqrt(s / frame)
	}
	floor := quantile(rms, 0.1)
	thr := max(floor*4, 100)
	first, last := -1, -1
	run := 0
	for i, r := range rms {
		if r > thr {
			run++
			if run == 5 {
				if first < 0 {
					first = i - 4
				}
				last = i
			} else if run > 5 {
				last = i
			}
		} else {
			run = 0
		}
	}
	if first < 0 {
		return span{}, floor
	}
	return span{onset: float64(first) / 100, offset: float64(last+1) / 100}, floor
}

func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return 0
	}
	return s[int(q*float64(len(s)-1))]
}

// conversation joins the clips as they are. They are consecutive lines of
// one reading, each with the room noise that surrounds its speech, so the
// result is a real recording with natural pauses between sentences.
func conversation(clips []clip) ([]int16, []span) {
	var pcm []int16
	var truth []span
	for _, c := range clips {
		sp, _ := speechSpan(c.pcm)
		off := float64(len(pcm)) / rate
		truth = append(truth, span{onset: off + sp.onset, offset: off + sp.offset})
		pcm = append(pcm, c.pcm...)
	}
	return pcm, truth
}

// arrival is a message and when it arrived, counted from the first frame.
type arrival struct {
	at  float64
	msg *api.Results
}

// streamOnce streams pcm at real-time pace and records every Results.
func streamOnce(ctx context.Context, client *api.Client, pcm []int16) ([]arrival, error) {
	st, err := client.Listen(ctx, api.ListenOptions{Model: "nova-3", Encoding: "linear16", SampleRate: rate, InterimResults: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var got []arrival
	err = streamPaced(ctx, pcm, st.Send, st.CloseStream, st.Next, func(at float64, m api.ListenMessage) {
		if r, ok := m.(*api.Results); ok {
			got = append(got, arrival{at: at, msg: r})
		}
	})
	return got, err
}

// streamPaced sends pcm in frameMs frames on the wall clock, then closes
// the stream, while one goroutine reads every message until the stream
// ends and hands it to keep with its arrival time, in seconds from the
// first frame. keep runs on that goroutine only, and is done with when
// streamPaced returns.
func streamPaced[M any](ctx context.Context, pcm []int16,
	send func(context.Context, []byte) error,
	closeStream func(context.Context) error,
	next func(context.Context) (M, error),
	keep func(at float64, m M)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	readErr := make(chan error, 1)
	go func() {
		for {
			m, err := next(ctx)
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				readErr <- err
				return
			}
			keep(time.Since(t0).Seconds(), m)
		}
	}()
	sendErr := func() error {
		const n = rate * frameMs / 1000
		for i := 0; i*n < len(pcm); i++ {
			if d := time.Until(t0.Add(time.Duration(i*frameMs) * time.Millisecond)); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if err := send(ctx, audio.Int16ToBytes(nil, pcm[i*n:min((i+1)*n, len(pcm))])); err != nil {
				return err
			}
		}
		return closeStream(ctx)
	}()
	if sendErr != nil {
		cancel() // the reader stops with the context
	}
	if err := <-readErr; sendErr == nil {
		sendErr = err
	}
	return sendErr
}

// streamTable streams the clips, joined by pauses, at real-time pace and
// measures how soon after speech starts the first interim arrives and how
// soon after it ends the final arrives.
func streamTable(ctx context.Context, local *engine.Local, runs int) error {
	clips, err := loadClips(ctx)
	if err != nil {
		return err
	}
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	pcm, truth := conversation(clips)
	var firstLat, finalLat []float64
	var refAll, hypAll []string
	for run := range runs {
		got, err := streamOnce(ctx, client, pcm)
		if err != nil {
			return err
		}
		var finals []string
		for _, a := range got {
			if a.msg.IsFinal && a.msg.Transcript() != "" {
				finals = append(finals, a.msg.Transcript())
			}
		}
		if run == 0 {
			for _, c := range clips {
				refAll = append(refAll, words(c.ref)...)
			}
			hypAll = words(strings.Join(finals, " "))
		}
		if os.Getenv("BENCH_DEBUG") != "" {
			for _, sp := range truth {
				fmt.Fprintf(os.Stderr, "truth %.2f-%.2f\n", sp.onset, sp.offset)
			}
			for _, a := range got {
				fmt.Fprintf(os.Stderr, "at %.3f final=%v sf=%v win %.2f-%.2f %q\n", a.at, a.msg.IsFinal, a.msg.SpeechFinal, a.msg.Start, a.msg.Start+a.msg.Duration, a.msg.Transcript())
			}
		}
		for _, sp := range truth {
			for _, a := range got {
				end := a.msg.Start + a.msg.Duration
				if a.msg.Transcript() != "" && end > sp.onset && a.at >= sp.onset {
					firstLat = append(firstLat, a.at-sp.onset)
					break
				}
			}
			for _, a := range got {
				end := a.msg.Start + a.msg.Duration
				if a.msg.IsFinal && end >= sp.offset-0.05 {
					finalLat = append(finalLat, a.at-sp.offset)
					break
				}
			}
		}
	}
	fmt.Println("### Streaming latency at real-time pace")
	fmt.Println()
	fmt.Printf("The five LibriVox clips, consecutive lines of one reading, joined as recorded (%.1f s of audio with the pauses between sentences), "+
		"sent as linear16 16 kHz in %d ms frames on the wall clock, %d runs; "+
		"speech onset and end come from each clip's energy, not from the recogniser.\n\n", float64(len(pcm))/rate, frameMs, runs)
	fmt.Println("| measure | samples | median | p90 | max | target |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	fmt.Printf("| speech onset -> first interim | %d | %.0f ms | %.0f ms | %.0f ms | < 500 ms |\n", len(firstLat), 1000*median(firstLat), 1000*quantile(firstLat, 0.9), 1000*quantile(firstLat, 1))
	fmt.Printf("| end of speech -> final | %d | %.0f ms | %.0f ms | %.0f ms | < 800 ms |\n\n", len(finalLat), 1000*median(finalLat), 1000*quantile(finalLat, 0.9), 1000*quantile(finalLat, 1))
	fmt.Printf("Word error rate of the streamed finals against the human transcripts: %.1f%% (%d words).\n\n",
		100*float64(editDistance(refAll, hypAll))/float64(len(refAll)), len(refAll))
	return nil
}
