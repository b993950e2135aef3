package tts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// phrases per language, about three seconds of speech each.
var phrases = map[string]string{
	"en": "The library opens at nine in the morning, and it closes at six.",
	"es": "La biblioteca abre a las nueve de la mañana y cierra a las seis.",
	"de": "Die Bibliothek öffnet um neun Uhr morgens und schließt um sechs.",
	"nl": "De bibliotheek gaat om negen uur open en sluit om zes uur.",
	"fr": "La bibliothèque ouvre à neuf heures du matin et ferme à six heures.",
	"it": "La biblioteca apre alle nove del mattino e chiude alle sei.",
	"ja": "としょかんは あさ くじに あいて、ろくじに しまります。",
}

// TestEveryVoice: every voice in the catalogue speaks audible audio of a
// plausible length at its declared rate, and its last chunk covers the
// whole text.
func TestEveryVoice(t *testing.T) {
	for _, v := range Voices() {
		t.Run(v.Name, func(t *testing.T) {
			text, ok := phrases[v.Language]
			if !ok {
				t.Fatalf("no test phrase for %s", v.Language)
			}
			r := speak(t, v, text, Params{})
			secs := r.seconds(v.NativeRate)
			if secs < 1.5 || secs > 8 {
				t.Errorf("%.2f s of audio for %q", secs, text)
			}
			if l := rms(r.pcm); l < 500 {
				t.Errorf("RMS level %.0f: (nearly) silent", l)
			}
			if got := r.textEnds[len(r.textEnds)-1]; got != len(text) {
				t.Errorf("last TextEnd %d, want %d", got, len(text))
			}
		})
	}
}

