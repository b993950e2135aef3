package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/earshot-app/earshot/engine/sphinx"
)

// RecognizerConfig configures speech recognition.
type RecognizerConfig struct {
	// HMM, LM and Dict locate the pocketsphinx model; empty means the
	// Debian package's en-us model.
	HMM, LM, Dict string
	// Warm is how many decoders to load when the engine starts, for batch
	// and for streaming each: 0 means 1, a negative value none (the first
	// request then waits for its model to load).
	Warm int
}

// Segmentation defaults. Batch transcription segments utterances exactly
// as pocketsphinx_continuous does (500 ms of silence ends one), so the
// engine's batch hypotheses are that tool's. A stream without an
// endpointing parameter ends an utterance after 200 ms of silence: on a
// real reading that is where sentences end (300 ms already runs sentences
// together on pauses of 0.6 s), and a final then arrives about half a
// second after the end of speech instead of the best part of a second.
const (
	batchPostSpeechFrames     = sphinx.DefaultVADPostSpeech
	streamingPostSpeechFrames = 20
	// maxPools bounds how many distinct endpointing settings keep warm
	// decoders at once; the least recently used is let go beyond it.
	maxPools = 4
)

// recognizer hands out pocketsphinx decoders. The voice detector's
// silence window is fixed when a decoder loads, so there is one pool per
// window (per endpointing value). It is safe for concurrent use.
type recognizer struct {
	base sphinx.Config
	size int

	mu     sync.Mutex // guards pools, tick, closed
	pools  map[int]*poolEntry
	tick   int
	closed bool
}

type poolEntry struct {
	pool     *sphinx.Pool
	lastUsed int
	out      int // decoders handed out and not yet returned
}

func newRecognizer(cfg RecognizerConfig, size int) (*recognizer, error) {
	base := sphinx.Config{HMM: cfg.HMM, LM: cfg.LM, Dict: cfg.Dict}
	r := &recognizer{base: base, size: size, pools: map[int]*poolEntry{}}
	warm := cfg.Warm
	if warm == 0 {
		warm = 1
	}
	for _, frames := range []int{batchPostSpeechFrames, streamingPostSpeechFrames} {
		e, err := r.entry(frames, false)
		if err != nil {
			r.close()
			return nil, err
		}
		if warm > 0 {
			if err := e.pool.Warm(context.Background(), warm); err != nil {
				r.close()
				return nil, fmt.Errorf("load the speech model: %w", err)
			}
		}
	}
	return r, nil
}

// errRecognizerClosed is returned after close.
var errRecognizerClosed = errors.New("the recognizer is closed")

// entry returns the pool for a silence window, creating it if needed.
// With take, the pool is counted as in use (out) before anything is
// evicted, under the same lock: otherwise a pool just created, or one
// whose last decoder was just returned, could be evicted and closed
// before the caller gets its decoder.
func (r *recognizer) entry(frames int, take bool) (*poolEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errRecognizerClosed
	}
	r.tick++
	if e, ok := r.pools[frames]; ok {
		e.lastUsed = r.tick
		if take {
			e.out++
		}
		return e, nil
	}
	cfg := r.base
	cfg.VADPostSpeech = frames
	p, err := sphinx.NewPool(cfg, r.size)
	if err != nil {
		return nil, fmt.Errorf("speech model: %w", err)
	}
	e := &poolEntry{pool: p, lastUsed: r.tick}
	if take {
		e.out++
	}
	r.pools[frames] = e
	r.evictLocked()
	return e, nil
}

// evictLocked closes the least recently used idle pools beyond maxPools.
// The two default pools are never let go.
func (r *recognizer) evictLocked() {
	for len(r.pools) > maxPools {
		victim, oldest := -1, 0
		for frames, e := range r.pools {
			if frames == batchPostSpeechFrames || frames == streamingPostSpeechFrames || e.out > 0 {
				continue
			}
			if victim < 0 || e.lastUsed < oldest {
				victim, oldest = frames, e.lastUsed
			}
		}
		if victim < 0 {
			return
		}
		r.pools[victim].pool.Close()
		delete(r.pools, victim)
	}
}

// decoder returns a decoder whose voice detector ends an utterance after
// frames of silence, and the function that gives it back.
func (r *recognizer) decoder(ctx context.Context, frames int) (*sphinx.Decoder, func(), error) {
	e, err := r.entry(frames, true)
	if err != nil {
		return nil, nil, err
	}
	d, err := e.pool.Get(ctx)
	if err != nil {
		r.mu.Lock()
		e.out--
		r.mu.Unlock()
		return nil, nil, fmt.Errorf("speech model: %w", err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			e.pool.Put(d)
			r.mu.Lock()
			e.out--
			r.evictLocked()
			r.mu.Unlock()
		})
	}
	return d, release, nil
}

func (r *recognizer) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for frames, e := range r.pools {
		e.pool.Close()
		delete(r.pools, frames)
	}
}
