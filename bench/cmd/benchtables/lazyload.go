package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	iclock "github.com/earshot-app/earshot/internal/clock"
)

// The recogniser's lazy load, measured in fresh processes (this program
// run again with -probe-recognizer), so that "cold" means what it means
// for the app: a process that has not loaded the model yet (the model's
// files are in the page cache, as they are once the machine has run the
// app before).
const probeClip = librivox + "/sense_and_sensibility_01_austen_64kb-0880.wav"

// Probe kinds.
const (
	probeWarm    = "warm"    // WarmRecognizer cold, a request, the idle release, WarmRecognizer again
	probeRequest = "request" // a transcription on a cold engine, then the same again
)

// probeResult is what a probe process reports, on one line of JSON.
type probeResult struct {
	ColdLoadMS     float64 `json:"cold_load_ms,omitempty"`
	ReloadMS       float64 `json:"reload_ms,omitempty"`
	FirstRequestMS float64 `json:"first_request_ms,omitempty"`
	LoadedMS       float64 `json:"loaded_request_ms,omitempty"`
	StartedRSSMB   float64 `json:"started_rss_mb,omitempty"`
	LoadedRSSMB    float64 `json:"loaded_rss_mb,omitempty"`
	ReleasedRSSMB  float64 `json:"released_rss_mb,omitempty"`
}

// runProbe is the body of a probe process.
func runProbe(ctx context.Context, kind string) error {
	// The idle release's timer, fired by the probe instead of waiting
	// three minutes.
	clk := &probeClock{}
	local, err := engine.StartLocal(engine.Config{Clock: clk})
	if err != nil {
		return err
	}
	defer local.Close()
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	wav, err := os.ReadFile(probeClip)
	if err != nil {
		return err
	}
	transcribe := func() (time.Duration, error) {
		t0 := time.Now()
		resp, err := client.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{})
		if err != nil {
			return 0, err
		}
		if resp.Results.Channels[0].Alternatives[0].Transcript == "" {
			return 0, errors.New("no words")
		}
		return time.Since(t0), nil
	}
	rss := func() float64 {
		kb, _ := procRSS(os.Getpid())
		return float64(kb) / appRSSUnit
	}
	var r probeResult
	r.StartedRSSMB = rss()
	switch kind {
	case probeWarm:
		t0 := time.Now()
		if err := local.WarmRecognizer(ctx); err != nil {
			return err
		}
		r.ColdLoadMS = ms(time.Since(t0))
		d, err := transcribe()
		if err != nil {
			return err
		}
		r.LoadedMS = ms(d)
		r.LoadedRSSMB = rss()
		clk.mu.Lock()
		f := clk.release
		clk.mu.Unlock()
		if f == nil {
			return errors.New("the engine armed no idle release")
		}
		f()
		if local.RecognizerReady() {
			return errors.New("the recogniser was not released")
		}
		r.ReleasedRSSMB = rss()
		t0 = time.Now()
		if err := local.WarmRecognizer(ctx); err != nil {
			return err
		}
		r.ReloadMS = ms(time.Since(t0))
	case probeRequest:
		d, err := transcribe()
		if err != nil {
			return err
		}
		r.FirstRequestMS = ms(d)
		if d, err = transcribe(); err != nil {
			return err
		}
		r.LoadedMS = ms(d)
	default:
		return fmt.Errorf("unknown probe %q", kind)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// probe runs a probe process of kind and returns its report.
func probe(ctx context.Context, kind string) (probeResult, error) {
	self, err := os.Executable()
	if err != nil {
		return probeResult{}, err
	}
	cmd := exec.CommandContext(ctx, self, "-probe-recognizer", kind)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return probeResult{}, fmt.Errorf("probe %s: %w", kind, err)
	}
	var r probeResult
	if err := json.Unmarshal(out, &r); err != nil {
		return probeResult{}, fmt.Errorf("probe %s said %q: %w", kind, out, err)
	}
	return r, nil
}

// lazyLoadTable measures the recogniser's lazy load reps times and
// prints it as a table.
func lazyLoadTable(ctx context.Context, reps int) error {
	var warm, req []probeResult
	for rep := range reps {
		w, err := probe(ctx, probeWarm)
		if err != nil {
			return err
		}
		q, err := probe(ctx, probeRequest)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "lazy load run %d/%d: cold load %.0f ms, reload %.0f ms, first request %.0f ms, loaded request %.0f ms\n",
			rep+1, reps, w.ColdLoadMS, w.ReloadMS, q.FirstRequestMS, q.LoadedMS)
		warm, req = append(warm, w), append(req, q)
	}
	fmt.Println("#### The recogniser's lazy load")
	fmt.Println()
	fmt.Printf("%d runs, each in a fresh process with an engine of its own (the default configuration: one decoder for batch and one for streaming, "+
		"loaded in parallel). *Cold load*: `WarmRecognizer` on an engine that has loaded nothing, what the app waits for before the first caption. "+
		"*Reload*: the same after the idle release, in the same process. The requests are batch transcriptions of a 3 s LibriVox clip (0880): "+
		"the first on a cold engine (load included), then the same on the loaded recogniser. Resident memory of the probe process: "+
		"the engine started, the recogniser loaded, then released.\n\n", reps)
	fmt.Println("| measure | median | min | max |")
	fmt.Println("|---|---:|---:|---:|")
	rows := []struct {
		name   string
		from   []probeResult
		of     func(probeResult) float64
		format string
	}{
		{"cold load (WarmRecognizer)", warm, func(r probeResult) float64 { return r.ColdLoadMS }, "%.0f ms"},
		{"reload after the idle release", warm, func(r probeResult) float64 { return r.ReloadMS }, "%.0f ms"},
		{"first transcription after a cold start", req, func(r probeResult) float64 { return r.FirstRequestMS }, "%.0f ms"},
		{"the same on a loaded recogniser", req, func(r probeResult) float64 { return r.LoadedMS }, "%.0f ms"},
		{"RSS, engine started", warm, func(r probeResult) float64 { return r.StartedRSSMB }, "%.0f MB"},
		{"RSS, recogniser loaded", warm, func(r probeResult) float64 { return r.LoadedRSSMB }, "%.0f MB"},
		{"RSS, after the idle release", warm, func(r probeResult) float64 { return r.ReleasedRSSMB }, "%.0f MB"},
	}
	for _, row := range rows {
		xs := make([]float64, len(row.from))
		for i, r := range row.from {
			xs[i] = row.of(r)
		}
		fmt.Printf("| %s | "+row.format+" | "+row.format+" | "+row.format+" |\n", row.name, median(xs), slices.Min(xs), slices.Max(xs))
	}
	fmt.Println()
	return nil
}

// probeClock is the system's clock, except that a function the engine
// asks to be called later (the recogniser's idle release, in a probe
// that only transcribes) is kept for the probe to call at once.
type probeClock struct {
	iclock.Real
	mu      sync.Mutex
	release func()
}

func (c *probeClock) AfterFunc(_ time.Duration, f func()) iclock.Timer {
	c.mu.Lock()
	c.release = f
	c.mu.Unlock()
	return heldTimer{}
}

// heldTimer is the timer of a function the probe calls itself.
type heldTimer struct{}

func (heldTimer) C() <-chan time.Time      { return nil }
func (heldTimer) Stop() bool               { return true }
func (heldTimer) Reset(time.Duration) bool { return true }
