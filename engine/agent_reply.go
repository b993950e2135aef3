package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/think"
	"github.com/earshot-app/earshot/engine/tts"
	"github.com/earshot-app/earshot/internal/llm"
	"github.com/earshot-app/earshot/internal/sayable"
	"github.com/earshot-app/earshot/internal/textseg"
)

// newCallID returns an id for a function call the engine makes.
func newCallID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "call_" + hex.EncodeToString(b)
}

// userSaid answers what the person said (or typed): ConversationText and
// History for it, then a reply.
func (s *agentSession) userSaid(ctx context.Context, text string) {
	s.sendMsg(ctx, &api.ConversationText{Role: api.RoleUser, Content: text})
	if s.historyOn {
		s.sendMsg(ctx, &api.AgentHistory{Role: api.RoleUser, Content: text})
	}
	heard := s.heardAt
	if heard.IsZero() {
		heard = s.e.clock.Now()
	}
	s.heardAt = time.Time{}
	if q := s.queued; q != nil && q.say == "" {
		// Said while the reply in progress is being cut: answered
		// together with what was said before it.
		q.users = append(q.users, text)
		q.heardAt = heard
		return
	}
	s.startReply(ctx, &agentReply{heardAt: heard, users: []string{text}})
}

// startReply starts r, or, while a reply is in progress, cuts that one
// (unless it has finished speaking) and starts r once it has ended.
func (s *agentSession) startReply(ctx context.Context, r *agentReply) {
	if s.reply != nil {
		if !s.reply.finished.Load() { // else nothing is left to cut: r waits for its end
			s.reply.cancel()
		}
		s.queued = r
		return
	}
	// What the person said joins the conversation only now, after all
	// that the reply before added to it.
	for _, u := range r.users {
		s.convo = append(s.convo, think.ChatMessage{Role: "user", Content: u})
	}
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.convo = append([]think.ChatMessage(nil), s.convo...)
	r.mouth, r.thinks, r.prompt, r.funcs = s.mouth, s.thinkers, s.prompt, s.funcs
	s.reply = r
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		added := s.runReply(ctx, r)
		r.cancel()
		if h := s.e.replyEnding; h != nil {
			h()
		}
		s.replyDone <- func(ctx context.Context) { s.replyEnded(ctx, replyEnd{r: r, added: added}) }
	}()
}

// replyEnded keeps what the reply added to the conversation, and starts
// the one waiting.
func (s *agentSession) replyEnded(ctx context.Context, end replyEnd) {
	s.convo = append(s.convo, end.added...)
	if s.reply == end.r {
		s.reply = nil
	}
	if q := s.queued; q != nil && s.reply == nil {
		s.queued = nil
		s.startReply(ctx, q)
	}
}

// runReply thinks and speaks one reply, calling functions on the way. It
// returns what it adds to the conversation: what was spoken (up to where
// a barge-in cut it) and the function calls with their results.
func (s *agentSession) runReply(ctx context.Context, r *agentReply) []think.ChatMessage {
	sp := &speaker{s: s, r: r, ctx: ctx, begin: s.e.clock.Now(), heard: r.heardAt}
	if r.say != "" {
		sp.firstText = sp.begin
		sp.sentence(r.say)
		sp.finish()
		if said := sp.said.String(); said != "" {
			return []think.ChatMessage{{Role: "assistant", Content: said}}
		}
		return nil
	}
	tools := thinkTools(r.funcs)
	convo := r.convo
	var added []think.ChatMessage
	for round := 0; ; round++ {
		msgs := convo
		if strings.TrimSpace(r.prompt) != "" {
			msgs = append([]think.ChatMessage{{Role: "system", Content: r.prompt}}, convo...)
		}
		calls, err := s.thinkChain(r, msgs, tools, func(piece string) error {
			if sp.firstText.IsZero() {
				sp.firstText = s.e.clock.Now()
			}
			sp.feed(piece)
			return r.ctx.Err()
		})
		sp.flushText()
		roundText := sp.said.String()[sp.roundStart:]
		if err != nil {
			if r.ctx.Err() == nil {
				s.e.log.Warn("agent think failed", "request_id", s.rid, "err", err)
				s.queue(ctx, &api.AgentNotice{Type: api.TypeWarning, Code: api.CodeThinkFailed, Description: "The language model failed: " + err.Error()}, nil)
				if sp.said.Len() == 0 {
					sp.sentence("Sorry, I could not reach the language model.")
				}
			}
			break
		}
		if len(calls) == 0 || round >= maxToolRounds || r.ctx.Err() != nil {
			break
		}
		call := think.ChatMessage{Role: "assistant", Content: roundText, ToolCalls: calls}
		results := s.callFunctions(ctx, r, calls)
		if r.ctx.Err() != nil {
			break
		}
		convo = append(convo, call)
		added = append(added, call)
		for i, c := range calls {
			res := think.ChatMessage{Role: "tool", ToolCallID: c.ID, Content: results[i]}
			convo = append(convo, res)
			added = append(added, res)
		}
		sp.roundStart = sp.said.Len()
	}
	sp.finish()
	if said := sp.said.String()[sp.roundStart:]; said != "" {
		added = append(added, think.ChatMessage{Role: "assistant", Content: said})
	}
	return added
}

