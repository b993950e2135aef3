package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/engine/think"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/llm"
)

// The voice agent: /v1/agent/converse runs listen (the streaming
// recogniser with endpointing for version v1, the turn detector for v2),
// think (the built-in assistant, or an OpenAI-compatible chat-completions
// server) and speak (the engine's voices), streaming at every step.

const (
	// agentOutQueue is how many frames the agent may queue for writing.
	agentOutQueue = 512
	// DefaultFunctionTimeout is how long the agent waits for the client
	// to answer a client-side function call.
	DefaultFunctionTimeout = 20 * time.Second
	// agentLead is how far ahead of real time the agent's audio is sent:
	// the rest is paced, so that a reply cut by barge-in is cut near
	// where the person heard it.
	agentLead = 1 * time.Second
	// maxToolRounds bounds the model's function calls in one reply.
	maxToolRounds = 4
	// maxFunctionResult bounds the body of a server-side function's
	// answer.
	maxFunctionResult = 64 << 10
	// msgUnparsable is the service's words for a text message it cannot
	// read.
	msgUnparsable = "Text message received from client did not match any of the formats we expect."
)

// LLMEndpoint is an OpenAI-compatible server the agent may think with:
// its models join the think-model list.
type LLMEndpoint struct {
	// URL is the server's base address, up to /v1, such as
	// http://127.0.0.1:11434/v1.
	URL     string
	Headers map[string]string
}

// SetLLM names the OpenAI-compatible server the agent thinks with when a
// conversation asks for a model other than the built-in assistant's and
// gives no endpoint; an empty URL names none. Conversations already
// under way keep what they resolved.
func (e *Engine) SetLLM(llm LLMEndpoint) {
	e.mu.Lock()
	e.llm = llm
	e.mu.Unlock()
}

// currentLLM is the server SetLLM named, or Config.LLM before.
func (e *Engine) currentLLM() LLMEndpoint {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.llm
}

// handleAgentModels serves GET /v1/agent/settings/think/models: the
// built-in assistant, and the models of the configured LLM server.
func (e *Engine) handleAgentModels(w http.ResponseWriter, r *http.Request) {
	models := []api.ThinkModel{{ID: think.ModelID, Name: think.ModelName, Provider: think.ModelProvider}}
	server := e.currentLLM()
	if base := server.URL; base != "" {
		ctx, cancel := context.WithTimeout(r.Context(), llm.Timeout)
		ids, err := llm.Models(ctx, llmClient, base, server.Headers)
		cancel()
		if err != nil {
			e.log.Warn("list the language model server's models", "err", err)
		}
		host := llm.Host(base)
		for _, id := range ids {
			models = append(models, api.ThinkModel{ID: id, Name: id + " at " + host, Provider: api.ProviderOpenAI})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// llmClient reaches language-model servers and functions' endpoints; it
// keeps no idle connections, so no goroutine outlives a call.
var llmClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}}

// handleAgent serves the /v1/agent/converse WebSocket.
func (e *Engine) handleAgent(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, "The voice agent takes no query parameters: everything is in the Settings message.")
		return
	}
	if !e.limit.acquire(weightRequest) {
		e.tooMany(w, r)
		return
	}
	defer e.limit.release(weightRequest)
	dec, release, err := e.asr.decoder(r.Context(), streamingPostSpeechFrames)
	if err != nil {
		writeError(w, r, http.StatusServiceUnavailable, "Service Unavailable", "The speech model could not be loaded: "+err.Error())
		return
	}
	defer release()
	sock, done, ok := e.acceptSocket(w, r, maxFrameBytes, agentOutQueue)
	if !ok {
		return
	}
	defer done()
	s := &agentSession{socket: sock, dec: dec, pending: map[string]chan string{}, historyOn: true}
	defer s.closeAll()
	s.serve(e.ctx, s.handler())
	// serve has waited for the loop, the only writer of heard.
	noteAudio(r.Context(), float64(s.heard)/sphinx.SampleRate, 1, "")
}

