package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/internal/clock"
)

// DefaultIdleRelease is how long the recogniser stays loaded after its
// last decoder is given back.
const DefaultIdleRelease = 3 * time.Minute

// RecognizerConfig configures speech recognition.
type RecognizerConfig struct {
	// HMM, LM and Dict locate the pocketsphinx model; empty means the
	// Debian package's en-us model.
	HMM, LM, Dict string
	// Warm is how many decoders the recogniser loads, for batch and for
	// streaming each, when it is first needed: 0 means 1, a negative
	// value none (each request then builds the decoder it needs).
	Warm int
	// IdleRelease is how long the recogniser stays loaded once nothing
	// uses it; then its decoders are closed and their memory returned,
	// and the next transcription loads it again. 0 means
	// DefaultIdleRelease, a negative value never.
	IdleRelease time.Duration
	// ReleaseBatch closes a batch request's decoder as soon as the
	// request has been recognised, when no other request uses one of
	// its kind, and returns its memory (about 95 MB); a stream's
	// decoders still wait for IdleRelease. It is for an engine inside an
	// app: a file transcription is minutes of work against the next
	// one's load of half a second, and what the app does with the
	// result (the transcript and its audio saved and shown) should not
	// carry the model.
	ReleaseBatch bool
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

// defaultPools are the silence windows a load warms: batch, and streaming
// without an endpointing parameter.
var defaultPools = [...]int{batchPostSpeechFrames, streamingPostSpeechFrames}

// recognizer hands out pocketsphinx decoders. The voice detector's
// silence window is fixed when a decoder loads, so there is one pool per
// window (per endpointing value).
//
// Nothing is loaded until a decoder is first asked for (or warm is
// called): then one load, shared by every caller that arrives while it
// runs, warms the default pools. Once no decoder has been in use for the
// idle release time, every pool is closed and the recogniser is cold
// again. Decoders are counted out under mu while the recogniser is ready,
// and the release happens under mu only when none is out, so a release
// never takes a decoder from a request.
//
// It is safe for concurrent use.
type recognizer struct {
	base  sphinx.Config
	size  int
	warmN int           // decoders per default pool a load builds
	idle  time.Duration // idle release time; negative: never
	clock clock.Clock   // runs the idle release
	log   *slog.Logger
	// releaseBatch closes the batch pool when its last decoder is given
	// back (RecognizerConfig.ReleaseBatch).
	releaseBatch bool

	// ctx ends when the recogniser is closed; a load runs under it, not
	// under the context of the request that started it, so that a
	// request giving up does not fail the others waiting on the load.
	ctx    context.Context
	cancel context.CancelFunc
	loadWG sync.WaitGroup // the load goroutine, which close waits for

	mu      sync.Mutex // guards the fields below
	pools   map[int]*poolEntry
	tick    int
	closed  bool
	ready   bool      // loaded: decoders may be counted out
	loading *loadCall // the load in progress, or nil
	inUse   int       // decoders counted out and not yet given back
	// stopIdle stops the armed idle-release timer, or is nil. idleGen
	// changes whenever the timer is armed or disarmed, so that a timer
	// that fires after it was superseded does nothing.
	stopIdle func() bool
	idleGen  uint64
	loads    int // loads begun, for tests and logs
	releases int // idle releases done, for tests and logs
}

type poolEntry struct {
	pool     *sphinx.Pool
	lastUsed int
	out      int // decoders handed out and not yet returned
}

// loadCall is one load of the recogniser; err is set before done closes.
type loadCall struct {
	done chan struct{}
	err  error
}

// wait waits for the load or for ctx, whichever ends first.
func (c *loadCall) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newRecognizer(cfg RecognizerConfig, size int, clk clock.Clock, log *slog.Logger) (*recognizer, error) {
	base := sphinx.Config{HMM: cfg.HMM, LM: cfg.LM, Dict: cfg.Dict}
	// Check the model's files now, so that a missing model fails New
	// rather than the first transcription; building a pool loads nothing.
	if _, err := sphinx.NewPool(base, size); err != nil {
		return nil, fmt.Errorf("speech model: %w", err)
	}
	warm := cfg.Warm
	if warm == 0 {
		warm = 1
	}
	idle := cfg.IdleRelease
	if idle == 0 {
		idle = DefaultIdleRelease
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &recognizer{
		base:         base,
		size:         size,
		warmN:        max(warm, 0),
		idle:         idle,
		clock:        clk,
		log:          log,
		releaseBatch: cfg.ReleaseBatch,
		ctx:          ctx,
		cancel:       cancel,
		pools:        map[int]*poolEntry{},
	}, nil
}

// errRecognizerClosed is returned after close.
var errRecognizerClosed = errors.New("the recognizer is closed")

// isReady reports whether the recogniser is loaded.
func (r *recognizer) isReady() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready
}

// warm loads the recogniser unless it is loaded, and waits for the load
// or for ctx. Callers that arrive during a load share it. It counts as a
// use: the idle release is pushed back.
//
// The warm-up is for streams (captions, conversations): a recogniser
// loaded by a batch request alone has no stream decoder yet, and gets
// one here.
func (r *recognizer) warm(ctx context.Context) error {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return errRecognizerClosed
		}
		if !r.ready {
			c := r.loadLocked(defaultPools[:])
			r.mu.Unlock()
			if err := c.wait(ctx); err != nil {
				return err
			}
			continue
		}
		e, err := r.entryLocked(streamingPostSpeechFrames)
		if err != nil {
			r.mu.Unlock()
			return err
		}
		if e.pool.Live() >= r.warmN {
			if r.inUse == 0 {
				r.armLocked()
			}
			r.mu.Unlock()
			return nil
		}
		// Counted as in use while it warms, so no release takes it.
		e.out++
		r.inUse++
		r.disarmLocked()
		r.mu.Unlock()
		err = e.pool.Warm(ctx, r.warmN)
		r.giveBack(e)
		return err
	}
}

