package engine

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/internal/clock"
)

// inbound is one frame from the client, or the end of reading.
type inbound struct {
	binary bool
	data   []byte
	err    error
}

// outFrame is one frame for a socket's writer. The listen streams send
// plain text frames; the speak streams use the other fields too.
type outFrame struct {
	binary bool
	data   []byte
	// stale, when set and true at write time, drops the frame: its audio
	// or message was cleared or interrupted while it waited.
	stale func() bool
	// build, when set, makes the frame's messages at write time, from the
	// writer's own bookkeeping (what audio has really been sent).
	build func() [][]byte
	// written runs after the frame was written.
	written func()
}

// socket is what every WebSocket endpoint shares: the connection, the
// request's id and the writer's queue. Its serve is the one loop of every
// endpoint: it owns two goroutines, the reader (frames in) and the writer
// (frames out, in order), and on its own goroutine takes the frames, keeps
// the idle window, and ends the stream on a write failure, on the engine's
// Close or when the endpoint says so, with the close code. What an
// endpoint does with a frame is its streamHandler.
type socket struct {
	e    *Engine
	conn *websocket.Conn
	rid  string
	out  chan outFrame
	// writeFailed is closed when a write fails: the client is gone.
	// serve makes it before the handler runs.
	writeFailed chan struct{}
}

// streamHandler is what one WebSocket endpoint does with its stream; the
// loop (socket.serve) does the rest. Its functions run on the loop's
// goroutine, one at a time; text and audio return how the socket closes
// when done is true.
type streamHandler struct {
	// start, when set, runs before the first frame is read: the stream's
	// first message, the endpoint's own goroutines.
	start func(ctx context.Context)
	// text handles a text message.
	text func(ctx context.Context, data []byte) (code websocket.StatusCode, reason string, done bool)
	// audio handles a binary frame, an empty one too.
	audio func(ctx context.Context, data []byte) (code websocket.StatusCode, reason string, done bool)
	// idle, when set, ends a stream from which nothing arrived within
	// the engine's idle window: it sends what the endpoint says then and
	// returns how to close. Nil: the stream has no idle window.
	idle func(ctx context.Context) (websocket.StatusCode, string)
	// wake, when set, carries work the endpoint's own goroutines hand to
	// the loop (an agent's reply that ended); the loop runs it between
	// frames.
	wake <-chan func(ctx context.Context)
	// stop, when set, runs once the loop has ended, before the writer
	// is closed: it ends the endpoint's own goroutines, which may write.
	stop func()
}

// acceptSocket counts a stream, so that the engine's Close waits for it,
// and upgrades the request; every other check must have been made. A
// client message may hold readLimit bytes, and queue frames may wait for
// the writer. When ok, done must be called once the socket has been
// served; otherwise the request has been answered.
func (e *Engine) acceptSocket(w http.ResponseWriter, r *http.Request, readLimit int64, queue int) (s *socket, done func(), ok bool) {
	if !e.beginStream() {
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", reasonShutdown+".")
		return nil, nil, false
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		e.streams.Done()
		return nil, nil, false // Accept has answered
	}
	conn.SetReadLimit(readLimit)
	return &socket{e: e, conn: conn, rid: requestID(r.Context()), out: make(chan outFrame, queue)}, e.streams.Done, true
}

// serve serves the socket: the reader and the writer on their own
// goroutines, the loop on this one until it returns how to close. Then
// the writer sends what is queued (for at most 5 s) and the socket closes.
func (s *socket) serve(ctx context.Context, h streamHandler) {
	// The socket's reads and writes use a context the engine's Close does
	// not cancel: the library drops the connection when the context of a
	// pending Read or Write ends, and the stream must still say goodbye
	// with a close frame. Closing the connection below ends them.
	ioCtx, ioCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ioCancel()
	in := make(chan inbound, 16)
	stop := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.read(ioCtx, in, stop)
	}()
	writeDone := make(chan struct{})
	s.writeFailed = make(chan struct{})
	go func() {
		defer close(writeDone)
		s.write(ioCtx, s.writeFailed)
	}()

	code, reason := s.loop(ctx, in, h)
	if h.stop != nil {
		h.stop()
	}

	// From here the reader only discards frames, so the close handshake
	// below can read the client's close frame.
	close(stop)
	close(s.out)
	// A bound on the network, as the writer's own timeout is, so on
	// real time: not a rule of the interface a test moves a clock for.
	drain := time.NewTimer(5 * time.Second)
	select {
	case <-writeDone:
	case <-drain.C:
	}
	drain.Stop()
	_ = s.conn.Close(code, truncateReason(reason))
	s.conn.CloseNow()
	ioCancel()
	<-readDone
	<-writeDone
}

