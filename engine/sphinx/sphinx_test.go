package sphinx

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMatchesContinuous decodes every LibriVox clip, and a recording of two
// of them with a pause between, and requires the exact hypotheses, and the
// same segmentation into utterances, that pocketsphinx_continuous prints for
// the same files.
func TestMatchesContinuous(t *testing.T) {
	bin := continuousPath(t)
	two := filepath.Join(t.TempDir(), "two.wav")
	writeClip(t, two, twoClips(t))
	files := []string{two}
	names := []string{"two"}
	for _, id := range clipIDs {
		files = append(files, clipPath(id))
		names = append(names, id)
	}

	// Run the command-line tool on every file, two at a time, while this
	// goroutine decodes the same files.
	cli := make([][]cliUtt, len(files))
	cliErr := make([]error, len(files))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cli[i], cliErr[i] = runContinuous(ctx, bin, f)
		})
	}
	ours := make([][]Result, len(files))
	for i, f := range files {
		ours[i] = batch(t, names[i], readClip(t, f))
	}
	wg.Wait()
	if len(ours[0]) < 2 {
		t.Errorf("two.wav gave %d utterances, want at least 2", len(ours[0]))
	}

	for i, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if cliErr[i] != nil {
				t.Fatal(cliErr[i])
			}
			var want []string
			for _, u := range cli[i] {
				want = append(want, u.text)
			}
			if got := texts(ours[i]); !slices.Equal(got, want) {
				t.Fatalf("hypotheses differ from pocketsphinx_continuous\n got: %q\nwant: %q", got, want)
			}
			checkResults(t, ours[i])
			// Word timings: the tool adds its own estimate of where each
			// utterance starts, which runs 0.6 to 2.6 frames late once a
			// full pre-speech buffer is released (it counts from the end
			// of the triggering frame); ours are exact. Every word must
			// agree within that.
			for u, r := range ours[i] {
				var cw []cliWord
				for _, w := range cli[i][u].words {
					if !isFiller(w.word) {
						cw = append(cw, w)
					}
				}
				if len(cw) != len(r.Words) {
					t.Fatalf("utterance %d: %d words, tool printed %d", u, len(r.Words), len(cw))
				}
				for k, w := range r.Words {
					c := cw[k]
					if diff := c.start - w.Start; stripAltPron(c.word) != w.Text || diff < -0.001 || diff > 0.027 {
						t.Errorf("utterance %d word %d: got %q at %.3f, tool %q at %.3f", u, k, w.Text, w.Start, c.word, c.start)
					}
					if math.Abs(math.Min(c.conf, 1)-w.Confidence) > 1e-3 {
						t.Errorf("utterance %d word %q: confidence %.4f, tool %.4f", u, w.Text, w.Confidence, c.conf)
					}
				}
			}
		})
	}
}

// TestTranscribeEqualsStream checks the batch entry point against a stream.
func TestTranscribeEqualsStream(t *testing.T) {
	d := sharedDecoder(t)
	clip := readClip(t, clipPath("0930"))
	got, err := d.Transcribe(context.Background(), clip)
	if err != nil {
		t.Fatal(err)
	}
	if want := batch(t, "0930", clip); !reflect.DeepEqual(got, want) {
		t.Fatalf("Transcribe = %+v\nstream = %+v", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Transcribe(ctx, clip); !errors.Is(err, context.Canceled) {
		t.Fatalf("Transcribe with cancelled context: %v", err)
	}
}

// TestChunkingInvariance pushes the same audio in very different chunk
// sizes, with and without partial results, and requires identical finals.
func TestChunkingInvariance(t *testing.T) {
	d := sharedDecoder(t)
	audio := twoClips(t)
	want := batch(t, "two", audio)
	if len(want) < 2 {
		t.Fatalf("expected at least two utterances, got %q", texts(want))
	}
	checkResults(t, want)

	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		opts StreamOptions
		next func() int
	}{
		{"one sample", StreamOptions{}, func() int { return 1 }},
		{"block plus one", StreamOptions{}, func() int { return BlockSamples + 1 }},
		{"random with partials", StreamOptions{Partials: true}, func() int { return 1 + rng.IntN(5000) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, _ := collect(t, d, audio, tt.opts, tt.next)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("finals differ from the batch pass\n got: %+v\nwant: %+v", got, want)
			}
		})
	}
}

