package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// socketEndpoint is one WebSocket endpoint as the loop's tests drive it.
type socketEndpoint struct {
	name        string
	path, query string
	agentHost   bool
	// greeting are the types of the messages the engine sends first.
	greeting []string
	// setup, when set, configures a new stream (the agent's Settings).
	setup func(t *testing.T, ctx context.Context, c *websocket.Conn)
	// probe is a text message the endpoint answers with a message of
	// type answer, the stream staying open.
	probe, answer string
	// The idle close: the type and code of the last message, words its
	// description holds, the close code and reason. idleType "" means
	// the endpoint has no idle window.
	idleType, idleCode, idleSays string
	idleClose                    websocket.StatusCode
	idleReason                   string
}

// socketEndpoints are every WebSocket endpoint of the engine, with the
// idle close the specification gives each (section 3, section 8; wire
// reference: 1011 NET-0001).
var socketEndpoints = []socketEndpoint{
	{
		name: "/v1/listen", path: api.PathListen, query: "encoding=linear16&sample_rate=16000",
		probe: `{"type":"Finalize"}`, answer: api.TypeResults,
		idleType: api.TypeMetadata, idleClose: websocket.StatusInternalError, idleReason: reasonIdle,
	},
	{
		name: "/v2/listen", path: api.PathListenV2, query: "model=flux-general-en&encoding=linear16&sample_rate=16000",
		greeting: []string{api.TypeConnected},
		probe:    `{"type":"ForceEndTurn"}`, answer: api.TypeWarning,
		idleType: api.TypeError, idleCode: api.CodeNetTimeout, idleSays: "timeout window",
		idleClose: websocket.StatusInternalError, idleReason: reasonIdle,
	},
	{
		name: "/v1/speak", path: api.PathSpeak,
		greeting: []string{api.TypeMetadata},
		probe:    `{"type":"Clear"}`, answer: "Cleared",
	},
	{
		name: "/v2/speak", path: api.PathSpeakV2, query: "model=flux-kit-en",
		greeting: []string{api.TypeConnected},
		probe:    `{"type":"Flush"}`, answer: api.TypeWarning,
	},
	{
		name: "/v1/agent/converse", path: api.PathAgent, agentHost: true,
		greeting: []string{api.TypeWelcome},
		setup: func(t *testing.T, ctx context.Context, c *websocket.Conn) {
			t.Helper()
			b, err := api.EncodeAgentMessage(ptr(builtinSettings()))
			if err != nil {
				t.Fatal(err)
			}
			writeText(t, ctx, c, string(b))
			expectMessage(t, ctx, c, api.TypeSettingsApplied)
		},
		probe: `{"type":"UpdatePrompt","prompt":"Be brief."}`, answer: api.TypePromptUpdated,
		idleType: api.TypeError, idleCode: api.CodeAgentIdle, idleSays: "send KeepAlive",
		idleClose: websocket.StatusPolicyViolation, idleReason: api.CodeAgentIdle,
	},
}

func ptr[T any](v T) *T { return &v }

// socketRig is an engine of one test on a fake clock, with the loop's
// test hooks: a message can be held in the loop, and the test learns
// when a frame has reached it.
type socketRig struct {
	l   *Local
	clk *clock.Fake
	// hold, when it has a channel, makes the loop hold the next message
	// it takes until that channel is closed; taken is told when it does.
	hold  chan chan struct{}
	taken chan struct{}
	// queued is told each time a frame has been handed to the loop, took
	// each time the loop takes a message.
	queued, took chan struct{}
}

func newSocketRig(t *testing.T) *socketRig {
	t.Helper()
	r := &socketRig{
		clk:    newTestClock(),
		hold:   make(chan chan struct{}, 1),
		taken:  make(chan struct{}, 1),
		queued: make(chan struct{}, 1024),
		took:   make(chan struct{}, 1024),
	}
	// The spec's idle window, on the fake clock; no idle release of the
	// recogniser, so the streams' idle timers are the only timers.
	r.l = startEngine(t, Config{Clock: r.clk, Recognizer: RecognizerConfig{Warm: -1, IdleRelease: -1}})
	r.l.Engine.messageTaken = func() {
		r.took <- struct{}{}
		select {
		case release := <-r.hold:
			r.taken <- struct{}{}
			<-release
		default:
		}
	}
	r.l.Engine.frameQueued = func() { r.queued <- struct{}{} }
	return r
}

