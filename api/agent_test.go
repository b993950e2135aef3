package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

func ptr[T any](v T) *T { return &v }

// agentSettings are settings that break no rule: nova-3 listening, one
// model with a client-side function, an aura-2 voice.
func agentSettings() api.AgentSettings {
	return api.AgentSettings{
		Tags: []string{"earshot"},
		Audio: api.AgentAudioConfig{
			Input:  &api.AgentAudioInput{Encoding: "linear16", SampleRate: 16000},
			Output: &api.AgentAudioOutput{Encoding: "linear16", SampleRate: 24000, Container: "none"},
		},
		Agent: api.AgentConfig{
			Listen: &api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Model: "nova-3"}},
			Think: api.ThinkChain{{
				Provider: api.ThinkProvider{Type: "open_ai", Model: "gpt-4o-mini", Temperature: ptr(0.7)},
				Prompt:   "You are brief.",
				Functions: []api.AgentFunction{{Name: "get_time", Description: "The time now",
					Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
			}},
			Speak:    api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Model: "aura-2-thalia-en"}}},
			Greeting: "Hello!",
		},
	}
}

func TestAgentSettingsValidate(t *testing.T) {
	if err := agentSettings().Validate(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	tests := []struct {
		name   string
		change func(s *api.AgentSettings)
		field  string // the field the error names
	}{
		{"flux voice under v1 (spec 2.7)", func(s *api.AgentSettings) { s.Agent.Speak[0].Provider.Model = "flux-kit-en" }, "agent.speak.provider.model"},
		{"aura voice under v2 (spec 2.7)", func(s *api.AgentSettings) {
			s.Agent.Speak[0].Provider.Version = "v2"
		}, "agent.speak.provider.model"},
		{"unknown speak version", func(s *api.AgentSettings) { s.Agent.Speak[0].Provider.Version = "v3" }, "agent.speak.provider.version"},
		{"v1 speed out of range", func(s *api.AgentSettings) { s.Agent.Speak[0].Provider.Speed = ptr(1.6) }, "agent.speak.provider.speed"},
		{"a second voice in a chain that contradicts its version", func(s *api.AgentSettings) {
			s.Agent.Speak = append(s.Agent.Speak, api.Speak{Provider: api.SpeakProvider{Type: "deepgram", Version: "v2", Model: "aura-2-zeus-en"}})
		}, "agent.speak[1].provider.model"},
		{"another provider's voice without endpoint", func(s *api.AgentSettings) {
			s.Agent.Speak = api.SpeakChain{{Provider: api.SpeakProvider{Type: "open_ai", Model: "tts-1", Voice: json.RawMessage(`"alloy"`)}}}
		}, "agent.speak.endpoint"},
		{"no think", func(s *api.AgentSettings) { s.Agent.Think = nil }, "agent.think"},
		{"think without model", func(s *api.AgentSettings) { s.Agent.Think[0].Provider.Model = "" }, "agent.think.provider.model"},
		{"temperature", func(s *api.AgentSettings) { s.Agent.Think[0].Provider.Temperature = ptr(2.5) }, "agent.think.provider.temperature"},
		{"context_length without endpoint", func(s *api.AgentSettings) { s.Agent.Think[0].ContextLength = api.ContextLength{Tokens: 4000} }, "agent.think.context_length"},
		{"endpoint not http", func(s *api.AgentSettings) { s.Agent.Think[0].Endpoint = &api.AgentEndpoint{URL: "ftp://x/y"} }, "agent.think.endpoint.url"},
		{"function name", func(s *api.AgentSettings) { s.Agent.Think[0].Functions[0].Name = "get time" }, "agent.think.functions[0].name"},
		{"two functions of one name", func(s *api.AgentSettings) {
			s.Agent.Think[0].Functions = append(s.Agent.Think[0].Functions, s.Agent.Think[0].Functions[0])
		}, "agent.think.functions[1].name"},
		{"parameters not an object", func(s *api.AgentSettings) { s.Agent.Think[0].Functions[0].Parameters = json.RawMessage(`[1]`) }, "agent.think.functions[0].parameters"},
		{"function endpoint method", func(s *api.AgentSettings) {
			s.Agent.Think[0].Functions[0].Endpoint = &api.AgentEndpoint{URL: "http://127.0.0.1:9/f", Method: "fetch"}
		}, "agent.think.functions[0].endpoint.method"},
		{"flux model under listen v1", func(s *api.AgentSettings) { s.Agent.Listen.Provider.Model = "flux-general-en" }, "agent.listen.provider.model"},
		{"nova model under listen v2", func(s *api.AgentSettings) { s.Agent.Listen.Provider.Version = "v2" }, "agent.listen.provider.model"},
		{"thresholds under listen v1", func(s *api.AgentSettings) { s.Agent.Listen.Provider.EOTThreshold = ptr(0.7) }, "agent.listen.provider"},
		{"threshold out of range under v2", func(s *api.AgentSettings) {
			s.Agent.Listen.Provider = api.ListenProvider{Type: "deepgram", Version: "v2", Model: "flux-general-en", EOTThreshold: ptr(1.5)}
		}, "agent.listen.provider.eot_threshold"},
		{"listen provider type", func(s *api.AgentSettings) { s.Agent.Listen.Provider.Type = "whisper" }, "agent.listen.provider.type"},
		{"input encoding", func(s *api.AgentSettings) { s.Audio.Input.Encoding = "wav" }, "audio.input.encoding"},
		{"raw input without a rate", func(s *api.AgentSettings) { s.Audio.Input.SampleRate = 0 }, "audio.input.sample_rate"},
		{"output container", func(s *api.AgentSettings) { s.Audio.Output.Container = "mkv" }, "audio.output.container"},
		{"history role", func(s *api.AgentSettings) {
			s.Agent.Context = &api.AgentContext{Messages: []api.AgentHistory{{Role: "system", Content: "x"}}}
		}, "agent.context.messages[0].role"},
		{"empty tag", func(s *api.AgentSettings) { s.Tags = []string{" "} }, "tags[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := agentSettings()
			tt.change(&s)
			err := s.Validate()
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != tt.field || oe.Reason == "" {
				t.Fatalf("Validate() = %v, want an error about %s", err, tt.field)
			}
		})
	}

	// Valid variants: no speak (the turn-based default), flux listen with
	// thresholds, a flux voice under v2, a think chain, a model of one's
	// own with its context length.
	s := agentSettings()
	s.Agent.Speak = nil
	s.Agent.Listen.Provider = api.ListenProvider{Type: "deepgram", Version: "v2", Model: "flux-general-en", EOTThreshold: ptr(0.8), EagerEOTThreshold: ptr(0.5)}
	s.Agent.Think = append(s.Agent.Think, api.Think{Provider: api.ThinkProvider{Type: "open_ai", Model: "llama3"},
		Endpoint: &api.AgentEndpoint{URL: "http://127.0.0.1:11434/v1/chat/completions"}, ContextLength: api.ContextLength{Max: true}})
	if err := s.Validate(); err != nil {
		t.Errorf("valid variant refused: %v", err)
	}
	if v := s.Agent.Voices(); len(v) != 1 || v[0].Provider.Model != api.DefaultAgentVoice || v[0].Provider.Version != "v2" {
		t.Errorf("with no speak the agent speaks with %+v, want %s (v2)", v, api.DefaultAgentVoice)
	}
	s.Agent.Speak = api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Version: "v2", Model: "flux-kit-en", Speed: ptr(0.5)}}}
	if err := s.Validate(); err != nil {
		t.Errorf("a flux voice under v2 refused: %v", err)
	}
}

