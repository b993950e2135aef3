package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// WireDirection says which way a message went.
type WireDirection string

// Directions of a wire event.
const (
	WireSent     WireDirection = "sent"
	WireReceived WireDirection = "received"
)

// WireKind says what a wire event is.
type WireKind string

// Kinds of wire events.
const (
	WireRequest  WireKind = "request"  // a REST request
	WireResponse WireKind = "response" // its answer (headers, and a text body)
	WireBody     WireKind = "body"     // the end of a streamed (audio) answer, with its size
	WireOpen     WireKind = "open"     // a WebSocket handshake that succeeded
	WireClose    WireKind = "close"    // a WebSocket that ended
	WireText     WireKind = "text"     // a text frame
	WireBinary   WireKind = "binary"   // a binary frame
	WireError    WireKind = "error"    // a request or socket that failed
)

// MaxWireText bounds the text an event carries; the rest is cut off and
// Truncated says so.
const MaxWireText = 16 << 10

// WireEvent is one thing that went over the wire: a REST request or its
// answer, a socket opened or closed, a frame sent or received. It never
// holds the API key, an access token or the Authorization header: query
// parameters and JSON fields that name a credential are redacted, and the
// client's own secrets are scrubbed from every text.
type WireEvent struct {
	Time time.Time `json:"time"`
	// Stream numbers one REST call or one socket; unique in the process.
	Stream uint64 `json:"stream"`
	// Label is what WithWireLabel put on the call's context.
	Label     string        `json:"label,omitempty"`
	Direction WireDirection `json:"direction"`
	Kind      WireKind      `json:"kind"`
	Method    string        `json:"method,omitempty"`
	Path      string        `json:"path,omitempty"`
	Query     string        `json:"query,omitempty"`
	Status    int           `json:"status,omitempty"`
	RequestID string        `json:"request_id,omitempty"`
	// Size is the bytes of the body or frame (-1 when not known).
	Size int64 `json:"size"`
	// Text is a JSON or text body or a text frame, redacted; empty for
	// audio and binary frames.
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Elapsed is, for an answer, the time since its request; for an open,
	// the handshake's time; for a frame or close, the time since the open.
	Elapsed time.Duration `json:"elapsed,omitempty"`
}

// WireObserver receives wire events. ObserveWire is called inline by the
// client's goroutines (the readers and writers of sockets included), so it
// must never block and must be safe for concurrent use.
type WireObserver interface {
	ObserveWire(WireEvent)
}

type wireLabelKey struct{}

// WithWireLabel returns ctx with label, which every wire event of the
// calls and sockets made with it carries (a socket keeps its dial's).
func WithWireLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, wireLabelKey{}, label)
}

// WireLabel returns the label WithWireLabel put on ctx, or "".
func WireLabel(ctx context.Context) string {
	s, _ := ctx.Value(wireLabelKey{}).(string)
	return s
}

// wireStreams numbers calls and sockets across every client, so that
// events of two clients seen by one observer never share a stream.
var wireStreams atomic.Uint64

func nextWireStream() uint64 { return wireStreams.Add(1) }

// secretParam reports whether a query parameter or JSON field of this
// name carries a credential.
func secretParam(name string) bool {
	switch strings.ToLower(name) {
	case "token", "access_token", "key", "api_key", "apikey", "authorization", "password", "secret", "client_secret":
		return true
	}
	return false
}

// RedactQuery encodes q with the values of credential parameters replaced.
func RedactQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range q[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			if secretParam(k) {
				v = redacted
			}
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
		}
	}
	return b.String()
}

// secretField matches a JSON member whose name is a credential and whose
// value is a string, such as "access_token": "eyJ...".
var secretField = regexp.MustCompile(`(?i)"(token|access_token|key|api_key|apikey|authorization|password|secret|client_secret)"(\s*:\s*)"(?:[^"\\]|\\.)*"`)

// RedactText replaces the string values of JSON members named as
// credentials ("access_token", "authorization", ...). It works on any
// text, JSON or not, whole or not.
func RedactText(s string) string {
	if !strings.ContainsRune(s, '"') {
		return s
	}
	return secretField.ReplaceAllString(s, `"$1"$2"`+redacted+`"`)
}

