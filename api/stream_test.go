package api_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// wsFrame is a frame the test server received.
type wsFrame struct {
	binary bool
	data   []byte
}

func (f wsFrame) String() string {
	if f.binary {
		return fmt.Sprintf("binary(%d)", len(f.data))
	}
	return "text" + string(f.data)
}

// listen opens a stream that the test's cleanup closes.
func listen(t *testing.T, c *api.Client, opts api.ListenOptions) *api.ListenStream {
	t.Helper()
	st, err := c.Listen(testContext(t), opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// readAll reads frames until the peer closes, returning them and the error
// that ended reading.
func readAll(ctx context.Context, c *websocket.Conn) ([]wsFrame, error) {
	var frames []wsFrame
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return frames, err
		}
		frames = append(frames, wsFrame{binary: typ == websocket.MessageBinary, data: data})
	}
}

func writeText(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, b)
}

func finalResults(start float64, text string) api.Results {
	return api.Results{Type: api.TypeResults, ChannelIndex: []int{0, 1}, Start: start, Duration: 1, IsFinal: true,
		Channel: api.ResultsChannel{Alternatives: []api.Alternative{{Transcript: text, Confidence: 0.9, Words: []api.Word{}}}}}
}

// serveUntilCloseStream records every frame and, on CloseStream, answers as
// the service does: a final Results, Metadata, then a normal close.
func serveUntilCloseStream(got chan<- []wsFrame) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		var frames []wsFrame
		defer func() { got <- frames }()
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			frames = append(frames, wsFrame{binary: typ == websocket.MessageBinary, data: data})
			if typ == websocket.MessageText && string(data) == `{"type":"CloseStream"}` {
				_ = writeText(ctx, c, finalResults(1, "last words"))
				_ = writeText(ctx, c, api.Metadata{Type: api.TypeMetadata, TransactionKey: "deprecated", RequestID: "stream-req-1", SHA256: "incomplete", Duration: 2, Channels: 1})
				_ = c.Close(websocket.StatusNormalClosure, "")
				return
			}
		}
	}
}

func TestListenHandshake(t *testing.T) {
	opts := api.ListenOptions{Model: "nova-3", Encoding: "mulaw", SampleRate: 8000, Channels: 1, Language: "en-US",
		Punctuate: true, SmartFormat: true, InterimResults: true, UtteranceEndMs: 1000, Endpointing: api.EndpointingOff,
		Keyterm: []string{"Earshot", "a&b"}, Extra: map[string]string{"k": "v"}}
	for _, tt := range handshakeAuths {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeak(t)
			got := make(chan []wsFrame, 1)
			srv := newListenServer(t, serveUntilCloseStream(got))
			tt.cfg.UserAgent = "earshot-test/2"
			st := listen(t, srv.client(t, tt.cfg), opts)
			if st.RequestID() != "stream-req-1" {
				t.Errorf("RequestID %q", st.RequestID())
			}
			hs := srv.handshake(t, 0)
			if hs.Method != http.MethodGet || hs.Path != api.PathListen || hs.Auth != tt.wantAuth || hs.UserAgent != "earshot-test/2" {
				t.Errorf("handshake %+v", hs)
			}
			if hs.Query.Encode() != opts.Query().Encode() {
				t.Errorf("query %s, want %s", hs.Query.Encode(), opts.Query().Encode())
			}
			parsed, unknown, err := api.ParseListenQuery(hs.Query)
			if err != nil || len(unknown) != 0 || parsed.Endpointing != api.EndpointingOff || len(parsed.Keyterm) != 2 {
				t.Errorf("the server reads %+v %v %v", parsed, unknown, err)
			}
			srv.checkGrants(t, tt.wantGrants)
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			<-got
		})
	}
}

