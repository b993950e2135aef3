package sessions

import (
	"context"
	"log/slog"
	"sync"
)

// closePing tells a busy service from a gone one while a stopping stream
// waits for its last results. When the service has sent nothing for the
// whole wait, the run asks it for a WebSocket pong: a service that
// answers is working through the audio it was sent (a loaded machine
// decodes slower than real time), and is waited for again, up to the
// run's bound on the whole wait; one that does not answer within the
// next wait is given up on, and so is one whose connection fails.
type closePing struct {
	answer chan error
	cancel context.CancelFunc // set while a ping is out
}

func newClosePing() *closePing { return &closePing{answer: make(chan error, 1)} }

// start sends a ping with ping on a goroutine the run's wg owns, and
// reports whether it did: false when one is already out, so the service
// did not answer it within the wait.
func (p *closePing) start(ctx context.Context, wg *sync.WaitGroup, ping func(context.Context) error) bool {
	if p.cancel != nil {
		return false
	}
	ctx, p.cancel = context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.answer <- ping(ctx) // buffered: never blocks the goroutine's end
	}()
	return true
}

// C is where the ping's answer arrives: nil for a pong.
func (p *closePing) C() <-chan error { return p.answer }

// answered ends the ping whose answer err arrived, and reports whether
// the service is there to be waited for; what did not answer is logged
// under the session's name.
func (p *closePing) answered(err error, log *slog.Logger, session string) bool {
	if p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
	if err != nil {
		log.Info(session+": the service did not answer at Stop", "err", err)
		return false
	}
	return true
}
