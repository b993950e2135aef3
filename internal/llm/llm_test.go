package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// standIn is an OpenAI-compatible server on 127.0.0.1 that answers GET
// /v1/models with handler.
func standIn(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is an address on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// rawServer accepts connections on 127.0.0.1 and answers each with reply,
// which is not HTTP, then hangs up.
func rawServer(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			_, _ = c.Write([]byte(reply))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + "/v1"
}

func TestModels(t *testing.T) {
	list := `{"object":"list","data":[{"id":"llama3","object":"model"},{"id":"qwen2.5"},{"id":""},{"id":"mistral"}]}`
	cases := []struct {
		name    string
		handler http.HandlerFunc // nil: base is given
		base    string
		path    string // the path the server is at, default /v1
		want    []string
		kind    Kind
		reason  string
	}{
		{name: "three models", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/models" || r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer k" {
				http.Error(w, "wrong", http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, list)
		}, want: []string{"llama3", "qwen2.5", "mistral"}},
		{name: "no model", handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"object":"list","data":[]}`) },
			kind: NoModels, reason: "answers, but offers no model: add one to it first"},
		{name: "null list", handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"object":"list","data":null}`) },
			kind: NoModels},
		{name: "garbage", handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>It works!</html>") },
			kind: NotOpenAI, reason: "answers, but not as an OpenAI-compatible server: its model list is not OpenAI's"},
		{name: "JSON of another kind", handler: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"stt":[],"tts":[]}`) },
			kind: NotOpenAI},
		{name: "a key is needed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"missing key"}`, http.StatusUnauthorized)
		}, kind: NeedsKey, reason: "needs a key"},
		{name: "the key is refused", handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) },
			kind: NeedsKey, reason: "refuses the key it was given"},
		{name: "its own error", handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			kind: Failing, reason: "answers with an error: 500 Internal Server Error"},
		{name: "no /v1", path: "/", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				fmt.Fprint(w, list)
				return
			}
			http.NotFound(w, r)
		}, kind: NotOpenAI, reason: "answers, but not as an OpenAI-compatible server: GET /models answered 404 Not Found; such addresses usually end in /v1"},
		{name: "closed port", base: closedPort(t), kind: NoAnswer, reason: "does not answer: connection refused"},
		{name: "not HTTP", base: rawServer(t, "SSH-2.0-OpenSSH_9.2\r\n"), kind: NotOpenAI, reason: "answers, but not as an OpenAI-compatible server: not HTTP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := c.base
			if c.handler != nil {
				path := "/v1"
				if c.path != "" {
					path = strings.TrimSuffix(c.path, "/")
				}
				base = standIn(t, c.handler) + path
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			ids, err := Models(ctx, nil, base, map[string]string{"Authorization": "Bearer k"})
			if c.kind == 0 {
				if err != nil || !reflect.DeepEqual(ids, c.want) {
					t.Fatalf("Models = %q, %v; want %q", ids, err, c.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != c.kind {
				t.Fatalf("Models = %q, %v; want an error of kind %d", ids, err, c.kind)
			}
			if c.reason != "" && e.Reason() != c.reason {
				t.Errorf("reason %q, want %q", e.Reason(), c.reason)
			}
			if want := "the language model at " + Host(base) + " " + e.Reason(); err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
}

// TestModelsHangingServer: a server that takes the request and never
// answers is given up on when the caller's time is out, and said not to
// answer. Real time is unavoidable (the deadline is the network's); the
// deadline is short and the bound on the wait wide, so a loaded machine
// cannot fail it, while a client that waited for the server would.
func TestModelsHangingServer(t *testing.T) {
	stop := make(chan struct{})
	base := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}) + "/v1"
	t.Cleanup(func() { close(stop) }) // runs before the server's Close
	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	_, err := Models(ctx, nil, base, nil)
	waited := time.Since(start)
	var e *Error
	if !errors.As(err, &e) || e.Kind != NoAnswer || !strings.HasPrefix(e.Reason(), "does not answer: no reply within ") {
		t.Fatalf("Models = %v, want no answer in time", err)
	}
	if waited > deadline+20*time.Second {
		t.Errorf("waited %v for a deadline of %v", waited, deadline)
	}
}

// TestModelsCancelled: a caller that gives up gets its own error, not a
// verdict on the server.
func TestModelsCancelled(t *testing.T) {
	reached := make(chan struct{})
	stop := make(chan struct{})
	base := standIn(t, func(w http.ResponseWriter, r *http.Request) {
		close(reached)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}) + "/v1"
	t.Cleanup(func() { close(stop) })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-reached
		cancel()
	}()
	_, err := Models(ctx, nil, base, nil)
	var e *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &e) {
		t.Fatalf("Models = %v, want context.Canceled", err)
	}
}

func FuzzParseModels(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"id":"llama3"}]}`, `{"data":null}`, `{"data":{}}`, `{"data":[1,"x",{"id":7},{"id":" "}]}`,
		`[]`, `null`, ``, `{"data":[{"id":"a"}`, `{"models":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := ParseModels(b)
		if err != nil && ids != nil {
			t.Fatal("ids with an error")
		}
		for _, id := range ids {
			if strings.TrimSpace(id) == "" {
				t.Fatal("an empty id")
			}
		}
	})
}
