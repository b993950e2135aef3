package engine

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"
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
// request's id and the writer's queue. Its run owns two goroutines, the
// reader (frames in) and the writer (frames out, in order); the
// endpoint's processor runs on run's own goroutine.
type socket struct {
	e    *Engine
	conn *websocket.Conn
	rid  string
	out  chan outFrame
}

// refuseOrigin refuses, with 403 and an error body, a WebSocket upgrade
// that checkOrigin refuses; it reports whether it did.
func refuseOrigin(w http.ResponseWriter, r *http.Request) bool {
	if err := checkOrigin(r); err != nil {
		writeError(w, r, http.StatusForbidden, "FORBIDDEN_ORIGIN", "The local engine refuses WebSocket connections from web pages: "+err.Error()+".")
		return true
	}
	return false
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

// run serves the socket: the reader and the writer on their own
// goroutines, process on this one until it returns how to close. Then the
// writer sends what is queued (for at most 5 s) and the socket closes.
func (s *socket) run(ctx context.Context, process func(ctx context.Context, in <-chan inbound, writeFailed <-chan struct{}) (websocket.StatusCode, string)) {
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
	writeFailed := make(chan struct{})
	go func() {
		defer close(writeDone)
		s.write(ioCtx, writeFailed)
	}()

	code, reason := process(ctx, in, writeFailed)

	// From here the reader only discards frames, so the close handshake
	// below can read the client's close frame.
	close(stop)
	close(s.out)
	select {
	case <-writeDone:
	case <-time.After(5 * time.Second):
	}
	_ = s.conn.Close(code, truncateReason(reason))
	s.conn.CloseNow()
	ioCancel()
	<-readDone
	<-writeDone
}

// read moves frames from the socket to the processor until reading fails;
// once stop is closed it discards them.
func (s *socket) read(ctx context.Context, in chan<- inbound, stop <-chan struct{}) {
	for {
		typ, data, err := s.conn.Read(ctx)
		f := inbound{binary: typ == websocket.MessageBinary, data: data, err: err}
		select {
		case in <- f:
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
