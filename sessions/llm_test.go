package sessions_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/llm"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// llmWorkspace is a workspace on db and a local engine of its own, which
// thinks with the language model server the settings name (llmURL).
func llmWorkspace(t *testing.T, db *store.DB, llmURL string) *sessions.Workspace {
	t.Helper()
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Speakers: sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}},
		Local:    func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil },
		LocalLLM: func(url string) { l.Engine.SetLLM(engine.LLMEndpoint{URL: url}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := store.DefaultSettings()
	s.Backend, s.AgentLLM = store.BackendLocal, llmURL
	if err := ws.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return ws
}

// firstReply asks the agent a question and returns the text of its reply
// and the warnings that came before the reply was spoken.
func firstReply(t *testing.T, ws *sessions.Workspace, req sessions.AgentRequest) (reply string, warnings []string) {
	t.Helper()
	ctx := testContext(t, 2*time.Minute)
	req.Text = true
	a, err := ws.StartAgent(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	ev := watchAgent(a)
	a.Say("What is two plus two?")
	ev.waitFor(t, ctx, "the reply spoken", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentAudioDoneEvent); return ok })
	for _, e := range ev.seen {
		switch x := e.(type) {
		case *sessions.AgentTextEvent:
			if x.Role == api.RoleAssistant {
				reply = strings.TrimSpace(reply + " " + x.Content)
			}
		case *sessions.AgentNoticeEvent:
			if x.Type == api.TypeWarning {
				warnings = append(warnings, x.Description)
			}
		}
	}
	return reply, warnings
}

// TestAgentLanguageModelDoesNotAnswer: a language model server that does
// not answer is said not to, with why, when its address is tried, in the
// agent's choices, and by the agent's first reply, which says which
// model answers instead; and a model of the server that stops answering
// mid-way falls back to the built-in assistant, which says so.
func TestAgentLanguageModelDoesNotAnswer(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	host := strings.TrimPrefix(closed.URL, "http://")
	wantNote := "The language model at " + host + " does not answer: connection refused. Earshot's built-in assistant answers instead."

	t.Run("never answered", func(t *testing.T) {
		t.Parallel()
		ws := llmWorkspace(t, openDB(t), closed.URL+"/v1")
		var le *llm.Error
		if _, err := ws.TryLLM(t.Context(), closed.URL+"/v1"); !errors.As(err, &le) || le.Kind != llm.NoAnswer {
			t.Errorf("TryLLM = %v, want no answer", err)
		}
		ch, err := ws.AgentChoices(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !errors.As(ch.LLMErr, &le) || le.Error() != "the language model at "+host+" does not answer: connection refused" {
			t.Errorf("the choices say %v of the server", ch.LLMErr)
		}
		if len(ch.Models) != 1 {
			t.Errorf("the choices offer %+v", ch.Models)
		}
		reply, warnings := firstReply(t, ws, sessions.AgentRequest{})
		if !strings.HasPrefix(reply, wantNote+" ") {
			t.Errorf("the first reply is %q, want it to begin with %q", reply, wantNote)
		}
		if len(warnings) != 1 || warnings[0] != wantNote {
			t.Errorf("the warnings are %q", warnings)
		}
	})
	t.Run("stopped answering", func(t *testing.T) {
		t.Parallel()
		srv := fakeLLM(t, "search_history", `{"query":"budget"}`)
		ws := llmWorkspace(t, openDB(t), srv.URL+"/v1")
		ch, err := ws.AgentChoices(t.Context())
		if err != nil || ch.LLMErr != nil || len(ch.Models) != 2 {
			t.Fatalf("with the server up, the choices are %+v, %v", ch, err)
		}
		srv.Close()
		reply, warnings := firstReply(t, ws, sessions.AgentRequest{Think: "tiny-llm"})
		want := "The model tiny-llm at " + strings.TrimPrefix(srv.URL, "http://") + " does not answer: connection refused. Earshot's built-in assistant answers instead."
		if !strings.HasPrefix(reply, want+" ") || !strings.Contains(strings.ToLower(reply), "four") {
			t.Errorf("the first reply is %q, want it to begin with %q and answer", reply, want)
		}
		if len(warnings) != 1 || warnings[0] != want {
			t.Errorf("the warnings are %q", warnings)
		}
	})
	t.Run("answers", func(t *testing.T) {
		t.Parallel()
		srv := fakeLLM(t, "search_history", `{"query":"budget"}`)
		ws := llmWorkspace(t, openDB(t), srv.URL+"/v1")
		if models, err := ws.TryLLM(t.Context(), srv.URL+"/v1"); err != nil || len(models) != 1 || models[0] != "tiny-llm" {
			t.Errorf("TryLLM = %q, %v", models, err)
		}
		if err := ws.LLMProblem(t.Context()); err != nil {
			t.Errorf("LLMProblem = %v", err)
		}
	})
}