// thinkChain asks the chain's providers in turn: the next is tried when
// one fails before it said anything, and the reply begins by saying so
// (once in a conversation). A built-in assistant chosen while the
// engine's language model server goes unused checks that server first,
// and says so too if it does not answer.
func (s *agentSession) thinkChain(r *agentReply, msgs []think.ChatMessage, tools []think.Tool, text func(string) error) ([]think.ToolCall, error) {
	var errs []error
	for i, t := range r.thinks {
		if b, ok := t.(builtinThinker); ok && i == 0 && b.server.URL != "" && s.serverChecked.CompareAndSwap(false, true) {
			ctx, cancel := context.WithTimeout(r.ctx, llm.Timeout)
			_, err := llm.Models(ctx, llmClient, b.server.URL, b.server.Headers)
			cancel()
			var le *llm.Error
			if errors.As(err, &le) {
				s.sayFallback(r, upperFirst(le.Error())+".", t, text)
			}
		}
		spoke := false
		calls, err := t.think(r.ctx, msgs, tools, func(p string) error {
			spoke = true
			return text(p)
		})
		if err == nil || spoke || r.ctx.Err() != nil {
			return calls, err
		}
		errs = append(errs, err)
		if i+1 < len(r.thinks) {
			s.e.log.Warn("agent think failed; the next of the chain answers", "request_id", s.rid, "err", err)
			s.sayFallback(r, failure(t, err), r.thinks[i+1], text)
		}
	}
	return nil, errors.Join(errs...)
}

// failure says, as a sentence, why a model did not answer.
func failure(t thinker, err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return upperFirst(t.name()) + " " + le.Reason() + "."
	}
	return upperFirst(t.name()) + " failed: " + strings.TrimSuffix(err.Error(), ".") + "."
}

// sayFallback tells the client, with a warning, and the person, at the
// start of the reply, that a model failed (why) and which one answers
// instead: once in a conversation, so that a model that stays down is
// not announced at every turn.
func (s *agentSession) sayFallback(r *agentReply, why string, instead thinker, text func(string) error) {
	if !s.fellBack.CompareAndSwap(false, true) {
		return
	}
	note := why + " " + upperFirst(instead.name()) + " answers instead."
	s.queue(r.ctx, &api.AgentNotice{Type: api.TypeWarning, Code: api.CodeThinkFailed, Description: note}, nil)
	_ = text(note + " ") // a reply cut short stops at its next piece anyway
}

