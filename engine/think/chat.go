package think

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/earshot-app/earshot/internal/llm"
)

// An OpenAI-compatible chat-completions server (a local Ollama,
// llama.cpp's server, LM Studio, or a remote one): streamed replies,
// functions as tools.

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object; nil for none
}

// ToolCall is a call the model makes. Arguments is a JSON text.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ChatMessage is a message of the conversation sent to the model: a
// role's text, the assistant's tool calls, or a tool's result.
type ChatMessage struct {
	Role       string // system, user, assistant or tool
	Content    string
	ToolCalls  []ToolCall // assistant
	ToolCallID string     // tool
}

// Chat is a chat-completions endpoint.
type Chat struct {
	// URL is the full chat-completions address, such as
	// http://127.0.0.1:11434/v1/chat/completions.
	URL         string
	Headers     map[string]string
	Model       string
	Temperature *float64
	Client      *http.Client // nil means llm's client, with no timeout
}

// maxChatLine bounds one line of the event stream.
const maxChatLine = 1 << 20

// Stream sends the conversation and streams the reply: text gives each
// piece of text as it arrives. It returns the tool calls the model asked
// for (none when it only spoke).
func (c Chat) Stream(ctx context.Context, msgs []ChatMessage, tools []Tool, text func(string) error) ([]ToolCall, error) {
	body, err := c.request(msgs, tools)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("language model address %q: %w", c.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	// llm.Do says in plain words why a server does not answer, as the
	// settings and the agent's list do when they try it.
	resp, err := llm.Do(ctx, c.Client, c.URL, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return nil, fmt.Errorf("the language model answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A server that ignores "stream": one JSON reply.
		return readWhole(io.LimitReader(resp.Body, maxChatLine), text)
	}
	return ReadStream(resp.Body, text)
}

func (c Chat) request(msgs []ChatMessage, tools []Tool) ([]byte, error) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCalls  []call  `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	type toolFn struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function toolFn `json:"function"`
	}
	out := struct {
		Model         string         `json:"model"`
		Stream        bool           `json:"stream"`
		StreamOptions map[string]any `json:"stream_options"`
		Temperature   *float64       `json:"temperature,omitempty"`
		Messages      []msg          `json:"messages"`
		Tools         []tool         `json:"tools,omitempty"`
	}{Model: c.Model, Stream: true, StreamOptions: map[string]any{"include_usage": true}, Temperature: c.Temperature}
	for _, m := range msgs {
		w := msg{Role: m.Role, ToolCallID: m.ToolCallID}
		content := m.Content
		if m.Role != "assistant" || len(m.ToolCalls) == 0 || content != "" {
			w.Content = &content
		}
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, call{ID: tc.ID, Type: "function", Function: fn{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out.Messages = append(out.Messages, w)
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, tool{Type: "function", Function: toolFn(t)})
	}
	return json.Marshal(out)
}

// chunk is one event of a streamed reply (or a whole reply, whose
// message stands where a chunk's delta does).
type chunk struct {
	Choices []struct {
		Delta   delta  `json:"delta"`
		Message *delta `json:"message"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type delta struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// ErrBadStream matches a reply stream that could not be read.
var ErrBadStream = errors.New("the language model's reply could not be read")

// ReadStream reads a chat-completions event stream: text pieces go to
// text as they come; tool calls, whose arguments arrive in pieces, are
// put together and returned in the order of their index. It never panics,
// whatever the stream holds.
func ReadStream(r io.Reader, text func(string) error) ([]ToolCall, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxChatLine)
	calls := map[int]*ToolCall{}
	next := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments, event names, blank lines
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadStream, err)
		}
		if c.Error != nil {
			return nil, fmt.Errorf("the language model failed: %s", c.Error.Message)
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			if ch.Message != nil {
				d = *ch.Message
			}
			if d.Content != nil && *d.Content != "" {
				if err := text(*d.Content); err != nil {
					return nil, err
				}
			}
			for _, tc := range d.ToolCalls {
				i := next
				if tc.Index != nil {
					i = *tc.Index
				} else {
					next++
				}
				if i < 0 || i > 128 {
					return nil, fmt.Errorf("%w: tool call index %d", ErrBadStream, i)
				}
				call := calls[i]
				if call == nil {
					call = &ToolCall{}
					calls[i] = call
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				call.Name += tc.Function.Name
				call.Arguments += tc.Function.Arguments
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStream, err)
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []ToolCall
	for n, i := range idx {
		c := *calls[i]
		if c.Name == "" {
			continue
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", n)
		}
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		out = append(out, c)
	}
	return out, nil
}

func readWhole(r io.Reader, text func(string) error) ([]ToolCall, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStream, err)
	}
	return ReadStream(strings.NewReader("data: "+strings.ReplaceAll(string(b), "\n", " ")+"\n"), text)
}

// ChatURL is the chat-completions address of a server whose base (up to
// /v1) is base; a full address is kept as it is.
func ChatURL(base string) string {
	if strings.HasSuffix(strings.TrimSuffix(base, "/"), "/chat/completions") {
		return base
	}
	return strings.TrimSuffix(base, "/") + "/chat/completions"
}