// truncateText cuts s to MaxWireText bytes on a rune boundary.
func truncateText(s string) (string, bool) {
	if len(s) <= MaxWireText {
		return s, false
	}
	n := MaxWireText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// textual reports whether a body of this content type is text to show.
func textual(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// wireTap is what a client observes with; nil observes nothing.
type wireTap struct {
	obs WireObserver

	mu     sync.Mutex // guards minted
	minted []string   // the last tokens minted, to scrub from texts
	key    string
	token  string
}

// maxMinted is how many minted tokens the tap remembers.
const maxMinted = 16

func newWireTap(obs WireObserver, key, token Secret) *wireTap {
	if obs == nil {
		return nil
	}
	return &wireTap{obs: obs, key: key.Reveal(), token: token.Reveal()}
}

// remember keeps a token the client minted, so that no event shows it.
func (w *wireTap) remember(tok Secret) {
	if w == nil || tok == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.minted) == maxMinted {
		copy(w.minted, w.minted[1:])
		w.minted = w.minted[:maxMinted-1]
	}
	w.minted = append(w.minted, tok.Reveal())
}

// scrub replaces the client's own secrets wherever they appear in s.
func (w *wireTap) scrub(s string) string {
	if s == "" {
		return s
	}
	for _, secret := range []string{w.key, w.token} {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, redacted)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, secret := range w.minted {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

// emit redacts and scrubs ev, then hands it to the observer.
func (w *wireTap) emit(ev WireEvent) {
	if w == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Query = w.scrub(ev.Query)
	if ev.Text != "" {
		ev.Text = w.scrub(RedactText(ev.Text))
		var cut bool
		ev.Text, cut = truncateText(ev.Text)
		ev.Truncated = ev.Truncated || cut
	}
	w.obs.ObserveWire(ev)
}

// requestText returns the body of a request with a text content type, read
// again through GetBody, or "".
func requestText(req *http.Request) string {
	if req.GetBody == nil || !textual(req.Header.Get("Content-Type")) {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	// Read a little past the bound so that a credential cut at it is
	// still seen whole by the redaction.
	b, _ := io.ReadAll(io.LimitReader(body, 2*MaxWireText))
	return string(b)
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	n atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// streamedBody reports the end of a streamed answer (audio) once, with
// the bytes read, when it reaches its end or is closed.
type streamedBody struct {
	io.ReadCloser
	n    int64
	once sync.Once
	done func(n int64, err error)
}

func (s *streamedBody) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.n += int64(n)
	if err != nil {
		s.finish(err)
	}
	return n, err
}

func (s *streamedBody) Close() error {
	err := s.ReadCloser.Close()
	s.finish(nil)
	return err
}

func (s *streamedBody) finish(err error) {
	if err == io.EOF {
		err = nil
	}
	s.once.Do(func() { s.done(s.n, err) })
}

// errorAfter is a body that returns data, then err.
func errorAfter(data []byte, err error) io.Reader {
	if err == nil {
		return bytes.NewReader(data)
	}
	return io.MultiReader(bytes.NewReader(data), errReader{err})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// observeSend performs req as send does, reporting the request and its
// answer to the tap.
func (c *Client) observeSend(req *http.Request) (*http.Response, error) {
	w := c.wire
	stream, label := nextWireStream(), WireLabel(req.Context())
	reqEv := WireEvent{Time: time.Now(), Stream: stream, Label: label, Direction: WireSent, Kind: WireRequest,
		Method: req.Method, Path: req.URL.Path, Query: RedactQuery(req.URL.Query()), Size: req.ContentLength,
		Text: requestText(req)}
	var counted *countingBody
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength < 0 {
		counted = &countingBody{ReadCloser: req.Body}
		req.Body = counted
	}
	start := reqEv.Time
	resp, err := c.hc.Do(req)
	if counted != nil {
		reqEv.Size = counted.n.Load()
	}
	if reqEv.Size < 0 {
		reqEv.Size = 0
	}
	w.emit(reqEv)
	if err != nil {
		w.emit(WireEvent{Stream: stream, Label: label, Direction: WireReceived, Kind: WireError,
			Method: req.Method, Path: req.URL.Path, Text: err.Error(), Elapsed: time.Since(start), Size: -1})
		return nil, err
	}
	ev := WireEvent{Stream: stream, Label: label, Direction: WireReceived, Kind: WireResponse,
		Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, RequestID: resp.Header.Get(HeaderRequestID)}
	if textual(resp.Header.Get("Content-Type")) {
		b, rerr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(errorAfter(b, rerr))
		ev.Time, ev.Elapsed, ev.Size, ev.Text = time.Now(), time.Since(start), int64(len(b)), string(b)
		w.emit(ev)
		return resp, nil
	}
	ev.Time, ev.Elapsed, ev.Size = time.Now(), time.Since(start), resp.ContentLength
	w.emit(ev)
	resp.Body = &streamedBody{ReadCloser: resp.Body, done: func(n int64, err error) {
		end := WireEvent{Stream: stream, Label: label, Direction: WireReceived, Kind: WireBody,
			Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Size: n, Elapsed: time.Since(start)}
		if err != nil {
			end.Text = err.Error()
		}
		w.emit(end)
	}}
	return resp, nil
}

// socketWire reports the life of one socket to a tap; its zero value
// reports nothing.
type socketWire struct {
	tap    *wireTap
	stream uint64
	label  string
	path   string
	opened time.Time
}

func (sw socketWire) event(dir WireDirection, kind WireKind) WireEvent {
	now := time.Now()
	return WireEvent{Time: now, Stream: sw.stream, Label: sw.label, Direction: dir, Kind: kind,
		Path: sw.path, Elapsed: now.Sub(sw.opened)}
}

// open reports a handshake that succeeded.
func (sw socketWire) open(q url.Values, requestID string, start time.Time) {
	if sw.tap == nil {
		return
	}
	ev := sw.event(WireReceived, WireOpen)
	ev.Method, ev.Query, ev.Status, ev.RequestID, ev.Elapsed = http.MethodGet, RedactQuery(q), http.StatusSwitchingProtocols, requestID, ev.Time.Sub(start)
	sw.tap.emit(ev)
}

// dialFailed reports a handshake that failed, with the status the server
// answered when it did.
func (sw socketWire) dialFailed(q url.Values, resp *http.Response, err error, start time.Time) {
	if sw.tap == nil {
		return
	}
	ev := sw.event(WireReceived, WireError)
	ev.Method, ev.Query, ev.Elapsed, ev.Size, ev.Text = http.MethodGet, RedactQuery(q), ev.Time.Sub(start), -1, err.Error()
	if resp != nil {
		ev.Status, ev.RequestID = resp.StatusCode, resp.Header.Get(HeaderRequestID)
	}
	sw.tap.emit(ev)
}

// frame reports a frame written or read.
func (sw socketWire) frame(dir WireDirection, binary bool, data []byte) {
	if sw.tap == nil {
		return
	}
	kind := WireText
	if binary {
		kind = WireBinary
	}
	ev := sw.event(dir, kind)
	ev.Size = int64(len(data))
	if !binary {
		ev.Text = string(data)
	}
	sw.tap.emit(ev)
}

// writeFailed reports a frame that could not be written.
func (sw socketWire) writeFailed(err error) {
	if sw.tap == nil {
		return
	}
	ev := sw.event(WireSent, WireError)
	ev.Size, ev.Text = -1, err.Error()
	sw.tap.emit(ev)
}

// ended reports why reading ended: the client closed the socket (sent),
// the server closed it with a status (received), or it was lost (an
// error).
func (sw socketWire) ended(err error, ours bool) {
	if sw.tap == nil {
		return
	}
	var ce websocket.CloseError
	switch {
	case ours:
		ev := sw.event(WireSent, WireClose)
		ev.Text = "closed by the client"
		sw.tap.emit(ev)
	case errors.As(err, &ce):
		ev := sw.event(WireReceived, WireClose)
		ev.Status, ev.Text = int(ce.Code), strings.TrimSpace(ce.Code.String()+" "+ce.Reason)
		sw.tap.emit(ev)
	default:
		ev := sw.event(WireReceived, WireError)
		ev.Size, ev.Text = -1, err.Error()
		sw.tap.emit(ev)
	}
}