func TestAgentSettingsWire(t *testing.T) {
	s := agentSettings()
	b, err := api.EncodeAgentMessage(&s)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	agent := raw["agent"].(map[string]any)
	if raw["type"] != "Settings" {
		t.Errorf("type = %v", raw["type"])
	}
	if _, ok := agent["think"].(map[string]any); !ok {
		t.Errorf("one think provider is not an object: %s", b)
	}
	if _, ok := agent["speak"].(map[string]any); !ok {
		t.Errorf("one voice is not an object: %s", b)
	}

	// A chain is an array, both ways; decoding gives back what was sent.
	s.Agent.Think = append(s.Agent.Think, api.Think{Provider: api.ThinkProvider{Type: "anthropic", Model: "claude-3-5-haiku-latest"}})
	s.Agent.Think[0].ContextLength = api.ContextLength{}
	b, err = api.EncodeAgentMessage(&s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"think":[{`) {
		t.Errorf("a chain is not an array: %s", b)
	}
	m, err := api.DecodeAgentClientMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*api.AgentSettings); !reflect.DeepEqual(*got, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, s)
	}

	// The documented example of wire-reference section 5 reads whole.
	doc := `{"type":"Settings","tags":["demo"],"experimental":false,"mip_opt_out":false,"flags":{"history":true},
 "audio":{"input":{"encoding":"linear16","sample_rate":24000},"output":{"encoding":"linear16","sample_rate":24000,"bitrate":48000,"container":"none"}},
 "agent":{"language":"en","context":{"messages":[{"type":"History","role":"user","content":"hi"},{"type":"History","function_calls":[{"id":"a","name":"f","client_side":true,"arguments":"{}","response":"{}"}]}]},
  "listen":{"provider":{"type":"deepgram","version":"v2","model":"flux-general-en","eot_threshold":0.7,"eager_eot_threshold":0.5,"eot_timeout_ms":5000,"keyterms":[],"language_hints":[]}},
  "think":{"provider":{"type":"open_ai","model":"gpt-4o-mini","temperature":0.7},"endpoint":{"url":"https://api.example.com/llm","headers":{"authorization":"Bearer {{token}}"}},
   "prompt":"You are a helpful AI assistant.","context_length":15000,
   "functions":[{"name":"check_order_status","description":"Check","parameters":{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]},
     "endpoint":{"url":"https://api.example.com/orders/status","method":"post","headers":{"authorization":"Bearer x"}}}]},
  "speak":{"provider":{"type":"deepgram","model":"aura-2-thalia-en","speed":1.0}},
  "greeting":"Hello! How can I help you today?"}}`
	m, err = api.DecodeAgentClientMessage([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := m.(*api.AgentSettings)
	if err := got.Validate(); err != nil {
		t.Errorf("the documented settings are refused: %v", err)
	}
	th := got.Agent.Think[0]
	if th.ContextLength.Tokens != 15000 || len(th.Functions) != 1 || th.Functions[0].ClientSide() || got.Agent.Listen.Provider.EOTTimeoutMS == nil ||
		len(got.Agent.Context.Messages) != 2 || got.Agent.Context.Messages[1].FunctionCalls[0].Response != "{}" || got.Flags == nil {
		t.Errorf("the documented settings read as %+v", got)
	}

	// A field of a wrong type is refused naming it, as the service does.
	_, err = api.DecodeAgentClientMessage([]byte(`{"type":"Settings","agent":{"greeting":5}}`))
	var oe *api.OptionError
	if !errors.As(err, &oe) || oe.Code != api.CodeUnparsableClientMessage || !strings.Contains(oe.Reason, "Check the agent.greeting field") {
		t.Errorf("a number as greeting: %v", err)
	}
}

// TestDecodeAgentRecorded decodes the recorded conversation of the hosted
// agent: every message is typed, History and EndOfThought included.
func TestDecodeAgentRecorded(t *testing.T) {
	for _, f := range recorded(t, "agent", "*-events.json") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var events []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &events); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range events {
			raw := e.Data
			var un struct {
				Raw string `json:"raw"`
			}
			switch e.Type {
			case "Open", "Close":
				continue
			case "Unhandled":
				if err := json.Unmarshal(e.Data, &un); err != nil {
					t.Fatal(err)
				}
				raw = json.RawMessage(un.Raw)
			case "AgentStartedSpeaking":
				// The recording kept the fields without the type.
				var fields map[string]any
				_ = json.Unmarshal(raw, &fields)
				fields["type"] = e.Type
				raw = mustJSON(t, fields)
			}
			m, err := api.DecodeAgentMessage(raw)
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if _, unknown := m.(*api.UnknownMessage); unknown {
				t.Errorf("%s: decoded as unknown", raw)
			}
			seen[m.MessageType()]++
			switch x := m.(type) {
			case *api.ConversationText:
				if x.Content == "" || (x.Role != api.RoleUser && x.Role != api.RoleAssistant) {
					t.Errorf("ConversationText %+v", x)
				}
			case *api.AgentStartedSpeaking:
				if x.TotalLatency <= 0 || x.TTSLatency <= 0 || x.TTTLatency <= 0 {
					t.Errorf("latencies %+v", x)
				}
			case *api.Welcome:
				if x.RequestID == "" {
					t.Error("Welcome without request_id")
				}
			}
		}
		for _, typ := range []string{"Welcome", "SettingsApplied", "ConversationText", "History", "EndOfThought", "AgentStartedSpeaking", "AgentAudioDone"} {
			if seen[typ] == 0 {
				t.Errorf("%s: no %s decoded (%v)", f, typ, seen)
			}
		}
	}
}

func TestDecodeAgentMessages(t *testing.T) {
	tests := []struct {
		in   string
		want api.AgentMessage
	}{
		{`{"type":"FunctionCallRequest","functions":[{"id":"call_1","name":"get_weather","arguments":"{\"location\":\"New York\"}","client_side":true}]}`,
			&api.FunctionCallRequest{Functions: []api.FunctionCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"New York"}`, ClientSide: true}}}},
		// The early-access flat form.
		{`{"type":"FunctionCallRequest","function_name":"get_weather","function_call_id":"c2","input":{"location":"Paris"}}`,
			&api.FunctionCallRequest{Functions: []api.FunctionCall{{ID: "c2", Name: "get_weather", Arguments: `{"location":"Paris"}`, ClientSide: true}}}},
		{`{"type":"FunctionCallResponse","id":"c","name":"f","content":"{}"}`, &api.FunctionCallResponse{ID: "c", Name: "f", Content: "{}"}},
		{`{"type":"FunctionCallCancelled","functions":[{"id":"c","name":"f"}]}`, &api.FunctionCallCancelled{Functions: []api.FunctionCall{{ID: "c", Name: "f"}}}},
		{`{"type":"AgentThinking","content":"hmm"}`, &api.AgentThinking{Content: "hmm"}},
		{`{"type":"UserStartedSpeaking"}`, &api.UserStartedSpeaking{}},
		{`{"type":"PromptUpdated"}`, &api.AgentUpdated{Type: "PromptUpdated"}},
		{`{"type":"SpeakUpdated"}`, &api.AgentUpdated{Type: "SpeakUpdated"}},
		{`{"type":"ThinkUpdated"}`, &api.AgentUpdated{Type: "ThinkUpdated"}},
		{`{"type":"ListenUpdated"}`, &api.AgentUpdated{Type: "ListenUpdated"}},
		{`{"type":"InjectionRefused","message":"The agent is speaking."}`, &api.InjectionRefused{Message: "The agent is speaking."}},
		{`{"type":"History","function_calls":[{"id":"a","name":"f","client_side":true,"arguments":"{}","response":"ok"}]}`,
			&api.AgentHistory{FunctionCalls: []api.HistoryFunctionCall{{ID: "a", Name: "f", ClientSide: true, Arguments: "{}", Response: "ok"}}}},
		{`{"type":"LatencyReport","stt_latency":0.1,"ttt_token_latency":0.2,"tts_latency":0.3,"total_latency":0.9}`,
			&api.LatencyReport{STTLatency: 0.1, TTTTokenLatency: 0.2, TTSLatency: 0.3, TotalLatency: 0.9}},
		{`{"type":"Error","description":"Text message received from client did not match any of the formats we expect.","code":"UNPARSABLE_CLIENT_MESSAGE"}`,
			&api.AgentNotice{Type: "Error", Code: "UNPARSABLE_CLIENT_MESSAGE", Description: "Text message received from client did not match any of the formats we expect."}},
		{`{"description":"Error parsing client message. Check the agent.listen.model field against the API spec.","message":"","type":"Error"}`,
			&api.AgentNotice{Type: "Error", Description: "Error parsing client message. Check the agent.listen.model field against the API spec."}},
		{`{"type":"Warning","code":"FORCE_END_TURN_UNSUPPORTED","description":"x"}`, &api.AgentNotice{Type: "Warning", Code: "FORCE_END_TURN_UNSUPPORTED", Description: "x"}},
		{`{"type":"SomethingNew","x":1}`, &api.UnknownMessage{Type: "SomethingNew", Raw: json.RawMessage(`{"type":"SomethingNew","x":1}`)}},
	}
	for _, tt := range tests {
		got, err := api.DecodeAgentMessage([]byte(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeAgentMessage(%s)\n = %#v, %v\nwant %#v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`{"type":"ConversationText","content":5}`, `{"type":"AgentStartedSpeaking","total_latency":"x"}`} {
		if _, err := api.DecodeAgentMessage([]byte(bad)); !errors.Is(err, api.ErrBadAgentMessage) {
			t.Errorf("DecodeAgentMessage(%s) = %v, want ErrBadAgentMessage", bad, err)
		}
	}
}

// TestAgentClientMessages encodes every client message as the wire has
// it, and decodes the older field names the service still accepts.
func TestAgentClientMessages(t *testing.T) {
	enc := []struct {
		m    api.AgentMessage
		want string
	}{
		{&api.UpdatePrompt{Prompt: "You are now a pirate."}, `{"type":"UpdatePrompt","prompt":"You are now a pirate."}`},
		{&api.UpdateSpeak{Speak: api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Model: "aura-2-thalia-en"}}}},
			`{"type":"UpdateSpeak","speak":{"provider":{"type":"deepgram","model":"aura-2-thalia-en"}}}`},
		{&api.UpdateThink{Think: api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "gpt-4o"}}}},
			`{"type":"UpdateThink","think":{"provider":{"type":"open_ai","model":"gpt-4o"}}}`},
		{&api.UpdateListen{Listen: api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Version: "v2", Model: "flux-general-en", EOTThreshold: ptr(0.8)}}},
			`{"type":"UpdateListen","listen":{"provider":{"type":"deepgram","version":"v2","model":"flux-general-en","eot_threshold":0.8}}}`},
		{&api.InjectUserMessage{Content: "Hello! Can you hear me?"}, `{"type":"InjectUserMessage","content":"Hello! Can you hear me?"}`},
		{&api.InjectAgentMessage{Message: "Are you still there?", Behavior: "default"}, `{"type":"InjectAgentMessage","message":"Are you still there?","behavior":"default"}`},
		{&api.FunctionCallResponse{ID: "call_1", Name: "get_weather", Content: `{"temperature_c":21}`},
			`{"type":"FunctionCallResponse","id":"call_1","name":"get_weather","content":"{\"temperature_c\":21}"}`},
		{&api.AgentKeepAlive{}, `{"type":"KeepAlive"}`},
		{&api.AgentForceEndTurn{}, `{"type":"ForceEndTurn"}`},
	}
	for _, tt := range enc {
		b, err := api.EncodeAgentMessage(tt.m)
		if err != nil || string(b) != tt.want {
			t.Errorf("EncodeAgentMessage(%T) = %s, %v; want %s", tt.m, b, err, tt.want)
			continue
		}
		back, err := api.DecodeAgentClientMessage(b)
		if err != nil || !reflect.DeepEqual(back, tt.m) {
			t.Errorf("DecodeAgentClientMessage(%s) = %#v, %v", b, back, err)
		}
	}
	drift := []struct {
		in   string
		want api.AgentMessage
	}{
		{`{"type":"InjectAgentMessage","content":"Still there?"}`, &api.InjectAgentMessage{Message: "Still there?"}},
		{`{"type":"UpdatePrompt","instructions":"Be a pirate."}`, &api.UpdatePrompt{Prompt: "Be a pirate."}},
		{`{"type":"FunctionCallResponse","function_call_id":"c9","name":"f","output":"42"}`, &api.FunctionCallResponse{ID: "c9", Name: "f", Content: "42"}},
	}
	for _, tt := range drift {
		got, err := api.DecodeAgentClientMessage([]byte(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeAgentClientMessage(%s) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
	if _, err := api.DecodeAgentClientMessage([]byte(`not json`)); err == nil {
		t.Error("a frame that is not JSON decoded")
	} else if oe := (*api.OptionError)(nil); !errors.As(err, &oe) || oe.Code != api.CodeUnparsableClientMessage {
		t.Errorf("a frame that is not JSON: %v, want UNPARSABLE_CLIENT_MESSAGE", err)
	}
}

// agentServer is a /v1/agent/converse server that sends Welcome, then
// SettingsApplied once Settings came, and hands every frame after it to
// got.
func agentServer(t *testing.T, got chan<- wsFrame) *wsServer {
	return newWSServer(t, api.PathAgent, "agent-req-1", func(ctx context.Context, c *websocket.Conn) {
		if writeText(ctx, c, map[string]string{"type": "Welcome", "request_id": "welcome-1"}) != nil {
			return
		}
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			f := wsFrame{binary: typ == websocket.MessageBinary, data: data}
			select {
			case got <- f:
			case <-ctx.Done():
				return
			}
			if !f.binary && strings.Contains(string(data), `"type":"Settings"`) {
				if writeText(ctx, c, map[string]string{"type": "SettingsApplied"}) != nil {
					return
				}
			}
		}
	})
}

func TestConverse(t *testing.T) {
	got := make(chan wsFrame, 16)
	srv := agentServer(t, got)
	c := srv.client(t, api.Config{})
	ctx := testContext(t)

	// Settings that break a rule never leave.
	bad := agentSettings()
	bad.Agent.Speak[0].Provider.Model = "flux-kit-en"
	if _, err := c.Converse(ctx, bad); err == nil || !strings.Contains(err.Error(), "version v2") {
		t.Fatalf("Converse with a flux voice under v1 = %v", err)
	}
	if n := srv.handshakeCount(); n != 0 {
		t.Fatalf("refused settings still opened %d sockets", n)
	}

	a, err := c.Converse(ctx, agentSettings())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	hs := srv.handshake(t, 0)
	if hs.RawQuery != "" || hs.Auth != "Token KEY" {
		t.Errorf("handshake query %q auth %q; want no query, the key", hs.RawQuery, hs.Auth)
	}
	first := <-got
	if first.binary || !strings.HasPrefix(string(first.data), `{"type":"Settings"`) {
		t.Fatalf("the first frame is %s, want Settings", first)
	}
	// No audio before SettingsApplied; Welcome's id replaces the
	// handshake's.
	if err := a.SendAudio(ctx, []byte{1, 2}); !errors.Is(err, api.ErrSettingsNotApplied) {
		t.Errorf("audio before SettingsApplied: %v", err)
	}
	for _, want := range []string{"Welcome", "SettingsApplied"} {
		m, err := a.Next(ctx)
		if err != nil || m.MessageType() != want {
			t.Fatalf("Next = %v, %v; want %s", m, err, want)
		}
	}
	if a.RequestID() != "welcome-1" || !a.Applied() {
		t.Errorf("request id %q, applied %v", a.RequestID(), a.Applied())
	}
	if err := a.SendAudio(ctx, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if f := <-got; !f.binary || len(f.data) != 4 {
		t.Errorf("the audio arrived as %s", f)
	}

	// Client messages are checked, then sent.
	if err := a.Send(ctx, &api.AgentForceEndTurn{}); err == nil {
		t.Error("ForceEndTurn with a v1 listen provider was sent")
	}
	if err := a.Send(ctx, &api.InjectUserMessage{Content: "  "}); err == nil {
		t.Error("an empty typed message was sent")
	}
	if err := a.Send(ctx, &api.UpdateSpeak{Speak: api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Version: "v2", Model: "aura-2-thalia-en"}}}}); err == nil {
		t.Error("UpdateSpeak with an aura voice under v2 was sent")
	}
	if err := a.Send(ctx, &api.UpdateListen{Listen: api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Version: "v2", Model: "flux-general-en"}}}); err != nil {
		t.Fatal(err)
	}
	if f := <-got; !strings.Contains(string(f.data), `"UpdateListen"`) {
		t.Errorf("sent %s, want UpdateListen", f)
	}
	// Now that listening is turn-aware, ForceEndTurn goes.
	if err := a.Send(ctx, &api.AgentForceEndTurn{}); err != nil {
		t.Fatal(err)
	}
	if f := <-got; string(f.data) != `{"type":"ForceEndTurn"}` {
		t.Errorf("sent %s, want ForceEndTurn", f)
	}
}

func TestThinkModels(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.URL.Path != api.PathAgentModels {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"models":[{"id":"gpt-4.1-mini","name":"GPT-4.1 mini","provider":"open_ai"},{"id":"claude-3-5-haiku-latest","name":"Claude Haiku 3.5","provider":"anthropic"}]}`))
	})
	models, err := srv.client(t, api.Config{APIKey: "KEY"}).ThinkModels(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []api.ThinkModel{{ID: "gpt-4.1-mini", Name: "GPT-4.1 mini", Provider: "open_ai"}, {ID: "claude-3-5-haiku-latest", Name: "Claude Haiku 3.5", Provider: "anthropic"}}
	if !reflect.DeepEqual(models, want) {
		t.Errorf("ThinkModels = %+v", models)
	}
}
