package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// wireLog records wire events.
type wireLog struct {
	mu     sync.Mutex
	events []api.WireEvent
}

func (w *wireLog) ObserveWire(ev api.WireEvent) {
	w.mu.Lock()
	w.events = append(w.events, ev)
	w.mu.Unlock()
}

func (w *wireLog) all() []api.WireEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]api.WireEvent(nil), w.events...)
}

// of returns the events of path.
func (w *wireLog) of(path string) []api.WireEvent {
	var out []api.WireEvent
	for _, ev := range w.all() {
		if ev.Path == path {
			out = append(out, ev)
		}
	}
	return out
}

func kinds(evs []api.WireEvent) string {
	var b []string
	for _, ev := range evs {
		b = append(b, string(ev.Direction)+" "+string(ev.Kind))
	}
	return strings.Join(b, ", ")
}

func TestWireREST(t *testing.T) {
	const models = `{"stt":[],"tts":[]}`
	audio := strings.Repeat("\x01\x02", 500)
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path == api.PathModels {
			w.Header().Set(api.HeaderRequestID, "rest-1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, models)
			return
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = io.WriteString(w, audio)
	})
	log := &wireLog{}
	c := srv.client(t, api.Config{APIKey: "sekrit-key-123", Wire: log})
	ctx := api.WithWireLabel(testContext(t), "session-7")

	if _, err := c.Models(ctx, false); err != nil {
		t.Fatal(err)
	}
	got := log.of(api.PathModels)
	if kinds(got) != "sent request, received response" {
		t.Fatalf("models events: %s", kinds(got))
	}
	req, resp := got[0], got[1]
	if req.Method != http.MethodGet || req.Label != "session-7" || req.Stream == 0 || resp.Stream != req.Stream {
		t.Errorf("request %+v", req)
	}
	if resp.Status != 200 || resp.RequestID != "rest-1" || resp.Size != int64(len(models)) || resp.Text != models || resp.Label != "session-7" || resp.Elapsed <= 0 {
		t.Errorf("response %+v", resp)
	}

	r, err := c.Speak(ctx, "hello there", api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "mp3"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil || string(b) != audio {
		t.Fatalf("speak body %d bytes, %v", len(b), err)
	}
	got = log.of(api.PathSpeak)
	if kinds(got) != "sent request, received response, received body" {
		t.Fatalf("speak events: %s", kinds(got))
	}
	if got[0].Text != `{"text":"hello there"}` || got[0].Size != int64(len(got[0].Text)) {
		t.Errorf("speak request %+v", got[0])
	}
	if !strings.Contains(got[0].Query, "model=aura-2-thalia-en") {
		t.Errorf("speak query %q", got[0].Query)
	}
	if got[1].Text != "" || got[2].Text != "" || got[2].Size != int64(len(audio)) {
		t.Errorf("speak answer %+v, end %+v", got[1], got[2])
	}
	if got[0].Stream == req.Stream {
		t.Errorf("two calls share stream %d", req.Stream)
	}
	assertNoSecret(t, log.all(), "sekrit-key-123")
}

func TestWireSocket(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		_ = writeText(ctx, c, finalResults(0, "hello"))
		_, _ = readAll(ctx, c)
	})
	log := &wireLog{}
	c := srv.client(t, api.Config{Wire: log})
	ctx := api.WithWireLabel(testContext(t), "captions-3")
	st, err := c.Listen(ctx, api.ListenOptions{Model: "nova-3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(ctx, make([]byte, 3200)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	got := log.of(api.PathListen)
	if want := "received open, sent binary, received text, sent text, sent close"; kinds(got) != want {
		t.Fatalf("events: %s, want %s", kinds(got), want)
	}
	for _, ev := range got {
		if ev.Label != "captions-3" || ev.Stream != got[0].Stream {
			t.Errorf("%s %s: label %q stream %d", ev.Direction, ev.Kind, ev.Label, ev.Stream)
		}
	}
	if got[0].RequestID != "stream-req-1" || got[0].Status != http.StatusSwitchingProtocols || !strings.Contains(got[0].Query, "model=nova-3") {
		t.Errorf("open %+v", got[0])
	}
	if got[1].Size != 3200 || got[1].Text != "" {
		t.Errorf("binary frame %+v", got[1])
	}
	if !strings.Contains(got[2].Text, `"hello"`) || got[2].Size != int64(len(got[2].Text)) {
		t.Errorf("text frame %+v", got[2])
	}
	if got[3].Text != `{"type":"CloseStream"}` {
		t.Errorf("control frame %+v", got[3])
	}
}

// TestWireNoSecrets holds that neither the key nor any minted token, nor
// the Authorization header, reaches an event, in any field.
func TestWireNoSecrets(t *testing.T) {
	checkNoLeak(t)
	srv := newListenServer(t, func(ctx context.Context, c *websocket.Conn) {
		_ = writeText(ctx, c, finalResults(0, "hello"))
		_, _ = readAll(ctx, c)
	})
	log := &wireLog{}
	c := srv.client(t, api.Config{APIKey: "KEY", ShortLivedTokens: true, Wire: log})
	ctx := testContext(t)
	for range 2 {
		st, err := c.Listen(ctx, api.ListenOptions{Model: "nova-3"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Next(ctx); err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
	}
	grants := log.of(api.PathAuthGrant)
	if kinds(grants) != "sent request, received response, sent request, received response" {
		t.Fatalf("grant events: %s", kinds(grants))
	}
	if !strings.Contains(grants[1].Text, `"access_token":"[redacted]"`) {
		t.Errorf("grant answer shown as %q", grants[1].Text)
	}
	assertNoSecret(t, log.all(), "KEY", "jwt-1", "jwt-2", "Token ", "Bearer")
}

func assertNoSecret(t *testing.T, evs []api.WireEvent, secrets ...string) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("event shows %q: %s", s, b)
			}
		}
	}
}

func TestRedactText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"access_token":"eyJabc","expires_in":30}`, `{"access_token":"[redacted]","expires_in":30}`},
		{`{"headers": {"Authorization" : "Bearer x\"y"}}`, `{"headers": {"Authorization" : "[redacted]"}}`},
		{`{"keyterm":"key","type":"Results"}`, `{"keyterm":"key","type":"Results"}`},
		{`not json`, `not json`},
	} {
		if got := api.RedactText(tc.in); got != tc.want {
			t.Errorf("RedactText(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	q := url.Values{"model": {"nova-3"}, "token": {"abc"}, "API_KEY": {"k"}}
	if got, want := api.RedactQuery(q), "API_KEY=%5Bredacted%5D&model=nova-3&token=%5Bredacted%5D"; got != want {
		t.Errorf("RedactQuery = %s, want %s", got, want)
	}
}

func TestWireTextBound(t *testing.T) {
	long := `{"text":"` + strings.Repeat("é", api.MaxWireText) + `"}`
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, long)
	})
	log := &wireLog{}
	c := srv.client(t, api.Config{APIKey: "k", Wire: log})
	_, _ = c.Models(testContext(t), false) // the answer is no model list
	got := log.of(api.PathModels)
	if len(got) != 2 {
		t.Fatalf("events: %s", kinds(got))
	}
	if r := got[1]; !r.Truncated || len(r.Text) > api.MaxWireText || r.Size != int64(len(long)) || !strings.HasPrefix(long, r.Text) {
		t.Errorf("answer of %d bytes shown as %d bytes (truncated %v, size %d)", len(long), len(r.Text), r.Truncated, r.Size)
	}
}
