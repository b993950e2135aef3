package testkit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/textseg"
)

// ProsePath is real prose nobody on the project wrote, on every Debian
// system (base-files): the GNU General Public License, version 3.
const ProsePath = "/usr/share/common-licenses/GPL-3"

// Prose returns sentences of ProsePath from its Preamble on, lines joined
// (paragraphs kept), leaving out lines that hold an address or a
// placeholder in angle brackets (which a voice reads as markup). It skips
// the sentences that start before the from-th character, and stops once
// it holds words words, or before the sentence that would take it past
// maxChars characters (0: no bound).
func Prose(from, words, maxChars int) (string, error) {
	b, err := os.ReadFile(ProsePath)
	if err != nil {
		return "", err
	}
	all := string(b)
	if i := strings.Index(all, "Preamble"); i >= 0 {
		all = all[i+len("Preamble"):]
	}
	var paras []string
	for _, p := range strings.Split(all, "\n\n") {
		var lines []string
		for _, l := range strings.Split(p, "\n") {
			if !strings.ContainsAny(l, "<>") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		if p := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); p != "" {
			paras = append(paras, p)
		}
	}
	text := strings.Join(paras, "\n\n")
	var out strings.Builder
	nw, nc, prev := 0, 0, 0
	for _, s := range textseg.Sentences(text) {
		gap := text[prev:s.Start]
		prev = s.End
		if utf8.RuneCountInString(text[:s.Start]) < from {
			continue
		}
		sentence := text[s.Start:s.End]
		sw, sc := len(strings.Fields(sentence)), utf8.RuneCountInString(sentence)+2
		if words > 0 && nw >= words || maxChars > 0 && nc+sc > maxChars {
			break
		}
		if out.Len() > 0 {
			if strings.Contains(gap, "\n\n") {
				out.WriteString("\n\n")
			} else {
				out.WriteString(" ")
			}
		}
		out.WriteString(sentence)
		nw, nc = nw+sw, nc+sc
	}
	if out.Len() == 0 {
		return "", fmt.Errorf("%s has no prose from character %d", ProsePath, from)
	}
	return out.String(), nil
}

// Sample is a stretch of a long synthesis and the text it should say.
type Sample struct {
	Name string // "start", "middle" or "end"
	At   time.Duration
	PCM  []int16
	// Ref is the text's words around where the stretch falls, by the
	// proportion of the audio before it, with margin either side;
	// Elsewhere as many words from a sixth of the text before and after
	// (where the stretch would fall had a part before it gone missing,
	// or been spoken twice).
	Ref       string
	Elsewhere []string
}

// Samples cuts window of audio at the start, the middle and the end of
// a synthesis of text (16-bit mono pcm at rate), each with the words of
// the text around that point: margin words either side of where the
// stretch falls by the proportion of the audio before it.
func Samples(pcm []int16, rate int, text string, window time.Duration, margin int) []Sample {
	words := strings.Fields(text)
	n := min(int(window.Seconds()*float64(rate)), len(pcm))
	var out []Sample
	for _, s := range []struct {
		name  string
		start int
	}{{"start", 0}, {"middle", (len(pcm) - n) / 2}, {"end", len(pcm) - n}} {
		from := len(words) * s.start / max(len(pcm), 1)
		to := len(words) * (s.start + n) / max(len(pcm), 1)
		from, to = max(from-margin, 0), min(to+margin, len(words))
		sm := Sample{Name: s.name, At: time.Duration(int64(s.start) * int64(time.Second) / int64(rate)),
			PCM: pcm[s.start : s.start+n], Ref: strings.Join(words[from:to], " ")}
		for _, shift := range []int{-len(words) / 6, len(words) / 6} {
			if f, t := from+shift, to+shift; f >= 0 && t <= len(words) {
				sm.Elsewhere = append(sm.Elsewhere, strings.Join(words[f:t], " "))
			}
		}
		out = append(out, sm)
	}
	return out
}

// InOrder returns the share of hyp's words found, in order, among ref's:
// how much of what was heard is the text expected there.
func InOrder(ref, hyp string) float64 {
	h := Words(hyp)
	if len(h) == 0 {
		return 0
	}
	return float64(CommonWords(Words(ref), h)) / float64(len(h))
}

