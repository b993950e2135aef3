package think

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/llm"
)

func TestChatStream(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "wrong", http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":"Let me "}}]}`,
			`{"choices":[{"delta":{"content":"check."}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, ": keep-alive comment\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	c := Chat{URL: ChatURL(srv.URL + "/v1"), Headers: map[string]string{"Authorization": "Bearer k"}, Model: "llama3"}
	var text strings.Builder
	calls, err := c.Stream(t.Context(), []ChatMessage{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Weather?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c0", Name: "get_time", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "c0", Content: "noon"},
	}, []Tool{{Name: "get_weather", Description: "The weather", Parameters: json.RawMessage(`{"type":"object"}`)}},
		func(s string) error { text.WriteString(s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "Let me check." {
		t.Errorf("text %q", text.String())
	}
	want := []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %+v", calls)
	}
	if got["model"] != "llama3" || got["stream"] != true {
		t.Errorf("request %v", got)
	}
	msgs := got["messages"].([]any)
	asst := msgs[2].(map[string]any)
	tool := msgs[3].(map[string]any)
	if asst["content"] != nil || len(asst["tool_calls"].([]any)) != 1 || tool["tool_call_id"] != "c0" || tool["role"] != "tool" {
		t.Errorf("the tool round trip is sent as %v and %v", asst, tool)
	}
	tools := got["tools"].([]any)
	if fn := tools[0].(map[string]any)["function"].(map[string]any); fn["name"] != "get_weather" {
		t.Errorf("tools %v", tools)
	}
}

func TestChatErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/whole/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"Four."}}]}`)
		default:
			http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	_, err := Chat{URL: srv.URL + "/v1/chat/completions", Model: "x"}.Stream(t.Context(), nil, nil, func(string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "model not found") {
		t.Errorf("a 404: %v", err)
	}
	// A server that does not answer is said not to, as the settings say.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = Chat{URL: closed.URL + "/v1/chat/completions", Model: "x"}.Stream(t.Context(), nil, nil, func(string) error { return nil })
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.NoAnswer || le.Reason() != "does not answer: connection refused" {
		t.Errorf("a closed port: %v", err)
	}
	var text string
	if _, err := (Chat{URL: srv.URL + "/whole/chat/completions"}).Stream(t.Context(), nil, nil, func(s string) error { text += s; return nil }); err != nil || text != "Four." {
		t.Errorf("a reply that is not streamed: %q, %v", text, err)
	}
}

func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"f\"}}]}}]}\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n",
		"data: {\"error\":{\"message\":\"boom\"}}\n", "data: nope\n", ": only a comment\n", "",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"a\"}},{\"function\":{\"name\":\"b\"}}]}}]}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ReadStream(strings.NewReader(s), func(string) error { return nil })
		if err != nil && calls != nil {
			t.Fatal("calls with an error")
		}
		for _, c := range calls {
			if c.Name == "" || c.ID == "" || c.Arguments == "" {
				t.Fatalf("an incomplete call %+v", c)
			}
		}
	})
}
