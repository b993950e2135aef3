package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/coder/websocket"
)

// writeTimeout bounds a single frame write, so a dead peer cannot hold a
// sender forever.
const writeTimeout = 15 * time.Second

// readLimit bounds a single message from the service.
const readLimit = 4 << 20

// frame is a message on the socket.
type frame struct {
	binary bool
	data   []byte
	// done, when not nil, receives the result of the write.
	done chan error
}

// socket is a WebSocket connection with exactly one reader and one writer
// goroutine, both owned by the socket: close stops and waits for them.
// Received frames queue without bound, so the reader never blocks on a
// slow consumer. Methods are safe for concurrent use.
type socket struct {
	conn *websocket.Conn

	ctx    context.Context // lifetime of the goroutines
	cancel context.CancelFunc

	writes    chan frame
	writeDone chan struct{}
	readDone  chan struct{}

	mu       sync.Mutex // guards queue, readErr, writeErr
	queue    []frame
	readErr  error // why reading ended; nil for a clean close
	writeErr error // why writing ended
	notify   chan struct{}

	closeOnce sync.Once

	wire socketWire // what the tap is told; set before the goroutines start
}

// dial opens a socket to path with query q, authorizing the handshake.
// A refused handshake becomes an *Error with the status and body the
// server answered.
func (c *Client) dial(ctx context.Context, path string, q url.Values) (*socket, string, error) {
	u, err := c.endpoint.WebSocketURL(path, q)
	if err != nil {
		return nil, "", err
	}
	stream, start := nextWireStream(), time.Now()
	authz, err := c.authorization(ctx, authStream)
	if err != nil {
		return nil, "", err
	}
	h := http.Header{}
	h.Set("Authorization", authz)
	h.Set("User-Agent", c.userAgent)
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: h})
	sw := socketWire{tap: c.wire, stream: stream, label: WireLabel(ctx), path: path, opened: time.Now()}
	if err != nil {
		sw.dialFailed(q, resp, err, start)
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			var body []byte
			if resp.Body != nil {
				body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
			}
			return nil, "", ParseError(resp.StatusCode, body, resp.Header.Get(HeaderRequestID))
		}
		return nil, "", fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	c.log.Debug("websocket open", "path", path, "request_id", resp.Header.Get(HeaderRequestID))
	conn.SetReadLimit(readLimit)
	sw.open(q, resp.Header.Get(HeaderRequestID), start)
	return newSocket(conn, sw), resp.Header.Get(HeaderRequestID), nil
}

// newSocket starts the goroutines of a socket whose life sw reports.
func newSocket(conn *websocket.Conn, sw socketWire) *socket {
	ctx, cancel := context.WithCancel(context.Background())
	s := &socket{
		conn:      conn,
		ctx:       ctx,
		cancel:    cancel,
		writes:    make(chan frame, 32),
		writeDone: make(chan struct{}),
		readDone:  make(chan struct{}),
		notify:    make(chan struct{}, 1),
		wire:      sw,
	}
	go s.readLoop()
	go s.writeLoop()
	return s
}

func (s *socket) readLoop() {
	defer close(s.readDone)
	for {
		typ, data, err := s.conn.Read(s.ctx)
		if err != nil {
			ours := s.ctx.Err() != nil
			s.mu.Lock()
			s.readErr = closeError(err, ours)
			s.mu.Unlock()
			s.wire.ended(err, ours)
			s.signal()
			return
		}
		s.wire.frame(WireReceived, typ == websocket.MessageBinary, data)
		s.mu.Lock()
		s.queue = append(s.queue, frame{binary: typ == websocket.MessageBinary, data: data})
		s.mu.Unlock()
		s.signal()
	}
}

func (s *socket) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *socket) writeLoop() {
	defer close(s.writeDone)
	for {
		select {
		case <-s.ctx.Done():
			return
		case f := <-s.writes:
			typ := websocket.MessageText
			if f.binary {
				typ = websocket.MessageBinary
			}
			// Observed before it is written: once written, the answer it
			// brings may be read (and observed) before Write returns.
			// A write that fails is followed by its error event.
			s.wire.frame(WireSent, f.binary, f.data)
			wctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
			err := s.conn.Write(wctx, typ, f.data)
			cancel()
			if f.done != nil {
				f.done <- err
			}
			if err != nil {
				s.wire.writeFailed(err)
				s.mu.Lock()
				s.writeErr = err
				s.mu.Unlock()
				return
			}
		}
	}
}

