package tts

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Config configures a Synthesizer.
type Config struct {
	// EspeakData is the directory that holds espeak-ng's data (or the
	// espeak-ng-data directory itself), passed to the program as --path;
	// empty means the program's default (the Debian package
	// espeak-ng-data).
	EspeakData string
	// EspeakProgram is the espeak-ng program, a path or a name looked up
	// in PATH; empty means "espeak-ng" (the Debian package espeak-ng).
	EspeakProgram string
}

// Synthesizer speaks texts with the catalogue's voices. It is safe for
// concurrent use; see the package comment for how concurrent texts share
// the libraries.
type Synthesizer struct {
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	espeak *espeakRunner

	mu     sync.Mutex // guards closed and the Add side of wg
	closed bool
	wg     sync.WaitGroup // Synthesize calls in progress
}

// New initialises flite and registers every flite voice, so that the
// first request does not pay for it, and finds the espeak-ng program.
func New(cfg Config) (*Synthesizer, error) {
	if err := fliteInit(); err != nil {
		return nil, err
	}
	es, err := newEspeakRunner(cfg.EspeakProgram, cfg.EspeakData)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Synthesizer{ctx: ctx, cancel: cancel, espeak: es}, nil
}

// Close stops every synthesis in progress (they return ErrClosed) and
// waits for them, espeak-ng processes included. Later calls to Synthesize
// return ErrClosed. Close is idempotent. flite stays loaded for the life
// of the process.
func (s *Synthesizer) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// Pauses inserted between pieces, at speed 1 (they scale with 1/speed),
// and the silence kept at the start and end of the audio.
const (
	sentencePause = 0.30 // seconds
	clausePause   = 0.14
	wordPause     = 0.03
	leadKeep      = 0.02
	tailKeep      = 0.12
	// silenceLevel is the sample magnitude below which audio at a seam
	// counts as silence (about -50 dBFS).
	silenceLevel = 100
)

// Synthesize speaks text with voice v and calls emit with each chunk of
// audio as the library produces it, in order, from the calling goroutine.
// The first chunk comes after the first piece's analysis (a few
// milliseconds), not after the whole text. v is looked up in the
// catalogue by Name, so Voice{Name: "aura-asteria-en"} is enough.
//
// It returns nil once the whole text has been spoken and emitted; the
// context's error when ctx is cancelled (synthesis stops within one
// library buffer, about 20 ms of audio, or an espeak-ng process is
// killed); ErrClosed when the Synthesizer is
// closed; emit's error, unwrapped, when emit fails (synthesis stops too).
// A text with no words emits nothing and returns nil.
//
// Text is spoken as plain text: strip markup first (StripMarkup). Chunk
// offsets (TextEnd) refer to text as given.
func (s *Synthesizer) Synthesize(ctx context.Context, v Voice, text string, p Params, emit func(Chunk) error) error {
	voice, ok := Lookup(v.Name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownVoice, v.Name)
	}
	p = p.withDefaults()
	if err := p.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	if err := ctx.Err(); err != nil {
		return err
	}
	pieces := Split(text)
	if len(pieces) == 0 {
		return nil
	}
	run := newRun(voice, sanitize(text), p, pieces, s.espeak)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run.produce(runCtx)
	}()
	err := run.consume(runCtx, emit)
	cancel()
	run.q.close()
	wg.Wait()
	if err == nil {
		err = run.q.failure()
	}
	if err != nil && s.ctx.Err() != nil && ctx.Err() == nil && !errors.Is(err, errEmit) {
		return ErrClosed
	}
	var ee *emitError
	if errors.As(err, &ee) {
		return ee.err
	}
	return err
}

// errEmit marks an error that came from emit.
var errEmit = errors.New("emit failed")

type emitError struct{ err error }

func (e *emitError) Error() string   { return "tts: emit: " + e.err.Error() }
func (e *emitError) Is(t error) bool { return t == errEmit }

// item is one unit of the queue between the producer and emit.
type item struct {
	pcm     []int16
	textEnd int
	last    bool // the last item of a piece
}

// queue hands items from the producer (library callbacks) to the
// consumer. It never blocks the producer within a piece, so a slow
// consumer never holds a library lock; between pieces the producer waits
// for a token, so at most two pieces are ahead of the consumer.
type queue struct {
	mu     sync.Mutex
	items  []item
	err    error // the producer's error, set once
	done   bool  // the producer finished (err or not)
	closed bool  // the consumer left
	notify chan struct{}
	tokens chan struct{}
}

func newQueue() *queue {
	q := &queue{notify: make(chan struct{}, 1), tokens: make(chan struct{}, 2)}
	q.tokens <- struct{}{}
	q.tokens <- struct{}{}
	return q
}

func (q *queue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// push appends an item; it reports false when the consumer has left.
func (q *queue) push(it item) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, it)
	q.signal()
	return true
}

func (q *queue) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done, q.err = true, err
	q.signal()
}

