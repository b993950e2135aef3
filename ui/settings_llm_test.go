package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/store"
)

// llmStandIn is an OpenAI-compatible server on 127.0.0.1 whose model list
// is answered by handler; its address is returned up to /v1.
func llmStandIn(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// closedLLMAddress is an address up to /v1 where nothing listens.
func closedLLMAddress(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL + "/v1"
}

// saveLLM types addr into the language model field and saves.
func (h *harness) saveLLM(addr string) {
	h.ui(func() {
		h.settings.llm.SetText("")
		test.Type(h.settings.llm, addr)
		test.Tap(h.settings.save)
	})
}

// llmHintText is what the language model field says under it.
func (h *harness) llmHintText() string {
	var s string
	h.ui(func() { s = h.settings.llmItem.HintText })
	return s
}

// TestLanguageModelTried: a saved language model address is tried, and
// its field says what was found: the models of a server that answers;
// why another cannot be used (nothing listens, it is no OpenAI-compatible
// server, it wants a key), with the field marked invalid and the status
// saying so after "Saved"; a try that hangs is stopped when the field
// changes again.
func TestLanguageModelTried(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	closed := closedLLMAddress(t)
	cases := []struct {
		name, addr, hint, status string
	}{
		{"three models", llmStandIn(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"llama3"},{"id":"qwen2.5"},{"id":"mistral"}]}`)
		}), "Answers: 3 models: llama3, qwen2.5, mistral.", "Saved."},
		{"five models", llmStandIn(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"data":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"}]}`)
		}), "Answers: 5 models: a, b, c and 2 more.", "Saved."},
		{"closed port", closed, "Does not answer: connection refused.",
			"Saved, but the language model at " + strings.TrimSuffix(strings.TrimPrefix(closed, "http://"), "/v1") + " does not answer: connection refused."},
		{"garbage", llmStandIn(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<h1>It works!</h1>") }),
			"Answers, but not as an OpenAI-compatible server: its model list is not OpenAI's.", ""},
		{"a key", llmStandIn(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no key", http.StatusUnauthorized) }),
			"Needs a key.", ""},
	}
	for _, c := range cases {
		h.saveLLM(c.addr)
		h.waitFor(t, c.name+": the field's verdict", func() bool { return h.settings.llmItem.HintText == c.hint })
		h.ui(func() {
			err := h.settings.llm.Validate()
			if answers := strings.HasPrefix(c.hint, "Answers: "); answers != (err == nil) {
				t.Errorf("%s: the field's verdict is %v", c.name, err)
			}
			if c.status != "" && h.settings.status.Text != c.status {
				t.Errorf("%s: status %q, want %q", c.name, h.settings.status.Text, c.status)
			}
		})
	}

	// A server that takes the request and never answers: editing the
	// field stops the try (the server sees its request cancelled), and
	// the field no longer speaks of it.
	reached, gone := make(chan struct{}, 1), make(chan struct{}, 1)
	hung := llmStandIn(t, func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	})
	h.saveLLM(hung)
	<-reached
	if got := h.llmHintText(); got != "Trying the address…" {
		t.Errorf("while trying, the field says %q", got)
	}
	h.ui(func() { test.Type(h.settings.llm, "x") })
	<-gone
	if got := h.llmHintText(); got != llmHint {
		t.Errorf("after an edit, the field says %q", got)
	}
	// Saving an address that was refused in form is no reason to keep
	// a server from being saved: a server that does not answer yet is.
	h.saveLLM(closed)
	h.waitFor(t, "the second save", func() bool { return strings.HasPrefix(h.settings.status.Text, "Saved") })
	if got, err := h.db.LoadSettings(t.Context()); err != nil || got.AgentLLM != closed {
		t.Errorf("saved %q, %v", got.AgentLLM, err)
	}
}

// TestAgentTabLanguageModelDoesNotAnswer: with a language model server
// in the settings that does not answer, the Agent tab says so, why, and
// which model the agent thinks with instead.
func TestAgentTabLanguageModelDoesNotAnswer(t *testing.T) {
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	closed := closedLLMAddress(t)
	s := store.DefaultSettings()
	s.Backend, s.AgentLLM = store.BackendLocal, closed
	h := newHarnessWith(t, harnessConfig{
		settings: &s,
		local:    func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil },
		localLLM: func(url string) { l.Engine.SetLLM(engine.LLMEndpoint{URL: url}) },
	}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v)", err)
	}
	h.ui(func() { h.SelectTab("Agent") })
	want := "The language model at " + strings.TrimSuffix(strings.TrimPrefix(closed, "http://"), "/v1") +
		" does not answer: connection refused. The agent thinks with Earshot built-in assistant (rules, not a language model) instead."
	h.waitFor(t, "the Agent tab to say the language model does not answer", func() bool { return h.agent.status.Text == want })
	h.ui(func() {
		if h.agent.status.Importance != widget.WarningImportance {
			t.Errorf("the note is of importance %v", h.agent.status.Importance)
		}
	})
}
