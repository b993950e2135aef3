package sphinx

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmarks measure the wrapper against pocketsphinx_continuous on the
// LibriVox clips. Timings are reported both as wall time and as CPU time
// (user+system), because CPU time is what stays comparable on a busy
// machine. Run them with
//
//	go test -run '^$' -bench . -benchtime 3x ./engine/sphinx

// cpuTime returns the CPU time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadClips reads the five recordings and their total duration in seconds.
func loadClips(b *testing.B) ([][]int16, float64) {
	var clips [][]int16
	total := 0.0
	for _, id := range clipIDs {
		c := readClip(b, clipPath(id))
		clips = append(clips, c)
		total += float64(len(c)) / SampleRate
	}
	return clips, total
}

// references reads the reference transcripts shipped with the clips.
func references(b testing.TB) map[string][]string {
	f, err := os.Open(filepath.Join(librivoxDir, "transcription"))
	if err != nil {
		b.Skipf("transcription: %v", err)
	}
	defer f.Close()
	refs := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		id := strings.Trim(fields[len(fields)-1], "()")
		var words []string
		for _, w := range fields[:len(fields)-1] {
			if w != "<s>" && w != "</s>" {
				words = append(words, w)
			}
		}
		refs[id[len(id)-4:]] = words
	}
	return refs
}