// open dials ep, reads its greeting, sets it up and waits until its loop
// has armed the idle timer. The streams' idle timers are the engine's only
// timers: open first waits for those of the streams before to be gone.
func (r *socketRig) open(t *testing.T, ctx context.Context, ep socketEndpoint) *websocket.Conn {
	t.Helper()
	if !r.clk.WaitForNoWaiters(ctx.Done()) {
		t.Fatal("a stream before is still served")
	}
	l := r.l
	u := "ws://" + l.URL.Host + ep.path
	if ep.agentHost {
		u = "ws://" + l.AgentURL.Host + ep.path
	}
	if ep.query != "" {
		u += "?" + ep.query
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {tokenAuth(l)}}})
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	for _, typ := range ep.greeting {
		expectMessage(t, ctx, c, typ)
	}
	if ep.setup != nil {
		r.drainQueued()
		ep.setup(t, ctx, c)
	}
	if ep.idleType != "" && !r.clk.WaitForWaiters(1, ctx.Done()) {
		t.Fatal("the loop never armed its idle timer")
	}
	r.drainQueued()
	return c
}

// await waits for a signal of the loop's hooks, or fails the test when
// ctx ends first (the stream ended, and the signal will never come).
func await(t *testing.T, ctx context.Context, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
	}
}

// drainQueued forgets the frames handed to and taken by the loop so far.
func (r *socketRig) drainQueued() {
	for {
		select {
		case <-r.queued:
		case <-r.took:
		default:
			return
		}
	}
}

func writeText(t *testing.T, ctx context.Context, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
}

// frameMsg is what the loop's tests read of a message.
type frameMsg struct{ Type, Code, Description string }

// nextFrameMsg reads the next text message (audio is skipped) and returns
// its type and code, or the error that ended the stream.
func nextFrameMsg(ctx context.Context, c *websocket.Conn) (typ, code string, err error) {
	m, err := readFrameMsg(ctx, c)
	return m.Type, m.Code, err
}

// readFrameMsg reads the next text message; audio is skipped.
func readFrameMsg(ctx context.Context, c *websocket.Conn) (frameMsg, error) {
	for {
		mt, b, err := c.Read(ctx)
		if err != nil {
			return frameMsg{}, err
		}
		if mt == websocket.MessageBinary {
			continue
		}
		var m frameMsg
		err = json.Unmarshal(b, &m)
		return m, err
	}
}

func expectMessage(t *testing.T, ctx context.Context, c *websocket.Conn, want string) {
	t.Helper()
	typ, code, err := nextFrameMsg(ctx, c)
	if err != nil || typ != want {
		t.Fatalf("read %s %s, %v; want %s", typ, code, err, want)
	}
}

// TestSocketLoop drives every WebSocket endpoint through the same cases
// of the one loop (socket.serve): a message that arrives while the loop
// is busy keeps the stream open, however long the loop was busy; a
// silent stream closes with the specification's code and message after
// the idle window (moved on a fake clock); a client that is gone ends
// the stream with nothing left behind; the engine's Close ends every
// stream with 1001. It does not run in parallel, so the goroutines it
// counts are its own.
func TestSocketLoop(t *testing.T) {
	<-idleProbeDone // TestMain's silent stream: see TestEngineCloseEndsStreams
	for _, ep := range socketEndpoints {
		t.Run(ep.name, func(t *testing.T) {
			before := leaktest.Running()
			r := newSocketRig(t)
			for _, c := range []struct {
				name  string
				check func(*testing.T, context.Context, *socketRig, socketEndpoint)
			}{
				{"busy", checkBusyLoop},
				{"idle", checkLoopIdle},
				{"client gone", checkClientGone},
				{"shutdown", checkShutdown}, // last: it closes the engine
			} {
				t.Run(c.name, func(t *testing.T) { c.check(t, testContext(t, time.Minute), r, ep) })
			}
			_ = r.l.Close()
			if leaks := leaktest.Wait(before, leaktest.DefaultWait); len(leaks) > 0 {
				t.Errorf("goroutines left:\n\n%s", strings.Join(leaks, "\n\n"))
			}
		})
	}
}

