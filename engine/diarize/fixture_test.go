package diarize

import (
	"path/filepath"
	"testing"

	"github.com/earshot-app/earshot/api"
)

const librivoxDir = "/usr/share/pocketsphinx/test/data/librivox"

var librivoxIDs = []string{"0870", "0880", "0890", "0920", "0930"}

// clip is one test recording with its words and, for generated clips,
// the true speaker of every word.
type clip struct {
	name  string
	pcm   []float32
	words []api.Word
	truth []int
}

func (c clip) speakers() int {
	n := 0
	for _, s := range c.truth {
		n = max(n, s+1)
	}
	return n
}

// librivoxClip loads one of the single-reader LibriVox clips.
func librivoxClip(t testing.TB, id string) clip {
	t.Helper()
	words := loadWords(t, filepath.Join("testdata", "librivox_"+id+".words"))
	return clip{
		name:  "librivox_" + id,
		pcm:   loadWAV(t, filepath.Join(librivoxDir, "sense_and_sensibility_01_austen_64kb-"+id+".wav")),
		words: words,
		truth: make([]int, len(words)),
	}
}

// librivoxAll joins the five LibriVox clips, with half a second of silence
// between them, into one recording of one reader.
func librivoxAll(t testing.TB) clip {
	t.Helper()
	all := clip{name: "librivox_all"}
	for _, id := range librivoxIDs {
		c := librivoxClip(t, id)
		shift := float64(len(all.pcm)) / SampleRate
		for _, w := range c.words {
			w.Start += shift
			w.End += shift
			all.words = append(all.words, w)
			all.truth = append(all.truth, 0)
		}
		all.pcm = append(all.pcm, c.pcm...)
		all.pcm = append(all.pcm, make([]float32, SampleRate/2)...)
	}
	return all
}

// generatedClip loads a clip made by testdata/generate.sh.
func generatedClip(t testing.TB, name string) clip {
	t.Helper()
	base := filepath.Join(clipDir, name)
	words := loadWords(t, base+".words")
	return clip{
		name:  name,
		pcm:   loadWAV(t, base+".wav"),
		words: words,
		truth: truth(words, loadTurns(t, base+".turns")),
	}
}

// clipDir holds the generated clips: testdata, or the calibration set
// (testdata/generate.sh --calibration DIR) for the calibration test.
var clipDir = "testdata"

var generatedNames = []string{"two_fm", "two_mm", "three", "mixed"}

// speakersOf returns each word's speaker, failing on a word without one.
func speakersOf(t testing.TB, words []api.Word) []int {
	t.Helper()
	out := make([]int, len(words))
	for i, w := range words {
		if w.Speaker == nil || w.SpeakerConfidence == nil {
			t.Fatalf("word %d (%q) has no speaker", i, w.Word)
		}
		out[i] = *w.Speaker
	}
	return out
}

// countSpeakers is the number of distinct labels.
func countSpeakers(labels []int) int {
	seen := map[int]bool{}
	for _, s := range labels {
		seen[s] = true
	}
	return len(seen)
}

// accuracy is the fraction of words labelled right under the best
// one-to-one mapping of predicted to true speakers (the usual diarisation
// scoring; labels are arbitrary names). Exhaustive search: the clips have
// few speakers.
func accuracy(pred, truth []int) float64 {
	kp, kt := 0, 0
	for i := range pred {
		kp, kt = max(kp, pred[i]+1), max(kt, truth[i]+1)
	}
	count := make([][]int, kp)
	for i := range count {
		count[i] = make([]int, kt)
	}
	for i := range pred {
		count[pred[i]][truth[i]]++
	}
	used := make([]bool, kt)
	var best func(p int) int
	best = func(p int) int {
		if p == kp {
			return 0
		}
		b := best(p + 1) // p maps to no true speaker
		for q := range kt {
			if !used[q] {
				used[q] = true
				b = max(b, count[p][q]+best(p+1))
				used[q] = false
			}
		}
		return b
	}
	if len(pred) == 0 {
		return 1
	}
	return float64(best(0)) / float64(len(pred))
}