func (q *queue) failure() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.items = nil
}

// take returns the queued items, and done when the producer has finished:
// nothing will follow them.
func (q *queue) take(buf []item) (items []item, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items = append(buf[:0], q.items...)
	clear(q.items)
	q.items = q.items[:0]
	return items, q.done
}

// run is one Synthesize call.
type run struct {
	voice  Voice
	text   string
	p      Params
	pieces []Piece
	q      *queue
	espeak *espeakRunner

	// Producer state, touched only by the producer goroutine (library
	// callbacks run on it).
	j joiner
}

func newRun(v Voice, text string, p Params, pieces []Piece, es *espeakRunner) *run {
	return &run{voice: v, text: text, p: p, pieces: pieces, q: newQueue(), espeak: es}
}

// consume emits items until the producer is done, ctx ends or emit fails.
func (r *run) consume(ctx context.Context, emit func(Chunk) error) error {
	var buf []item
	textEnd := 0
	for {
		items, done := r.q.take(buf)
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return err
			}
			textEnd = max(textEnd, it.textEnd)
			if it.last {
				r.q.tokens <- struct{}{} // never blocks: one token per piece taken
			}
			if len(it.pcm) == 0 && !(it.last && it.textEnd == len(r.text)) {
				continue
			}
			if err := emit(Chunk{PCM: it.pcm, TextEnd: textEnd}); err != nil {
				return &emitError{err}
			}
		}
		buf = items
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.q.notify:
		}
	}
}

// produce synthesises every piece in order.
func (r *run) produce(ctx context.Context) {
	r.j = joiner{rate: r.voice.NativeRate, speed: r.p.Speed}
	for i, pc := range r.pieces {
		select {
		case <-ctx.Done():
			r.q.finish(ctx.Err())
			return
		case <-r.q.tokens:
		}
		next := Boundary(0)
		if i+1 < len(r.pieces) {
			next = pc.Boundary
		}
		end := pc.End
		if i+1 == len(r.pieces) {
			end = len(r.text)
		}
		r.j.startPiece(i == 0, next, end)
		var err error
		switch r.voice.backend {
		case flite:
			err = r.fliteP(ctx, pc)
		case espeak:
			err = r.espeakP(ctx, pc)
		default:
			err = fmt.Errorf("%w: %q has no engine", ErrUnknownVoice, r.voice.Name)
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			r.q.finish(err)
			return
		}
		if !r.flush(r.j.endPiece()) {
			r.q.finish(ctx.Err())
			return
		}
	}
	r.q.finish(nil)
}

func (r *run) flush(its []item) bool {
	for _, it := range its {
		if !r.q.push(it) {
			return false
		}
	}
	return true
}

// fliteP synthesises one piece with flite.
func (r *run) fliteP(ctx context.Context, pc Piece) error {
	sink := &fliteAdapter{r: r, ctx: ctx, pc: pc}
	return fliteSynth(r.voice.id, r.text[pc.Start:pc.End], 1/r.p.Speed, pitchScale(r.p.Expressivity), r.voice.pitch, sink)
}

type fliteAdapter struct {
	r   *run
	ctx context.Context
	pc  Piece
}

func (a *fliteAdapter) audio(pcm []int16, rate int, ws []fliteWord) bool {
	if a.ctx.Err() != nil {
		return false
	}
	if ws != nil {
		a.r.j.setWords(fliteWordEnds(a.r.text, a.pc, ws, rate))
	}
	return a.r.flush(a.r.j.add(pcm))
}

// fliteWordEnds turns flite's word timings into (sample, text offset)
// marks. flite's file_pos is the offset just past a token and the one
// white-space character after it; the mark is the end of the last word of
// the piece that ends at or before it.
func fliteWordEnds(text string, pc Piece, ws []fliteWord, rate int) []mark {
	spans := words(text[pc.Start:pc.End])
	marks := make([]mark, 0, len(ws))
	end := 0.0
	for _, w := range ws {
		end = max(end, w.end)
		i := sort.Search(len(spans), func(i int) bool { return spans[i].end > w.pos }) - 1
		if i < 0 {
			continue
		}
		marks = append(marks, mark{sample: int(end * float64(rate)), textEnd: pc.Start + spans[i].end})
	}
	return marks
}

// espeakP synthesises one piece with an espeak-ng process. The program
// reports no word events, so the text covered advances when the piece is
// done (joiner.endPiece). It has no pitch-range control either, so
// expressivity is not used (no espeak-ng voice is a turn-based voice,
// whose endpoint takes expressivity).
func (r *run) espeakP(ctx context.Context, pc Piece) error {
	return r.espeak.synth(ctx, r.voice.id, r.text[pc.Start:pc.End], r.p.Speed, r.voice.pitch, func(pcm []int16) bool {
		if ctx.Err() != nil {
			return false
		}
		return r.flush(r.j.add(pcm))
	})
}