func TestListenHandshakeRefused(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  string
		body    string
		want    api.Error
		matches error
	}{
		{"400 legacy", 400, "hs-1", `{"err_code":"Bad Request","err_msg":"Bad Request: No such model/version combination found.","request_id":"body-req"}`,
			api.Error{Status: 400, Code: "Bad Request", Message: "Bad Request: No such model/version combination found.", RequestID: "body-req"}, nil},
		{"401 bad key", 401, "hs-2", `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}`,
			api.Error{Status: 401, Code: "INVALID_AUTH", Message: "Invalid credentials.", RequestID: "hs-2"}, api.ErrUnauthorized},
		{"403 features", 403, "", `{"err_code":"UNAUTHORIZED_FEATURES_REQUESTED","err_msg":"Requested features are not available for streaming: topics."}`,
			api.Error{Status: 403, Code: "UNAUTHORIZED_FEATURES_REQUESTED", Message: "Requested features are not available for streaming: topics."}, api.ErrUnauthorized},
		{"429", 429, "hs-3", `{"err_code":"TOO_MANY_REQUESTS","err_msg":"Too many requests. Please try again later"}`,
			api.Error{Status: 429, Code: "TOO_MANY_REQUESTS", Message: "Too many requests. Please try again later", RequestID: "hs-3"}, api.ErrRateLimited},
		{"404 plain", 404, "", "no such path", api.Error{Status: 404, Message: "no such path"}, api.ErrNotFound},
		{"500 empty", 500, "", "", api.Error{Status: 500}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeak(t)
			srv := newListenServer(t, func(context.Context, *websocket.Conn) { t.Error("a refused handshake was accepted") })
			srv.refuse = func(w http.ResponseWriter, r *http.Request) bool {
				if tt.header != "" {
					w.Header().Set(api.HeaderRequestID, tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
				return true
			}
			st, err := srv.client(t, api.Config{APIKey: "KEY"}).Listen(testContext(t), api.ListenOptions{Model: "nova-3"})
			if err == nil {
				_ = st.Close()
				t.Fatal("Listen succeeded")
			}
			var e *api.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T %v is not an *Error", err, err)
			}
			if *e != tt.want {
				t.Errorf("error %#v, want %#v", *e, tt.want)
			}
			if tt.matches != nil && !errors.Is(err, tt.matches) {
				t.Errorf("%v does not match %v", err, tt.matches)
			}
		})
	}
}

func TestListenRefusedBeforeDial(t *testing.T) {
	tests := []struct {
		name   string
		region api.Region
		opts   api.ListenOptions
		param  string
		status int
	}{
		{"summarize", "", api.ListenOptions{Summarize: "v2"}, "summarize", 400},
		{"topics", "", api.ListenOptions{Topics: true}, "topics", 403},
		{"intents", "", api.ListenOptions{Intents: true}, "intents", 403},
		{"sentiment", "", api.ListenOptions{Sentiment: true}, "sentiment", 400},
		{"diarize_model v2", "", api.ListenOptions{DiarizeModel: "v2"}, "diarize_model", 400},
		{"turn-aware model", "", api.ListenOptions{Model: "flux-general-en"}, "model", 400},
		{"raw audio without rate", "", api.ListenOptions{Encoding: "linear16"}, "sample_rate", 400},
		{"whisper in a region", api.RegionAU, api.ListenOptions{Model: "whisper"}, "model", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newListenServer(t, func(context.Context, *websocket.Conn) {})
			c := srv.client(t, api.Config{Endpoint: api.Endpoint{Region: tt.region}})
			_, err := c.Listen(testContext(t), tt.opts)
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != tt.param || oe.Status != tt.status {
				t.Errorf("err = %v, want an OptionError on %s with %d", err, tt.param, tt.status)
			}
			if n := srv.handshakeCount(); n != 0 {
				t.Errorf("%d handshakes reached the server", n)
			}
		})
	}
}