// upperFirst capitalises the first letter of s, to begin a sentence.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// callFunctions runs the calls: it announces them (FunctionCallRequest),
// waits for the client's answers to client-side ones, and calls those
// with an endpoint itself (FunctionCallResponse to the client). It
// returns each call's result, in order.
func (s *agentSession) callFunctions(ctx context.Context, r *agentReply, calls []think.ToolCall) []string {
	byName := map[string]api.AgentFunction{}
	for _, f := range r.funcs {
		byName[f.Name] = f
	}
	req := &api.FunctionCallRequest{}
	waits := make([]chan string, len(calls))
	var names []string
	for i, c := range calls {
		f, known := byName[c.Name]
		client := !known || f.ClientSide()
		req.Functions = append(req.Functions, api.FunctionCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, ClientSide: client})
		if client {
			waits[i] = make(chan string, 1)
			s.mu.Lock()
			s.pending[c.ID] = waits[i]
			s.mu.Unlock()
		}
		names = append(names, c.Name)
	}
	defer func() {
		s.mu.Lock()
		for _, c := range calls {
			delete(s.pending, c.ID)
		}
		s.mu.Unlock()
	}()
	s.queue(ctx, &api.AgentThinking{Content: "Calling " + strings.Join(names, ", ") + "."}, nil)
	s.queue(ctx, req, nil)

	results := make([]string, len(calls))
	timeout := s.e.cfg.FunctionTimeout
	for i, c := range calls {
		if waits[i] == nil {
			results[i] = s.callEndpoint(r.ctx, byName[c.Name], c)
			s.queue(ctx, &api.FunctionCallResponse{ID: c.ID, Name: c.Name, Content: results[i]}, nil)
			continue
		}
		t := s.e.clock.NewTimer(timeout)
		select {
		case res := <-waits[i]:
			results[i] = res
		case <-t.C():
			results[i] = `{"error":"the client did not answer this function call in time"}`
			s.queue(ctx, &api.AgentNotice{Type: api.TypeWarning, Code: api.CodeFunctionCallTimeout,
				Description: fmt.Sprintf("The function %s did not answer within %s; the agent goes on without it.", c.Name, timeout)}, nil)
		case <-r.ctx.Done():
			t.Stop()
			return results
		}
		t.Stop()
	}
	if s.historyOn {
		h := &api.AgentHistory{}
		for i, c := range calls {
			h.FunctionCalls = append(h.FunctionCalls, api.HistoryFunctionCall{ID: c.ID, Name: c.Name,
				ClientSide: req.Functions[i].ClientSide, Arguments: c.Arguments, Response: results[i]})
		}
		s.queue(ctx, h, nil)
	}
	return results
}