// agentSession is one conversation. The processor (process) owns every
// field but pending; a reply runs in a goroutine of its own, which the
// processor starts, cancels and waits for.
type agentSession struct {
	*socket
	dec *sphinx.Decoder

	applied   bool
	settings  api.AgentSettings
	ear       *agentEar
	audioIn   *audio.SpeechDecoder
	heard     int64 // samples of the person's voice received, for the usage
	mouth     agentMouth
	thinkers  []thinker
	prompt    string
	funcs     []api.AgentFunction
	historyOn bool
	listen    api.ListenProvider
	listenV2  bool
	convo     []think.ChatMessage // the conversation, prompt excluded

	reply *agentReply // the reply in progress, if any
	// replyDone carries, from a reply's goroutine, its end for the loop
	// to keep (replyEnded).
	replyDone chan func(context.Context)
	wg        sync.WaitGroup
	queued    *agentReply // a reply to start once the one in progress ends
	heardAt   time.Time   // when the person's last turn ended

	// serverChecked and fellBack are set once in a conversation, by its
	// replies (thinkChain): the unused language model server was
	// checked; a reply said that a model failed and which one answers.
	serverChecked, fellBack atomic.Bool

	mu      sync.Mutex // guards pending
	pending map[string]chan string
}

// agentMouth is how the agent speaks.
type agentMouth struct {
	voice tts.Voice
	speed float64
	enc   audio.Encoding
	rate  int
}

// agentReply is one answer of the agent.
type agentReply struct {
	ctx    context.Context
	cancel context.CancelFunc
	// say, when set, is spoken as it is, with no thinking (greeting,
	// InjectAgentMessage).
	say string
	// heardAt is when the person's turn ended (zero for say).
	heardAt time.Time
	// users is what the person said that the reply answers.
	users []string
	// convo is the conversation the reply answers (a copy).
	convo  []think.ChatMessage
	mouth  agentMouth
	thinks []thinker
	prompt string
	funcs  []api.AgentFunction
	// finished is set once the reply has said all it will (or was cut),
	// before its AgentAudioDone goes out: from then on the agent is not
	// speaking, though the session has yet to see the reply end.
	finished atomic.Bool
}

// replyEnd is what a reply adds to the conversation.
type replyEnd struct {
	r     *agentReply
	added []think.ChatMessage
}

// handler is what the conversation does with the socket's frames. A
// reply runs on a goroutine of its own, which the loop starts, cancels,
// and hears the end of through wake; stop cancels the reply in progress
// and waits for every reply's goroutine.
func (s *agentSession) handler() streamHandler {
	s.replyDone = make(chan func(context.Context))
	return streamHandler{
		start: func(ctx context.Context) { s.sendMsg(ctx, &api.Welcome{RequestID: s.rid}) },
		text:  s.control,
		audio: s.audioFrame,
		idle: func(ctx context.Context) (websocket.StatusCode, string) {
			s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeError, Code: api.CodeAgentIdle,
				Description: "No audio or message arrived within the timeout window; send KeepAlive while the person is silent."})
			return websocket.StatusPolicyViolation, api.CodeAgentIdle
		},
		wake: s.replyDone,
		stop: func() {
			if s.reply != nil {
				s.reply.cancel()
			}
			// Drain replies until every goroutine has ended.
			go func() {
				s.wg.Wait()
				close(s.replyDone)
			}()
			for range s.replyDone {
			}
		},
	}
}

// audioFrame handles the person's audio; done reports that the
// conversation ends, and how to close the socket.
func (s *agentSession) audioFrame(ctx context.Context, data []byte) (websocket.StatusCode, string, bool) {
	if !s.applied {
		return 0, "", false // audio before SettingsApplied is ignored
	}
	if err := s.hear(ctx, data); err != nil {
		s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeError, Code: api.CodeUndecodable, Description: err.Error()})
		return websocket.StatusPolicyViolation, api.CodeUndecodable, true
	}
	return 0, "", false
}

