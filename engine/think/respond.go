package think

import (
	"encoding/json"
	"strings"
)

// Respond is the assistant as the agent's think step: it answers the
// conversation by its rules, else calls a function of tools that the
// person's words name, else says why it cannot answer; after a call, it
// says what the function returned. The calls it returns have no ID: the
// caller gives them theirs.
func (a Assistant) Respond(msgs []ChatMessage, tools []Tool) (text string, calls []ToolCall) {
	if n := len(msgs); n > 0 && msgs[n-1].Role == "tool" {
		return functionResult(msgs), nil
	}
	var hist []Message
	for _, m := range msgs {
		if m.Role == "user" || m.Role == "assistant" {
			hist = append(hist, Message{Role: m.Role, Content: m.Content})
		}
	}
	if answer, ok := a.Answer(hist); ok {
		return answer, nil
	}
	last := lastSaid(hist)
	if f, ok := matchFunction(last, tools); ok {
		return "", []ToolCall{{Name: f.Name, Arguments: functionArguments(f, last)}}
	}
	return refusal(last), nil
}

// functionResult says what the function called last returned, as one
// passage: the result's lines are joined.
func functionResult(msgs []ChatMessage) string {
	result := msgs[len(msgs)-1]
	name := "the function"
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == result.ToolCallID {
				name = strings.ReplaceAll(c.Name, "_", " ")
			}
		}
	}
	var lines []string
	for _, l := range strings.Split(result.Content, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return name + " answered: " + strings.Join(lines, "; ")
}

// matchFunction finds the declared function whose name's words (all but
// verbs like get and check) are all in what the person said.
func matchFunction(said string, tools []Tool) (Tool, bool) {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(said), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		words[strings.TrimSuffix(w, "s")] = true
	}
	verbs := map[string]bool{"get": true, "check": true, "fetch": true, "find": true, "lookup": true, "look": true, "up": true, "read": true, "the": true, "a": true}
	for _, f := range tools {
		parts := strings.FieldsFunc(strings.ToLower(f.Name), func(r rune) bool { return r == '_' || r == '-' })
		n, all := 0, true
		for _, p := range parts {
			if verbs[p] {
				continue
			}
			n++
			if !words[strings.TrimSuffix(p, "s")] {
				all = false
			}
		}
		if n > 0 && all {
			return f, true
		}
	}
	return Tool{}, false
}

// functionArguments gives what was said, less the function's name and
// small words ("search history for budget" gives "budget"), to a
// function's one string parameter, if it has one; else no arguments.
func functionArguments(f Tool, said string) string {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if len(f.Parameters) > 0 && json.Unmarshal(f.Parameters, &schema) == nil {
		var names []string
		for name, p := range schema.Properties {
			if p.Type == "string" {
				names = append(names, name)
			}
		}
		if len(names) == 1 {
			drop := map[string]bool{"for": true, "the": true, "a": true, "an": true, "about": true, "my": true, "me": true,
				"in": true, "of": true, "please": true, "can": true, "you": true, "what": true, "is": true}
			for _, p := range strings.FieldsFunc(strings.ToLower(f.Name), func(r rune) bool { return r == '_' || r == '-' }) {
				drop[p] = true
			}
			var keep []string
			for _, w := range strings.Fields(said) {
				if !drop[strings.ToLower(strings.Trim(w, ".,!?;:"))] {
					keep = append(keep, strings.Trim(w, ".,!?;:"))
				}
			}
			b, _ := json.Marshal(map[string]string{names[0]: strings.Join(keep, " ")})
			return string(b)
		}
	}
	return "{}"
}