// loop takes the client's frames and hands them to h until h, the
// client, the engine's Close, a failed write or the idle window ends the
// stream; it returns how to close.
//
// The idle window is the client's silence, not the loop's: when it ends
// while the loop was busy with a frame before (decoding is slow on a
// loaded machine), a frame that arrived meanwhile still counts.
func (s *socket) loop(ctx context.Context, in <-chan inbound, h streamHandler) (websocket.StatusCode, string) {
	if h.start != nil {
		h.start(ctx)
	}
	var idle clock.Timer
	var idleC <-chan time.Time
	if h.idle != nil {
		idle = s.e.clock.NewTimer(s.e.cfg.IdleTimeout)
		defer idle.Stop()
		idleC = idle.C()
	}
	for {
		var f inbound
		select {
		case <-ctx.Done():
			return websocket.StatusGoingAway, reasonShutdown
		case <-s.writeFailed:
			return websocket.StatusGoingAway, ""
		case work := <-h.wake:
			work(ctx)
			continue
		case <-idleC:
			var ok bool
			if f, ok = arrivedWhileBusy(in); !ok {
				return h.idle(ctx)
			}
		case f = <-in:
		}
		if f.err != nil {
			return websocket.StatusNormalClosure, ""
		}
		if idle != nil {
			idle.Reset(s.e.cfg.IdleTimeout)
		}
		if hook := s.e.messageTaken; hook != nil {
			hook()
		}
		handle := h.text
		if f.binary {
			handle = h.audio
		}
		if code, reason, done := handle(ctx, f.data); done {
			return code, reason
		}
	}
}

// arrivedWhileBusy returns a frame that is waiting in in, if any.
func arrivedWhileBusy(in <-chan inbound) (inbound, bool) {
	select {
	case f := <-in:
		return f, true
	default:
		return inbound{}, false
	}
}

// read moves frames from the socket to the processor until reading fails;
// once stop is closed it discards them.
func (s *socket) read(ctx context.Context, in chan<- inbound, stop <-chan struct{}) {
	for {
		typ, data, err := s.conn.Read(ctx)
		f := inbound{binary: typ == websocket.MessageBinary, data: data, err: err}
		select {
		case in <- f:
			if h := s.e.frameQueued; h != nil {
				h()
			}
		case <-stop:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// write sends the frames in order, dropping the stale ones. When a write
// fails it closes failed and drains the queue, so that no sender blocks
// on a dead socket.
func (s *socket) write(ctx context.Context, failed chan<- struct{}) {
	for f := range s.out {
		if f.stale != nil && f.stale() {
			continue
		}
		msgs := [][]byte{f.data}
		if f.build != nil {
			msgs = f.build()
		}
		typ := websocket.MessageText
		if f.binary {
			typ = websocket.MessageBinary
		}
		for _, m := range msgs {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := s.conn.Write(wctx, typ, m)
			cancel()
			if err != nil {
				close(failed)
				for range s.out {
					// Drain.
				}
				return
			}
		}
		if f.written != nil {
			f.written()
		}
	}
}

// truncateReason keeps a close reason within the 123 bytes a close frame
// allows.
func truncateReason(r string) string {
	if len(r) <= 123 {
		return r
	}
	cut := 120
	for cut > 0 && (r[cut]&0xC0) == 0x80 {
		cut--
	}
	return r[:cut] + "..."
}
