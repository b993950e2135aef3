package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/think"
)

// agentRate is the sample rate of the audio both ways in these tests.
const agentRate = 16000

// builtinSettings are Settings for the built-in assistant, with nova-3
// listening and the aura-2-thalia-en voice, linear16 at 16 kHz both ways.
func builtinSettings() api.AgentSettings {
	return api.AgentSettings{
		Audio: api.AgentAudioConfig{
			Input:  &api.AgentAudioInput{Encoding: "linear16", SampleRate: agentRate},
			Output: &api.AgentAudioOutput{Encoding: "linear16", SampleRate: agentRate, Container: "none"},
		},
		Agent: api.AgentConfig{
			Listen: &api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Model: "nova-3"}},
			Think:  api.ThinkChain{{Provider: api.ThinkProvider{Type: think.ModelProvider, Model: think.ModelID}}},
			Speak:  api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Model: "aura-2-thalia-en"}}},
		},
	}
}

// agentConv is a conversation with the engine's agent: every message and
// the agent's audio, as they arrive.
type agentConv struct {
	t  *testing.T
	st *api.AgentStream

	mu    sync.Mutex
	msgs  []api.AgentMessage
	audio []byte
	cond  chan struct{} // closed and replaced on every message
	err   error
}

func converse(t *testing.T, ctx context.Context, l *Local, set api.AgentSettings) *agentConv {
	t.Helper()
	st, err := newClient(t, l).Converse(ctx, set)
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	c := &agentConv{t: t, st: st, cond: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := st.Next(ctx)
			c.mu.Lock()
			if err != nil {
				c.err = err
			} else if a, ok := m.(*api.AgentAudio); ok {
				c.audio = append(c.audio, a.Data...)
			} else {
				c.msgs = append(c.msgs, m)
			}
			close(c.cond)
			c.cond = make(chan struct{})
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// KeepAlive while the test says nothing, as a client must: the agent
	// closes a socket that is silent for its idle timeout (10 s).
	stopKeep := make(chan struct{})
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				_ = st.Send(ctx, &api.AgentKeepAlive{})
			case <-stopKeep:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stopKeep)
		<-kept
		_ = st.Close()
		<-done
	})
	c.waitFor(ctx, "SettingsApplied", func(ms []api.AgentMessage) bool { return has(ms, api.TypeSettingsApplied) })
	return c
}

// waitFor waits until cond holds of the messages so far.
func (c *agentConv) waitFor(ctx context.Context, what string, cond func([]api.AgentMessage) bool) {
	c.t.Helper()
	for {
		c.mu.Lock()
		ok, err, ch := cond(c.msgs), c.err, c.cond
		c.mu.Unlock()
		if ok {
			return
		}
		if err != nil {
			c.t.Fatalf("waiting for %s: the conversation ended: %v; messages: %s", what, err, c.describe())
		}
		select {
		case <-ch:
		case <-ctx.Done():
			c.t.Fatalf("waiting for %s: %v; messages: %s", what, ctx.Err(), c.describe())
		}
	}
}

func (c *agentConv) snapshot() ([]api.AgentMessage, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]api.AgentMessage(nil), c.msgs...), append([]byte(nil), c.audio...)
}

func (c *agentConv) describe() string {
	ms, a := c.snapshot()
	var parts []string
	for _, m := range ms {
		b, _ := api.EncodeAgentMessage(m)
		parts = append(parts, string(b))
	}
	return fmt.Sprintf("%d bytes of audio; %s", len(a), strings.Join(parts, " "))
}

func (c *agentConv) send(ctx context.Context, m api.AgentMessage) {
	c.t.Helper()
	if err := c.st.Send(ctx, m); err != nil {
		c.t.Fatalf("Send(%T): %v", m, err)
	}
}

func has(ms []api.AgentMessage, typ string) bool { return count(ms, typ) > 0 }

func count(ms []api.AgentMessage, typ string) int {
	n := 0
	for _, m := range ms {
		if m.MessageType() == typ {
			n++
		}
	}
	return n
}

// assistantHistory is the content of the last History of the assistant's
// words, sent after a reply ends.
func assistantHistory(ms []api.AgentMessage) string {
	last := ""
	for _, m := range ms {
		if h, ok := m.(*api.AgentHistory); ok && h.Role == api.RoleAssistant {
			last = h.Content
		}
	}
	return last
}