// callEndpoint calls a server-side function over HTTP: the arguments as
// the JSON body (or the query of a GET); the answer's body is the result.
func (s *agentSession) callEndpoint(ctx context.Context, f api.AgentFunction, c think.ToolCall) string {
	method := strings.ToUpper(f.Endpoint.Method)
	if method == "" {
		method = http.MethodPost
	}
	target := f.Endpoint.URL
	var body io.Reader
	if method == http.MethodGet || method == http.MethodDelete {
		var args map[string]any
		if json.Unmarshal([]byte(c.Arguments), &args) == nil && len(args) > 0 {
			u, err := url.Parse(target)
			if err == nil {
				q := u.Query()
				for k, v := range args {
					q.Set(k, fmt.Sprint(v))
				}
				u.RawQuery = q.Encode()
				target = u.String()
			}
		}
	} else {
		body = bytes.NewReader([]byte(c.Arguments))
	}
	cctx, cancel := context.WithTimeout(ctx, s.e.cfg.FunctionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, method, target, body)
	if err != nil {
		return errorResult(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range f.Endpoint.Headers {
		req.Header.Set(k, v)
	}
	resp, err := llmClient.Do(req)
	if err != nil {
		return errorResult(fmt.Errorf("the function's endpoint could not be reached: %w", err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFunctionResult))
	if err != nil {
		return errorResult(err)
	}
	if resp.StatusCode/100 != 2 {
		return errorResult(fmt.Errorf("the function's endpoint answered %s: %s", resp.Status, strings.TrimSpace(string(b))))
	}
	return string(b)
}

func errorResult(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}

// speaker speaks a reply sentence by sentence, paced near real time, and
// measures where its time went.
type speaker struct {
	s   *agentSession
	r   *agentReply
	ctx context.Context // the session's

	pending    string          // text not yet a whole sentence
	said       strings.Builder // what was spoken, up to a cut
	roundStart int             // where said stood when the last round began

	begin, heard, firstText time.Time
	ttsLatency              time.Duration
	started                 bool // AgentStartedSpeaking was sent
	audioStart              time.Time
	samples                 int
}

// agentClause is how many characters of a reply may run with no sentence
// complete before the part up to its last clause end is spoken.
const agentClause = 240

// feed takes a piece of the reply's text and speaks each sentence it
// completes (textseg's sentences, as the speak endpoints cut them); a
// long run with none is spoken up to a clause end.
func (sp *speaker) feed(piece string) {
	sp.pending += piece
	cut := textseg.Complete(sp.pending)
	if cut == 0 && utf8.RuneCountInString(sp.pending) > agentClause {
		cut = textseg.CompleteClause(sp.pending, agentClause)
	}
	if cut == 0 {
		return
	}
	done := sp.pending[:cut]
	sp.pending = sp.pending[cut:]
	for _, s := range textseg.Sentences(done) {
		sp.sentence(done[s.Start:s.End])
	}
}

// flushText speaks what is left of the text.
func (sp *speaker) flushText() {
	rest := sp.pending
	sp.pending = ""
	for _, s := range textseg.Sentences(rest) {
		sp.sentence(rest[s.Start:s.End])
	}
}

// sentence speaks one sentence: ConversationText, then its audio.
func (sp *speaker) sentence(text string) {
	text = strings.TrimSpace(text)
	r := sp.r
	if text == "" || r.ctx.Err() != nil {
		return
	}
	stale := func() bool { return r.ctx.Err() != nil }
	s := sp.s
	s.queue(r.ctx, &api.ConversationText{Role: api.RoleAssistant, Content: text}, stale)
	enc, err := newRawEncoder(r.mouth.voice, r.mouth.enc, r.mouth.rate)
	if err != nil {
		s.e.log.Error("agent voice", "request_id", s.rid, "err", err)
		return
	}
	ttsStart := s.e.clock.Now()
	spokenTo := 0
	emit := func(f []float32, textEnd int) error {
		b, n := enc.frame(f)
		if n == 0 {
			return nil
		}
		if !sp.started {
			sp.started = true
			now := s.e.clock.Now()
			sp.ttsLatency = now.Sub(ttsStart)
			sp.audioStart = now
			s.queue(r.ctx, &api.AgentStartedSpeaking{
				TotalLatency: seconds(now.Sub(sp.heardOrBegin())),
				TTSLatency:   seconds(sp.ttsLatency),
				TTTLatency:   seconds(sp.firstText.Sub(sp.begin)),
			}, stale)
		}
		if !sp.pace(r.ctx) {
			return r.ctx.Err()
		}
		select {
		case s.out <- outFrame{binary: true, data: b, stale: stale}:
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
		sp.samples += n
		spokenTo = textEnd
		return nil
	}
	p := tts.Params{Speed: r.mouth.speed}
	// What the voice does not say (a model's emoji) is left out, as on
	// the speak endpoints; offsets stay the text's.
	err = s.e.tts.Synthesize(r.ctx, r.mouth.voice, sayable.Strip(r.mouth.voice.Language, text), p, func(c tts.Chunk) error {
		return emit(enc.pcm.convert(c.PCM), c.TextEnd)
	})
	if err == nil {
		err = emit(enc.pcm.flush(), len(text))
	}
	if err != nil && r.ctx.Err() == nil && !errors.Is(err, tts.ErrClosed) {
		s.e.log.Error("agent synthesis failed", "request_id", s.rid, "err", err)
	}
	if r.ctx.Err() != nil {
		// Cut: what was sent before the barge-in is what was said.
		spokenTo = min(spokenTo, len(text))
		if cut := strings.TrimSpace(text[:spokenTo]); cut != "" {
			sp.appendSaid(cut)
		}
		return
	}
	sp.appendSaid(text)
}

func (sp *speaker) appendSaid(text string) {
	if sp.said.Len() > sp.roundStart {
		sp.said.WriteByte(' ')
	}
	sp.said.WriteString(text)
}

func (sp *speaker) heardOrBegin() time.Time {
	if sp.heard.IsZero() {
		return sp.begin
	}
	return sp.heard
}

// pace waits until the audio sent so far is no more than agentLead ahead
// of the engine's clock. It reports false when the reply was cut meanwhile.
func (sp *speaker) pace(ctx context.Context) bool {
	clk := sp.s.e.clock
	ahead := time.Duration(sp.samples)*time.Second/time.Duration(sp.r.mouth.rate) - clk.Since(sp.audioStart)
	if ahead <= agentLead {
		return ctx.Err() == nil
	}
	t := clk.NewTimer(ahead - agentLead)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// finish ends the reply: AgentAudioDone and LatencyReport after its audio,
// History of what was said.
func (sp *speaker) finish() {
	s, r := sp.s, sp.r
	r.finished.Store(true)
	if sp.started && r.ctx.Err() == nil {
		s.queue(sp.ctx, &api.AgentAudioDone{}, nil)
		rep := &api.LatencyReport{TTSLatency: seconds(sp.ttsLatency)}
		if !sp.firstText.IsZero() {
			rep.TTTTextLatency = seconds(sp.firstText.Sub(sp.begin))
			rep.TotalLatency = seconds(sp.firstText.Sub(sp.heardOrBegin()) + sp.ttsLatency)
		}
		s.queue(sp.ctx, rep, nil)
	}
	if said := sp.said.String(); said != "" && s.historyOn {
		s.queue(sp.ctx, &api.AgentHistory{Role: api.RoleAssistant, Content: said}, nil)
	}
}

// seconds rounds a duration to microseconds, in seconds.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1e6
}
