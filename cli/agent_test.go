package cli

import (
	"context"
	"strings"
	"testing"
	"time"

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