// TestAbsoluteTimestamps prepends 2 s of background to a clip: the detector
// drops it, and every word must still move by exactly 2 s.
func TestAbsoluteTimestamps(t *testing.T) {
	d := sharedDecoder(t)
	clip := readClip(t, clipPath("0880"))
	const shift = 2.0
	base := batch(t, "0880", clip)
	shifted := transcribe(t, d, slices.Concat(background(clip, int(shift*SampleRate)), clip))
	checkResults(t, shifted)
	if len(base) != 1 || len(shifted) == 0 {
		t.Fatalf("utterances: %q and %q", texts(base), texts(shifted))
	}
	want, got := base[0], shifted[len(shifted)-1]
	if got.Text != want.Text || len(got.Words) != len(want.Words) {
		t.Fatalf("hypothesis changed: %q -> %q", want.Text, got.Text)
	}
	// A decoder that reported times relative to the audio it kept would be
	// off by most of the 2 s it dropped; a frame or two of jitter comes from
	// the decoder aligning slightly differently after a different noise
	// history.
	const tol = 0.02 + 1e-9
	for i, w := range got.Words {
		ws, we := w.Start-want.Words[i].Start, w.End-want.Words[i].End
		if math.Abs(ws-shift) > tol || math.Abs(we-shift) > tol {
			t.Errorf("word %q moved by %.3f/%.3f s, want %.1f±0.02", w.Text, ws, we, shift)
		}
	}
}

// TestShortEndpointing uses a very short post-speech silence, so utterances
// end inside sentences and the detector switches off and on again within
// one block, leaving holes in the frames an utterance keeps. Segmentation
// must still match pocketsphinx_continuous with the same setting, and the
// word segmentation must still fit the kept frames.
func TestShortEndpointing(t *testing.T) {
	bin := continuousPath(t)
	cfg := Config{VADStartSpeech: 3}.WithEndpointing(30 * time.Millisecond)
	if cfg.VADPostSpeech != 3 {
		t.Fatalf("WithEndpointing(30ms).VADPostSpeech = %d, want 3", cfg.VADPostSpeech)
	}
	d, err := NewDecoder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	path := clipPath("0880")
	cliDone := make(chan struct{})
	var cli []cliUtt
	var cliErr error
	go func() {
		defer close(cliDone)
		cli, cliErr = runContinuous(context.Background(), bin, path, "-vad_postspeech", "3", "-vad_startspeech", "3")
	}()
	_, got, st := collect(t, d, readClip(t, path), StreamOptions{}, func() int { return BlockSamples })
	<-cliDone
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	checkResults(t, got)
	var want []string
	for _, u := range cli {
		want = append(want, u.text)
	}
	if !slices.Equal(texts(got), want) {
		t.Fatalf("hypotheses differ\n got: %q\nwant: %q", texts(got), want)
	}
	if len(got) < 3 {
		t.Fatalf("short endpointing produced only %d utterances", len(got))
	}
	if st.gaps == 0 {
		t.Errorf("no utterance had a hole in its frames; the case is not exercised")
	}
}

// TestStreamingPartials streams a clip in 20 ms chunks and checks that
// partial hypotheses arrive while speech is in progress, in order, before
// the final.
func TestStreamingPartials(t *testing.T) {
	d := sharedDecoder(t)
	clip := readClip(t, clipPath("0870"))
	events, finals, _ := collect(t, d, clip, StreamOptions{Partials: true}, func() int { return 320 })
	if len(finals) != 1 {
		t.Fatalf("finals: %q", texts(finals))
	}
	final := finals[0]
	var partials []Event
	started := false
	prevAt := 0.0
	for _, ev := range events {
		if ev.At < prevAt {
			t.Errorf("event %v at %.3f after one at %.3f", ev.Kind, ev.At, prevAt)
		}
		prevAt = ev.At
		switch ev.Kind {
		case SpeechStarted:
			started = true
		case Partial:
			if !started {
				t.Errorf("partial before SpeechStarted")
			}
			if ev.Result.Final || ev.Result.Text == "" || ev.At >= final.End {
				t.Errorf("bad partial %+v", ev)
			}
			for _, w := range ev.Result.Words {
				if w.Confidence != 1 || w.Start < final.Start || w.End > ev.At {
					t.Errorf("partial at %.3f: word %+v", ev.At, w)
				}
			}
			partials = append(partials, ev)
		}
	}
	if len(partials) < 10 {
		t.Fatalf("only %d partials for a 7 s utterance", len(partials))
	}
	// The first words show up soon after they are spoken.
	if lag := partials[0].At - final.Words[0].Start; lag > 1.0 {
		t.Errorf("first partial %.3f s after the first word starts", lag)
	}
	// Partials keep coming while the utterance goes on: no gap longer than
	// a second of audio between updates.
	for i := 1; i < len(partials); i++ {
		if gap := partials[i].At - partials[i-1].At; gap > 1.0 {
			t.Errorf("%.3f s of audio without a partial before %.3f", gap, partials[i].At)
		}
	}
	// The last partial is close to the final hypothesis.
	lastWords := strings.Fields(partials[len(partials)-1].Result.Text)
	if len(lastWords) < len(final.Words)/2 {
		t.Errorf("last partial %q far from final %q", partials[len(partials)-1].Result.Text, final.Text)
	}
}