// sendMsg queues a message of the agent socket.
func (s *agentSession) sendMsg(ctx context.Context, m api.AgentMessage) {
	s.queue(ctx, m, nil)
}

// queue queues a message; stale, when set, drops it if it reports true
// when its turn to be written comes.
func (s *agentSession) queue(ctx context.Context, m api.AgentMessage, stale func() bool) bool {
	b, err := api.EncodeAgentMessage(m)
	if err != nil {
		s.e.log.Error("encode agent message", "request_id", s.rid, "err", err)
		return false
	}
	select {
	case s.out <- outFrame{data: b, stale: stale}:
		return true
	case <-ctx.Done():
		return false
	}
}

// fail reports an error the conversation goes on after.
func (s *agentSession) fail(ctx context.Context, code string, err error) {
	desc := err.Error()
	var oe *api.OptionError
	if errors.As(err, &oe) {
		desc = oe.Reason
		if oe.Param != "" && !strings.Contains(desc, oe.Param) {
			desc = oe.Param + ": " + desc
		}
		if oe.Code != "" {
			code = oe.Code
		}
	}
	s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeError, Code: code, Description: desc})
}

// errorMsg sends an Error the conversation goes on after.
func (s *agentSession) errorMsg(ctx context.Context, code, desc string) {
	s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeError, Code: code, Description: desc})
}

// control handles a text message; done reports that the socket closes.
func (s *agentSession) control(ctx context.Context, data []byte) (websocket.StatusCode, string, bool) {
	m, err := api.DecodeAgentClientMessage(data)
	if err != nil {
		if !s.applied {
			s.fail(ctx, api.CodeUnparsableClientMessage, err)
			return websocket.StatusPolicyViolation, api.CodeUnparsableClientMessage, true
		}
		s.fail(ctx, api.CodeUnparsableClientMessage, err)
		return 0, "", false
	}
	if set, ok := m.(*api.AgentSettings); ok {
		if s.applied {
			s.errorMsg(ctx, api.CodeInvalidSettings, "Settings was already applied; change it with UpdatePrompt, UpdateSpeak, UpdateThink and UpdateListen.")
			return 0, "", false
		}
		if err := s.configure(*set); err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			return websocket.StatusPolicyViolation, api.CodeInvalidSettings, true
		}
		s.applied = true
		s.sendMsg(ctx, &api.SettingsApplied{})
		if g := strings.TrimSpace(set.Agent.Greeting); g != "" {
			s.startReply(ctx, &agentReply{say: g})
		}
		return 0, "", false
	}
	if !s.applied {
		if _, unknown := m.(*api.UnknownMessage); unknown {
			s.errorMsg(ctx, api.CodeUnparsableClientMessage, msgUnparsable)
		} else {
			s.errorMsg(ctx, api.CodeSettingsRequired, "The first message must be Settings.")
		}
		return 0, "", false
	}
	switch x := m.(type) {
	case *api.AgentKeepAlive:
	case *api.UpdatePrompt:
		s.prompt = x.Prompt
		s.sendMsg(ctx, &api.AgentUpdated{Type: api.TypePromptUpdated})
	case *api.UpdateSpeak:
		if err := api.CheckAgentClientMessage(x, s.listenV2); err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		mouth, err := s.resolveMouth(x.Speak)
		if err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		s.mouth = mouth
		s.sendMsg(ctx, &api.AgentUpdated{Type: api.TypeSpeakUpdated})
	case *api.UpdateThink:
		if err := x.Think.Validate("think"); err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		th, err := s.e.resolveThinkers(x.Think)
		if err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		s.thinkers = th
		if x.Think[0].Prompt != "" {
			s.prompt = x.Think[0].Prompt
		}
		s.funcs = x.Think[0].Functions
		s.sendMsg(ctx, &api.AgentUpdated{Type: api.TypeThinkUpdated})
	case *api.UpdateListen:
		if err := x.Listen.Provider.Validate("listen.provider"); err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		if err := s.relisten(x.Listen.Provider); err != nil {
			s.fail(ctx, api.CodeInvalidSettings, err)
			break
		}
		s.sendMsg(ctx, &api.AgentUpdated{Type: api.TypeListenUpdated})
	case *api.InjectUserMessage:
		if strings.TrimSpace(x.Content) == "" {
			s.sendMsg(ctx, &api.InjectionRefused{Message: "The message is empty."})
			break
		}
		s.userSaid(ctx, x.Content)
	case *api.InjectAgentMessage:
		switch {
		case strings.TrimSpace(x.Message) == "":
			s.sendMsg(ctx, &api.InjectionRefused{Message: "The message is empty."})
		case s.reply != nil && !s.reply.finished.Load() && x.Behavior != api.InjectInterrupt:
			s.sendMsg(ctx, &api.InjectionRefused{Message: "The agent is speaking; the message was not injected.", Code: api.CodeInjectDuringSpeech})
		default:
			s.startReply(ctx, &agentReply{say: x.Message})
		}
	case *api.FunctionCallResponse:
		s.mu.Lock()
		ch, ok := s.pending[x.ID]
		delete(s.pending, x.ID)
		s.mu.Unlock()
		if !ok {
			s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeWarning, Code: "UNKNOWN_FUNCTION_CALL",
				Description: fmt.Sprintf("No function call %q is waiting for a response.", x.ID)})
			break
		}
		ch <- x.Content // buffered: never blocks
	case *api.AgentForceEndTurn:
		if !s.listenV2 {
			s.sendMsg(ctx, &api.AgentNotice{Type: api.TypeWarning, Code: api.CodeForceEndTurnUnsupported,
				Description: "ForceEndTurn works with a version v2 (flux-general-*) listen provider only."})
			break
		}
		s.onEar(ctx, s.ear.forceEnd())
	default:
		s.errorMsg(ctx, api.CodeUnparsableClientMessage, msgUnparsable)
	}
	return 0, "", false
}

