package think

import (
	"encoding/json"
	"testing"
)

// TestRespond: the rules answer first; a question they cannot read calls
// the function its words name, with what was said as its one string
// argument; the function's result is said; else the refusal.
func TestRespond(t *testing.T) {
	a := Assistant{Now: fixedNow}
	tools := []Tool{
		{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)},
		{Name: "check_calendar"},
	}
	user := func(s string) []ChatMessage { return []ChatMessage{{Role: "user", Content: s}} }
	for _, tt := range []struct {
		name  string
		msgs  []ChatMessage
		text  string
		calls []ToolCall
	}{
		{"rule", user("what is two plus three times four"), "Two plus three times four is fourteen.", nil},
		{"function with an argument", user("Weather in Paris, please?"), "", []ToolCall{{Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
		{"function without one", user("check my calendar please"), "", []ToolCall{{Name: "check_calendar", Arguments: "{}"}}},
		{"a day the rules do not know, asked of a function", user("when is the meeting on my calendar"), "", []ToolCall{{Name: "check_calendar", Arguments: "{}"}}},
		{"refused", user("what day is easter"), "I do not know when easter is. I know today's date, and the days of holidays on fixed dates, such as Christmas.", nil},
		{"result", []ChatMessage{
			{Role: "user", Content: "weather in Paris"},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: "{}"}}},
			{Role: "tool", ToolCallID: "c1", Content: "21 degrees\n\n sunny \n"},
		}, "get weather answered: 21 degrees; sunny", nil},
	} {
		text, calls := a.Respond(tt.msgs, tools)
		if text != tt.text || len(calls) != len(tt.calls) || len(calls) > 0 && calls[0] != tt.calls[0] {
			t.Errorf("%s: %q, %+v; want %q, %+v", tt.name, text, calls, tt.text, tt.calls)
		}
	}
}
