package sessions

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
)

// closeWait is how a live session (captions, a conversation) waits at
// Stop for the service's last results: as long as the service makes
// progress (a message, a connection) or shows it is there, and no longer
// than maxCloseWait in all, however the service behaves.
//
// When the service has sent nothing for a whole wait, the run asks it for
// a WebSocket pong: a service that answers is working through the audio
// it was sent (a loaded machine decodes slower than real time), and is
// waited for again; one that does not answer within the next wait is
// given up on, and so is one whose connection fails.
type closeWait struct {
	wait, limit   clock.Timer
	waitC, limitC <-chan time.Time // nil until the wait begins
	answer        chan error
	cancel        context.CancelFunc // set while a ping is out
	log           *slog.Logger
	session       string // the session's name, in the log
}

func newCloseWait(clk clock.Clock, log *slog.Logger, session string) *closeWait {
	w := &closeWait{wait: clk.NewTimer(time.Hour), limit: clk.NewTimer(time.Hour), answer: make(chan error, 1), log: log, session: session}
	w.wait.Stop()
	w.limit.Stop()
	return w
}

// stop stops the timers; the run defers it.
func (w *closeWait) stop() {
	w.wait.Stop()
	w.limit.Stop()
}

// begin starts the wait, at Stop: silence for after gives up, and the
// whole wait is bounded by maxCloseWait.
func (w *closeWait) begin(after time.Duration) {
	w.wait.Reset(after)
	w.waitC = w.wait.C()
	w.limit.Reset(maxCloseWait)
	w.limitC = w.limit.C()
}

// progress restarts the wait, for after, once it has begun: the service
// answered.
func (w *closeWait) progress(after time.Duration) {
	if w.waitC != nil {
		w.wait.Reset(after)
	}
}

// silence is where the end of a wait without a word arrives; nil until
// the wait begins.
func (w *closeWait) silence() <-chan time.Time { return w.waitC }

// bound is where the end of the whole wait arrives; nil until it begins.
func (w *closeWait) bound() <-chan time.Time { return w.limitC }

// pong is where a ping's answer arrives: nil for a pong.
func (w *closeWait) pong() <-chan error { return w.answer }

// silent handles a wait that ended without a word: it sends a ping with
// ping on a goroutine the run's wg owns and waits after for its answer
// (a service busy with a backlog of audio may answer only once it has
// read its way to the ping), and reports true; it reports false when a
// ping is already out, so the service did not answer it: the run gives
// up.
func (w *closeWait) silent(ctx context.Context, wg *sync.WaitGroup, ping func(context.Context) error, after time.Duration) bool {
	if w.cancel != nil {
		return false
	}
	ctx, w.cancel = context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.answer <- ping(ctx) // buffered: never blocks the goroutine's end
	}()
	w.wait.Reset(after)
	return true
}

// answered ends the ping whose answer err arrived. A service that
// answered is there, and busy with the audio it has: it is waited for
// again, for after. One that did not is logged, and answered returns
// ErrServiceSilent: the run gives up.
func (w *closeWait) answered(err error, after time.Duration) error {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	if err != nil {
		w.log.Info(w.session+": the service did not answer at Stop", "err", err)
		return ErrServiceSilent
	}
	w.progress(after)
	return nil
}
