package sessions

import (
	"context"
	"errors"
	"sync"
)

// CompareSideEvent opens the events of one side of a comparison: every
// event after it, until the next CompareSideEvent, is of Side's
// synthesis ("A" or "B").
type CompareSideEvent struct {
	Side      string
	Synthesis *Synthesis
}

func (*CompareSideEvent) isEvent() {}

// Comparison speaks the same text with two voices, one after the other,
// and keeps both. Stop stops the side speaking and does not start the
// next. Its life is the sessions' one lifecycle. Stop, Done, Events and
// Results are safe for concurrent use; Events must be read until it is
// closed.
type Comparison struct {
	*lifecycle

	mu      sync.Mutex // guards results
	results []SynthesisResult
}

// Compare checks both requests (the text in voice A, then in voice B)
// and starts speaking A. The speed and expressivity apply to each voice
// as far as it takes them: a voice that speaks at its own pace only, or
// takes no expressivity, is asked for none. ctx bounds the comparison.
func (v *Voices) Compare(ctx context.Context, req SynthesisRequest, voiceB string) (*Comparison, error) {
	return v.compare(ctx, req, voiceB, v.cfg.Clock)
}

// compare is Compare timed by clk (nil for the real clock).
func (v *Voices) compare(ctx context.Context, req SynthesisRequest, voiceB string, clk Clock) (*Comparison, error) {
	a, b := fitRequest(req, req.Voice), fitRequest(req, voiceB)
	if err := a.Check(); err != nil {
		return nil, err
	}
	if err := b.Check(); err != nil {
		return nil, err
	}
	c := &Comparison{lifecycle: newLifecycle("compare", clk)}
	err := c.start(ctx, func(ctx context.Context) (runFunc, error) {
		first, err := v.synthesize(ctx, a, clk)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return c.run(ctx, v, first, b) }, nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// fitRequest returns req for voice, without the settings voice does not
// take.
func fitRequest(req SynthesisRequest, voice string) SynthesisRequest {
	req.Voice = voice
	sr := SpeedRangeOf(voice)
	if !sr.Adjustable {
		req.Speed = 1
	} else if req.Speed != 0 {
		req.Speed = min(max(req.Speed, sr.Min), sr.Max)
	}
	if !Expressive(voice) {
		req.Expressivity = 0
		req.TurnByTurn = false
	}
	return req
}

func (c *Comparison) run(ctx context.Context, v *Voices, first *Synthesis, b SynthesisRequest) error {
	errA := c.follow("A", first)
	select {
	case <-c.stopping():
		return errA
	case <-ctx.Done():
		return errors.Join(errA, ctx.Err())
	default:
	}
	second, err := v.synthesize(ctx, b, c.clock)
	if err != nil {
		return errors.Join(errA, err)
	}
	return errors.Join(errA, c.follow("B", second))
}

// follow forwards a synthesis's events until it ends, stopping it on Stop.
func (c *Comparison) follow(side string, s *Synthesis) error {
	c.emit(&CompareSideEvent{Side: side, Synthesis: s})
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.stopping():
			s.Stop()
		case <-stopped:
		}
	})
	for ev := range s.Events() {
		c.emit(ev)
	}
	err := s.Stop()
	close(stopped)
	wg.Wait()
	c.mu.Lock()
	c.results = append(c.results, s.Result())
	c.mu.Unlock()
	return err
}

// Events returns the comparison's events: a *CompareSideEvent, then that
// side's events (see Synthesis.Events), for A then B. It is closed once
// both have ended.
func (c *Comparison) Events() <-chan Event { return c.lifecycle.Events() }

// Done is closed once both sides have ended.
func (c *Comparison) Done() <-chan struct{} { return c.lifecycle.Done() }

// Stop stops the side speaking, and B if A is speaking; it waits for the
// end and returns why a side failed, if one did. It is idempotent.
func (c *Comparison) Stop() error { return c.lifecycle.Stop() }

// Results returns the syntheses kept so far, A first.
func (c *Comparison) Results() []SynthesisResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]SynthesisResult, len(c.results))
	copy(out, c.results)
	return out
}
