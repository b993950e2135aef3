package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
)

// clip is one LibriVox recording with its human transcript.
type clip struct {
	id       string
	path     string
	ref      string
	duration float64
	pcm      []int16
}

var refLine = regexp.MustCompile(`^<s>\s*(.*?)\s*</s>\s*\((\S+)\)\s*$`)

// loadClips reads the LibriVox clips and their transcripts.
func loadClips(ctx context.Context) ([]clip, error) {
	f, err := os.Open(filepath.Join(librivox, "transcription"))
	if err != nil {
		return nil, fmt.Errorf("pocketsphinx-testdata is needed (scripts/setup installs it): %w", err)
	}
	defer f.Close()
	var clips []clip
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := refLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		c := clip{id: m[2], path: filepath.Join(librivox, m[2]+".wav"), ref: m[1]}
		b, err := os.ReadFile(c.path)
		if err != nil {
			return nil, err
		}
		buf, err := audio.Decode(ctx, bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.id, err)
		}
		c.duration = buf.Duration().Seconds()
		if c.pcm, err = audio.To16kMono(buf); err != nil {
			return nil, err
		}
		clips = append(clips, c)
	}
	return clips, sc.Err()
}

// words normalises a transcript for scoring: lower case, letters and
// apostrophes only.
func words(s string) []string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r == '\'' {
			b.WriteRune(r)
		} else {
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

// editDistance counts word substitutions, insertions and deletions.
func editDistance(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runContinuous runs pocketsphinx_continuous on a file and returns its
// transcript and wall time.
func runContinuous(ctx context.Context, path string) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "pocketsphinx_continuous", "-infile", path)
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("pocketsphinx_continuous: %w", err)
	}
	return strings.Join(strings.Fields(out.String()), " "), time.Since(start), nil
}

// werTable compares the engine's batch transcription with
// pocketsphinx_continuous on the same clips: word error rate against the
// human transcripts and decoding time, interleaved run by run.
func werTable(ctx context.Context, local *engine.Local, reps int) error {
	clips, err := loadClips(ctx)
	if err != nil {
		return err
	}
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	// The tool loads its model on every run; measure that on a short
	// silent file and subtract it, so both sides count decoding only.
	silence := filepath.Join(os.TempDir(), "earshot-bench-silence.wav")
	var sb bytes.Buffer
	if err := audio.EncodeWAV(&sb, make([]int16, 1600), 16000, 1); err != nil {
		return err
	}
	if err := os.WriteFile(silence, sb.Bytes(), 0o644); err != nil {
		return err
	}
	defer os.Remove(silence)
	var loads []float64
	for range reps {
		_, d, err := runContinuous(ctx, silence)
		if err != nil {
			return err
		}
		loads = append(loads, d.Seconds())
	}
	load := median(loads)

	type row struct {
		id                   string
		dur                  float64
		refN                 int
		errTool, errEngine   int
		tTool, tEngine       float64
		sameText             bool
		hypTool, hypEngine   string
		toolRuns, engineRuns []float64
	}
	var rows []row
	for _, c := range clips {
		wav, err := os.ReadFile(c.path)
		if err != nil {
			return err
		}
		r := row{id: c.id, dur: c.duration, refN: len(words(c.ref))}
		for i := range reps {
			hypTool, d, err := runContinuous(ctx, c.path)
			if err != nil {
				return err
			}
			r.toolRuns = append(r.toolRuns, max(d.Seconds()-load, 0))
			start := time.Now()
			resp, err := client.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{Model: "nova-3"})
			if err != nil {
				return fmt.Errorf("%s: %w", c.id, err)
			}
			r.engineRuns = append(r.engineRuns, time.Since(start).Seconds())
			if i == 0 {
				r.hypTool, r.hypEngine = hypTool, resp.Transcript()
			}
		}
		r.errTool = editDistance(words(c.ref), words(r.hypTool))
		r.errEngine = editDistance(words(c.ref), words(r.hypEngine))
		r.sameText = strings.Join(words(r.hypTool), " ") == strings.Join(words(r.hypEngine), " ")
		r.tTool, r.tEngine = median(r.toolRuns), median(r.engineRuns)
		rows = append(rows, r)
	}

	fmt.Println("### Batch word error rate and speed: engine vs pocketsphinx_continuous")
	fmt.Println()
	fmt.Printf("LibriVox clips of pocketsphinx-testdata, default en-us model on both sides; medians of %d interleaved runs. ", reps)
	fmt.Printf("Tool time is its wall time minus its model load (%.3f s, measured on 0.1 s of silence); ", load)
	fmt.Println("engine time is the whole POST /v1/listen over loopback to a warm engine (upload, decoding, recognition, JSON).")
	fmt.Println()
	fmt.Println("| clip | audio s | ref words | WER tool | WER engine | same text | tool s | engine s | RTF tool | RTF engine | engine/tool |")
	fmt.Println("|---|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|")
	var dur, refN, eT, eE, tT, tE float64
	for _, r := range rows {
		fmt.Printf("| %s | %.2f | %d | %.1f%% | %.1f%% | %s | %.3f | %.3f | %.3f | %.3f | %.2f |\n",
			strings.TrimPrefix(r.id, "sense_and_sensibility_01_austen_64kb-"), r.dur, r.refN,
			100*float64(r.errTool)/float64(r.refN), 100*float64(r.errEngine)/float64(r.refN), yes(r.sameText),
			r.tTool, r.tEngine, r.tTool/r.dur, r.tEngine/r.dur, r.tEngine/r.tTool)
		dur += r.dur
		refN += float64(r.refN)
		eT += float64(r.errTool)
		eE += float64(r.errEngine)
		tT += r.tTool
		tE += r.tEngine
	}
	fmt.Printf("| **all** | %.2f | %.0f | **%.1f%%** | **%.1f%%** | | %.3f | %.3f | **%.3f** | **%.3f** | **%.2f** |\n\n",
		dur, refN, 100*eT/refN, 100*eE/refN, tT, tE, tT/dur, tE/dur, tE/tT)
	return nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