// configure applies Settings: every rule of the interface, then what the
// engine serves (its voices, its think providers, its listen models).
func (s *agentSession) configure(set api.AgentSettings) error {
	if err := set.Validate(); err != nil {
		return err
	}
	in := set.Audio.Input
	if in == nil {
		in = &api.AgentAudioInput{Encoding: api.EncodingLinear16, SampleRate: 16000}
	}
	var f audio.Format
	if api.IsRawPCM(in.Encoding) {
		enc, err := audio.ParseEncoding(in.Encoding)
		if err != nil {
			return &api.OptionError{Param: "audio.input.encoding", Reason: err.Error(), Code: api.CodeInvalidSettings}
		}
		f = audio.Format{Encoding: enc, SampleRate: in.SampleRate, Channels: 1}
		if err := f.Validate(); err != nil {
			return &api.OptionError{Param: "audio.input", Reason: err.Error(), Code: api.CodeInvalidSettings}
		}
	} else if in.Encoding != "flac" && in.Encoding != "ogg-opus" {
		return &api.OptionError{Param: "audio.input.encoding", Reason: "the local engine takes linear16, linear32, mulaw, alaw, flac or ogg-opus input, not " + in.Encoding, Code: api.CodeInvalidSettings}
	}
	ad, err := audio.NewSpeechDecoder(f)
	if err != nil {
		return &api.OptionError{Param: "audio.input", Reason: err.Error(), Code: api.CodeInvalidSettings}
	}
	listen := api.ListenProvider{Type: api.ProviderDeepgram, Model: "nova-3"}
	if set.Agent.Listen != nil {
		listen = set.Agent.Listen.Provider
	}
	ear, err := s.newEar(listen)
	if err != nil {
		ad.Close()
		return err
	}
	s.mouth.enc, s.mouth.rate = audio.EncodingLinear16, api.DefaultSpeakSampleRate
	if out := set.Audio.Output; out != nil {
		if out.Container != "" && out.Container != "none" {
			ad.Close()
			ear.close()
			return &api.OptionError{Param: "audio.output.container", Reason: "the local engine streams raw audio only (container none)", Code: api.CodeInvalidSettings}
		}
		enc, rate, err := streamFormat(out.Encoding, out.SampleRate)
		if err != nil {
			ad.Close()
			ear.close()
			return &api.OptionError{Param: "audio.output.encoding", Reason: reasonOf(err), Code: api.CodeInvalidSettings}
		}
		s.mouth.enc, s.mouth.rate = enc, rate
	}
	mouth, err := s.resolveMouth(set.Agent.Voices())
	if err != nil {
		ad.Close()
		ear.close()
		return err
	}
	thinkers, err := s.e.resolveThinkers(set.Agent.Think)
	if err != nil {
		ad.Close()
		ear.close()
		return err
	}
	s.settings, s.audioIn, s.ear, s.mouth, s.thinkers = set, ad, ear, mouth, thinkers
	s.listen, s.listenV2 = listen, listen.TurnAware()
	s.prompt = set.Agent.Think[0].Prompt
	s.funcs = set.Agent.Think[0].Functions
	if set.Flags != nil && set.Flags.History != nil {
		s.historyOn = *set.Flags.History
	}
	if c := set.Agent.Context; c != nil {
		for _, m := range c.Messages {
			if len(m.FunctionCalls) > 0 {
				continue // past calls are context the model need not see
			}
			s.convo = append(s.convo, think.ChatMessage{Role: m.Role, Content: m.Content})
		}
	}
	return nil
}

