package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/tts"
)

// Limits of the speak WebSockets.
const (
	// maxSpeakFrameBytes bounds one client message: a Speak carries text.
	maxSpeakFrameBytes = 1 << 20
	// speakOutQueue is how many frames may wait for the writer; beyond it
	// synthesis waits, so a slow client slows synthesis down.
	speakOutQueue = 64
)

// speakSocket is what both speak WebSockets share: the socket and, beside
// its reader, writer and loop, the worker (jobs to audio), which the
// loop starts and stops (see withWorker).
type speakSocket struct {
	*socket
	// workDone is closed when the worker has returned.
	workDone chan struct{}
}

// acceptSpeak checks a speak WebSocket request, with plan for its query,
// and upgrades it. Every refusal comes before the upgrade, so it gets an
// HTTP status and an error body. When ok, done must be called once the
// socket has been served; otherwise the request has been answered.
func (e *Engine) acceptSpeak(w http.ResponseWriter, r *http.Request, plan func(url.Values, api.Mode) (*speakPlan, error)) (s *speakSocket, p *speakPlan, done func(), ok bool) {
	p, err := plan(r.URL.Query(), api.Streaming)
	if err != nil {
		writeOptionError(w, r, err)
		return nil, nil, nil, false
	}
	sock, done, ok := e.acceptSocket(w, r, maxSpeakFrameBytes, speakOutQueue)
	if !ok {
		return nil, nil, nil, false
	}
	return &speakSocket{socket: sock}, p, done, true
}

// withWorker completes h, a speak socket's handler: before the first
// frame the loop sends first and starts work on its own goroutine; once
// the loop ends it stops the worker and waits for it.
func (s *speakSocket) withWorker(first any, work func(ctx context.Context), h streamHandler) streamHandler {
	s.workDone = make(chan struct{})
	var workCancel context.CancelFunc
	h.start = func(ctx context.Context) {
		var workCtx context.Context
		workCtx, workCancel = context.WithCancel(ctx)
		go func() {
			defer close(s.workDone)
			work(workCtx)
		}()
		s.sendMsg(ctx, first)
	}
	h.stop = func() {
		workCancel()
		<-s.workDone
	}
	return h
}

// waitWorker waits for the worker to finish the jobs queued before a
// Close; it reports how the socket must close when it cannot.
func (s *speakSocket) waitWorker(ctx context.Context) (websocket.StatusCode, string, bool) {
	select {
	case <-s.workDone:
		return websocket.StatusNormalClosure, "", true
	case <-ctx.Done():
		return websocket.StatusGoingAway, reasonShutdown, false
	case <-s.writeFailed:
		return websocket.StatusGoingAway, "", false
	}
}

// queue hands a frame to the writer, or gives up when ctx ends.
func (s *speakSocket) queue(ctx context.Context, f outFrame) bool {
	select {
	case s.out <- f:
		return true
	case <-ctx.Done():
		return false
	}
}

// sendMsg queues a JSON message.
func (s *speakSocket) sendMsg(ctx context.Context, msg any) {
	s.queue(ctx, outFrame{data: s.encode(msg)})
}

// encode marshals a message; the messages are plain structs, so it cannot
// fail short of a bug, which is logged.
func (s *speakSocket) encode(msg any) []byte {
	b, err := json.Marshal(msg)
	if err != nil {
		s.e.log.Error("encode message", "request_id", s.rid, "err", err)
		return []byte(`{"type":"Error","code":"NET-0000","description":"internal error"}`)
	}
	return b
}

// rawEncoder turns the voice's samples into the socket's raw frames.
type rawEncoder struct {
	enc audio.Encoding
	pcm *pcmOut
}

func newRawEncoder(v tts.Voice, enc audio.Encoding, rate int) (*rawEncoder, error) {
	p, err := newPCMOut(v.NativeRate, rate)
	if err != nil {
		return nil, err
	}
	return &rawEncoder{enc: enc, pcm: p}, nil
}

// frame encodes samples (converted to the output rate) into a new slice;
// it returns the bytes and the number of output samples.
func (r *rawEncoder) frame(f []float32) ([]byte, int) {
	if len(f) == 0 {
		return nil, 0
	}
	return audio.EncodePCM(nil, f, r.enc), len(f)
}

// jobQueue is the processor's queue of synthesis jobs for the worker. A
// reset (Clear, Interrupt) cancels the job in progress and drops the
// rest. It is safe for concurrent use.
type jobQueue[J any] struct {
	mu      sync.Mutex // guards the fields below
	jobs    []J
	ctx     context.Context // the jobs' context, replaced by reset
	cancel  context.CancelFunc
	closing bool // no more jobs: next reports false once the queue is empty
	wake    chan struct{}
}

func newJobQueue[J any]() *jobQueue[J] {
	ctx, cancel := context.WithCancel(context.Background())
	return &jobQueue[J]{ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1)}
}

func (q *jobQueue[J]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// push adds a job.
func (q *jobQueue[J]) push(j J) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	q.signal()
}

// reset cancels the job in progress and drops the others; locked, when
// set, runs under the queue's lock, so that it is ordered with the
// worker's own locked steps (see locked).
func (q *jobQueue[J]) reset(locked func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancel()
	q.ctx, q.cancel = context.WithCancel(context.Background())
	clear(q.jobs)
	q.jobs = q.jobs[:0]
	if locked != nil {
		locked()
	}
}

// locked runs f under the queue's lock.
func (q *jobQueue[J]) locked(f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f()
}

// close says no more jobs will come.
func (q *jobQueue[J]) close() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	q.signal()
}

// stop releases the jobs' context.
func (q *jobQueue[J]) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancel()
}

// next waits for a job and returns it with a context that a reset
// cancels; it reports false when ctx ends or the queue is closed and
// empty.
func (q *jobQueue[J]) next(ctx context.Context) (J, context.Context, bool) {
	for {
		q.mu.Lock()
		if len(q.jobs) > 0 {
			j := q.jobs[0]
			var zero J
			q.jobs[0] = zero
			q.jobs = q.jobs[1:]
			jctx := q.ctx
			q.mu.Unlock()
			return j, jctx, true
		}
		closing := q.closing
		q.mu.Unlock()
		if closing {
			var zero J
			return zero, nil, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			var zero J
			return zero, nil, false
		}
	}
}

// jobContext derives the context of one job: it ends with the worker's
// context or with a reset.
func jobContext(worker, job context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(worker)
	stop := context.AfterFunc(job, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}