// loadLocked returns the load in progress, starting one that warms the
// pools of the silence windows given if there is none. r.mu is held and
// the recogniser is neither closed nor ready.
func (r *recognizer) loadLocked(pools []int) *loadCall {
	if r.loading != nil {
		return r.loading
	}
	c := &loadCall{done: make(chan struct{})}
	r.loading = c
	r.loads++
	// Added under mu while not closed: close's Wait comes after.
	r.loadWG.Add(1)
	go r.load(c, pools)
	return c
}

// load warms the pools of the silence windows given, in parallel, and
// marks the recogniser ready. A failed load leaves it cold; the next use
// tries again. A batch request warms its own pool alone: each decoder
// holds the whole model (about 95 MB), and a file transcription has no
// use for the stream's.
func (r *recognizer) load(c *loadCall, pools []int) {
	defer r.loadWG.Done()
	began := time.Now() // the work's real cost, whatever clock the engine runs on
	var entries []*poolEntry
	r.mu.Lock()
	for _, frames := range pools {
		e, err := r.entryLocked(frames)
		if err != nil {
			c.err = err
			break
		}
		entries = append(entries, e)
	}
	r.mu.Unlock()
	if c.err == nil && r.warmN > 0 {
		errs := make([]error, len(entries))
		var wg sync.WaitGroup
		for i, e := range entries {
			wg.Go(func() { errs[i] = e.pool.Warm(r.ctx, r.warmN) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			c.err = fmt.Errorf("load the speech model: %w", err)
		}
	}
	r.mu.Lock()
	r.loading = nil
	if c.err == nil && r.closed {
		c.err = errRecognizerClosed
	}
	if c.err == nil {
		r.ready = true
		if r.inUse == 0 {
			r.armLocked()
		}
	}
	r.mu.Unlock()
	if c.err != nil {
		r.log.Warn("the recogniser could not be loaded", "err", c.err)
	} else {
		r.log.Info("recogniser loaded", "took", time.Since(began).Round(time.Millisecond), "decoders", r.warmN*len(entries))
	}
	close(c.done)
}

// entryLocked returns the pool for a silence window, creating it if
// needed. r.mu is held.
func (r *recognizer) entryLocked(frames int) (*poolEntry, error) {
	r.tick++
	if e, ok := r.pools[frames]; ok {
		e.lastUsed = r.tick
		return e, nil
	}
	cfg := r.base
	cfg.VADPostSpeech = frames
	p, err := sphinx.NewPool(cfg, r.size)
	if err != nil {
		return nil, fmt.Errorf("speech model: %w", err)
	}
	e := &poolEntry{pool: p, lastUsed: r.tick}
	r.pools[frames] = e
	return e, nil
}

// checkout counts out one decoder of the pool for a silence window,
// loading the recogniser first if it is cold. The pool is counted as in
// use (out) before anything is evicted or released, under the same lock:
// otherwise a pool just created, or one whose last decoder was just
// returned, could be closed before the caller gets its decoder.
func (r *recognizer) checkout(ctx context.Context, frames int) (*poolEntry, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, errRecognizerClosed
		}
		if r.ready {
			e, err := r.entryLocked(frames)
			if err != nil {
				r.mu.Unlock()
				return nil, err
			}
			e.out++
			r.inUse++
			r.disarmLocked()
			r.evictLocked()
			r.mu.Unlock()
			return e, nil
		}
		warm := defaultPools[:]
		if frames == batchPostSpeechFrames {
			warm = []int{batchPostSpeechFrames}
		}
		c := r.loadLocked(warm)
		r.mu.Unlock()
		if err := c.wait(ctx); err != nil {
			return nil, err
		}
		// Loaded: go round to count the decoder out. Should the
		// recogniser have been released meanwhile, this loads it again.
	}
}