func reasonOf(err error) string {
	var oe *api.OptionError
	if errors.As(err, &oe) {
		return oe.Reason
	}
	return err.Error()
}

// resolveMouth picks the first voice of a chain the engine serves.
func (s *agentSession) resolveMouth(chain api.SpeakChain) (agentMouth, error) {
	var why []string
	for _, sp := range chain {
		p := sp.Provider
		if p.Type != api.ProviderDeepgram {
			why = append(why, p.Type+" voices are not served by the local engine")
			continue
		}
		v, err := lookupVoice(p.Model)
		if err != nil {
			why = append(why, reasonOf(err))
			continue
		}
		m := agentMouth{voice: v, enc: s.mouth.enc, rate: s.mouth.rate}
		if m.enc == audio.EncodingNone {
			m.enc, m.rate = audio.EncodingLinear16, api.DefaultSpeakSampleRate
		}
		if p.Speed != nil {
			m.speed = *p.Speed
		}
		return m, nil
	}
	return agentMouth{}, &api.OptionError{Param: "agent.speak", Reason: "no voice of the chain is served: " + strings.Join(why, "; "), Code: api.CodeInvalidSettings}
}

// thinker is a "think" provider of the chain.
type thinker interface {
	think(ctx context.Context, msgs []think.ChatMessage, tools []think.Tool, text func(string) error) ([]think.ToolCall, error)
	// name is the model in a sentence: "the model llama3 at
	// 127.0.0.1:11434".
	name() string
}

