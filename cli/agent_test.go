package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestAgentText: with --text, each line of standard input is answered,
// one reply at a time, on the local engine's built-in assistant, and the
// conversation is saved.
func TestAgentText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.stdin = strings.NewReader("what is two plus two\n\nwhat is seven times six\n")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if code := h.run(t, ctx, "agent", "--text", "--prompt", "Be brief."); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if got, want := h.stdout.String(), "agent: Two plus two is four.\nagent: Seven times six is forty-two.\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindAgent})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
		t.Errorf("history %+v (%v), want the conversation", list, err)
	}
}

func TestAgentListModels(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if code := h.run(t, t.Context(), "agent", "--list-models"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if !strings.HasPrefix(h.stdout.String(), "earshot-assistant") || !strings.Contains(h.stdout.String(), "not a language model") {
		t.Errorf("stdout %q", h.stdout.String())
	}
}

func TestAgentUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"argument", []string{"agent", "hello"}, 2, "takes no arguments"},
		{"text and device", []string{"agent", "--text", "--device", "x"}, 2, "--text uses none"},
		{"not a voice", []string{"agent", "--text", "--voice", "nova-3"}, 2, `"nova-3" is not a voice`},
		{"unknown model", []string{"agent", "--text", "--think", "gpt-4o"}, 1, `cannot think with "gpt-4o"`},
		{"no microphone", []string{"agent"}, 1, "cannot capture audio"},
		{"help", []string{"agent", "-h"}, 2, "Usage: earshot agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), tt.args...); code != tt.code {
				t.Errorf("exit status %d, want %d; stderr %q", code, tt.code, h.stderr.String())
			}
			if !strings.Contains(h.stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", h.stderr.String(), tt.want)
			}
		})
	}
}

// TestAgentLanguageModelDoesNotAnswer: with a language model server in
// the settings that does not answer, earshot agent says so on stderr,
// and which model thinks instead, before the conversation starts; so
// does --list-models, whose list lacks the server's models.
func TestAgentLanguageModelDoesNotAnswer(t *testing.T) {
	t.Parallel()
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	h := newHarness(t, nil, func(c *sessions.WorkspaceConfig) {
		c.Local = func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil }
		c.LocalLLM = func(url string) { l.Engine.SetLLM(engine.LLMEndpoint{URL: url}) }
	})
	s := store.DefaultSettings()
	s.Backend, s.AgentLLM = store.BackendLocal, closed.URL+"/v1"
	if err := h.db.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	h.stdin = strings.NewReader("what is two plus two\n")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if code := h.run(t, ctx, "agent", "--text"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	say := "the language model at " + strings.TrimPrefix(closed.URL, "http://") + " does not answer: connection refused"
	if want := "earshot agent: " + say + "; the agent thinks with the local engine's built-in assistant instead\n"; !strings.HasPrefix(h.stderr.String(), want) {
		t.Errorf("stderr %q, want it to begin with %q", h.stderr.String(), want)
	}
	if !strings.Contains(h.stdout.String(), "Two plus two is four.") {
		t.Errorf("stdout %q", h.stdout.String())
	}

	before := len(h.stderr.String())
	if code := h.run(t, ctx, "agent", "--list-models"); code != 0 {
		t.Fatalf("--list-models: exit status %d; stderr %q", code, h.stderr.String())
	}
	if got, want := h.stderr.String()[before:], "earshot agent: "+say+", so its models are not listed\n"; got != want {
		t.Errorf("--list-models: stderr %q, want %q", got, want)
	}
}

// TestAgentTextNothingSaid: with nothing on standard input (or only blank
// lines), nothing is said, and no conversation is kept in history.
func TestAgentTextNothingSaid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "\n  \n"} {
		h := newHarness(t, nil)
		h.stdin = strings.NewReader(in)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		if code := h.run(t, ctx, "agent", "--text"); code != 0 {
			t.Fatalf("input %q: exit status %d; stderr %q", in, code, h.stderr.String())
		}
		cancel()
		list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindAgent})
		if err != nil || len(list) != 0 {
			t.Errorf("input %q: history %+v (%v), want no conversation", in, list, err)
		}
		if !strings.Contains(h.stderr.String(), "Nothing was said, so no conversation was kept") {
			t.Errorf("input %q: stderr %q does not say nothing was kept", in, h.stderr.String())
		}
	}
}
