package diarize

import (
	"context"
	"sync"

	"github.com/earshot-app/earshot/api"
)

// Online diarises a stream incrementally, one final utterance at a time,
// for the WebSocket /v1/listen, where diarize_model offers latest and v1,
// both meaning v1. It runs the v1 algorithm (sequential ΔBIC clustering
// of word-aligned chunks) across the utterances of one stream, so speaker
// numbers stay the same for the whole stream.
//
// An Online is safe for concurrent use; utterances are applied in the
// order Label is called. Use [NewOnline]; the zero value is not ready.
type Online struct {
	mu  sync.Mutex // guards seq
	seq sequential
}

// NewOnline returns a diariser for one stream.
func NewOnline() *Online { return &Online{seq: sequential{p: defaultParams}} }

// Info returns the metadata of the streaming model, v1.
func (o *Online) Info() Info { return V1.Info() }

// Speakers returns how many speakers the stream has had so far.
func (o *Online) Speakers() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seq.speakers)
}

// Label labels the words of one final utterance. pcm holds its audio
// (16 kHz mono) and offset is the time, on the words' clock, of pcm[0], so
// a caller may pass just the utterance's audio (a little margin around
// the words does no harm: only frames inside words are used). It returns a
// copy of words with Speaker and SpeakerConfidence set; speakers are
// numbered from 0 in order of first appearance over the whole stream. It
// fails only when ctx ends, and then leaves the diariser's state as it
// was.
func (o *Online) Label(ctx context.Context, offset float64, pcm []float32, words []api.Word) ([]api.Word, error) {
	f, err := extract(ctx, pcm, offset, words)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return apply(words, o.seq.label(words, f)), nil
}