// giveBack ends what checkout counted, and arms the idle release once
// nothing is in use. With releaseBatch, the batch pool is closed once
// none of its decoders is out; a recogniser left with no pool is cold.
func (r *recognizer) giveBack(e *poolEntry) {
	r.mu.Lock()
	e.out--
	r.inUse--
	r.evictLocked()
	var batch *sphinx.Pool
	if r.releaseBatch && e.out == 0 && r.pools[batchPostSpeechFrames] == e {
		batch = e.pool
		delete(r.pools, batchPostSpeechFrames)
		if len(r.pools) == 0 {
			r.ready = false
			r.releases++
			r.disarmLocked()
		}
	}
	if r.inUse == 0 {
		r.armLocked()
	}
	r.mu.Unlock()
	if batch != nil {
		_ = batch.Close()
		sphinx.ReturnFreedMemory()
		r.log.Info("batch decoder released once its request was done")
	}
}

// armLocked (re)starts the idle-release timer. r.mu is held.
func (r *recognizer) armLocked() {
	r.disarmLocked()
	if r.idle < 0 || r.closed || !r.ready {
		return
	}
	gen := r.idleGen
	r.stopIdle = r.clock.AfterFunc(r.idle, func() { r.releaseIdle(gen) }).Stop
}

// disarmLocked stops the idle-release timer, if armed. r.mu is held.
func (r *recognizer) disarmLocked() {
	if r.stopIdle != nil {
		r.stopIdle()
		r.stopIdle = nil
	}
	r.idleGen++
}

// releaseIdle closes every pool, if the timer of generation gen is still
// the current one and nothing is in use, and returns the memory of their
// decoders to the system.
func (r *recognizer) releaseIdle(gen uint64) {
	r.mu.Lock()
	if gen != r.idleGen || r.closed || !r.ready || r.inUse > 0 || r.loading != nil {
		r.mu.Unlock()
		return
	}
	r.stopIdle = nil
	r.idleGen++
	r.ready = false
	r.releases++
	pools := r.takePoolsLocked()
	r.mu.Unlock()
	closePools(pools)
	sphinx.ReturnFreedMemory()
	r.log.Info("recogniser released after being idle", "idle", r.idle)
}

// takePoolsLocked empties the pool table and returns what it held.
func (r *recognizer) takePoolsLocked() []*sphinx.Pool {
	var pools []*sphinx.Pool
	for frames, e := range r.pools {
		pools = append(pools, e.pool)
		delete(r.pools, frames)
	}
	return pools
}

func closePools(pools []*sphinx.Pool) {
	for _, p := range pools {
		_ = p.Close()
	}
}

// evictLocked closes the least recently used idle pools beyond maxPools.
// The default pools are never let go (but for the idle release).
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
// frames of silence, and the function that gives it back. On a cold
// recogniser it waits for the load.
func (r *recognizer) decoder(ctx context.Context, frames int) (*sphinx.Decoder, func(), error) {
	e, err := r.checkout(ctx, frames)
	if err != nil {
		return nil, nil, err
	}
	d, err := e.pool.Get(ctx)
	if err != nil {
		r.giveBack(e)
		return nil, nil, fmt.Errorf("speech model: %w", err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			e.pool.Put(d)
			r.giveBack(e)
		})
	}
	return d, release, nil
}

// decoders returns how many decoders the pools hold, idle or in use.
func (r *recognizer) decoders() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.pools {
		n += e.pool.Live()
	}
	return n
}

// close closes every pool (decoders in use are closed when given back)
// and waits for a load in progress, whose decoders are then closed too.
func (r *recognizer) close() {
	r.mu.Lock()
	r.closed = true
	r.ready = false
	r.disarmLocked()
	pools := r.takePoolsLocked()
	r.mu.Unlock()
	r.cancel()
	closePools(pools)
	r.loadWG.Wait()
}
