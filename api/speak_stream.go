package api

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// SpeakStream is an open /v1/speak WebSocket. Text goes out in Speak
// messages, with Flush, Clear and Close as control messages; audio and
// messages come back through Next. One goroutine reads and one writes, so
// a slow consumer never stalls the socket. Methods are safe for
// concurrent use; Close must be called to release the connection.
//
// When the service says characters arrive too fast (DATA-0001), the
// stream slows down instead of sending again at once: from then on Speak
// waits so that characters leave at no more than half the rate measured
// before the warning, and every further DATA-0001 halves that limit again
// (never below MinSpeakCharRate). The limit holds for the life of the
// stream. The warning is seen when Next reads it, so keep reading.
type SpeakStream struct {
	s         *socket
	requestID string
	pace      *charPacer
}

// SpeakStream opens a streaming synthesis on /v1/speak, authorized as the
// other streams are, including short-lived tokens. The options are
// checked for streaming before the connection is attempted (only
// linear16, mulaw and alaw stream; container, bit_rate, callback and
// priority are batch-only), and the handshake carries only the parameters
// the WebSocket takes.
func (c *Client) SpeakStream(ctx context.Context, opts SpeakOptions) (*SpeakStream, error) {
	if err := opts.CheckRequest(Streaming); err != nil {
		return nil, err
	}
	s, rid, err := c.dial(ctx, PathSpeak, opts.StreamQuery())
	if err != nil {
		return nil, fmt.Errorf("open speak stream: %w", err)
	}
	return &SpeakStream{s: s, requestID: rid, pace: newCharPacer()}, nil
}

// RequestID returns the request id the service gave the connection in
// the handshake, when it sent one (Metadata carries it too).
func (t *SpeakStream) RequestID() string { return t.requestID }

// Speak sends text to synthesize. Empty text is refused with an error
// matching ErrEmptyText and never sent (the service would answer 400).
// After a DATA-0001 it first waits for the pace the stream keeps; ctx
// bounds the wait.
func (t *SpeakStream) Speak(ctx context.Context, text string) error {
	if text == "" {
		return errEmptyText()
	}
	n := utf8.RuneCountInString(text)
	if err := t.pace.wait(ctx, n); err != nil {
		return err
	}
	return t.control(ctx, SpeakText{Text: text})
}

// Flush asks the service to synthesize the text buffered so far; it
// answers Flushed after the audio. The service takes at most
// MaxFlushesPerMinute a minute and answers more with a Warning
// EXCESSIVE_FLUSH (read with Next) instead of flushing.
func (t *SpeakStream) Flush(ctx context.Context) error { return t.control(ctx, SpeakFlush{}) }

// Clear drops the buffered text and the audio not yet sent, to stop
// speaking at once; the service answers Cleared.
func (t *SpeakStream) Clear(ctx context.Context) error { return t.control(ctx, SpeakClear{}) }

// CloseStream asks the service to finish the buffered text and close.
// Keep calling Next until it returns io.EOF.
func (t *SpeakStream) CloseStream(ctx context.Context) error { return t.control(ctx, SpeakClose{}) }

// CharRate returns the characters per second the stream holds itself to,
// or 0 while the service has not asked it to slow down.
func (t *SpeakStream) CharRate() float64 { return t.pace.limit() }

func (t *SpeakStream) control(ctx context.Context, m json.Marshaler) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	return t.s.send(ctx, false, b, true)
}

// Next returns the next message from the service: *SpeakAudio for a
// binary frame of audio, or a typed message. It returns io.EOF once the
// service has closed the stream normally, and otherwise the error that
// ended it (an *Error for a close frame with a reason). A text frame that
// cannot be decoded is returned as an *UnknownMessage with an empty Type.
// A Warning or Error with code DATA-0001 slows the stream down (see
// SpeakStream) and is returned as well.
func (t *SpeakStream) Next(ctx context.Context) (SpeakMessage, error) {
	f, err := t.s.next(ctx)
	if err != nil {
		return nil, err
	}
	if f.binary {
		return &SpeakAudio{Data: f.data}, nil
	}
	msg, err := DecodeSpeakMessage(f.data)
	if err != nil {
		return &UnknownMessage{Raw: f.data}, nil
	}
	code := ""
	switch m := msg.(type) {
	case *SpeakWarning:
		code = m.Code
	case *StreamError:
		code = m.Err().Code
	}
	if code == CodeRateTooHigh {
		t.pace.slowDown(time.Now())
	}
	return msg, nil
}

// Close closes the connection at once and releases its goroutines. It is
// idempotent. To end cleanly, call CloseStream and read to io.EOF first.
func (t *SpeakStream) Close() error { return t.s.close() }

// Pacing of a stream told DATA-0001.
const (
	// MinSpeakCharRate is the lowest rate, in characters per second, a
	// stream slows down to.
	MinSpeakCharRate = 10
	// paceWindow is the span over which the rate before a DATA-0001 is
	// measured.
	paceWindow = 2 * time.Second
	// paceBurst is how many seconds of characters may leave at once after
	// a pause.
	paceBurst = 1.0
)

// charPacer is a token bucket of characters, without limit until the
// first slowDown. Its fields are guarded by mu.
type charPacer struct {
	mu     sync.Mutex
	rate   float64 // characters per second; 0 is no limit
	tokens float64 // may go negative: characters reserved ahead of time
	last   time.Time
	recent []charMark // sends within paceWindow, to measure the rate
}

// charMark is a send of n characters at a time.
type charMark struct {
	at time.Time
	n  int
}

func newCharPacer() *charPacer { return &charPacer{} }

// limit returns the rate in force, 0 for none.
func (p *charPacer) limit() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

// reserve takes n characters from the bucket at now and returns how long
// the caller must wait before sending them.
func (p *charPacer) reserve(n int, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var delay time.Duration
	if p.rate > 0 {
		p.tokens = min(p.rate*paceBurst, p.tokens+now.Sub(p.last).Seconds()*p.rate)
		p.last = now
		p.tokens -= float64(n)
		if p.tokens < 0 {
			delay = time.Duration(-p.tokens / p.rate * float64(time.Second))
		}
	}
	p.record(now.Add(delay), n)
	return delay
}

// cancel gives back a reservation that was not used.
func (p *charPacer) cancel(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rate > 0 {
		p.tokens += float64(n)
	}
}

// record notes a send and forgets those older than the window.
func (p *charPacer) record(at time.Time, n int) {
	cut := 0
	for cut < len(p.recent) && at.Sub(p.recent[cut].at) > paceWindow {
		cut++
	}
	p.recent = append(p.recent[cut:], charMark{at: at, n: n})
}

// slowDown halves the rate: the first time, the rate measured over the
// last window; after that, the limit in force.
func (p *charPacer) slowDown(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rate == 0 {
		sent := 0
		for _, m := range p.recent {
			if now.Sub(m.at) <= paceWindow {
				sent += m.n
			}
		}
		p.rate = float64(sent) / paceWindow.Seconds() / 2
	} else {
		// Credit the time since the last send at the old rate first.
		p.tokens = min(p.rate*paceBurst, p.tokens+now.Sub(p.last).Seconds()*p.rate)
		p.rate /= 2
	}
	p.rate = max(p.rate, MinSpeakCharRate)
	// Nothing leaves at once after the warning.
	p.tokens = min(p.tokens, 0)
	p.last = now
}

// wait blocks until n characters may be sent, or ctx ends.
func (p *charPacer) wait(ctx context.Context, n int) error {
	d := p.reserve(n, time.Now())
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		p.cancel(n)
		return ctx.Err()
	}
}
