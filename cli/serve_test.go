package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
)

// fakeServer is an engine that answers every request with its host's name.
type fakeServer struct {
	cfg    ServeConfig
	mu     sync.Mutex
	closed int
}

func (f *fakeServer) handler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
}
func (f *fakeServer) Handler() http.Handler      { return f.handler("main") }
func (f *fakeServer) AgentHandler() http.Handler { return f.handler("agent") }
func (f *fakeServer) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed++
	return nil
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no command", nil, 0, "Usage: earshot"},
		{"help", []string{"help"}, 0, "serve"},
		{"unknown", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"serve without key", []string{"serve"}, 2, "serve needs --key"},
		{"serve bad region", []string{"serve", "--key", "k", "--region", "mars"}, 2, "unknown region"},
		{"serve agent in region", []string{"serve", "--key", "k", "--region", "eu", "--agent-addr", "127.0.0.1:0"}, 2, "a region has no agent host"},
		{"serve stray argument", []string{"serve", "--key", "k", "extra"}, 2, "takes no arguments"},
		{"serve bad flag", []string{"serve", "--nope"}, 2, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr testkit.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := Run(context.Background(), env, tt.args)
			if code != tt.code {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if got := stdout.String() + stderr.String(); !strings.Contains(got, tt.out) {
				t.Errorf("output %q does not contain %q", got, tt.out)
			}
		})
	}
}

var listening = regexp.MustCompile(`(main|agent) host listening on (http://\S+)`)

func TestServeRunsUntilCancelled(t *testing.T) {
	fake := &fakeServer{}
	var stdout, stderr testkit.Buffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		if k == "EARSHOT_ENGINE_KEY" {
			return "from-env"
		}
		return ""
	}, NewEngine: func(c ServeConfig) (Server, error) {
		fake.cfg = c
		return fake, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- Run(ctx, env, []string{"serve", "--addr", "127.0.0.1:0", "--agent-addr", "127.0.0.1:0", "--max-connections", "3"})
	}()

	urls := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(urls) < 2 && time.Now().Before(deadline) {
		for _, m := range listening.FindAllStringSubmatch(stdout.String(), -1) {
			urls[m[1]] = m[2]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(urls) != 2 {
		cancel()
		<-done
		t.Fatalf("serve did not report both hosts: %q %q", stdout.String(), stderr.String())
	}
	for name, u := range urls {
		resp, err := http.Get(u + "/anything")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != name {
			t.Errorf("%s host answered %q", name, b)
		}
	}
	if fake.cfg.Key != api.Secret("from-env") || fake.cfg.MaxConnections != 3 || !fake.cfg.LoopbackOnly {
		t.Errorf("engine configured with %+v", fake.cfg)
	}
	if strings.Contains(stdout.String()+stderr.String(), "from-env") {
		t.Error("serve printed the key")
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit status %d after cancel; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	if fake.closed == 0 {
		t.Error("the engine was not closed")
	}
}

func TestServeReportsBusyAddress(t *testing.T) {
	var stdout, stderr testkit.Buffer
	fake := &fakeServer{}
	env := Env{Stdout: &stdout, Stderr: &stderr, NewEngine: func(ServeConfig) (Server, error) { return fake, nil }}
	code := Run(context.Background(), env, []string{"serve", "--key", "k", "--addr", "256.0.0.1:80"})
	if code != 1 || !strings.Contains(stderr.String(), "listen on 256.0.0.1:80") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestServeSaysLanguageModelDoesNotAnswer: serve --llm tries the server
// at start, and says on stderr when it does not answer; a server that
// answers goes unmentioned.
func TestServeSaysLanguageModelDoesNotAnswer(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"llama3"}]}`)
	}))
	t.Cleanup(up.Close)
	for _, tt := range []struct{ name, llm, want string }{
		{"closed", closed.URL + "/v1", "earshot serve: the language model at " + strings.TrimPrefix(closed.URL, "http://") +
			" does not answer: connection refused; the voice agent thinks with its built-in assistant until it answers\n"},
		{"up", up.URL + "/v1", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr testkit.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr, NewEngine: func(ServeConfig) (Server, error) { return &fakeServer{}, nil }}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan int)
			go func() {
				done <- Run(ctx, env, []string{"serve", "--key", "k", "--addr", "127.0.0.1:0", "--llm", tt.llm})
			}()
			deadline := time.Now().Add(10 * time.Second)
			for !listening.MatchString(stdout.String()) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("exit status %d; stderr %q", code, stderr.String())
			}
			if got := stderr.String(); got != tt.want {
				t.Errorf("stderr %q, want %q", got, tt.want)
			}
		})
	}
}
