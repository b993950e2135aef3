package api_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// agentSeeds are documented and recorded shapes of the agent socket's
// messages both ways, plus near-misses.
var agentSeeds = []string{
	`{"type":"Welcome","request_id":"a79a6072"}`,
	`{"type":"SettingsApplied"}`,
	`{"type":"ConversationText","role":"user","content":"What's the weather like in New York?","languages":["en"]}`,
	`{"type":"History","role":"user","content":"hi"}`,
	`{"type":"History","function_calls":[{"id":"c","name":"f","client_side":true,"arguments":"{}","response":"{}"}]}`,
	`{"type":"EndOfThought"}`,
	`{"type":"FunctionCallRequest","functions":[{"id":"c","name":"get_weather","arguments":"{\"location\":\"New York\"}","client_side":true}]}`,
	`{"type":"FunctionCallRequest","function_name":"f","function_call_id":"c","input":{"a":1}}`,
	`{"type":"FunctionCallRequest","function_name":"f","input":"not json"}`,
	`{"type":"FunctionCallResponse","function_call_id":"c","output":"x"}`,
	`{"type":"AgentStartedSpeaking","total_latency":1.9185820059999998,"tts_latency":0.303857378,"ttt_latency":1.6147244760000001}`,
	`{"type":"AgentStartedSpeaking","total_latency":1e400}`,
	`{"type":"AgentAudioDone"}`, `{"type":"PromptUpdated"}`, `{"type":"ListenUpdated","x":[]}`,
	`{"type":"InjectionRefused","message":"no"}`,
	`{"type":"LatencyReport","ttt_token_latency":0.1,"total_latency":-0}`,
	`{"type":"Error","description":"Error parsing client message. Check the greeting field against the API spec.","code":"UNPARSABLE_CLIENT_MESSAGE"}`,
	`{"type":"Warning","code":"X","description":null}`,
	`{"type":"FunctionCallCancelled","functions":null}`,
	`{"type":"Settings","audio":{"input":{"encoding":"linear16","sample_rate":16000}},"agent":{"think":[{"provider":{"type":"open_ai","model":"m"}},{"provider":{"type":"x","model":"y"},"context_length":"max"}],"speak":{"provider":{"type":"deepgram","version":"v2","model":"flux-kit-en"}}}}`,
	`{"type":"Settings","agent":{"think":{"provider":{"type":"open_ai"},"context_length":"min"}}}`,
	`{"type":"Settings","agent":{"speak":[null]}}`,
	`{"type":"Settings","agent":null}`,
	`{"type":"UpdatePrompt","instructions":"x"}`, `{"type":"UpdatePrompt","prompt":null}`,
	`{"type":"UpdateSpeak","speak":[]}`, `{"type":"UpdateThink","think":5}`,
	`{"type":"UpdateListen","listen":{"provider":{"type":"deepgram","eot_threshold":"0.7"}}}`,
	`{"type":"InjectUserMessage","content":"hi"}`, `{"type":"InjectAgentMessage","content":"x","message":"y"}`,
	`{"type":"KeepAlive"}`, `{"type":"ForceEndTurn"}`,
	`{"type":"Novel"}`, `{"type":5}`, `{}`, `[]`, ``, `{"type":"History","type":"Welcome"}`,
	"{\"type\":\"ConversationText\",\"content\":\"\xff\"}",
}

func FuzzDecodeAgentMessage(f *testing.F) {
	for _, s := range agentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgentDecoded(t, data, api.DecodeAgentMessage)
	})
}

func FuzzDecodeAgentClientMessage(f *testing.F) {
	for _, s := range agentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgentDecoded(t, data, api.DecodeAgentClientMessage)
		if m, err := api.DecodeAgentClientMessage(data); err == nil {
			// The checks of a client message never panic either.
			_ = api.CheckAgentClientMessage(m, len(data)%2 == 0)
		}
	})
}

// checkAgentDecoded decodes data: never a panic, never both or neither of
// a message and an error; an unknown message keeps its bytes; a known one
// encodes to a frame that decodes to the same message.
func checkAgentDecoded(t *testing.T, data []byte, decode func([]byte) (api.AgentMessage, error)) {
	t.Helper()
	in := bytes.Clone(data)
	m, err := decode(data)
	if !bytes.Equal(in, data) {
		t.Fatal("the decoder changed its input")
	}
	if (m == nil) == (err == nil) {
		t.Fatalf("message %#v with error %v", m, err)
	}
	if err != nil {
		return
	}
	if u, ok := m.(*api.UnknownMessage); ok {
		if !bytes.Equal(u.Raw, data) {
			t.Fatal("an unknown message does not keep its bytes")
		}
		return
	}
	enc, err := api.EncodeAgentMessage(m)
	if err != nil {
		t.Fatalf("encode %#v: %v", m, err)
	}
	if !json.Valid(enc) {
		t.Fatalf("encoded %#v as invalid JSON %s", m, enc)
	}
	again, err := decode(enc)
	if err != nil {
		t.Fatalf("decode of own encoding %s: %v", enc, err)
	}
	if again.MessageType() != m.MessageType() || reflect.TypeOf(again) != reflect.TypeOf(m) {
		t.Fatalf("%T became %T through %s", m, again, enc)
	}
	enc2, err := api.EncodeAgentMessage(again)
	if err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
	}
}