func TestListenSendAndControl(t *testing.T) {
	checkNoLeak(t)
	got := make(chan []wsFrame, 1)
	srv := newListenServer(t, serveUntilCloseStream(got))
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{Encoding: "linear16", SampleRate: 16000})
	ctx := testContext(t)

	audio := []byte{1, 2, 3, 4, 5, 6}
	steps := []struct {
		name string
		do   func() error
		want string // frame the server receives, "" for none
		err  error
	}{
		{"empty audio", func() error { return st.Send(ctx, nil) }, "", api.ErrEmptyAudio},
		{"zero-length audio", func() error { return st.Send(ctx, []byte{}) }, "", api.ErrEmptyAudio},
		{"audio", func() error {
			err := st.Send(ctx, audio)
			audio[0] = 99 // the stream keeps its own copy
			return err
		}, "binary(6)", nil},
		{"KeepAlive", func() error { return st.KeepAlive(ctx) }, `text{"type":"KeepAlive"}`, nil},
		{"more audio", func() error { return st.Send(ctx, bytes.Repeat([]byte{7}, 3200)) }, "binary(3200)", nil},
		{"Finalize", func() error { return st.Finalize(ctx) }, `text{"type":"Finalize"}`, nil},
		{"CloseStream", func() error { return st.CloseStream(ctx) }, `text{"type":"CloseStream"}`, nil},
	}
	var want []string
	for _, s := range steps {
		if err := s.do(); !errors.Is(err, s.err) || (s.err == nil && err != nil) {
			t.Errorf("%s: err = %v, want %v", s.name, err, s.err)
		}
		if s.want != "" {
			want = append(want, s.want)
		}
	}

	// The service's answer to CloseStream, then the end of the stream.
	m, err := st.Next(ctx)
	if r, ok := m.(*api.Results); err != nil || !ok || r.Transcript() != "last words" {
		t.Fatalf("Next = %#v, %v; want the final Results", m, err)
	}
	m, err = st.Next(ctx)
	if md, ok := m.(*api.Metadata); err != nil || !ok || md.RequestID != "stream-req-1" {
		t.Fatalf("Next = %#v, %v; want Metadata", m, err)
	}
	for range 2 {
		if m, err := st.Next(ctx); err != io.EOF || m != nil {
			t.Fatalf("Next = %#v, %v; want io.EOF after a normal close", m, err)
		}
	}

	frames := <-got
	var seen []string
	for _, f := range frames {
		seen = append(seen, f.String())
	}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("server received %v\nwant %v", seen, want)
	}
	if len(frames) > 0 && !bytes.Equal(frames[0].data, []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("audio arrived as %v", frames[0].data)
	}

	// After the service closed, sending fails with ErrClosed.
	if err := st.KeepAlive(ctx); !errors.Is(err, api.ErrClosed) {
		t.Errorf("KeepAlive after close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestListenMessagesInOrder(t *testing.T) {
	checkNoLeak(t)
	const n = 200
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		for i := range n {
			if err := writeText(ctx, c, finalResults(float64(i), "words "+strconv.Itoa(i))); err != nil {
				return
			}
		}
		_ = c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3}) // not expected on this family: skipped
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"SpeechStarted","channel":[0,1],"timestamp":9.54}`))
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"channel":[0,1],"last_word_end":2.395,"type":"UtteranceEnd"}`))
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"Shiny","x":1}`))
		_ = c.Write(ctx, websocket.MessageText, []byte(`not json`))
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"Metadata","request_id":"r","sha256":"incomplete","duration":3,"channels":1}`))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
	ctx := testContext(t)
	for i := range n {
		m, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		r, ok := m.(*api.Results)
		if !ok || r.Start != float64(i) || r.Transcript() != "words "+strconv.Itoa(i) {
			t.Fatalf("message %d: %#v", i, m)
		}
	}
	wantTypes := []string{api.TypeSpeechStarted, api.TypeUtteranceEnd, "Shiny", "", api.TypeMetadata}
	for _, want := range wantTypes {
		m, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("want %q: %v", want, err)
		}
		if m.MessageType() != want {
			t.Fatalf("got %T %q, want %q", m, m.MessageType(), want)
		}
		if u, ok := m.(*api.UnknownMessage); ok && want == "" && string(u.Raw) != "not json" {
			t.Errorf("undecodable frame kept as %q", u.Raw)
		}
	}
	if _, err := st.Next(ctx); err != io.EOF {
		t.Errorf("after the last message: %v, want io.EOF", err)
	}
}