// wordErrors returns the word-level edit distance between ref and hyp.
func wordErrors(ref, hyp []string) int {
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

// wer returns the word error rate, in percent, of hyps (one string per
// clip, in clipIDs order) against the reference transcripts.
func wer(b *testing.B, hyps []string) float64 {
	refs := references(b)
	errs, n := 0, 0
	for i, id := range clipIDs {
		ref := refs[id]
		errs += wordErrors(ref, strings.Fields(hyps[i]))
		n += len(ref)
	}
	return 100 * float64(errs) / float64(n)
}

// BenchmarkTranscribe decodes the five clips in batch with the wrapper.
// Metrics: xRT (wall time / audio time), cpu-xRT (CPU time / audio time)
// and WER% against the reference transcripts.
func BenchmarkTranscribe(b *testing.B) {
	clips, audio := loadClips(b)
	d := sharedDecoder(b)
	ctx := context.Background()
	hyps := make([]string, len(clips))
	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	for b.Loop() {
		for i, c := range clips {
			rs, err := d.Transcribe(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			hyps[i] = strings.Join(texts(rs), " ")
		}
	}
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	b.ReportMetric(wall.Seconds()/float64(b.N)/audio, "xRT")
	b.ReportMetric(cpu.Seconds()/float64(b.N)/audio, "cpu-xRT")
	b.ReportMetric(wer(b, hyps), "WER%")
}

// BenchmarkVersusContinuous decodes each clip with pocketsphinx_continuous
// and with the wrapper, alternately, so both see the same machine load. The
// tool's model loading is measured on a 0.1 s file just before each clip and
// subtracted. Metrics: cpu-xRT of both, their ratio (wrapper / tool), and
// WER% of both against the reference transcripts.
func BenchmarkVersusContinuous(b *testing.B) {
	bin := continuousPath(b)
	clips, audio := loadClips(b)
	d := sharedDecoder(b)
	short := filepath.Join(b.TempDir(), "short.wav")
	writeClip(b, short, make([]int16, SampleRate/10))
	run := func(path string) (time.Duration, string) {
		cmd := exec.Command(bin, "-infile", path)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		ps := cmd.ProcessState
		return ps.UserTime() + ps.SystemTime(), strings.Join(strings.Fields(string(out)), " ")
	}
	cliHyps := make([]string, len(clips))
	ourHyps := make([]string, len(clips))
	var cliCPU, ourCPU time.Duration
	for b.Loop() {
		for i, c := range clips {
			load, _ := run(short)
			total, out := run(clipPath(clipIDs[i]))
			cliCPU += total - load
			cliHyps[i] = out

			c0 := cpuTime()
			rs, err := d.Transcribe(context.Background(), c)
			if err != nil {
				b.Fatal(err)
			}
			ourCPU += cpuTime() - c0
			ourHyps[i] = strings.Join(texts(rs), " ")
		}
	}
	n := float64(b.N)
	b.ReportMetric(cliCPU.Seconds()/n/audio, "cli-cpu-xRT")
	b.ReportMetric(ourCPU.Seconds()/n/audio, "cpu-xRT")
	b.ReportMetric(ourCPU.Seconds()/cliCPU.Seconds(), "ratio")
	b.ReportMetric(wer(b, cliHyps), "cli-WER%")
	b.ReportMetric(wer(b, ourHyps), "WER%")
}

// BenchmarkFinal measures how long the final result takes once the end of
// an utterance is decided. The clips are cut to whole blocks and pushed;
// then ps_end_utt (the second search pass and the lattice) and reading the
// result (hypothesis, segmentation, posteriors) are timed separately, in CPU
// milliseconds per final. end-per-audio-s is ps_end_utt's CPU time per
// second of utterance.
func BenchmarkFinal(b *testing.B) {
	clips, _ := loadClips(b)
	d := sharedDecoder(b)
	var endCPU, resultCPU time.Duration
	finals, audio := 0, 0.0
	for b.Loop() {
		for _, c := range clips {
			c = c[:len(c)/BlockSamples*BlockSamples]
			s, err := d.NewStream(StreamOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Push(c); err != nil {
				b.Fatal(err)
			}
			c0 := cpuTime()
			if _, _, err := d.h.endUtt(); err != nil {
				b.Fatal(err)
			}
			c1 := cpuTime()
			r := s.result(true, EndFinalize)
			c2 := cpuTime()
			if len(r.Words) == 0 {
				b.Fatalf("no words in %+v", r)
			}
			endCPU += c1 - c0
			resultCPU += c2 - c1
			finals++
			audio += float64(len(c)) / SampleRate
			if err := d.h.startUtt(); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(endCPU.Microseconds())/1000/float64(finals), "end-cpu-ms/final")
	b.ReportMetric(float64(resultCPU.Microseconds())/1000/float64(finals), "result-cpu-ms/final")
	b.ReportMetric(endCPU.Seconds()*1000/audio, "end-cpu-ms/audio-s")
}

// BenchmarkNewDecoder measures loading the default model.
func BenchmarkNewDecoder(b *testing.B) {
	for b.Loop() {
		d, err := NewDecoder(context.Background(), Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstPartial streams the clips block by block and reports how
// much audio passes between the start of the first word (as the final result
// places it) and the first non-empty partial (lag-ms), and what reading a
// partial after a block costs (partial-cpu-us, via Stream.Partial, the same
// work a Partial event does).
func BenchmarkFirstPartial(b *testing.B) {
	clips, _ := loadClips(b)
	d := sharedDecoder(b)
	var lag float64
	var partialCPU time.Duration
	partials := 0
	for b.Loop() {
		for _, c := range clips {
			s, err := d.NewStream(StreamOptions{})
			if err != nil {
				b.Fatal(err)
			}
			first := -1.0
			var final []Word
			for i := 0; i < len(c); i += BlockSamples {
				n := min(i+BlockSamples, len(c))
				evs, err := s.Push(c[i:n])
				if err != nil {
					b.Fatal(err)
				}
				for _, ev := range evs {
					if ev.Kind == Final && final == nil {
						final = ev.Result.Words
					}
				}
				c0 := cpuTime()
				r, ok, err := s.Partial()
				partialCPU += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					partials++
					if first < 0 && r.Text != "" {
						first = float64(n) / SampleRate
					}
				}
			}
			evs, err := s.End()
			if err != nil {
				b.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Kind == Final && final == nil {
					final = ev.Result.Words
				}
			}
			if first < 0 || len(final) == 0 {
				b.Fatalf("no partial or no words")
			}
			lag += first - final[0].Start
		}
	}
	b.ReportMetric(1000*lag/float64(len(clips)*b.N), "lag-ms")
	b.ReportMetric(float64(partialCPU.Microseconds())/float64(partials), "partial-cpu-us")
}