// checkBusyLoop holds the loop on a message while the next one arrives
// and the whole idle window passes; both are answered and the stream
// stays open. The loop sees its idle timer and the waiting message at
// once, and the select between them is random: rounds of it make a loop
// that closes in that case fail all but once in 2^busyRounds runs.
func checkBusyLoop(t *testing.T, ctx context.Context, r *socketRig, ep socketEndpoint) {
	const busyRounds = 10
	c := r.open(t, ctx, ep)
	for round := range busyRounds {
		release := make(chan struct{})
		r.hold <- release
		writeText(t, ctx, c, ep.probe)
		await(t, ctx, r.queued, "the first message to reach the loop")
		await(t, ctx, r.taken, "the loop to hold the first message")
		writeText(t, ctx, c, ep.probe)
		await(t, ctx, r.queued, "the second message to wait for the loop")
		r.clk.Advance(r.l.Engine.cfg.IdleTimeout + time.Second)
		close(release)
		for i := range 2 {
			typ, code, err := nextFrameMsg(ctx, c)
			if err != nil || typ != ep.answer {
				t.Fatalf("round %d, answer %d: %s %s, %v; want %s and the stream open", round, i+1, typ, code, err, ep.answer)
			}
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// checkLoopIdle moves the fake clock to just short of the idle window,
// then past it: a stream with an idle window closes then, with the last
// message and the close code the specification gives; one without stays
// open.
func checkLoopIdle(t *testing.T, ctx context.Context, r *socketRig, ep socketEndpoint) {
	c := r.open(t, ctx, ep)
	idle := r.l.Engine.cfg.IdleTimeout
	if idle != DefaultIdleTimeout {
		t.Fatalf("idle window %v, the specification's is %v", idle, DefaultIdleTimeout)
	}
	r.clk.Advance(idle - time.Millisecond)
	if ep.idleType == "" {
		r.clk.Advance(10 * idle)
		writeText(t, ctx, c, ep.probe)
		if typ, code, err := nextFrameMsg(ctx, c); err != nil || typ != ep.answer {
			t.Fatalf("after %v of silence: %s %s, %v; want %s: no idle window", 10*idle, typ, code, err, ep.answer)
		}
		c.Close(websocket.StatusNormalClosure, "")
		return
	}
	// Short of the window the stream answers, and the answer's message
	// starts the window again.
	writeText(t, ctx, c, ep.probe)
	if typ, code, err := nextFrameMsg(ctx, c); err != nil || typ != ep.answer {
		t.Fatalf("%v into the idle window: %s %s, %v; want %s", idle-time.Millisecond, typ, code, err, ep.answer)
	}
	r.clk.Advance(idle - time.Millisecond)
	r.clk.Advance(time.Millisecond)
	m, err := readFrameMsg(ctx, c)
	if err != nil || m.Type != ep.idleType || m.Code != ep.idleCode || !strings.Contains(m.Description, ep.idleSays) {
		t.Fatalf("at the idle close: %+v, %v; want %s %s saying %q", m, err, ep.idleType, ep.idleCode, ep.idleSays)
	}
	_, _, err = nextFrameMsg(ctx, c)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != ep.idleClose || ce.Reason != ep.idleReason {
		t.Errorf("closed with %v; want %d %q", err, ep.idleClose, ep.idleReason)
	}
}

// checkClientGone drops the connection while the loop is busy and has an
// answer to write: the stream ends on its own (no Close), and its
// goroutines with it.
func checkClientGone(t *testing.T, ctx context.Context, r *socketRig, ep socketEndpoint) {
	before := leaktest.Running()
	c := r.open(t, ctx, ep)
	release := make(chan struct{})
	r.hold <- release
	writeText(t, ctx, c, ep.probe)
	await(t, ctx, r.taken, "the loop to hold the message")
	c.CloseNow()
	close(release)
	if leaks := leaktest.Wait(before, leaktest.DefaultWait); len(leaks) > 0 {
		t.Errorf("the stream of a client gone is still served:\n\n%s", strings.Join(leaks, "\n\n"))
	}
}

// checkShutdown closes the engine under an open stream whose client reads
// on: the stream closes with 1001 and the reason.
func checkShutdown(t *testing.T, ctx context.Context, r *socketRig, ep socketEndpoint) {
	c := r.open(t, ctx, ep)
	ended := make(chan error, 1)
	go func() {
		for {
			if _, _, err := nextFrameMsg(ctx, c); err != nil {
				ended <- err
				return
			}
		}
	}()
	if err := r.l.Engine.Close(); err != nil {
		t.Fatal(err)
	}
	err := <-ended
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != reasonShutdown {
		t.Errorf("closed with %v; want 1001 %q", err, reasonShutdown)
	}
}

// TestLoopEnds checks, with no network, how the loop ends on what
// TestSocketLoop cannot single out: a failed write (the client is gone
// while its reader has not noticed) and the engine's Close, each with
// its close code, however the handler is set.
func TestLoopEnds(t *testing.T) {
	t.Parallel()
	e := &Engine{clock: newTestClock(), cfg: Config{IdleTimeout: DefaultIdleTimeout}}
	h := streamHandler{idle: func(context.Context) (websocket.StatusCode, string) { return websocket.StatusInternalError, reasonIdle }}
	for _, tc := range []struct {
		name       string
		writeFails bool
		shutdown   bool
		code       websocket.StatusCode
		reason     string
	}{
		{"write failed", true, false, websocket.StatusGoingAway, ""},
		{"engine closed", false, true, websocket.StatusGoingAway, reasonShutdown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &socket{e: e, writeFailed: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.writeFails {
				close(s.writeFailed)
			}
			if tc.shutdown {
				cancel()
			}
			code, reason := s.loop(ctx, make(chan inbound), h)
			if code != tc.code || reason != tc.reason {
				t.Errorf("loop ended %d %q, want %d %q", code, reason, tc.code, tc.reason)
			}
		})
	}
}