func TestListenCloseFrames(t *testing.T) {
	tests := []struct {
		name    string
		code    websocket.StatusCode
		reason  string
		want    *api.Error // nil: io.EOF
		matches error
	}{
		{"undecodable audio", websocket.StatusPolicyViolation, "DATA-0000", &api.Error{CloseCode: 1008, Code: "DATA-0000"}, api.ErrUndecodableAudio},
		{"undecodable audio with text", websocket.StatusPolicyViolation, "DATA-0000: payload could not be decoded as audio",
			&api.Error{CloseCode: 1008, Code: "DATA-0000", Message: "payload could not be decoded as audio"}, api.ErrUndecodableAudio},
		{"idle timeout", websocket.StatusInternalError, "NET-0001 Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001",
			&api.Error{CloseCode: 1011, Code: "NET-0001", Message: "Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001"}, nil},
		{"server timeout", websocket.StatusInternalError, "NET-0000", &api.Error{CloseCode: 1011, Code: "NET-0000"}, nil},
		{"normal close with a code", websocket.StatusNormalClosure, "NET-0001", &api.Error{CloseCode: 1000, Code: "NET-0001"}, nil},
		{"reason without code", websocket.StatusInternalError, "internal trouble", &api.Error{CloseCode: 1011, Message: "internal trouble"}, nil},
		{"normal", websocket.StatusNormalClosure, "", nil, nil},
		{"normal with words", websocket.StatusNormalClosure, "bye", nil, nil},
		{"going away", websocket.StatusGoingAway, "restart", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeak(t)
			srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
				_ = writeText(ctx, c, finalResults(0, "before"))
				_ = c.Close(tt.code, tt.reason)
			})
			st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
			ctx := testContext(t)
			if m, err := st.Next(ctx); err != nil || m.MessageType() != api.TypeResults {
				t.Fatalf("the message before the close was lost: %v %v", m, err)
			}
			_, err := st.Next(ctx)
			if tt.want == nil {
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				return
			}
			var e *api.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T %v is not an *Error", err, err)
			}
			if *e != *tt.want {
				t.Errorf("error %#v, want %#v", *e, *tt.want)
			}
			if tt.matches != nil && !errors.Is(err, tt.matches) {
				t.Errorf("%v does not match %v", err, tt.matches)
			}
			if errors.Is(err, io.EOF) {
				t.Error("a close with a reason looks like a normal end")
			}
			// The error stays; sending now fails and says why.
			if _, again := st.Next(ctx); !errors.Is(again, err) && again.Error() != err.Error() {
				t.Errorf("second Next: %v", again)
			}
			if err := st.KeepAlive(ctx); !errors.Is(err, api.ErrClosed) {
				t.Errorf("KeepAlive after close: %v", err)
			}
		})
	}
}

func TestListenConnectionLost(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		_ = writeText(ctx, c, finalResults(0, "before"))
		_ = c.CloseNow() // no close frame: the connection just drops
	})
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
	ctx := testContext(t)
	if _, err := st.Next(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := st.Next(ctx)
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("err = %v; a dropped connection must not look like a normal end", err)
	}
	var e *api.Error
	if errors.As(err, &e) {
		t.Errorf("a dropped connection became a service error: %v", err)
	}
}