// TestNativeRate: the libraries really produce audio at each voice's
// declared rate.
func TestNativeRate(t *testing.T) {
	if err := fliteInit(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range Voices() {
		if v.backend != flite || seen[v.id] {
			continue
		}
		seen[v.id] = true
		var rate int
		sink := sinkFunc(func(_ []int16, r int, _ []fliteWord) bool { rate = r; return true })
		if err := fliteSynth(v.id, "Hello.", 1, 1, 1, sink); err != nil {
			t.Fatal(err)
		}
		if rate != v.NativeRate {
			t.Errorf("%s: flite rate %d, catalogue says %d", v.id, rate, v.NativeRate)
		}
	}
	// The WAV reader refuses any other rate than espeakRate, so audio is
	// proof enough.
	n := 0
	err := synth(t).espeak.synth(context.Background(), "es", "Hola.", 1, 1, func(pcm []int16) bool { n += len(pcm); return true })
	if err != nil || n < espeakRate/10 {
		t.Errorf("espeak-ng: %d samples, err %v", n, err)
	}
}

type sinkFunc func([]int16, int, []fliteWord) bool

func (f sinkFunc) audio(p []int16, r int, w []fliteWord) bool { return f(p, r, w) }

func TestCatalogue(t *testing.T) {
	for _, name := range []string{DefaultVoice, DefaultFluxVoice, "flux-alexis-en", "aura-luna-en", "aura-orion-en", "aura-arcas-en"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	langs := map[string]int{}
	seen := map[string]bool{}
	for _, v := range Voices() {
		if seen[v.Name] {
			t.Errorf("%s twice", v.Name)
		}
		seen[v.Name] = true
		langs[v.Language]++
		var prefix, suffix string
		switch v.Family {
		case Aura:
			prefix = "aura-"
		case Aura2:
			prefix = "aura-2-"
		case Flux:
			prefix = "flux-"
		}
		suffix = "-" + v.Language
		if !strings.HasPrefix(v.Name, prefix) || !strings.HasSuffix(v.Name, suffix) {
			t.Errorf("%s: name does not match family %s and language %s", v.Name, v.Family, v.Language)
		}
		if v.Family == Aura && strings.HasPrefix(v.Name, "aura-2-") {
			t.Errorf("%s in family Aura", v.Name)
		}
		if v.Family == Flux && v.Language != "en" {
			t.Errorf("%s: flux voices are English only", v.Name)
		}
		// Expressivity and word-by-word text_spoken are for turn-based
		// voices, which espeak-ng voices could not give (see espeakP).
		if v.Family == Flux && v.backend != flite {
			t.Errorf("%s: flux voices must be flite voices", v.Name)
		}
		if v.Accent == "" || v.Gender == "" || v.Engine == "" || v.NativeRate == 0 {
			t.Errorf("%s: incomplete description %+v", v.Name, v)
		}
	}
	for _, l := range []string{"en", "es", "de", "nl", "fr", "it", "ja"} {
		if langs[l] == 0 {
			t.Errorf("no voice for %s", l)
		}
	}
	if _, ok := Lookup("aura-nobody-en"); ok {
		t.Error("Lookup found an unknown voice")
	}
	vs := Voices()
	vs[0].Name = "changed"
	if Voices()[0].Name == "changed" {
		t.Error("Voices returns the catalogue itself")
	}
}

// TestSpeed: durations scale with 1/speed.
func TestSpeed(t *testing.T) {
	text := "Speech at a different rate should take a different amount of time, in proportion to the speed."
	for _, name := range []string{"aura-asteria-en", "aura-2-arcas-en", "aura-2-celeste-es"} {
		t.Run(name, func(t *testing.T) {
			v := mustVoice(t, name)
			if v.Language == "es" {
				text = "Una voz más rápida debería tardar menos tiempo, en proporción a la velocidad pedida."
			}
			d := map[float64]float64{}
			for _, sp := range []float64{0.7, 1, 1.5} {
				d[sp] = speak(t, v, text, Params{Speed: sp}).seconds(v.NativeRate)
			}
			if !(d[1.5] < d[1] && d[1] < d[0.7]) {
				t.Fatalf("durations not ordered: %v", d)
			}
			for _, sp := range []float64{0.7, 1.5} {
				got, want := d[1]/d[sp], sp
				if got < want*0.8 || got > want*1.2 {
					t.Errorf("speed %.1f: duration ratio %.2f, want about %.2f (durations %v)", sp, got, want, d)
				}
			}
		})
	}
}

// TestExpressivity: +2 has a wider pitch spread than 0, and 0 than -2.
func TestExpressivity(t *testing.T) {
	text := "Really? I never thought that the weather would change so quickly, but it did, and we all got wet."
	for _, name := range []string{"aura-asteria-en", "aura-orion-en", "aura-2-arcas-en", DefaultFluxVoice} {
		t.Run(name, func(t *testing.T) {
			v := mustVoice(t, name)
			spread := map[int]float64{}
			for _, e := range []int{-2, 0, 2} {
				r := speak(t, v, text, Params{Expressivity: e})
				spread[e] = semitoneSpread(pitchTrack(r.pcm, v.NativeRate))
			}
			t.Logf("pitch spread (semitones): %v", spread)
			if !(spread[-2] < spread[0] && spread[0] < spread[2]) {
				t.Errorf("pitch spread not increasing with expressivity: %v", spread)
			}
		})
	}
}

// TestExpressivityEspeak: espeak-ng voices ignore expressivity (the
// program has no pitch-range option) rather than fail; their output is
// deterministic, so the audio is the same.
func TestExpressivityEspeak(t *testing.T) {
	v := mustVoice(t, "aura-2-julius-de")
	want := speak(t, v, phrases["de"], Params{}).pcm
	for _, e := range []int{-2, 2} {
		if got := speak(t, v, phrases["de"], Params{Expressivity: e}).pcm; !equalPCM(got, want) {
			t.Errorf("expressivity %d changed the audio of an espeak-ng voice", e)
		}
	}
}

func TestParams(t *testing.T) {
	v := mustVoice(t, DefaultVoice)
	for _, p := range []Params{{Speed: 0.4}, {Speed: 1.6}, {Speed: -1}, {Expressivity: 3}, {Expressivity: -3}} {
		err := synth(t).Synthesize(context.Background(), v, "Hello.", p, func(Chunk) error { return nil })
		if !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%+v: err %v, want ErrInvalidParams", p, err)
		}
	}
	err := synth(t).Synthesize(context.Background(), Voice{Name: "aura-nobody-en"}, "Hello.", Params{}, func(Chunk) error { return nil })
	if !errors.Is(err, ErrUnknownVoice) {
		t.Errorf("unknown voice: err %v", err)
	}
	calls := 0
	if err := synth(t).Synthesize(context.Background(), v, "  \n ", Params{}, func(Chunk) error { calls++; return nil }); err != nil || calls != 0 {
		t.Errorf("blank text: err %v, %d chunks", err, calls)
	}
}

// TestStreaming: chunks arrive while the text is still being synthesised,
// and the first comes long before the last.
func TestStreaming(t *testing.T) {
	text := strings.Repeat("This sentence is one of several that make a long text for streaming. ", 8)
	for _, name := range []string{DefaultVoice, "aura-2-nestor-es"} {
		t.Run(name, func(t *testing.T) {
			v := mustVoice(t, name)
			// The voice's first use loads it: that is not streaming, and on
			// a loaded machine it took a third of the whole time.
			if err := synth(t).Synthesize(context.Background(), v, "Ready.", Params{}, func(Chunk) error { return nil }); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var first, last time.Duration
			n := 0
			err := synth(t).Synthesize(context.Background(), v, text, Params{}, func(c Chunk) error {
				if n == 0 {
					first = time.Since(start)
				}
				n++
				last = time.Since(start)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 20 {
				t.Errorf("only %d chunks", n)
			}
			if first*5 > last {
				t.Errorf("first chunk after %v, last after %v: not streaming", first, last)
			}
			t.Logf("%d chunks, first after %v, last after %v", n, first, last)
		})
	}
}

// TestTextEnd: TextEnd never decreases, moves at word ends (flite) or
// piece ends (espeak-ng, whose program reports no words) and at every one
// of them, covers part of the text midway, and the whole at the end.
func TestTextEnd(t *testing.T) {
	text := "First comes the opening sentence, with a clause. Then a second one follows! And a third?  "
	wordEnds := map[int]bool{0: true, len(text): true}
	for _, w := range words(text) {
		wordEnds[w.end] = true
	}
	pieces := Split(text)
	pieceEnds := map[int]bool{0: true, len(text): true}
	for _, pc := range pieces[:len(pieces)-1] {
		pieceEnds[pc.End] = true
	}
	if len(pieces) < 3 {
		t.Fatalf("text splits into only %d pieces: %v", len(pieces), pieces)
	}
	for _, name := range []string{DefaultVoice, "aura-2-arcas-en", "aura-2-julius-de"} {
		t.Run(name, func(t *testing.T) {
			v := mustVoice(t, name)
			ends, what, minDistinct := wordEnds, "word", 8
			if v.backend == espeak {
				ends, what, minDistinct = pieceEnds, "piece", len(pieceEnds)-1 // 0 need not occur
			}
			r := speak(t, v, text, Params{})
			prev, distinct := 0, map[int]bool{}
			for _, e := range r.textEnds {
				if e < prev {
					t.Fatalf("TextEnd went back: %v", r.textEnds)
				}
				if !ends[e] {
					t.Errorf("TextEnd %d (%q) is not at a %s end", e, text[:e], what)
				}
				prev = e
				distinct[e] = true
			}
			if r.textEnds[len(r.textEnds)-1] != len(text) {
				t.Errorf("last TextEnd %d, want %d", prev, len(text))
			}
			if len(distinct) < minDistinct {
				t.Errorf("TextEnd took only %d values, want %d or more: %v", len(distinct), minDistinct, r.textEnds)
			}
			// Midway through the audio, about half the text is spoken.
			half, n := len(r.pcm)/2, 0
			for _, c := range r.chunks {
				n += len(c.PCM)
				if n >= half {
					if c.TextEnd < len(text)/4 || c.TextEnd > len(text)*3/4 {
						t.Errorf("at half the audio TextEnd is %d of %d", c.TextEnd, len(text))
					}
					break
				}
			}
		})
	}
}

// TestCancel: cancelling the context stops synthesis within a few
// chunks, and so does an emit error.
func TestCancel(t *testing.T) {
	text := strings.Repeat("Cancellation has to stop a long text quickly, wherever it is. ", 20)
	for _, name := range []string{DefaultVoice, "aura-2-agathe-fr"} {
		t.Run(name, func(t *testing.T) {
			v := mustVoice(t, name)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n, after := 0, 0
			var cancelled time.Time
			err := synth(t).Synthesize(ctx, v, text, Params{}, func(c Chunk) error {
				n++
				if n == 5 {
					cancel()
					cancelled = time.Now()
				} else if n > 5 {
					after++
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			if d := time.Since(cancelled); d > 100*time.Millisecond {
				t.Errorf("returned %v after cancel", d)
			}
			if after > 0 {
				t.Errorf("%d chunks emitted after cancel", after)
			}

			boom := errors.New("boom")
			n = 0
			err = synth(t).Synthesize(context.Background(), v, text, Params{}, func(Chunk) error {
				n++
				if n == 3 {
					return boom
				}
				return nil
			})
			if !errors.Is(err, boom) || n != 3 {
				t.Errorf("emit error: err %v after %d chunks", err, n)
			}
		})
	}
}

// TestConcurrent: many texts on both libraries at once give the same audio
// as one at a time. The diphone voices and espeak-ng (a fresh process,
// hence the same random seed, every time) are deterministic, so their
// audio must be identical; clustergen adds random noise to its
// excitation, so for it the length must match closely.
func TestConcurrent(t *testing.T) {
	type job struct {
		voice string
		text  string
	}
	jobs := []job{
		{DefaultVoice, "One voice speaks this sentence while others speak theirs."},
		{"aura-orion-en", "A second voice says something else entirely, at the same time."},
		{"aura-2-arcas-en", "And a third one joins in, with its own words."},
		{"aura-2-odysseus-en", "A fourth, on the telephone voice, reads this line."},
		{"aura-2-sander-nl", "Dit is een Nederlandse zin die tegelijk wordt uitgesproken."},
		{"aura-2-livia-it", "Questa è una frase italiana pronunciata nello stesso momento."},
	}
	want := make([][]int16, len(jobs))
	for i, j := range jobs {
		want[i] = speak(t, mustVoice(t, j.voice), j.text, Params{}).pcm
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs)*3)
	for round := range 3 {
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var got []int16
				err := synth(t).Synthesize(context.Background(), mustVoice(t, j.voice), j.text, Params{}, func(c Chunk) error {
					got = append(got, c.PCM...)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				v := mustVoice(t, j.voice)
				deterministic := strings.HasPrefix(v.id, "cmu_us_kal") || v.backend == espeak
				switch {
				case deterministic && !equalPCM(got, want[i]):
					errs <- fmt.Errorf("round %d, %s: audio differs from the sequential run", round, j.voice)
				case math.Abs(float64(len(got))/float64(len(want[i]))-1) > 0.03:
					errs <- fmt.Errorf("round %d, %s: %d samples, sequential run %d", round, j.voice, len(got), len(want[i]))
				case rms(got) < 500:
					errs <- fmt.Errorf("round %d, %s: silent", round, j.voice)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func equalPCM(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClose: Close stops syntheses in progress and refuses new ones.
func TestClose(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	v := mustVoice(t, DefaultVoice)
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		once := sync.Once{}
		done <- s.Synthesize(context.Background(), v, strings.Repeat("A long text that Close interrupts. ", 30), Params{}, func(Chunk) error {
			once.Do(func() { close(started) })
			return nil
		})
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight synthesis: %v, want ErrClosed", err)
	}
	if err := s.Synthesize(context.Background(), v, "Hello.", Params{}, func(Chunk) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestPitchVariants: voices that share a library voice at a different
// pitch really are higher or lower.
func TestPitchVariants(t *testing.T) {
	text := "The same words, spoken a little higher or lower."
	median := func(name string) float64 {
		v := mustVoice(t, name)
		f0 := pitchTrack(speak(t, v, text, Params{}).pcm, v.NativeRate)
		if len(f0) < 10 {
			t.Fatalf("%s: only %d pitch frames", name, len(f0))
		}
		slices.Sort(f0)
		return f0[len(f0)/2]
	}
	for _, tt := range []struct{ low, high string }{
		{"aura-asteria-en", "aura-stella-en"},
		{"aura-hera-en", "aura-asteria-en"},
		{"aura-zeus-en", "aura-orion-en"},
		{"aura-orpheus-en", "aura-arcas-en"},
	} {
		t.Run(tt.low+"<"+tt.high, func(t *testing.T) {
			lo, hi := median(tt.low), median(tt.high)
			if !(hi > lo*1.03) {
				t.Errorf("median F0 %s %.0f Hz, %s %.0f Hz", tt.low, lo, tt.high, hi)
			}
		})
	}
}

// TestGender: the catalogue's genders are what the voices sound like, by
// their median pitch (feminine above 150 Hz, masculine below).
func TestGender(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Voices() {
		key := fmt.Sprintf("%s@%v", v.id, v.pitch)
		if seen[key] {
			continue // same library voice at the same pitch
		}
		seen[key] = true
		t.Run(v.Name, func(t *testing.T) {
			pcm := speak(t, v, phrases[v.Language], Params{}).pcm
			pcm = pcm[:min(len(pcm), 2*v.NativeRate)] // two seconds are plenty
			f0 := pitchTrack(pcm, v.NativeRate)
			if len(f0) < 10 {
				t.Fatalf("only %d pitch frames", len(f0))
			}
			slices.Sort(f0)
			med := f0[len(f0)/2]
			if (v.Gender == Feminine) != (med > 150) {
				t.Errorf("%s voice with median F0 %.0f Hz", v.Gender, med)
			}
		})
	}
}