// said joins the ConversationText of role.
func said(ms []api.AgentMessage, role string) string {
	var out []string
	for _, m := range ms {
		if ct, ok := m.(*api.ConversationText); ok && ct.Role == role {
			out = append(out, ct.Content)
		}
	}
	return strings.Join(out, " ")
}

// speech is text spoken by the engine's default voice, at agentRate, as
// linear16 bytes, followed by silence that ends the utterance.
func speech(t *testing.T, ctx context.Context, l *Local, text string) []byte {
	t.Helper()
	resp, err := newClient(t, l).Speak(ctx, text, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16", Container: "none", SampleRate: agentRate})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, 2*agentRate*3/2)...)
}

// sendSpeech sends audio in 20 ms frames, as a microphone would (but
// faster than real time).
func sendSpeech(t *testing.T, ctx context.Context, c *agentConv, pcm []byte) {
	t.Helper()
	const frame = 2 * agentRate / 50
	for len(pcm) > 0 {
		n := min(frame, len(pcm))
		if err := c.st.SendAudio(ctx, pcm[:n]); err != nil {
			t.Fatalf("SendAudio: %v", err)
		}
		pcm = pcm[n:]
	}
}

// TestAgentSpokenQuestion (must show): a question spoken by the engine's
// own voice is answered: the person's words and the agent's as
// ConversationText, with audio that the engine transcribes back to the
// agent's words (word error rate under 20 %).
func TestAgentSpokenQuestion(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	l := shared
	c := converse(t, ctx, l, builtinSettings())
	sendSpeech(t, ctx, c, speech(t, ctx, l, "What is two plus two?"))
	c.waitFor(ctx, "the reply", func(ms []api.AgentMessage) bool { return assistantHistory(ms) != "" })
	ms, _ := c.snapshot()

	if !has(ms, api.TypeUserStartedSpeaking) {
		t.Error("no UserStartedSpeaking")
	}
	user, reply := said(ms, api.RoleUser), said(ms, api.RoleAssistant)
	if !strings.Contains(user, "two") {
		t.Errorf("the person said %q, want the question", user)
	}
	if reply != "Two plus two is four." {
		t.Errorf("the agent said %q", reply)
	}
	var started *api.AgentStartedSpeaking
	var history []string
	for _, m := range ms {
		switch x := m.(type) {
		case *api.AgentStartedSpeaking:
			started = x
		case *api.AgentHistory:
			history = append(history, x.Role+": "+x.Content)
		}
	}
	if started == nil || started.TotalLatency <= 0 || started.TTSLatency <= 0 {
		t.Errorf("AgentStartedSpeaking %+v, want measured latencies", started)
	}
	if len(history) != 2 || !strings.HasPrefix(history[0], "user: ") || history[1] != "assistant: "+reply {
		t.Errorf("History %q", history)
	}
	if !has(ms, api.TypeLatencyReport) {
		t.Error("no LatencyReport")
	}

	// The replies' audio says their words: this answer and a longer one
	// in everyday words, so that one misheard word does not decide.
	c.send(ctx, &api.InjectAgentMessage{Message: strings.Join(roundTripSentences[:3], " ")})
	c.waitFor(ctx, "the second reply", func(ms []api.AgentMessage) bool { return count(ms, api.TypeAgentAudioDone) == 2 })
	ms, pcm := c.snapshot()
	reply = said(ms, api.RoleAssistant)
	if len(pcm) < 2*agentRate*5 {
		t.Fatalf("%d bytes of reply audio", len(pcm))
	}
	wav := wavBytes(t, audio.BytesToInt16(nil, pcm), agentRate, 1)
	resp, err := newClient(t, l).Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	heard := resp.Results.Channels[0].Alternatives[0].Transcript
	ref, hyp := normWords(reply), normWords(heard)
	wer := float64(editDistance(ref, hyp)) / float64(len(ref))
	t.Logf("reply audio: word error rate %.1f %% over %d words", 100*wer, len(ref))
	if wer >= 0.2 {
		t.Errorf("the reply's audio reads %q for %q: word error rate %.0f %%", heard, reply, 100*wer)
	}
}

// TestAgentInjectRightAfterAudioDone: once AgentAudioDone has come, the
// agent is not speaking, and a message injected then is spoken, not
// refused, even before the session has seen the reply end (CI saw
// TestAgentSpokenQuestion's injection refused in that moment). The test
// holds that moment open: the greeting's end waits until the injection
// and an UpdatePrompt after it are answered (the session reads its
// messages in order, so the ack says the injection was handled).
func TestAgentInjectRightAfterAudioDone(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	l, err := StartLocal(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) }) // before Close, which waits for the reply
	l.Engine.replyEnding = func() {
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	set := builtinSettings()
	set.Agent.Greeting = "Hello."
	c := converse(t, ctx, l, set)
	c.waitFor(ctx, "the greeting's AgentAudioDone", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentAudioDone) })
	c.send(ctx, &api.InjectAgentMessage{Message: "Yes."})
	c.send(ctx, &api.UpdatePrompt{Prompt: "Be brief."})
	c.waitFor(ctx, "the injection handled", func(ms []api.AgentMessage) bool {
		return has(ms, api.TypePromptUpdated) || has(ms, api.TypeInjectionRefused)
	})
	once.Do(func() { close(release) })
	if ms, _ := c.snapshot(); has(ms, api.TypeInjectionRefused) {
		t.Fatalf("an injection after AgentAudioDone was refused: %s", c.describe())
	}
	c.waitFor(ctx, "the injected reply", func(ms []api.AgentMessage) bool { return count(ms, api.TypeAgentAudioDone) == 2 })
	if ms, _ := c.snapshot(); said(ms, api.RoleAssistant) == "" || !strings.Contains(c.describe(), `"content":"Yes."`) {
		t.Errorf("the injected message was not said: %s", c.describe())
	}
}