func TestListenClose(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		_ = writeText(ctx, c, finalResults(0, "queued"))
		_, _ = readAll(ctx, c)
	})
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
	ctx := testContext(t)

	// A reader blocked in Next is released by Close.
	first, err := st.Next(ctx)
	if err != nil || first.MessageType() != api.TypeResults {
		t.Fatalf("Next = %v, %v", first, err)
	}
	nextErr := make(chan error, 1)
	go func() {
		_, err := st.Next(context.Background())
		nextErr <- err
	}()
	leaktest.WaitParked(t, 1, "api.(*ListenStream).Next")

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	select {
	case err := <-nextErr:
		if !errors.Is(err, api.ErrClosed) {
			t.Errorf("blocked Next returned %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release a blocked Next")
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// Every operation on a closed stream fails at once with ErrClosed.
	for i := range 20 {
		short, cancel := context.WithTimeout(ctx, time.Second)
		for name, op := range map[string]func() error{
			"Send":        func() error { return st.Send(short, []byte{1}) },
			"KeepAlive":   func() error { return st.KeepAlive(short) },
			"Finalize":    func() error { return st.Finalize(short) },
			"CloseStream": func() error { return st.CloseStream(short) },
			"Next":        func() error { _, err := st.Next(short); return err },
		} {
			if err := op(); !errors.Is(err, api.ErrClosed) {
				t.Errorf("try %d: %s after Close: %v, want ErrClosed", i, name, err)
			}
		}
		cancel()
	}
}

func TestListenNextContext(t *testing.T) {
	checkNoLeak(t)
	release := make(chan struct{})
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		select {
		case <-release:
		case <-ctx.Done():
			return
		}
		_ = writeText(ctx, c, finalResults(0, "late"))
		_, _ = readAll(ctx, c)
	})
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := st.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next = %v, want the context's deadline", err)
	}
	close(release)
	// The stream is still usable after a timed-out Next.
	if m, err := st.Next(testContext(t)); err != nil || m.(*api.Results).Transcript() != "late" {
		t.Errorf("Next = %v, %v", m, err)
	}
}

// smallBuffer shrinks the kernel buffers of both ends of the loopback
// connections, so that some hundred KiB in flight fill them: a writer
// then blocks unless its peer reads.
const smallBuffer = 32 << 10

func smallServerBuffers(srv *http.Server) {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(smallBuffer)
			_ = tc.SetReadBuffer(smallBuffer)
		}
		return ctx
	}
}

func smallClientBuffers() *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(smallBuffer)
				_ = tc.SetWriteBuffer(smallBuffer)
			}
			return c, err
		},
	}}
}

func TestListenSlowConsumer(t *testing.T) {
	checkNoLeak(t)
	const n = 1000
	pad := strings.Repeat("x", 2048) // 2 MiB in all, far beyond the buffers
	sent := make(chan struct{}, 2)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		for i := range n {
			if err := writeText(ctx, c, finalResults(float64(i), pad)); err != nil {
				return
			}
		}
		sent <- struct{}{}
		_, _ = readAll(ctx, c)
	}, smallServerBuffers)
	hc := smallClientBuffers()
	t.Cleanup(hc.CloseIdleConnections)

	// Control: a client that does not read at all stalls the server, so
	// the buffers are small enough for the test to mean something.
	u, err := (api.Endpoint{Base: mustURL(t, srv.URL)}).WebSocketURL(api.PathListen, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := websocket.Dial(testContext(t), u.String(), &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sent:
		t.Fatal("the server finished although nobody read: the buffers hold everything and the test proves nothing")
	case <-time.After(300 * time.Millisecond):
	}
	_ = raw.CloseNow()

	// The stream reads everything while its consumer takes one message
	// and then waits for the server to finish.
	st := listen(t, srv.client(t, api.Config{HTTPClient: hc}), api.ListenOptions{})
	ctx := testContext(t)
	if m, err := st.Next(ctx); err != nil || m.(*api.Results).Start != 0 {
		t.Fatalf("first message: %v %v", m, err)
	}
	select {
	case <-sent:
	case <-time.After(15 * time.Second):
		t.Fatal("the server is blocked by a consumer that does not read")
	}
	for i := 1; i < n; i++ {
		m, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if r := m.(*api.Results); r.Start != float64(i) || len(r.Transcript()) != len(pad) {
			t.Fatalf("message %d out of order or damaged (start %v)", i, r.Start)
		}
	}
}
func TestListenShortLivedTokens(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) { _, _ = readAll(ctx, c) })
	c := srv.client(t, api.Config{APIKey: "KEY", ShortLivedTokens: true, TokenTTL: 2 * time.Minute})
	for range 2 {
		st := listen(t, c, api.ListenOptions{Model: "nova-3"})
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	srv.mu.Lock()
	grants, handshakes := srv.grants, srv.handshakes
	srv.mu.Unlock()
	if len(grants) != 2 || len(handshakes) != 2 {
		t.Fatalf("%d grants and %d handshakes, want 2 and 2", len(grants), len(handshakes))
	}
	for i := range 2 {
		if grants[i].Auth != "Token KEY" {
			t.Errorf("grant %d authorized with %q", i, grants[i].Auth)
		}
		if !sameJSON(t, grants[i].Body, []byte(`{"ttl_seconds":120}`)) {
			t.Errorf("grant %d body %s", i, grants[i].Body)
		}
		if want := "Bearer jwt-" + strconv.Itoa(i+1); handshakes[i].Auth != want {
			t.Errorf("handshake %d authorized with %q, want %q", i, handshakes[i].Auth, want)
		}
	}

	t.Run("grant refused", func(t *testing.T) {
		bad := srv.client(t, api.Config{APIKey: "WRONG", ShortLivedTokens: true})
		_, err := bad.Listen(testContext(t), api.ListenOptions{})
		var e *api.Error
		if !errors.As(err, &e) || e.Status != 401 || !errors.Is(err, api.ErrUnauthorized) {
			t.Errorf("err = %v, want the grant's 401", err)
		}
		if n := srv.handshakeCount(); n != 2 {
			t.Errorf("a handshake was attempted without a token (%d)", n)
		}
	})
}