// resolveThinkers maps a think chain to what the engine runs: a model
// with an endpoint is reached there; the built-in assistant by its id;
// a model of the configured LLM server there.
func (e *Engine) resolveThinkers(chain api.ThinkChain) ([]thinker, error) {
	var out []thinker
	server := e.currentLLM()
	usesServer := false
	for i, t := range chain {
		switch {
		case t.Endpoint != nil:
			out = append(out, chatThinker{think.Chat{URL: t.Endpoint.URL, Headers: t.Endpoint.Headers, Model: t.Provider.Model,
				Temperature: t.Provider.Temperature, Client: llmClient}, t.ContextLength})
		case t.Provider.Model == think.ModelID:
			out = append(out, builtinThinker{a: think.Assistant{Now: e.clock.Now}, tools: thinkTools(t.Functions)})
		case server.URL != "":
			usesServer = true
			out = append(out, chatThinker{think.Chat{URL: think.ChatURL(server.URL), Headers: server.Headers,
				Model: t.Provider.Model, Temperature: t.Provider.Temperature, Client: llmClient}, t.ContextLength})
		default:
			field := "agent.think.provider.model"
			if len(chain) > 1 {
				field = fmt.Sprintf("agent.think[%d].provider.model", i)
			}
			return nil, &api.OptionError{Param: field, Code: api.CodeInvalidSettings,
				Reason: fmt.Sprintf("the local engine does not serve %s %q; GET %s lists the models it does, or give a chat-completions endpoint", t.Provider.Type, t.Provider.Model, api.PathAgentModels)}
		}
	}
	if b, ok := out[0].(builtinThinker); ok && !usesServer && server.URL != "" {
		// The server the engine was given goes unused: most likely its
		// models were not listed because it did not answer. The first
		// reply checks, and says so (thinkChain).
		b.server = server
		out[0] = b
	}
	return out, nil
}

// chatThinker thinks with an OpenAI-compatible server.
type chatThinker struct {
	chat  think.Chat
	limit api.ContextLength
}

func (c chatThinker) name() string {
	return "the model " + c.chat.Model + " at " + llm.Host(c.chat.URL)
}

func (c chatThinker) think(ctx context.Context, msgs []think.ChatMessage, tools []think.Tool, text func(string) error) ([]think.ToolCall, error) {
	if n := c.limit.Tokens; n > 0 {
		msgs = trimContext(msgs, n)
	}
	return c.chat.Stream(ctx, msgs, tools, text)
}

// trimContext keeps the system prompt and the latest messages that fit
// in about tokens tokens (four characters a token).
func trimContext(msgs []think.ChatMessage, tokens int) []think.ChatMessage {
	budget := tokens * 4
	var head []think.ChatMessage
	if len(msgs) > 0 && msgs[0].Role == "system" {
		head, msgs = msgs[:1], msgs[1:]
		budget -= len(head[0].Content)
	}
	start := len(msgs)
	for start > 0 && budget-len(msgs[start-1].Content) >= 0 {
		budget -= len(msgs[start-1].Content)
		start--
	}
	if start == len(msgs) && start > 0 {
		start-- // the last message always goes
	}
	// A tool result never goes without the call it answers.
	for start > 0 && start < len(msgs) && msgs[start].Role == "tool" {
		start--
	}
	return append(append([]think.ChatMessage(nil), head...), msgs[start:]...)
}

// builtinThinker is the built-in assistant (think.Assistant.Respond):
// its rules answer, or it calls a declared function the request names.
type builtinThinker struct {
	a     think.Assistant
	tools []think.Tool
	// server is the language model server the engine was given, when
	// the conversation chose the assistant over its models.
	server LLMEndpoint
}

func (builtinThinker) name() string { return "Earshot's built-in assistant" }

func (b builtinThinker) think(_ context.Context, msgs []think.ChatMessage, _ []think.Tool, text func(string) error) ([]think.ToolCall, error) {
	said, calls := b.a.Respond(msgs, b.tools)
	if len(calls) == 0 {
		return nil, text(said)
	}
	for i := range calls {
		calls[i].ID = newCallID()
	}
	return calls, nil
}

// thinkTools are the functions a request declares, as a model is given
// them.
func thinkTools(funcs []api.AgentFunction) []think.Tool {
	var tools []think.Tool
	for _, f := range funcs {
		tools = append(tools, think.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters})
	}
	return tools
}