// TestAgentTyped answers typed messages and takes updates mid-call.
func TestAgentTyped(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	set := builtinSettings()
	set.Agent.Greeting = "Hello there."
	c := converse(t, ctx, shared, set)
	c.waitFor(ctx, "the greeting", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentAudioDone) })
	if ms, _ := c.snapshot(); said(ms, api.RoleAssistant) != "Hello there." {
		t.Errorf("the greeting: %s", c.describe())
	}

	c.send(ctx, &api.UpdatePrompt{Prompt: "Be brief."})
	c.send(ctx, &api.UpdateSpeak{Speak: api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Version: "v2", Model: "flux-kit-en"}}}})
	c.waitFor(ctx, "the acks", func(ms []api.AgentMessage) bool {
		return has(ms, api.TypePromptUpdated) && has(ms, api.TypeSpeakUpdated)
	})
	c.send(ctx, &api.InjectUserMessage{Content: "what is seven times six"})
	c.waitFor(ctx, "the answer", func(ms []api.AgentMessage) bool { return count(ms, api.TypeAgentAudioDone) == 2 })
	ms, _ := c.snapshot()
	if got := said(ms, api.RoleAssistant); got != "Hello there. Seven times six is forty-two." {
		t.Errorf("the agent said %q", got)
	}
	if got := said(ms, api.RoleUser); got != "what is seven times six" {
		t.Errorf("the person said %q", got)
	}

	// ForceEndTurn with a v1 provider warns; with v2 it is taken.
	c.send(ctx, &api.UpdateListen{Listen: api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Version: "v2", Model: "flux-general-en"}}})
	c.waitFor(ctx, "ListenUpdated", func(ms []api.AgentMessage) bool { return has(ms, api.TypeListenUpdated) })
	c.send(ctx, &api.AgentForceEndTurn{})
	c.send(ctx, &api.AgentKeepAlive{})

	// An unknown think model is refused, and the conversation goes on.
	c.send(ctx, &api.UpdateThink{Think: api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "gpt-4o"}}}})
	c.waitFor(ctx, "the refusal", func(ms []api.AgentMessage) bool { return has(ms, api.TypeError) })
	ms, _ = c.snapshot()
	for _, m := range ms {
		if n, ok := m.(*api.AgentNotice); ok && (n.Code != api.CodeInvalidSettings || !strings.Contains(n.Description, "does not serve open_ai \"gpt-4o\"")) {
			t.Errorf("notice %+v", n)
		}
	}
	c.send(ctx, &api.InjectUserMessage{Content: "what is one plus one"})
	c.waitFor(ctx, "the answer after the refusal", func(ms []api.AgentMessage) bool { return count(ms, api.TypeAgentAudioDone) == 3 })
}