func TestListenConcurrentSend(t *testing.T) {
	checkNoLeak(t)
	got := make(chan []wsFrame, 1)
	srv := newListenServer(t, serveUntilCloseStream(got))
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{Encoding: "linear16", SampleRate: 16000})
	ctx := testContext(t)

	const senders, perSender = 16, 50
	frame := func(g, i int) []byte {
		b := make([]byte, 8+(g*perSender+i)%700+1)
		binary.BigEndian.PutUint32(b, uint32(g))
		binary.BigEndian.PutUint32(b[4:], uint32(i))
		for j := 8; j < len(b); j++ {
			b[j] = byte(g ^ i ^ j)
		}
		return b
	}
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			buf := make([]byte, 0, 1024)
			for i := range perSender {
				buf = append(buf[:0], frame(g, i)...)
				if err := st.Send(ctx, buf); err != nil {
					t.Errorf("sender %d frame %d: %v", g, i, err)
					return
				}
				if i%10 == 0 {
					if err := st.KeepAlive(ctx); err != nil {
						t.Errorf("KeepAlive: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Next(ctx); err != nil {
			if err != io.EOF {
				t.Fatalf("Next: %v", err)
			}
			break
		}
	}
	frames := <-got
	next := make([]int, senders)
	var audio, keepAlives int
	for _, f := range frames {
		if !f.binary {
			if string(f.data) == `{"type":"KeepAlive"}` {
				keepAlives++
			}
			continue
		}
		audio++
		if len(f.data) < 8 {
			t.Fatalf("short frame %v", f.data)
		}
		g, i := int(binary.BigEndian.Uint32(f.data)), int(binary.BigEndian.Uint32(f.data[4:]))
		if g >= senders || i != next[g] {
			t.Fatalf("frame %d of sender %d arrived when %d was due", i, g, next[g])
		}
		if !bytes.Equal(f.data, frame(g, i)) {
			t.Fatalf("frame %d of sender %d damaged", i, g)
		}
		next[g]++
	}
	if audio != senders*perSender || keepAlives != senders*perSender/10 {
		t.Errorf("%d audio frames and %d KeepAlives arrived, want %d and %d", audio, keepAlives, senders*perSender, senders*perSender/10)
	}
}

func TestListenClosedErrorText(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) { _, _ = readAll(ctx, c) })
	st := listen(t, srv.client(t, api.Config{}), api.ListenOptions{})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	err := st.Send(testContext(t), []byte{1})
	if err != api.ErrClosed {
		t.Errorf("Send after our own Close = %q, want ErrClosed itself", err)
	}
}