// Covered returns the share of ref's words found, in order, in hyp: how
// much of the text was heard.
func Covered(ref, hyp string) float64 {
	r := Words(ref)
	if len(r) == 0 {
		return 1
	}
	return float64(CommonWords(r, Words(hyp))) / float64(len(r))
}

// EnvLongSpeech, when set, makes the long syntheses of the must-show
// tests transcribe all of their audio back, which takes minutes of CPU
// (docs/benchmarks.md).
const EnvLongSpeech = "EARSHOT_LONG_SPEECH"

// CheckLongSpeech checks the audio of a long synthesis of text (16-bit
// mono pcm at rate) by a voice speaking wps words a second, with
// transcribe to hear it back: it lasts within 10% of the words at that
// rate, and 20 s stretches at its start, middle and end say the words of
// the text there, rather than those of elsewhere (where they would fall
// had a part gone missing). With EnvLongSpeech set, all of it is
// transcribed, and the share of the text's words heard back in order is
// at least 90% of ceiling, the share heard of a text spoken in one part
// by the same voice (which can miss nothing): the recogniser's own misses
// on such prose (a fifth to a quarter of the words with flite's voices)
// are no part missing, and a missing part of a tenth of the text falls
// below the bar.
func CheckLongSpeech(t testing.TB, text string, wps float64, pcm []int16, rate int, transcribe func(pcm []int16) string, ceiling func() float64) {
	t.Helper()
	words := len(strings.Fields(text))
	want := float64(words) / wps
	got := float64(len(pcm)) / float64(rate)
	t.Logf("%d words, %d characters: %.1f s of audio, %.1f s expected at %.2f words a second (%+.1f%%)",
		words, utf8.RuneCountInString(text), got, want, wps, 100*(got-want)/want)
	if got < 0.9*want || got > 1.1*want {
		t.Errorf("%.1f s of audio for %d words, want within 10%% of %.1f s: part of the text is missing", got, words, want)
	}
	for _, s := range Samples(pcm, rate, text, 20*time.Second, 60) {
		hyp := transcribe(s.PCM)
		in, other := InOrder(s.Ref, hyp), 0.0
		for _, e := range s.Elsewhere {
			other = max(other, InOrder(e, hyp))
		}
		t.Logf("%s (at %.0f s): %.0f%% of the words heard are the text's there, in order (%.0f%% those of elsewhere): %q",
			s.Name, s.At.Seconds(), 100*in, 100*other, hyp)
		// The recogniser misses many words of such text, so the bar is
		// low; what tells a part missing is that the words heard are
		// those of the text there, not of elsewhere.
		if in < 0.45 || in < other+0.15 {
			t.Errorf("%s of the audio (at %.0f s): %.0f%% of the words heard are the text's there and %.0f%% those of elsewhere; want at least 45%%, and 15 points more",
				s.Name, s.At.Seconds(), 100*in, 100*other)
		}
	}
	if os.Getenv(EnvLongSpeech) == "" {
		return
	}
	began := time.Now()
	hyp := transcribe(pcm)
	covered, best := Covered(text, hyp), ceiling()
	t.Logf("transcribed back in %.1f s: %.1f%% of the text's %d words heard in order (WER %.1f%%); %.1f%% of a text in one part",
		time.Since(began).Seconds(), 100*covered, words, 100*WordErrorRate(text, hyp), 100*best)
	if covered < 0.9*best {
		t.Errorf("%.1f%% of the text's words heard back in order, want at least 90%% of the %.1f%% heard of a text in one part", 100*covered, 100*best)
	}
}

// RatePassages are passages from the start, the middle and the end of
// the prose, together short enough to be spoken as one part: a voice's
// rate in words a second is measured on them.
func RatePassages() (string, error) {
	var ps []string
	for _, from := range []int{0, 9000, 17000} {
		p, err := Prose(from, 0, 600)
		if err != nil {
			return "", err
		}
		ps = append(ps, p)
	}
	return strings.Join(ps, " "), nil
}

// Transcribe transcribes 16-bit mono pcm at rate with c (the local
// engine, for the tests that hear synthesised speech back).
func Transcribe(ctx context.Context, c *api.Client, pcm []int16, rate int) (string, error) {
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, pcm, rate, 1); err != nil {
		return "", err
	}
	res, err := c.Transcribe(ctx, &wav, "audio/wav", api.ListenOptions{})
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	return res.Transcript(), nil
}
