package sessions_test

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
)

// fakeSpeech is a speech service in memory: each flushed text becomes
// charAudio of a tone per character, sent in frames of fakeFrameDur as
// fast as they are read. With holdAt, it holds every turn after that
// many frames until the client says something, and tells held, so that
// a test can interrupt a turn in the middle without a clock; a deaf
// service then never answers Clear or Interrupt.
type fakeSpeech struct {
	charAudio time.Duration
	holdAt    int
	held      chan struct{} // with holdAt: told each time a turn holds
	deaf      bool
	failOpen  error
	// refuse, when set, is asked of each Speak on /v1/speak (counted from
	// 0 on each stream): true refuses it for rate, as the service does,
	// with a Warning DATA-0001, and its text is not buffered.
	refuse func(speak int) bool

	mu      sync.Mutex
	v1      []api.SpeakOptions
	v2      []api.SpeakV2Options
	streams []*fakeSpeakStream
}

const (
	fakeRate     = sessions.SynthesisRate
	fakeFrameDur = 20 * time.Millisecond
)

func (f *fakeSpeech) SpeakStream(ctx context.Context, o api.SpeakOptions) (sessions.SpeakStream, error) {
	if f.failOpen != nil {
		return nil, f.failOpen
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v1 = append(f.v1, o)
	s := newFakeSpeakStream(f, false)
	f.streams = append(f.streams, s)
	return s, nil
}

func (f *fakeSpeech) SpeechStream(ctx context.Context, o api.SpeakV2Options) (sessions.SpeechStream, error) {
	if f.failOpen != nil {
		return nil, f.failOpen
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v2 = append(f.v2, o)
	s := newFakeSpeakStream(f, true)
	f.streams = append(f.streams, s)
	return v2Stream{s}, nil
}

func (f *fakeSpeech) stream(i int) *fakeSpeakStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams[i]
}

// fakeSpeakStream is one stream of fakeSpeech, for either endpoint. A
// goroutine of its own, stopped by Close, plays the service.
type fakeSpeakStream struct {
	f   *fakeSpeech
	v2  bool
	ctl chan string // "speak:TEXT", "flush", "clear", "interrupt", "close"
	out chan any
	end chan struct{}
	wg  sync.WaitGroup

	once sync.Once
	mu   sync.Mutex
	sent []string // control messages, in order
}

func newFakeSpeakStream(f *fakeSpeech, v2 bool) *fakeSpeakStream {
	s := &fakeSpeakStream{f: f, v2: v2, ctl: make(chan string, 64), out: make(chan any, 1024), end: make(chan struct{})}
	s.wg.Go(s.serve)
	if v2 {
		s.out <- &api.SpeechConnected{RequestID: "fake", ModelName: "fake-voice"}
	} else {
		s.out <- &api.SpeakMetadata{RequestID: "fake", ModelName: "fake-voice"}
	}
	return s
}

func (s *fakeSpeakStream) send(ctx context.Context, m string) error {
	s.mu.Lock()
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	select {
	case s.ctl <- m:
		return nil
	case <-s.end:
		return errors.New("fake stream closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *fakeSpeakStream) controls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

func (s *fakeSpeakStream) Speak(ctx context.Context, t string) error {
	if t == "" {
		return api.ErrEmptyText
	}
	return s.send(ctx, "speak:"+t)
}
func (s *fakeSpeakStream) Flush(ctx context.Context) error       { return s.send(ctx, "flush") }
func (s *fakeSpeakStream) Clear(ctx context.Context) error       { return s.send(ctx, "clear") }
func (s *fakeSpeakStream) Interrupt(ctx context.Context) error   { return s.send(ctx, "interrupt") }
func (s *fakeSpeakStream) CloseStream(ctx context.Context) error { return s.send(ctx, "close") }

func (s *fakeSpeakStream) next(ctx context.Context) (any, error) {
	select {
	case m, ok := <-s.out:
		if !ok {
			return nil, io.EOF
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *fakeSpeakStream) Next(ctx context.Context) (api.SpeakMessage, error) {
	m, err := s.next(ctx)
	if err != nil {
		return nil, err
	}
	return m.(api.SpeakMessage), nil
}

// SpeechStream's Next has another type: the fake answers both.
func (s *fakeSpeakStream) speechNext(ctx context.Context) (api.SpeechMessage, error) {
	m, err := s.next(ctx)
	if err != nil {
		return nil, err
	}
	return m.(api.SpeechMessage), nil
}

func (s *fakeSpeakStream) Close() error {
	s.once.Do(func() { close(s.end) })
	s.wg.Wait()
	return nil
}

// serve plays the service until Close or the client's Close message.
func (s *fakeSpeakStream) serve() {
	defer close(s.out)
	var buf string
	turns, speaks := 0, 0
	for {
		var m string
		select {
		case m = <-s.ctl:
		case <-s.end:
			return
		}
		switch {
		case strings.HasPrefix(m, "speak:"):
			speaks++
			if !s.v2 && s.f.refuse != nil && s.f.refuse(speaks-1) {
				s.put(&api.SpeakWarning{Code: api.CodeRateTooHigh, Description: "Character submission rate too high."})
				break
			}
			buf += strings.TrimPrefix(m, "speak:")
		case m == "flush" && buf == "" && !s.v2:
			// Nothing to say: answered at once.
			if !s.put(&api.Flushed{SequenceID: turns}) {
				return
			}
			turns++
		case m == "flush":
			text := buf
			buf = ""
			if !s.speakTurn(text, turns) {
				return
			}
			turns++
		case m == "interrupt":
			s.put(&api.SpeechWarning{Code: api.CodeNoActiveSpeech, Description: "no turn in progress"})
		case m == "clear":
			buf = ""
			s.put(&api.Cleared{})
		case m == "close":
			if s.v2 {
				s.put(&api.SessionMetadata{})
			}
			return
		}
	}
}

func (s *fakeSpeakStream) put(m any) bool {
	select {
	case s.out <- m:
		return true
	case <-s.end:
		return false
	}
}

// speakTurn sends the audio of text frame by frame, watching for an
// interruption between frames.
func (s *fakeSpeakStream) speakTurn(text string, n int) bool {
	id := "dg_sp_fake" + string(rune('a'+n))
	if s.v2 {
		s.put(&api.SpeechTurnStarted{SpeechID: id})
	}
	total := time.Duration(len([]rune(text))) * s.f.charAudio
	frames := max(int(total/fakeFrameDur), 1)
	for i := range frames {
		hold := s.f.holdAt > 0 && i == s.f.holdAt
		if hold {
			select {
			case s.f.held <- struct{}{}:
			case <-s.end:
				return false
			}
		}
		for {
			var m string
			if hold {
				select {
				case m = <-s.ctl:
				case <-s.end:
					return false
				}
			} else {
				select {
				case m = <-s.ctl:
				case <-s.end:
					return false
				default:
				}
			}
			switch {
			case (m == "interrupt" || m == "clear") && s.f.deaf:
				continue
			case m == "interrupt":
				spoken, rest := splitWords(text, float64(i)/float64(frames))
				return s.put(&api.SpeechInterrupted{SpeechID: id, TextSpoken: spoken, TextRemaining: rest})
			case m == "clear":
				return s.put(&api.Cleared{})
			case m == "close":
				return false
			case hold && m == "":
				continue
			}
			break
		}
		if !s.put(&api.SpeakAudio{Data: tone(fakeFrameDur, i)}) {
			return false
		}
	}
	if s.v2 {
		return s.put(&api.SpeechFlushed{SpeechID: id}) && s.put(&api.SpeechMetadata{SpeechID: id, InputCharacterCount: len(text)})
	}
	return s.put(&api.Flushed{SequenceID: n})
}

// splitWords splits text at a word boundary near frac of it.
func splitWords(text string, frac float64) (string, string) {
	r := []rune(text)
	cut := int(frac * float64(len(r)))
	for cut > 0 && cut < len(r) && !unicode.IsSpace(r[cut-1]) {
		cut--
	}
	return string(r[:cut]), string(r[cut:])
}

// tone is d of a 440 Hz tone as linear16 bytes; frame i continues the
// phase of the frames before it.
func tone(d time.Duration, i int) []byte {
	n := int(d * fakeRate / time.Second)
	b := make([]byte, 2*n)
	for k := range n {
		t := float64(i*n+k) / fakeRate
		v := int16(8000 * math.Sin(2*math.Pi*440*t))
		b[2*k], b[2*k+1] = byte(v), byte(uint16(v)>>8)
	}
	return b
}

type v2Stream struct{ *fakeSpeakStream }

func (s v2Stream) Next(ctx context.Context) (api.SpeechMessage, error) { return s.speechNext(ctx) }

// fakeSpeakers opens fakePlayers, which play factor times faster than
// clock (the real one when nil) into nothing.
type fakeSpeakers struct {
	factor float64
	clock  clock.Clock
	fail   error

	mu      sync.Mutex
	players []*fakePlayer
}

func (f *fakeSpeakers) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: "fake", Name: "Fake speaker", Default: true}}, nil
}

func (f *fakeSpeakers) Open(_ context.Context, _ string, rate int) (sessions.Player, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	p := &fakePlayer{rate: rate, factor: f.factor, clock: clock.Or(f.clock), changed: make(chan struct{})}
	f.mu.Lock()
	f.players = append(f.players, p)
	f.mu.Unlock()
	return p, nil
}

func (f *fakeSpeakers) opened() []*fakePlayer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakePlayer(nil), f.players...)
}

// fakePlayer "plays" from its first Write at factor times its clock.
type fakePlayer struct {
	rate   int
	factor float64
	clock  clock.Clock

	mu      sync.Mutex
	written int
	first   time.Time
	stopped int // samples played when stopped; -1 while playing
	stops   int
	closed  bool
	pcm     []int16
	changed chan struct{} // closed and replaced on Write, Stop and Close
}

func (p *fakePlayer) playedSamples() int {
	if p.first.IsZero() {
		return 0
	}
	if p.stops > 0 {
		return p.stopped
	}
	n := int(p.clock.Now().Sub(p.first).Seconds() * p.factor * float64(p.rate))
	return min(n, p.written)
}

// change wakes whoever waits on the player; p.mu is held.
func (p *fakePlayer) change() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// waitWritten waits until n samples were written, or done is closed.
func (p *fakePlayer) waitWritten(n int, done <-chan struct{}) {
	for {
		p.mu.Lock()
		enough, ch := p.written >= n, p.changed
		p.mu.Unlock()
		if enough {
			return
		}
		select {
		case <-ch:
		case <-done:
			return
		}
	}
}

func (p *fakePlayer) Write(ctx context.Context, pcm []int16) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return device.ErrPlaybackClosed
	}
	if p.first.IsZero() {
		p.first = p.clock.Now()
	}
	p.written += len(pcm)
	p.pcm = append(p.pcm, pcm...)
	p.change()
	return nil
}

func (p *fakePlayer) End() {}

// Drain waits, on the player's clock, until all was played or Stop.
func (p *fakePlayer) Drain(ctx context.Context) error {
	for {
		p.mu.Lock()
		left, stopped, ch := p.written-p.playedSamples(), p.stops > 0, p.changed
		p.mu.Unlock()
		switch {
		case stopped:
			return device.ErrInterrupted
		case left <= 0:
			return nil
		}
		d := time.Duration(float64(left) / p.factor / float64(p.rate) * float64(time.Second))
		t := p.clock.NewTimer(max(d, time.Microsecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-ch:
		case <-t.C():
		}
		t.Stop()
	}
}

func (p *fakePlayer) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stops == 0 {
		p.stopped = p.playedSamples()
	}
	p.stops++
	p.change()
}

func (p *fakePlayer) Played() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.playedSamples()) * time.Second / time.Duration(p.rate)
}

func (p *fakePlayer) Queued() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.written-p.playedSamples()) * time.Second / time.Duration(p.rate)
}

func (p *fakePlayer) FirstWrite() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

func (p *fakePlayer) Started() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.IsZero() {
		return time.Time{}
	}
	return p.first.Add(time.Millisecond)
}

func (p *fakePlayer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.change()
	return nil
}
