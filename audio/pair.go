package audio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// A meeting heard two ways at once: the microphone (the person) and the
// sound the computer plays (the others), as one two-channel source.

// pairFrame is the pair's frame: 20 ms at 16 kHz.
const pairFrame = SpeechRate / 50

// pairSlack is how far the second source may run ahead of the first
// before its oldest audio is dropped: more than any device's burst, less
// than a caption's worth of misalignment.
const pairSlack = 500 * time.Millisecond

// PairConfig configures NewPair.
type PairConfig struct {
	// EchoCancel removes from the first source (a microphone) the echo of
	// the second (what the speakers play), so that words played aloud are
	// not heard twice, on the first channel as well as the second.
	EchoCancel bool
}

// Pair is a two-channel Source at 16 kHz: channel 0 is the first source,
// channel 1 the second, aligned in time. The first source is the clock:
// a frame is made for each of its frames, with what the second has
// delivered meanwhile, or silence when it has none (a Windows loopback
// delivers nothing while nothing plays). Read, Format and Close follow
// Source; Read is for one goroutine at a time.
type Pair struct {
	first, second Source
	firstConv     *MonoConverter
	echo          *EchoCanceller

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	queue   []int16 // the second source's 16 kHz audio not yet paired
	err     error   // why the second source ended
	dropped int64   // the second's samples dropped to keep alignment

	rmu     sync.Mutex // held by Read: Close frees the canceller after it
	closed  bool
	pending []int16 // the first's 16 kHz audio not yet framed
	// quiet counts the frames since the second last carried sound: the
	// canceller's output is used only while an echo of it can still be
	// in the first; otherwise the first goes as it came.
	quiet   int
	fbuf    []float32
	out     []int16
	cleaned []int16
}

// NewPair pairs two sources; Close closes both.
func NewPair(first, second Source, cfg PairConfig) (*Pair, error) {
	ff, sf := first.Format(), second.Format()
	fc, err := NewConverter16kMono(ff.SampleRate, ff.Channels)
	if err != nil {
		return nil, fmt.Errorf("audio: pair: %w", err)
	}
	sc, err := NewConverter16kMono(sf.SampleRate, sf.Channels)
	if err != nil {
		return nil, fmt.Errorf("audio: pair: %w", err)
	}
	// Quiet until the computer plays: nothing to cancel yet.
	p := &Pair{first: first, second: second, firstConv: fc, quiet: echoFrames + 1}
	if cfg.EchoCancel {
		if p.echo, err = NewEchoCanceller(SpeechRate, DefaultEchoTail); err != nil {
			return nil, fmt.Errorf("audio: pair: %w", err)
		}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.readSecond(sc)
	return p, nil
}

// readSecond moves the second source's audio into the queue until it ends
// or the pair closes.
func (p *Pair) readSecond(conv *MonoConverter) {
	defer p.wg.Done()
	var buf []float32
	limit := int(pairSlack * SpeechRate / time.Second)
	for {
		pcm, err := p.second.Read(p.ctx)
		if err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			return
		}
		buf = Int16ToFloat32(buf[:0], pcm)
		got := conv.Convert(buf)
		p.mu.Lock()
		p.queue = append(p.queue, got...)
		if over := len(p.queue) - limit; over > 0 {
			p.queue = p.queue[over:]
			p.dropped += int64(over)
		}
		p.mu.Unlock()
	}
}

// Format implements Source: 16 kHz, two channels.
func (p *Pair) Format() Format {
	return Format{Encoding: EncodingLinear16, SampleRate: SpeechRate, Channels: 2}
}

// Read implements Source: the next 20 ms, interleaved. It ends when the
// first source ends; the second's failure ends it too, with its error,
// and its end (io.EOF) leaves its channel silent.
func (p *Pair) Read(ctx context.Context) ([]int16, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if p.closed {
		return nil, ErrSourceClosed
	}
	for len(p.pending) < pairFrame {
		pcm, err := p.first.Read(ctx)
		if err != nil {
			return nil, err
		}
		p.fbuf = Int16ToFloat32(p.fbuf[:0], pcm)
		p.pending = append(p.pending, p.firstConv.Convert(p.fbuf)...)
	}
	mic := p.pending[:pairFrame]
	sys := make([]int16, pairFrame)
	p.mu.Lock()
	n := copy(sys, p.queue)
	p.queue = p.queue[n:]
	err := p.err
	p.mu.Unlock()
	// The first source is the clock: a second that has ended (io.EOF) is
	// silent from then on; only its failure ends the pair.
	if err != nil && n == 0 && !errors.Is(err, ErrSourceClosed) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("audio: the second source of the pair: %w", err)
	}
	if p.echo != nil {
		if len(p.cleaned) != pairFrame {
			p.cleaned = make([]int16, pairFrame)
		}
		if err := p.echo.Process(p.cleaned, mic, sys); err != nil {
			return nil, err
		}
		if peak(sys) > quietPeak {
			p.quiet = 0
		} else {
			p.quiet++
		}
		if p.quiet <= echoFrames {
			mic = p.cleaned
		}
	}
	p.out = p.out[:0]
	for i := range pairFrame {
		p.out = append(p.out, mic[i], sys[i])
	}
	p.pending = append(p.pending[:0], p.pending[pairFrame:]...)
	return p.out, nil
}

// quietPeak is the loudest a frame of the computer's sound can be and
// still make no echo worth cancelling (-60 dBFS).
const quietPeak = 32

// echoFrames is how long, in frames, an echo of the computer's sound can
// linger in the microphone: the canceller's tail.
var echoFrames = int(DefaultEchoTail / (pairFrame * time.Second / SpeechRate))

func peak(p []int16) int {
	m := 0
	for _, v := range p {
		m = max(m, int(v), -int(v))
	}
	return m
}

// Dropped is how much of the second source was dropped because it ran
// ahead of the first by more than half a second.
func (p *Pair) Dropped() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.dropped) * time.Second / SpeechRate
}

// Close closes both sources and waits for the second's reader.
func (p *Pair) Close() error {
	p.cancel()
	err := errors.Join(p.first.Close(), p.second.Close())
	p.wg.Wait()
	// A Read under way ends with the first source's close; then the
	// canceller can go.
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.echo != nil {
		p.echo.Close()
		p.echo = nil
	}
	return err
}
