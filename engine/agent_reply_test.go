package engine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// textLLM is an OpenAI-compatible server that streams pieces as its
// answer to every request.
func textLLM(t *testing.T, pieces ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range pieces {
			b, _ := json.Marshal(p)
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", b)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentReplySentences: a model's reply is spoken sentence by
// sentence as textseg cuts sentences, one ConversationText each: an
// abbreviation's period ("Dr.", "e.g.") or a decimal ends none (the agent
// spoke "Dr." alone), and a long run with no sentence end is spoken up to
// its last clause end within agentClause characters.
func TestAgentReplySentences(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	long := strings.Repeat("and then some more words ", 8) // 200 characters
	for _, tc := range []struct {
		name   string
		pieces []string
		want   []string
	}{
		{"abbreviations", []string{"Dr. Smith will ", "see you at 3.30 today. ", "Bring forms, e.g. the blue one", ". Anything else?"},
			[]string{"Dr. Smith will see you at 3.30 today.", "Bring forms, e.g. the blue one.", "Anything else?"}},
		{"long run", []string{"First, " + long, "with a pause, and more words after it to run past the limit"},
			[]string{"First, " + long + "with a pause,", "and more words after it to run past the limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm := textLLM(t, tc.pieces...)
			set := builtinSettings()
			set.Agent.Think = api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "tiny-llm"},
				Endpoint: &api.AgentEndpoint{URL: llm.URL + "/v1/chat/completions"}}}
			c := converse(t, ctx, shared, set)
			c.send(ctx, &api.InjectUserMessage{Content: "Who will see me?"})
			c.waitFor(ctx, "the spoken answer", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentAudioDone) })
			ms, _ := c.snapshot()
			var got []string
			for _, m := range ms {
				if ct, ok := m.(*api.ConversationText); ok && ct.Role == api.RoleAssistant {
					got = append(got, ct.Content)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("spoken as\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