// TestPartialOnDemand checks that Stream.Partial can be read after every
// block while speech is in progress.
func TestPartialOnDemand(t *testing.T) {
	d := sharedDecoder(t)
	clip := readClip(t, clipPath("0880"))
	s, err := d.NewStream(StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok, err := s.Partial(); ok || err != nil {
		t.Fatalf("Partial before audio: ok=%v err=%v", ok, err)
	}
	nonEmpty := 0
	for i := 0; i+BlockSamples <= len(clip); i += BlockSamples {
		if _, err := s.Push(clip[i : i+BlockSamples]); err != nil {
			t.Fatal(err)
		}
		r, ok, err := s.Partial()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("no utterance in progress after %d samples of speech", i+BlockSamples)
		}
		if r.Final || r.Start != 0 {
			t.Fatalf("partial %+v", r)
		}
		if r.Text != "" {
			nonEmpty++
		}
	}
	if nonEmpty < 10 {
		t.Fatalf("only %d non-empty partials", nonEmpty)
	}
}

// TestFinalizeMidUtterance cuts a sentence in the middle with Finalize.
func TestFinalizeMidUtterance(t *testing.T) {
	d := sharedDecoder(t)
	clip := readClip(t, clipPath("0870"))
	cut := len(clip) / 2
	s, err := d.NewStream(StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Push(clip[:cut])
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(evs, func(e Event) bool { return e.Kind == Final }) {
		t.Fatalf("final before Finalize: %+v", evs)
	}
	evs, err = s.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != Final {
		t.Fatalf("Finalize events: %+v", evs)
	}
	first := evs[0].Result
	cutAt := float64(cut) / SampleRate
	if first.Reason != EndFinalize || first.Index != 0 || len(first.Words) < 5 || first.End > cutAt+1e-9 {
		t.Fatalf("finalized result %+v (cut at %.3f s)", first, cutAt)
	}
	if evs[0].At != cutAt {
		t.Errorf("final at %.3f, want %.3f (all pushed audio decoded)", evs[0].At, cutAt)
	}
	// A second Finalize right away has nothing to end.
	if evs, err := s.Finalize(); err != nil || len(evs) != 0 {
		t.Fatalf("second Finalize: %+v, %v", evs, err)
	}
	// The rest of the sentence becomes a new utterance.
	evs, err = s.Push(clip[cut:])
	if err != nil {
		t.Fatal(err)
	}
	end, err := s.End()
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, end...)
	var finals []Result
	for _, ev := range evs {
		if ev.Kind == Final {
			finals = append(finals, ev.Result)
		}
	}
	if len(finals) == 0 {
		t.Fatalf("no final after Finalize: %+v", evs)
	}
	all := append([]Result{first}, finals...)
	checkResults(t, all)
	if last := finals[len(finals)-1]; last.Reason != EndOfStream || last.Words[0].Start < cutAt {
		t.Errorf("second part %+v", last)
	}
	if _, err := s.Push(clip[:10]); !errors.Is(err, ErrClosed) {
		t.Errorf("Push after End: %v", err)
	}
}