// send queues a frame for the writer. With wait it returns once the frame
// is written; without, once it is queued.
func (s *socket) send(ctx context.Context, binary bool, data []byte, wait bool) error {
	f := frame{binary: binary, data: data}
	if wait {
		f.done = make(chan error, 1)
	}
	// Once the writer has stopped, the queue still has room but nobody
	// takes from it: a frame queued then would be lost, or waited for
	// forever.
	select {
	case <-s.writeDone:
		return s.closedErr()
	default:
	}
	select {
	case s.writes <- f:
	case <-s.writeDone:
		return s.closedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
	if !wait {
		return nil
	}
	select {
	case err := <-f.done:
		return writeResult(err)
	case <-s.writeDone:
		// The writer may have written the frame just before it stopped.
		select {
		case err := <-f.done:
			return writeResult(err)
		default:
			return s.closedErr()
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeResult is the error a waiting sender sees: nil, or ErrClosed
// wrapping why the write failed (a timeout, a lost connection).
func writeResult(err error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// closedErr explains why the socket no longer writes.
func (s *socket) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil && !errors.Is(s.readErr, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, s.readErr)
	}
	if s.writeErr != nil && s.ctx.Err() == nil {
		return fmt.Errorf("%w: %w", ErrClosed, s.writeErr)
	}
	return ErrClosed
}

// next returns the next received frame, io.EOF after a clean close, or
// the error that ended the connection.
func (s *socket) next(ctx context.Context) (frame, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			f := s.queue[0]
			s.queue[0] = frame{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return f, nil
		}
		select {
		case <-s.readDone:
			err := s.readErr
			s.mu.Unlock()
			if err == nil {
				return frame{}, io.EOF
			}
			return frame{}, err
		default:
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-s.readDone:
		case <-ctx.Done():
			return frame{}, ctx.Err()
		}
	}
}

// ping asks the peer to answer a WebSocket ping, and waits for its pong:
// the peer is there, however busy it is with what it was sent. It needs
// the read loop, which runs for the socket's life.
func (s *socket) ping(ctx context.Context) error {
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// close ends the connection at once and waits for both goroutines.
func (s *socket) close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.conn.CloseNow()
		<-s.readDone
		<-s.writeDone
	})
	return nil
}

// closeReasonCode matches a code such as DATA-0000 at the start of a close
// reason.
var closeReasonCode = regexp.MustCompile(`^[A-Z]+-\d{4}\b`)

// closeError turns the error that ended reading into what the caller
// sees: nil for a normal close, an *Error for a close frame carrying a
// reason, ErrClosed when we closed it ourselves.
func closeError(err error, ours bool) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if e := parseCloseReason(ce.Code, ce.Reason); e != nil {
			return e
		}
		return nil
	}
	if ours {
		return ErrClosed
	}
	if errors.Is(err, io.EOF) {
		// The peer vanished without a close frame. Keep io.EOF out of the
		// chain: to callers of Next it means a normal end.
		return fmt.Errorf("connection lost: %w (%v)", io.ErrUnexpectedEOF, err)
	}
	return fmt.Errorf("connection lost: %w", err)
}

// parseCloseReason reads a close frame: nil for a normal end (a normal
// closure without a code in its reason, going away, no status), else an
// *Error with the close code, and the code (DATA-0000) and message that
// the reason carries as "CODE: message" or "CODE message".
func parseCloseReason(code websocket.StatusCode, reason string) *Error {
	c := closeReasonCode.FindString(reason)
	switch code {
	case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd, websocket.StatusGoingAway:
		if code != websocket.StatusNormalClosure || c == "" {
			return nil
		}
	}
	if c == "" {
		return &Error{CloseCode: int(code), Message: reason}
	}
	// Every separator goes, however it is spelled, so that a message read
	// here and written back after its code reads the same again.
	rest := strings.TrimLeftFunc(reason[len(c):], func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
	return &Error{CloseCode: int(code), Code: c, Message: strings.TrimRightFunc(rest, unicode.IsSpace)}
}
