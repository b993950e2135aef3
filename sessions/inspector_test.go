package sessions_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// tapProxy forwards TCP connections to an engine and keeps every byte
// both ways, so that a test can count what crossed the wire without
// asking the client that sent it.
type tapProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex // guards conns
	conns []*tapConn
	wg    sync.WaitGroup
}

type tapConn struct {
	done     chan struct{} // closed when both directions have ended
	mu       sync.Mutex    // guards up, down
	up, down bytes.Buffer
}

func newTapProxy(t *testing.T, target string) *tapProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tapProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *tapProxy) accept() {
	defer p.wg.Done()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		conns = append(conns, client, server)
		c := &tapConn{done: make(chan struct{})}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		var both sync.WaitGroup
		both.Add(2)
		p.wg.Add(3)
		pipe := func(dst, src net.Conn, buf *bytes.Buffer) {
			defer p.wg.Done()
			defer both.Done()
			b := make([]byte, 32<<10)
			for {
				n, err := src.Read(b)
				if n > 0 {
					c.mu.Lock()
					buf.Write(b[:n])
					c.mu.Unlock()
					if _, werr := dst.Write(b[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			// One side ended: end the other, as a closed socket would.
			client.Close()
			server.Close()
		}
		go pipe(server, client, &c.up)
		go pipe(client, server, &c.down)
		go func() {
			defer p.wg.Done()
			both.Wait()
			close(c.done)
		}()
	}
}

// wireCount is what crossed the wire: REST requests by path, WebSocket
// handshakes by path, and data frames each way.
type wireCount struct {
	requests                                   map[string]int // REST, by path
	handshakes                                 map[string]int // WebSocket, by path
	sentText, sentBinary, recvText, recvBinary int
	tokens                                     []string // access tokens the grants answered
}

func (w wireCount) String() string {
	return fmt.Sprintf("requests %v, handshakes %v, sent %d text %d binary, received %d text %d binary",
		w.requests, w.handshakes, w.sentText, w.sentBinary, w.recvText, w.recvBinary)
}

// minus returns what w counted past before.
func (w wireCount) minus(before wireCount) wireCount {
	for k, n := range before.requests {
		if w.requests[k] -= n; w.requests[k] == 0 {
			delete(w.requests, k)
		}
	}
	for k, n := range before.handshakes {
		if w.handshakes[k] -= n; w.handshakes[k] == 0 {
			delete(w.handshakes, k)
		}
	}
	w.sentText -= before.sentText
	w.sentBinary -= before.sentBinary
	w.recvText -= before.recvText
	w.recvBinary -= before.recvBinary
	w.tokens = w.tokens[len(before.tokens):]
	return w
}

// count parses every connection so far. A WebSocket connection must have
// ended, so that nothing is still on its way.
func (p *tapProxy) count(t *testing.T) wireCount {
	t.Helper()
	p.mu.Lock()
	conns := slices.Clone(p.conns)
	p.mu.Unlock()
	w := wireCount{requests: map[string]int{}, handshakes: map[string]int{}}
	for _, c := range conns {
		c.mu.Lock()
		up, down := slices.Clone(c.up.Bytes()), slices.Clone(c.down.Bytes())
		c.mu.Unlock()
		ur, dr := bufio.NewReader(bytes.NewReader(up)), bufio.NewReader(bytes.NewReader(down))
		for {
			req, err := http.ReadRequest(ur)
			if err != nil {
				break
			}
			_, _ = io.Copy(io.Discard, req.Body)
			resp, err := http.ReadResponse(dr, req)
			if err != nil {
				t.Fatalf("%s %s: no answer on the wire: %v", req.Method, req.URL.Path, err)
			}
			if resp.StatusCode == http.StatusSwitchingProtocols {
				w.handshakes[req.URL.Path]++
				select {
				case <-c.done:
				case <-time.After(10 * time.Second): // the session has ended; its socket closes at once
					t.Fatalf("the socket of %s is still open", req.URL.Path)
				}
				// Read what follows the handshake from the whole capture.
				c.mu.Lock()
				ur = bufio.NewReader(bytes.NewReader(slices.Clone(c.up.Bytes())))
				dr = bufio.NewReader(bytes.NewReader(slices.Clone(c.down.Bytes())))
				c.mu.Unlock()
				req, _ := http.ReadRequest(ur)
				_, _ = http.ReadResponse(dr, req)
				upFrames, _ := io.ReadAll(ur)
				downFrames, _ := io.ReadAll(dr)
				for _, f := range wsFrames(upFrames) {
					w.sentText += b2i(f == 1)
					w.sentBinary += b2i(f == 2)
				}
				for _, f := range wsFrames(downFrames) {
					w.recvText += b2i(f == 1)
					w.recvBinary += b2i(f == 2)
				}
				break
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			w.requests[req.URL.Path]++
			if req.URL.Path == api.PathAuthGrant {
				var g struct {
					AccessToken string `json:"access_token"`
				}
				if json.Unmarshal(body, &g) == nil && g.AccessToken != "" {
					w.tokens = append(w.tokens, g.AccessToken)
				}
			}
		}
	}
	return w
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wsFrames returns the opcodes of the WebSocket frames in b, masked or
// not; a message is one frame here, as both ends write them whole.
func wsFrames(b []byte) []byte {
	var out []byte
	for len(b) >= 2 {
		op, masked, n := b[0]&0x0f, b[1]&0x80 != 0, uint64(b[1]&0x7f)
		b = b[2:]
		switch n {
		case 126:
			if len(b) < 2 {
				return out
			}
			n, b = uint64(binary.BigEndian.Uint16(b)), b[2:]
		case 127:
			if len(b) < 8 {
				return out
			}
			n, b = binary.BigEndian.Uint64(b), b[8:]
		}
		if masked {
			if len(b) < 4 {
				return out
			}
			b = b[4:]
		}
		if uint64(len(b)) < n {
			return out
		}
		out = append(out, op)
		b = b[n:]
	}
	return out
}

// seen counts the inspector's events the way wireCount counts the wire.
func seen(evs []sessions.WireEvent) wireCount {
	w := wireCount{requests: map[string]int{}, handshakes: map[string]int{}}
	for _, e := range evs {
		switch {
		case e.Kind == api.WireRequest:
			w.requests[e.Path]++
		case e.Kind == api.WireOpen:
			w.handshakes[e.Path]++
		case e.Kind == api.WireText && e.Direction == api.WireSent:
			w.sentText++
		case e.Kind == api.WireBinary && e.Direction == api.WireSent:
			w.sentBinary++
		case e.Kind == api.WireText:
			w.recvText++
		case e.Kind == api.WireBinary:
			w.recvBinary++
		}
	}
	return w
}

func markers(evs []sessions.WireEvent) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		if e.Marker != "" {
			m[e.Marker]++
			if e.Latency <= 0 {
				t := e.Latency
				m["non-positive latency "+t.String()]++
			}
		}
	}
	return m
}

func ofSession(evs []sessions.WireEvent, id int64) []sessions.WireEvent {
	var out []sessions.WireEvent
	for _, e := range evs {
		if e.Session == id {
			out = append(out, e)
		}
	}
	return out
}

// TestInspectorSeesEveryMessage runs a captions session, a conversation
// (/v2/listen) and a synthesis through a workspace on the keyed engine,
// behind a proxy that keeps every byte, with short-lived tokens. For
// each, every request and frame on the wire is among the inspector's
// events, with its latency markers, and the same events are read back
// from history. No event, live or exported, shows the key or a token.
func TestInspectorSeesEveryMessage(t *testing.T) {
	t.Parallel()
	eng := keyedEngine(t)
	key := eng.Key
	ctx := testContext(t, 2*time.Minute)
	proxy := newTapProxy(t, eng.URL.Host)
	db := openDB(t)
	pcm, _ := pausedReading(t, conversationLines[:1])
	w, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Microphones: &replayMics{pcm: pcm, speed: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.SaveKey(key); err != nil {
		t.Fatal(err)
	}
	s := store.DefaultSettings()
	s.Backend, s.CustomURL, s.ShortLivedTokens, s.InterimResults = sessions.BackendCustom, "http://"+proxy.ln.Addr().String(), true, true
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	ins := w.Inspector()

	type run struct {
		name  string
		start func() int64 // runs a session to its end, returns its id
		marks []string
	}
	runs := []run{
		{"captions", func() int64 {
			src, err := audio.NewReplay(mono16k, loadPCM(t, librivoxPath("0930")), audio.ReplayConfig{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := w.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "0930"})
			if err != nil {
				t.Fatal(err)
			}
			rec := record(c, nil)
			<-c.Done()
			if err := c.Stop(); err != nil {
				t.Fatalf("captions: %v", err)
			}
			rec.wait(t)
			return c.SessionID()
		}, []string{sessions.MarkFirstInterim, sessions.MarkFirstFinal}},
		{"conversation", func() int64 {
			c, err := w.StartConversation(ctx, sessions.ConversationRequest{})
			if err != nil {
				t.Fatal(err)
			}
			rec := recordConv(c)
			<-c.Done()
			if err := c.Stop(); err != nil {
				t.Fatal(err)
			}
			rec.wait(t)
			return c.SessionID()
		}, []string{sessions.MarkEndOfTurn}},
		{"synthesis", func() int64 {
			v, err := w.Voices(ctx)
			if err != nil {
				t.Fatal(err)
			}
			syn, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: "Every frame is seen.", Voice: "aura-asteria-en", Speed: 1, Silent: true})
			if err != nil {
				t.Fatal(err)
			}
			<-syn.Done()
			return syn.Result().SessionID
		}, []string{sessions.MarkFirstAudio}},
	}
	var tokens []string
	for _, r := range runs {
		before := proxy.count(t)
		id := r.start()
		if id == 0 {
			t.Fatalf("%s: no history entry", r.name)
		}
		if err := ins.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		wire := proxy.count(t).minus(before)
		tokens = append(tokens, wire.tokens...)
		live := ofSession(ins.Since(0), id)
		got := seen(live)
		if got.String() != wire.String() {
			t.Errorf("%s: the inspector saw\n%v\nthe wire carried\n%v", r.name, got, wire)
		}
		if len(wire.handshakes) != 1 || wire.requests[api.PathAuthGrant] != 1 || wire.sentText+wire.recvText == 0 {
			t.Errorf("%s: the wire carried %v: one grant and one socket were expected", r.name, wire)
		}
		m := markers(live)
		for _, want := range r.marks {
			if m[want] == 0 {
				t.Errorf("%s: no %q marker (markers %v)", r.name, want, m)
			}
		}
		for k := range m {
			if strings.HasPrefix(k, "non-positive") {
				t.Errorf("%s: a marker with %s", r.name, k)
			}
		}
		saved, err := ins.Session(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(saved) != len(live) {
			t.Fatalf("%s: %d events saved, %d seen", r.name, len(saved), len(live))
		}
		for i := range saved {
			a, b := saved[i], live[i]
			if a.Kind != b.Kind || a.Direction != b.Direction || a.Text != b.Text || a.Size != b.Size || a.Marker != b.Marker || a.Latency != b.Latency || !a.Time.Equal(b.Time) {
				t.Errorf("%s: event %d saved as %+v, seen as %+v", r.name, i, a, b)
				break
			}
		}
		t.Logf("%s: %d events (%v), markers %v", r.name, len(live), got, m)
	}
	if len(tokens) != len(runs) {
		t.Fatalf("%d tokens granted, want %d", len(tokens), len(runs))
	}

	var all bytes.Buffer
	if err := sessions.ExportWire(&all, ins.Since(0)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(all.String()), "\n")
	if len(lines) != len(ins.Since(0)) {
		t.Errorf("%d lines exported, %d events", len(lines), len(ins.Since(0)))
	}
	for i, l := range lines {
		var e sessions.WireEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Kind == "" {
			t.Fatalf("line %d is not an event: %v: %s", i+1, err, l)
		}
	}
	for form, k := range keyForms(key) {
		if strings.Contains(all.String(), k) {
			t.Errorf("the key (%s) is in the inspector's events", form)
		}
	}
	for _, tok := range tokens {
		if strings.Contains(all.String(), tok) {
			t.Errorf("the token %.12s... is in the inspector's events", tok)
		}
	}
	if !strings.Contains(all.String(), `\"access_token\":\"[redacted]\"`) {
		t.Error("the grants' answers are not shown, redacted")
	}
}

// TestInspectorRingBindAndSubscribe keeps the last events in memory,
// reads them from a number on, signals a subscriber without blocking the
// wire, and writes a run's events to history once it is bound.
func TestInspectorRingBindAndSubscribe(t *testing.T) {
	db := openDB(t)
	ctx := testContext(t, 20*time.Second)
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindSynthesis, Title: "bound later"})
	if err != nil {
		t.Fatal(err)
	}
	ins := sessions.NewInspector(sessions.InspectorConfig{Store: db, Capacity: 3})
	defer ins.Close()
	sig, stop := ins.Subscribe()
	defer stop()
	t0 := time.Now()
	ev := func(i int, label string, dir api.WireDirection, kind api.WireKind, text string) api.WireEvent {
		return api.WireEvent{Time: t0.Add(time.Duration(i) * time.Millisecond), Stream: 77, Label: label, Direction: dir, Kind: kind,
			Path: api.PathSpeak, Text: text, Size: int64(len(text))}
	}
	ins.ObserveWire(ev(0, "", api.WireSent, api.WireRequest, `{"text":"hi"}`))
	answer := ev(1, "", api.WireReceived, api.WireResponse, "")
	answer.Status = http.StatusOK
	ins.ObserveWire(answer)
	select {
	case <-sig:
	default:
		t.Fatal("no signal after events")
	}
	ins.ObserveWire(ev(2, "", api.WireReceived, api.WireBody, ""))
	ins.ObserveWire(ev(3, "run:x", api.WireReceived, api.WireText, `{"type":"Flushed"}`))
	all := ins.Since(0)
	if len(all) != 3 || all[0].Seq != 2 || all[2].Seq != 4 {
		t.Fatalf("ring holds %d events from %d", len(all), all[0].Seq)
	}
	if got := ins.Since(3); len(got) != 1 || got[0].Message != "Flushed" {
		t.Errorf("Since(3) = %+v", got)
	}
	// The REST speak's answer was its first audio.
	first := ins.Since(1)[0]
	if first.Marker != sessions.MarkFirstAudio || first.Latency != time.Millisecond {
		t.Errorf("answer marked %q after %v", first.Marker, first.Latency)
	}
	ins.Bind("run:x", id)
	ins.ObserveWire(ev(4, "run:x", api.WireSent, api.WireClose, ""))
	saved, err := ins.Session(ctx, id, "")
	if err != nil || len(saved) != 2 || saved[0].Message != "Flushed" || saved[1].Kind != api.WireClose {
		t.Fatalf("saved %+v, %v", saved, err)
	}
	if found, err := ins.Session(ctx, id, "flushed"); err != nil || len(found) != 1 {
		t.Errorf("search found %d, %v", len(found), err)
	}
}

// FuzzInspectorObserve feeds the inspector what a server could send: it
// never panics, keeps every message, and marks a stream at most once per
// first.
func FuzzInspectorObserve(f *testing.F) {
	f.Add(`{"type":"Results","is_final":false}`, `{"type":"Results","is_final":true}`, true)
	f.Add(`{"type":"TurnInfo","event":"EndOfTurn"}`, `{"type":"AgentAudioDone"}`, false)
	f.Add(`{"type":`, "\xff", true)
	f.Fuzz(func(t *testing.T, a, b string, binary bool) {
		ins := sessions.NewInspector(sessions.InspectorConfig{Capacity: 8})
		kind := api.WireText
		if binary {
			kind = api.WireBinary
		}
		for i, text := range []string{a, b, a, b} {
			ins.ObserveWire(api.WireEvent{Stream: 1, Direction: api.WireReceived, Kind: api.WireText, Path: api.PathListenV2, Text: text, Time: time.Unix(int64(i), 0)})
			ins.ObserveWire(api.WireEvent{Stream: 2, Direction: api.WireReceived, Kind: kind, Path: api.PathAgent, Text: text, Time: time.Unix(int64(i), 0)})
		}
		got := ins.Since(0)
		if len(got) != 8 {
			t.Fatalf("%d events kept, want 8", len(got))
		}
		firsts := map[string]int{}
		for _, e := range got {
			if e.Marker != "" && e.Marker != sessions.MarkEndOfTurn {
				firsts[fmt.Sprint(e.Stream, e.Marker)]++
			}
		}
		for k, n := range firsts {
			if n > 1 {
				t.Errorf("%s marked %d times", k, n)
			}
		}
	})
}

// TestInspectorAgentReplies: each reply of the agent gets its own first
// audio, timed from the end of the person's turn (their words as the agent
// heard them, or a typed message), not from the start of the socket.
func TestInspectorAgentReplies(t *testing.T) {
	ins := sessions.NewInspector(sessions.InspectorConfig{})
	defer ins.Close()
	t0 := time.Now()
	at := func(ms int, dir api.WireDirection, kind api.WireKind, text string) {
		ins.ObserveWire(api.WireEvent{Time: t0.Add(time.Duration(ms) * time.Millisecond), Stream: 9, Path: api.PathAgent,
			Direction: dir, Kind: kind, Text: text, Size: int64(len(text))})
	}
	at(0, api.WireSent, api.WireText, `{"type":"Settings"}`)
	at(100, api.WireSent, api.WireBinary, "")
	at(2000, api.WireReceived, api.WireText, `{"type":"ConversationText","role":"user","content":"hello"}`)
	at(2300, api.WireReceived, api.WireBinary, "")
	at(2400, api.WireReceived, api.WireBinary, "")
	at(3000, api.WireReceived, api.WireText, `{"type":"AgentAudioDone"}`)
	at(5000, api.WireSent, api.WireText, `{"type":"InjectUserMessage","content":"and now?"}`)
	at(5250, api.WireReceived, api.WireBinary, "")
	var marks []string
	for _, e := range ins.Since(0) {
		if e.Marker != "" {
			marks = append(marks, fmt.Sprintf("%s %d", e.Marker, e.Latency.Milliseconds()))
		}
	}
	want := []string{"first audio 300", "end of turn 1000", "first audio 250"}
	if !slices.Equal(marks, want) {
		t.Errorf("markers %q, want %q", marks, want)
	}
}