// TestStreamLifecycle covers the errors of the stream life cycle.
func TestStreamLifecycle(t *testing.T) {
	d := sharedDecoder(t)
	s, err := d.NewStream(StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewStream(StreamOptions{}); !errors.Is(err, ErrStreamActive) {
		t.Fatalf("second NewStream: %v", err)
	}
	if _, err := d.Transcribe(context.Background(), nil); !errors.Is(err, ErrStreamActive) {
		t.Fatalf("Transcribe during a stream: %v", err)
	}
	// Finalize and End on a stream without audio report nothing.
	if evs, err := s.Finalize(); err != nil || len(evs) != 0 {
		t.Fatalf("Finalize on empty stream: %+v, %v", evs, err)
	}
	if evs, err := s.End(); err != nil || len(evs) != 0 {
		t.Fatalf("End on empty stream: %+v, %v", evs, err)
	}
	for name, f := range map[string]func() error{
		"Push":     func() error { _, err := s.Push([]int16{1}); return err },
		"Finalize": func() error { _, err := s.Finalize(); return err },
		"End":      func() error { _, err := s.End(); return err },
		"Partial":  func() error { _, _, err := s.Partial(); return err },
	} {
		if err := f(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after End: %v", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after End: %v", err)
	}
	// Close frees the decoder for the next stream, and is idempotent.
	s, err = d.NewStream(StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(make([]int16, 3*BlockSamples)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push([]int16{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Push after Close: %v", err)
	}
}

// TestConfig covers defaults, endpointing and validation.
func TestConfig(t *testing.T) {
	def := DefaultConfig()
	if def.HMM != DefaultHMM || def.LM != DefaultLM || def.Dict != DefaultDict || def.SampleRate != SampleRate ||
		def.VADPreSpeech != 20 || def.VADStartSpeech != 10 || def.VADPostSpeech != 50 || def.VADThreshold != 2 {
		t.Fatalf("DefaultConfig = %+v", def)
	}
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{
		{0, 1}, {4 * time.Millisecond, 1}, {10 * time.Millisecond, 1}, {15 * time.Millisecond, 2},
		{300 * time.Millisecond, 30}, {time.Second, 100},
	} {
		if got := (Config{}).WithEndpointing(tt.d).VADPostSpeech; got != tt.want {
			t.Errorf("WithEndpointing(%v).VADPostSpeech = %d, want %d", tt.d, got, tt.want)
		}
	}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"sample rate", Config{SampleRate: 8000}},
		{"negative prespeech", Config{VADPreSpeech: -1}},
		{"huge postspeech", Config{VADPostSpeech: 1 << 20}},
		{"negative threshold", Config{VADThreshold: -1}},
		{"missing hmm", Config{HMM: "/nonexistent/model"}},
		{"hmm is a file", Config{HMM: DefaultLM}},
		{"dict is a directory", Config{Dict: DefaultHMM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewDecoder(context.Background(), tt.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewDecoder: %v, want ErrInvalidConfig", err)
			}
			if _, err := NewPool(tt.cfg, 1); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewPool: %v, want ErrInvalidConfig", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewDecoder(ctx, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewDecoder with cancelled context: %v", err)
	}
}

// TestCorruptModel gives the library a dictionary it cannot read.
func TestCorruptModel(t *testing.T) {
	dict := filepath.Join(t.TempDir(), "bad.dict")
	writeClip(t, dict, []int16{1, 2, 3}) // binary junk, not a dictionary
	_, err := NewDecoder(context.Background(), Config{LM: dict})
	if !errors.Is(err, ErrInit) {
		t.Fatalf("NewDecoder with a corrupt language model: %v, want ErrInit", err)
	}
}

func TestWordHelpers(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		filler   bool
	}{
		{"was(2)", "was", false},
		{"to(3)", "to", false},
		{"i'm", "i'm", false},
		{"a(b)", "a(b)", false},
		{"x()", "x()", false},
		{"(2)", "(2)", false},
		{"<s>", "<s>", true},
		{"</s>", "</s>", true},
		{"<sil>", "<sil>", true},
		{"[NOISE]", "[NOISE]", true},
		{"[SPEECH]", "[SPEECH]", true},
		{"++LAUGH++", "++LAUGH++", true},
	} {
		if got := stripAltPron(tt.in); got != tt.want {
			t.Errorf("stripAltPron(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := isFiller(tt.in); got != tt.filler {
			t.Errorf("isFiller(%q) = %v", tt.in, got)
		}
	}
	for _, tt := range []struct{ in, want float64 }{
		{-0.5, 0}, {0.25, 0.25}, {1.0001, 1}, {math.NaN(), 0}, {math.Inf(1), 1},
	} {
		if got := clamp01(tt.in); got != tt.want {
			t.Errorf("clamp01(%v) = %v", tt.in, got)
		}
	}
}

// TestDependencies fences the package: it sits at the bottom of the engine
// and must import nothing from the project or the UI toolkit.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, ".") && !strings.HasPrefix(dep, "github.com/earshot-app/earshot/engine/sphinx") {
			t.Errorf("imports %s; only the standard library is allowed", dep)
		}
	}
}
