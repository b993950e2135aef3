package diarize

import (
	"context"
	"fmt"
	"math"

	"github.com/earshot-app/earshot/api"
)

// FromInt16 converts 16-bit PCM samples to the float32 samples the
// diariser takes.
func FromInt16(pcm []int16) []float32 {
	out := make([]float32, len(pcm))
	for i, s := range pcm {
		out[i] = float32(s) / 32768
	}
	return out
}

// feats holds the feature frames of a run of words: word i owns
// frames[first[i]:first[i+1]].
type feats struct {
	frames []vec
	first  []int // len(words)+1
}

func (f *feats) word(i int) []vec { return f.frames[f.first[i]:f.first[i+1]] }

// ctxCheckFrames is how many frames are computed between looks at ctx.
const ctxCheckFrames = 1000

// extract computes the cepstra of the frames inside each word. pcm[0] is
// at time offset (seconds) on the words' clock. A frame belongs to a word
// when its centre lies in [Start, End); words outside the audio, or with
// times that are not finite, get no frames.
func extract(ctx context.Context, pcm []float32, offset float64, words []api.Word) (*feats, error) {
	m := newMFCC()
	total := numFrames(len(pcm))
	n := 0
	for _, w := range words {
		lo, hi := frameRange(w.Start-offset, w.End-offset, total)
		n += hi - lo
	}
	f := &feats{frames: make([]vec, 0, n), first: make([]int, len(words)+1)}
	var c [numCeps]float64
	for i, w := range words {
		lo, hi := frameRange(w.Start-offset, w.End-offset, total)
		for fr := lo; fr < hi; fr++ {
			if len(f.frames)%ctxCheckFrames == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("diarize: features: %w", err)
				}
			}
			m.frame(pcm, fr*frameHop, c[:])
			var x vec
			copy(x[:], c[1:1+featDim])
			f.frames = append(f.frames, x)
		}
		f.first[i+1] = len(f.frames)
	}
	return f, nil
}

// frameRange is the half-open range of frames, of total, whose centres
// lie in [start, end) seconds.
func frameRange(start, end float64, total int) (int, int) {
	if math.IsNaN(start) || math.IsNaN(end) || end <= start {
		return 0, 0
	}
	idx := func(t float64) int {
		// Centre of frame f is (f*frameHop + frameLen/2) / SampleRate.
		v := math.Ceil((t*SampleRate - frameLen/2) / frameHop)
		return int(math.Min(math.Max(v, 0), float64(total)))
	}
	return idx(start), idx(end)
}