// rawAgent dials the agent socket with no client-side checks.
func rawAgent(t *testing.T, ctx context.Context, l *Local) *websocket.Conn {
	t.Helper()
	u := *l.AgentURL
	u.Scheme = "ws"
	u.Path = api.PathAgent
	c, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {tokenAuth(l)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func readAgent(t *testing.T, ctx context.Context, c *websocket.Conn) api.AgentMessage {
	t.Helper()
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if typ == websocket.MessageBinary {
			continue
		}
		m, err := api.DecodeAgentMessage(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		return m
	}
}

// TestAgentErrors checks the rules of the agent socket as the service
// states them: Settings first, audio before its acknowledgement ignored,
// a speak model that contradicts its version an error, not
// SettingsApplied, and the older field names accepted.
func TestAgentErrors(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	l := shared

	t.Run("speak model against its version", func(t *testing.T) {
		c := rawAgent(t, ctx, l)
		if m := readAgent(t, ctx, c); m.MessageType() != api.TypeWelcome || m.(*api.Welcome).RequestID == "" {
			t.Fatalf("first message %#v", m)
		}
		set := builtinSettings()
		set.Agent.Speak[0].Provider.Model = "flux-kit-en"
		b, _ := api.EncodeAgentMessage(&set)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		m := readAgent(t, ctx, c)
		n, ok := m.(*api.AgentNotice)
		if !ok || n.Type != api.TypeError || n.Code != api.CodeInvalidSettings || !strings.Contains(n.Description, "agent.speak.provider.model") {
			t.Errorf("answer %#v, want an Error naming agent.speak.provider.model", m)
		}
		if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("after refused settings: %v", err)
		}
	})
	t.Run("settings first, audio before the acknowledgement ignored", func(t *testing.T) {
		c := rawAgent(t, ctx, l)
		readAgent(t, ctx, c) // Welcome
		if err := c.Write(ctx, websocket.MessageBinary, make([]byte, 3200)); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"InjectUserMessage","content":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		if n, ok := readAgent(t, ctx, c).(*api.AgentNotice); !ok || n.Code != api.CodeSettingsRequired {
			t.Errorf("a message before Settings: %#v", n)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"Settings","agent":{"greeting":5}}`)); err != nil {
			t.Fatal(err)
		}
		n, ok := readAgent(t, ctx, c).(*api.AgentNotice)
		if !ok || n.Code != api.CodeUnparsableClientMessage || n.Description != "Error parsing client message. Check the agent.greeting field against the API spec." {
			t.Errorf("a number as greeting: %#v", n)
		}
	})
	t.Run("older field names", func(t *testing.T) {
		c := rawAgent(t, ctx, l)
		readAgent(t, ctx, c)
		set := builtinSettings()
		b, _ := api.EncodeAgentMessage(&set)
		_ = c.Write(ctx, websocket.MessageText, b)
		if m := readAgent(t, ctx, c); m.MessageType() != api.TypeSettingsApplied {
			t.Fatalf("got %#v", m)
		}
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"UpdatePrompt","instructions":"Be a pirate."}`))
		if m := readAgent(t, ctx, c); m.MessageType() != api.TypePromptUpdated {
			t.Errorf("UpdatePrompt with instructions: %#v", m)
		}
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"InjectAgentMessage","content":"Are you still there?"}`))
		want := []string{api.TypeConversationText}
		for _, typ := range want {
			m := readAgent(t, ctx, c)
			if ct, ok := m.(*api.ConversationText); !ok || m.MessageType() != typ || ct.Content != "Are you still there?" {
				t.Errorf("InjectAgentMessage with content: %#v", m)
			}
		}
		// While the agent speaks, another injection is refused.
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"InjectAgentMessage","message":"Hello?"}`))
		for {
			m := readAgent(t, ctx, c)
			if r, ok := m.(*api.InjectionRefused); ok {
				if r.Code != api.CodeInjectDuringSpeech {
					t.Errorf("refusal %+v", r)
				}
				break
			}
			if m.MessageType() == api.TypeAgentAudioDone {
				t.Fatal("the injection during speech was not refused")
			}
		}
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"ForceEndTurn"}`))
		for {
			if n, ok := readAgent(t, ctx, c).(*api.AgentNotice); ok {
				if n.Code != api.CodeForceEndTurnUnsupported {
					t.Errorf("ForceEndTurn with v1: %+v", n)
				}
				break
			}
		}
	})
	t.Run("query parameters", func(t *testing.T) {
		u := *l.AgentURL
		u.Scheme, u.Path, u.RawQuery = "ws", api.PathAgent, "model=nova-3"
		_, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {tokenAuth(l)}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a query on the agent: %v, %+v", err, resp)
		}
	})
}

// TestAgentBargeIn: speech while the agent talks gives
// UserStartedSpeaking, the rest of the reply's audio is not sent, and the
// reply is kept only as far as it was spoken.
func TestAgentBargeIn(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	l := shared
	c := converse(t, ctx, l, builtinSettings())
	interruption := speech(t, ctx, l, "What is two plus two?")
	// The built-in assistant's longest answer: several seconds of speech.
	c.send(ctx, &api.InjectUserMessage{Content: "tell me about the weather in paris"})
	c.waitFor(ctx, "the agent to start speaking", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentStartedSpeaking) })
	sendSpeech(t, ctx, c, interruption)
	// The interruption is answered in its turn.
	c.waitFor(ctx, "the answer to the interruption", func(ms []api.AgentMessage) bool { return assistantHistory(ms) == "Two plus two is four." })
	ms, _ := c.snapshot()
	full := think.Assistant{}.Reply([]think.Message{{Role: "user", Content: "tell me about the weather in paris"}})
	// In order: the first reply starts, the person speaks (barge-in), the
	// first reply ends without AgentAudioDone, kept as far as it was
	// spoken, and the interruption's answer follows.
	var order []string
	for _, m := range ms {
		switch x := m.(type) {
		case *api.AgentStartedSpeaking, *api.UserStartedSpeaking, *api.AgentAudioDone:
			order = append(order, m.MessageType())
		case *api.AgentHistory:
			if x.Role == api.RoleAssistant {
				if x.Content == full || !strings.HasPrefix(full, x.Content) && x.Content != "Two plus two is four." {
					t.Errorf("the assistant's history %q; want a cut prefix of %q, or the interruption's answer", x.Content, full)
				}
				order = append(order, "History:"+x.Content)
			}
		}
	}
	t.Logf("order: %q", order)
	if len(order) < 4 || order[0] != api.TypeAgentStartedSpeaking || order[1] != api.TypeUserStartedSpeaking ||
		order[len(order)-1] != "History:Two plus two is four." || order[len(order)-2] != api.TypeAgentAudioDone || count(ms, api.TypeAgentAudioDone) != 1 {
		t.Errorf("the barge-in went %q", order)
	}
	// The audio sent stops near where the barge-in came: the first reply
	// (about 12 s whole) and the answer (about 1.5 s) come to far less
	// than the whole first reply.
	_, pcm := c.snapshot()
	if len(pcm) >= 2*agentRate*10 {
		t.Errorf("%d bytes of audio were sent", len(pcm))
	}
}

// fakeLLM is an OpenAI-compatible server: its first answer asks for a
// tool call; once a tool result is in the conversation it says what the
// tool returned.
func fakeLLM(t *testing.T, tool, args string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"data":[{"id":"tiny-llm"}]}`)
			return
		}
		var req struct {
			Messages []struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			for _, piece := range []string{"The tool ", "says: ", *last.Content, ". Anything else?"} {
				b, _ := json.Marshal(piece)
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", b)
			}
		} else {
			a, _ := json.Marshal(args)
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_7\",\"function\":{\"name\":%q,\"arguments\":%s}}]}}]}\n\n", tool, a)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentFunctions: a client-side function round trip (the model asks,
// the client answers, the answer is spoken) and a server-side function
// with an endpoint, with an OpenAI-compatible server as the model.
func TestAgentFunctions(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	l := startEngine(t, Config{FunctionTimeout: time.Minute})

	t.Run("client-side", func(t *testing.T) {
		llm := fakeLLM(t, "get_time", "{}")
		set := builtinSettings()
		set.Agent.Think = api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "tiny-llm"},
			Endpoint:  &api.AgentEndpoint{URL: llm.URL + "/v1/chat/completions"},
			Functions: []api.AgentFunction{{Name: "get_time", Description: "The time now"}}}}
		c := converse(t, ctx, l, set)
		c.send(ctx, &api.InjectUserMessage{Content: "What time is it?"})
		c.waitFor(ctx, "the call", func(ms []api.AgentMessage) bool { return has(ms, api.TypeFunctionCallRequest) })
		ms, _ := c.snapshot()
		var req *api.FunctionCallRequest
		for _, m := range ms {
			if x, ok := m.(*api.FunctionCallRequest); ok {
				req = x
			}
		}
		if len(req.Functions) != 1 || req.Functions[0].Name != "get_time" || !req.Functions[0].ClientSide || req.Functions[0].ID != "call_7" {
			t.Fatalf("FunctionCallRequest %+v", req)
		}
		c.send(ctx, &api.FunctionCallResponse{ID: "call_7", Name: "get_time", Content: "noon"})
		c.waitFor(ctx, "the spoken answer", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentAudioDone) })
		ms, pcm := c.snapshot()
		if got := said(ms, api.RoleAssistant); got != "The tool says: noon. Anything else?" {
			t.Errorf("the agent said %q", got)
		}
		if len(pcm) == 0 {
			t.Error("the answer was not spoken")
		}
		var calls []api.HistoryFunctionCall
		for _, m := range ms {
			if h, ok := m.(*api.AgentHistory); ok {
				calls = append(calls, h.FunctionCalls...)
			}
		}
		if len(calls) != 1 || calls[0].Response != "noon" || !calls[0].ClientSide {
			t.Errorf("History of the call %+v", calls)
		}
	})
	t.Run("server-side", func(t *testing.T) {
		var got []byte
		fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			fmt.Fprint(w, `21 degrees`)
		}))
		t.Cleanup(fn.Close)
		llm := fakeLLM(t, "get_weather", `{"location":"Paris"}`)
		set := builtinSettings()
		set.Agent.Think = api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "tiny-llm"},
			Endpoint: &api.AgentEndpoint{URL: llm.URL + "/v1/chat/completions"},
			Functions: []api.AgentFunction{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`),
				Endpoint: &api.AgentEndpoint{URL: fn.URL + "/weather", Method: "post"}}}}}
		c := converse(t, ctx, l, set)
		c.send(ctx, &api.InjectUserMessage{Content: "Weather in Paris?"})
		c.waitFor(ctx, "the spoken answer", func(ms []api.AgentMessage) bool { return has(ms, api.TypeAgentAudioDone) })
		ms, _ := c.snapshot()
		var resp *api.FunctionCallResponse
		for _, m := range ms {
			if x, ok := m.(*api.FunctionCallResponse); ok {
				resp = x
			}
		}
		if resp == nil || resp.Content != "21 degrees" || resp.Name != "get_weather" {
			t.Errorf("FunctionCallResponse %+v", resp)
		}
		if string(got) != `{"location":"Paris"}` {
			t.Errorf("the endpoint got %q", got)
		}
		if s := said(ms, api.RoleAssistant); s != "The tool says: 21 degrees. Anything else?" {
			t.Errorf("the agent said %q", s)
		}
	})
}

// TestAgentThinkModels lists the built-in assistant and the configured
// server's models, on the agent host.
func TestAgentThinkModels(t *testing.T) {
	t.Parallel()
	llm := fakeLLM(t, "x", "{}")
	l := startEngine(t, Config{LLM: LLMEndpoint{URL: llm.URL + "/v1"}})
	models, err := newClient(t, l).ThinkModels(testContext(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].ID != think.ModelID || !strings.Contains(models[0].Name, "not a language model") || models[1].ID != "tiny-llm" {
		t.Errorf("ThinkModels = %+v", models)
	}
	// The configured server's model is served by name.
	set := builtinSettings()
	set.Agent.Think = api.ThinkChain{{Provider: api.ThinkProvider{Type: "open_ai", Model: "tiny-llm"}}}
	ctx := testContext(t, time.Minute)
	c := converse(t, ctx, l, set)
	c.send(ctx, &api.InjectUserMessage{Content: "hi"})
	c.waitFor(ctx, "the model's call", func(ms []api.AgentMessage) bool { return has(ms, api.TypeFunctionCallRequest) })
}

// closedLLM is the address, up to /v1, of a language model server that
// does not answer: a port on 127.0.0.1 where nothing listens.
func closedLLM(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	return addr + "/v1"
}

// notices are the descriptions of the agent's warnings.
func notices(ms []api.AgentMessage) []string {
	var out []string
	for _, m := range ms {
		if n, ok := m.(*api.AgentNotice); ok && n.Type == api.TypeWarning {
			out = append(out, n.Description)
		}
	}
	return out
}

// TestAgentModelThatDoesNotAnswer: a language model that does not answer
// is named, with why, and the model that answers instead, in a warning
// and at the start of the first reply, and only once in the
// conversation: when the engine's server went unused because it does not
// answer (its models were never listed, the built-in assistant was
// chosen), and when the chosen model fails and the chain's next answers.
func TestAgentModelThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	ask := func(t *testing.T, c *agentConv, question string, replies int) []api.AgentMessage {
		t.Helper()
		c.send(ctx, &api.InjectUserMessage{Content: question})
		c.waitFor(ctx, "the reply spoken", func(ms []api.AgentMessage) bool { return count(ms, api.TypeAgentAudioDone) >= replies })
		ms, _ := c.snapshot()
		return ms
	}
	check := func(t *testing.T, ms []api.AgentMessage, note string) {
		t.Helper()
		if got := said(ms, api.RoleAssistant); !strings.HasPrefix(got, note+" ") || len(got) <= len(note)+1 {
			t.Errorf("the first reply is %q, want it to begin with %q and go on to answer", got, note)
		}
		if got := notices(ms); len(got) != 1 || got[0] != note {
			t.Errorf("the warnings are %q, want %q", got, note)
		}
	}
	answerOnce := func(t *testing.T, c *agentConv, note string) {
		t.Helper()
		check(t, ask(t, c, "What is two plus two?", 1), note)
		ms := ask(t, c, "What is three plus three?", 2)
		if n := strings.Count(said(ms, api.RoleAssistant), note); n != 1 {
			t.Errorf("the model that does not answer is named %d times in two replies: %q", n, said(ms, api.RoleAssistant))
		}
		if got := notices(ms); len(got) != 1 {
			t.Errorf("the warnings of two replies are %q", got)
		}
	}

	t.Run("the engine's server", func(t *testing.T) {
		base := closedLLM(t)
		l := startEngine(t, Config{LLM: LLMEndpoint{URL: base}})
		models, err := newClient(t, l).ThinkModels(ctx)
		if err != nil || len(models) != 1 || models[0].ID != think.ModelID {
			t.Fatalf("ThinkModels = %+v, %v; want the built-in assistant alone", models, err)
		}
		c := converse(t, ctx, l, builtinSettings())
		answerOnce(t, c, "The language model at "+strings.TrimPrefix(strings.TrimSuffix(base, "/v1"), "http://")+
			" does not answer: connection refused. Earshot's built-in assistant answers instead.")
	})
	t.Run("the chain's first model", func(t *testing.T) {
		base := closedLLM(t)
		l := startEngine(t, Config{})
		set := builtinSettings()
		set.Agent.Think = api.ThinkChain{
			{Provider: api.ThinkProvider{Type: "open_ai", Model: "tiny-llm"}, Endpoint: &api.AgentEndpoint{URL: base + "/chat/completions"}},
			{Provider: api.ThinkProvider{Type: think.ModelProvider, Model: think.ModelID}},
		}
		c := converse(t, ctx, l, set)
		answerOnce(t, c, "The model tiny-llm at "+strings.TrimPrefix(strings.TrimSuffix(base, "/v1"), "http://")+
			" does not answer: connection refused. Earshot's built-in assistant answers instead.")
	})
	t.Run("a server that answers", func(t *testing.T) {
		srv := fakeLLM(t, "x", "{}")
		l := startEngine(t, Config{LLM: LLMEndpoint{URL: srv.URL + "/v1"}})
		c := converse(t, ctx, l, builtinSettings()) // the built-in assistant, chosen over a server that works
		ms := ask(t, c, "What is two plus two?", 1)
		if got := said(ms, api.RoleAssistant); strings.Contains(got, "answer") || len(notices(ms)) > 0 {
			t.Errorf("with a server that answers, the reply is %q and the warnings %q", got, notices(ms))
		}
	})
}
