package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// agentWorkspace is a workspace on the local engine whose speaker is
// miniaudio's null device.
func agentWorkspace(t *testing.T, db *store.DB) *sessions.Workspace {
	t.Helper()
	return agentWorkspaceWith(t, db, sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}})
}

func agentWorkspaceWith(t *testing.T, db *store.DB, sp sessions.Speakers) *sessions.Workspace {
	t.Helper()
	l := localEngine(t)
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Speakers: sp,
		Local:    func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// agentEvents collects a session's events and lets a test wait for one.
type agentEvents struct {
	ch   chan sessions.Event
	seen []sessions.Event
}

func watchAgent(a *sessions.AgentSession) *agentEvents {
	e := &agentEvents{ch: make(chan sessions.Event, 1024)}
	go func() {
		for ev := range a.Events() {
			e.ch <- ev
		}
		close(e.ch)
	}()
	return e
}

// waitFor returns the first event (from where the last wait stopped)
// that match accepts.
func (e *agentEvents) waitFor(t *testing.T, ctx context.Context, what string, match func(sessions.Event) bool) sessions.Event {
	t.Helper()
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				t.Fatalf("the session ended before %s; events: %v", what, describeAgentEvents(e.seen))
			}
			e.seen = append(e.seen, ev)
			if match(ev) {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("no %s: %v; events: %v", what, ctx.Err(), describeAgentEvents(e.seen))
		}
	}
}

func describeAgentEvents(evs []sessions.Event) string {
	var parts []string
	for _, ev := range evs {
		switch x := ev.(type) {
		case *sessions.AgentWireEvent:
			parts = append(parts, x.JSON)
		case *sessions.StateEvent:
			parts = append(parts, "state "+x.State.String())
		}
	}
	return strings.Join(parts, " ")
}

func assistantSaid(text string) func(sessions.Event) bool {
	return func(ev sessions.Event) bool {
		x, ok := ev.(*sessions.AgentTextEvent)
		return ok && x.Role == api.RoleAssistant && x.Content == text
	}
}

// TestAgentTypedConversation: a typed question is answered and the
// answer played; the conversation is saved to history with both sides.
func TestAgentTypedConversation(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	ws := agentWorkspace(t, db)
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Text: true, Prompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	ev := watchAgent(a)
	a.Say("what is two plus two")
	ev.waitFor(t, ctx, "the answer", assistantSaid("Two plus two is four."))
	sp := ev.waitFor(t, ctx, "the voice", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentSpeakingEvent); return ok }).(*sessions.AgentSpeakingEvent)
	if sp.Total <= 0 {
		t.Errorf("latencies %+v", sp)
	}
	lat := ev.waitFor(t, ctx, "the turn's timing", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentTurnLatencyEvent); return ok }).(*sessions.AgentTurnLatencyEvent)
	if !lat.Typed || lat.ToText <= 0 || lat.ToAudio < lat.ToText || lat.Total != sp.Total || lat.TTT != sp.TTT || lat.TTS != sp.TTS {
		t.Errorf("the turn's timing %+v, the service's %+v", lat, sp)
	}
	ev.waitFor(t, ctx, "the end of the reply", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentAudioDoneEvent); return ok })

	// A prompt changed mid-call is acknowledged.
	a.UpdatePrompt("Be a pirate.")
	ev.waitFor(t, ctx, "PromptUpdated", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentAckEvent)
		return ok && x.Type == api.TypePromptUpdated
	})
	// A voice that contradicts its version never leaves.
	a.UpdateVoice(api.Speak{Provider: api.SpeakProvider{Type: "deepgram", Version: "v1", Model: "flux-kit-en"}})
	ev.waitFor(t, ctx, "the refusal", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentNoticeEvent)
		return ok && x.Type == "Refused" && strings.Contains(x.Description, "version v2")
	})
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	for e := range ev.ch {
		ev.seen = append(ev.seen, e)
	}
	var settings string
	for _, e := range ev.seen {
		if w, ok := e.(*sessions.AgentWireEvent); ok && w.Out && w.Type == api.TypeSettings {
			settings = w.JSON
		}
	}
	if !strings.Contains(settings, `"search_history"`) || !strings.Contains(settings, `"prompt":"Be brief."`) {
		t.Errorf("the settings sent: %s", settings)
	}

	list, err := db.Sessions(ctx, store.Filter{Kind: store.KindAgent})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
		t.Fatalf("history %+v, %v", list, err)
	}
	lines, err := ws.AgentConversation(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	var timing []sessions.TurnLatency
	for _, l := range lines {
		if l.Role == "latency" {
			timing = append(timing, l.Latency)
			continue
		}
		said = append(said, l.Role+": "+l.Text)
	}
	if strings.Join(said, "|") != "user: what is two plus two|assistant: Two plus two is four." {
		t.Errorf("saved lines %q", said)
	}
	if len(timing) != 1 || timing[0].ToAudio != lat.ToAudio.Truncate(time.Millisecond) || timing[0].TTS != sp.TTS || !timing[0].Typed {
		t.Errorf("saved timing %+v, want %+v", timing, lat)
	}
	// The transcript of the conversation has its words only.
	tr, err := ws.Transcript(ctx, list[0].ID)
	if err != nil || len(tr.Captions) != 2 {
		t.Errorf("transcript %+v, %v", tr.Captions, err)
	}
	// The agent's voice is kept, on the right channel.
	sound, err := ws.AgentRecording(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	left, right := recordedSides(t, ctx, sound)
	if rmsOf(right) < 100 || len(right) < 16000/2 {
		t.Errorf("the agent's side: %d frames, RMS %.0f", len(right), rmsOf(right))
	}
	// Opus codes the two sides together: the silent one keeps a trace
	// of the other far below one step of 16-bit audio.
	if r := rmsOf(left); r > 1 {
		t.Errorf("a typed conversation kept sound of the person: RMS %.2f", r)
	}
}

// recordedSides decodes a conversation's sound, kept as stereo Ogg Opus,
// into the person's side and the agent's, at 16 kHz.
func recordedSides(t *testing.T, ctx context.Context, sound []byte) (person, agent []float32) {
	t.Helper()
	if ext := sessions.RecordingExtension(sound); ext != ".ogg" {
		t.Errorf("the sound is kept as %s, want .ogg", ext)
	}
	b, err := audio.Decode(ctx, bytes.NewReader(sound))
	if err != nil {
		t.Fatal(err)
	}
	if b.Channels != 2 {
		t.Fatalf("the sound kept has %d channels", b.Channels)
	}
	rs, err := audio.NewResampler(b.SampleRate, 16000, 2)
	if err != nil {
		t.Fatal(err)
	}
	frames := rs.Flush(rs.Process(nil, b.Samples))
	for i := 0; i+1 < len(frames); i += 2 {
		person = append(person, frames[i])
		agent = append(agent, frames[i+1])
	}
	return person, agent
}

// rmsOf is the RMS of samples in [-1, 1], on the 16-bit scale.
func rmsOf(p []float32) float64 {
	var s float64
	for _, v := range p {
		s += float64(v) * float64(v) * 32768 * 32768
	}
	return math.Sqrt(s / float64(max(1, len(p))))
}

// speech16k is text in the engine's default voice, 16 kHz.
func speech16k(t *testing.T, ctx context.Context, text string) []int16 {
	t.Helper()
	l := localEngine(t)
	resp, err := newClient(t, l.Endpoint(), l.Key).Speak(ctx, text, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16", Container: "none", SampleRate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return audio.BytesToInt16(nil, b)
}

// TestAgentBargeInStopsPlayback (must show): speech while the agent talks
// gives UserStartedSpeaking, and the playback (miniaudio's null device)
// stops within 50 ms of it.
func TestAgentBargeInStopsPlayback(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	ws := agentWorkspace(t, db)
	interruption := speech16k(t, ctx, "What is two plus two?")
	mic := newLiveSource(t)
	// Headphones: the microphone open as it is.
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Source: mic, Mode: sessions.ListenOpen})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	ev := watchAgent(a)
	ev.waitFor(t, ctx, "the conversation", func(e sessions.Event) bool {
		w, ok := e.(*sessions.AgentWireEvent)
		return ok && w.Type == api.TypeSettingsApplied
	})
	// A long answer: the built-in assistant says what it can do.
	a.Say("tell me about the weather in paris")
	ev.waitFor(t, ctx, "the agent's voice", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentSpeakingEvent); return ok })
	spoke := time.Now()
	mic.speak(interruption)
	b := ev.waitFor(t, ctx, "the barge-in", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentBargeInEvent); return ok }).(*sessions.AgentBargeInEvent)
	seen := time.Since(spoke)
	if !b.Cut {
		t.Error("the barge-in found the agent silent")
	}
	t.Logf("playback stopped %v after UserStartedSpeaking, %v after the person's voice began (the test saw the event %v after it queued the speech)", b.StoppedIn, b.Silenced, seen)
	if b.StoppedIn > 50*time.Millisecond {
		t.Errorf("the playback stopped %v after UserStartedSpeaking, want within 50 ms", b.StoppedIn)
	}
	// What the person lived runs from their voice, at the microphone, to
	// the agent's silence: the service's time to hear them included, so
	// more than the last step, and no more than the test itself waited
	// (a frame of the microphone more: the speech starts in one). The
	// engine needs two frames of voice at least to hear it.
	if b.Silenced < b.StoppedIn || b.Silenced < 40*time.Millisecond || b.Silenced > seen+40*time.Millisecond {
		t.Errorf("the barge-in says the voice stopped %v after the person's began; UserStartedSpeaking to the stop took %v, the speech was queued %v before", b.Silenced, b.StoppedIn, seen)
	}
	ev.waitFor(t, ctx, "the answer to the interruption", assistantSaid("Two plus two is four."))
	// The spoken turn's timing runs from the end of the person's voice
	// at the microphone: the engine waits for a silence before it
	// answers, so the text comes back after some hundreds of ms.
	lat := ev.waitFor(t, ctx, "the spoken turn's timing", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentTurnLatencyEvent); return ok }).(*sessions.AgentTurnLatencyEvent)
	t.Logf("end of speech to text %v, to the agent's voice %v", lat.ToText, lat.ToAudio)
	if lat.Typed || lat.ToText <= 0 || lat.ToAudio < lat.ToText {
		t.Errorf("the spoken turn's timing %+v", lat)
	}
	ev.waitFor(t, ctx, "the end of the answer", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentAudioDoneEvent); return ok })
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	// Both sides are kept: the person's interruption on the left, the
	// agent's voice on the right, silent where it was cut.
	sound, err := ws.AgentRecording(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	person, agent := recordedSides(t, ctx, sound)
	if rmsOf(person) < 100 || rmsOf(agent) < 100 {
		t.Errorf("the sides' RMS: person %.0f, agent %.0f", rmsOf(person), rmsOf(agent))
	}
	// The agent was cut where the person spoke: from the moment the
	// barge-in says its voice went silent (measured from the person's
	// voice, so the same on a busy machine, where hearing the person
	// takes longer) to the start of its answer (the end of the person's
	// voice and the turn's measured time to audio), the agent's side is
	// silent. The 150 ms on each side are the sides' frames and
	// resamplers, which place sound by up to a frame apart.
	const perMs = 16 // recordedSides gives 16 kHz
	from, end := -1, 0
	for i := 0; i+320 <= len(person); i += 320 {
		if rmsOf(person[i:i+320]) > 300 {
			if from < 0 {
				from = i
			}
			end = i + 320
		}
	}
	if from < 0 || end > len(agent) {
		t.Fatalf("the person's voice spans frames %d to %d of %d (the agent's side has %d)", from, end, len(person), len(agent))
	}
	cut := from + int(b.Silenced.Milliseconds()+150)*perMs
	answer := min(len(agent), end+int(lat.ToAudio.Milliseconds()-150)*perMs)
	if answer-cut < 100*perMs {
		t.Fatalf("the agent's side has %d ms between the cut (%v after the person's voice began) and its answer (%v after the voice ended)", (answer-cut)/perMs, b.Silenced, lat.ToAudio)
	}
	if r := rmsOf(agent[cut:answer]); r > 50 {
		t.Errorf("the agent's side is loud (RMS %.0f) between the cut and its answer", r)
	}
}

// TestAgentHistoryFunction: the agent calls the app's search_history, the
// app runs it on the history, and the answer is spoken.
func TestAgentHistoryFunction(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "Planning", Started: time.Now(), Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: 1, Text: "the quarterly budget is due on friday"}); err != nil {
		t.Fatal(err)
	}
	ws := agentWorkspace(t, db)
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Text: true, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	ev := watchAgent(a)
	a.Say("search history for budget")
	call := ev.waitFor(t, ctx, "the call's result", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentFunctionEvent)
		return ok && x.Done
	}).(*sessions.AgentFunctionEvent)
	if call.Name != "search_history" || call.Arguments != `{"query":"budget"}` || !strings.Contains(call.Result, "Planning") || !strings.Contains(call.Result, "quarterly budget") {
		t.Errorf("the call %+v", call)
	}
	ev.waitFor(t, ctx, "the spoken result", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentTextEvent)
		return ok && x.Role == api.RoleAssistant && strings.Contains(x.Content, "quarterly budget")
	})
	// A past session summarised on request.
	a.Say("summarize session budget")
	sum := ev.waitFor(t, ctx, "the summary", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentFunctionEvent)
		return ok && x.Done && x.Name == "summarize_session"
	}).(*sessions.AgentFunctionEvent)
	if !strings.HasPrefix(sum.Result, "Planning (") || sum.Err != nil {
		t.Errorf("the summary %+v", sum)
	}
	ev.waitFor(t, ctx, "the summary spoken", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentTextEvent)
		return ok && x.Role == api.RoleAssistant && strings.HasPrefix(x.Content, "summarize session answered: Planning")
	})
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	// History keeps the calls, between the questions and the answers.
	list, err := db.Sessions(ctx, store.Filter{Kind: store.KindAgent})
	if err != nil || len(list) != 1 {
		t.Fatalf("history %+v, %v", list, err)
	}
	segs, err := db.Segments(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, s := range segs {
		var d struct {
			Role, Name string
		}
		_ = json.Unmarshal([]byte(s.Details), &d)
		if d.Role != "latency" {
			roles = append(roles, d.Role+":"+d.Name)
		}
	}
	if strings.Join(roles, " ") != "user: function:search_history assistant: user: function:summarize_session assistant:" {
		t.Errorf("saved %q", roles)
	}
}

// fakeLLM is an OpenAI-compatible chat server with one model,
// "tiny-llm": asked anything, it calls the tool named, with args; once the
// tool's result is in the conversation, it says it.
func fakeLLM(t *testing.T, tool, args string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"tiny-llm","object":"model"}]}`)
			return
		}
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		last := req.Messages[len(req.Messages)-1]
		offered := false
		for _, tl := range req.Tools {
			offered = offered || tl.Function.Name == tool
		}
		switch {
		case last.Role == "tool":
			for _, piece := range []string{"I found ", strings.TrimSpace(last.Content), "."} {
				b, _ := json.Marshal(piece)
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", b)
			}
		case !offered:
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"No such tool was offered.\"}}]}\n\n")
		default:
			a, _ := json.Marshal(args)
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":%q,\"arguments\":%s}}]}}]}\n\n", tool, a)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentLanguageModelCallsTheApp (must show): the settings name a
// local OpenAI-compatible server; its model is in the agent's list; it
// asks for a tool call, the app runs it on the person's history, and the
// answer comes back spoken.
func TestAgentLanguageModelCallsTheApp(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "Planning", Started: time.Now(), Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: 1, Text: "the quarterly budget is due on friday"}); err != nil {
		t.Fatal(err)
	}
	llm := fakeLLM(t, "search_history", `{"query":"budget"}`)
	ws := llmWorkspace(t, db, llm.URL+"/v1")
	s, err := ws.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ws.AgentChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ch.Models {
		ids = append(ids, m.ID)
	}
	if !slices.Contains(ids, "tiny-llm") {
		t.Fatalf("the agent's models %q lack the server's", ids)
	}
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Text: true, Think: "tiny-llm"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	ev := watchAgent(a)
	a.Say("When is the budget due?")
	call := ev.waitFor(t, ctx, "the call's result", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentFunctionEvent)
		return ok && x.Done
	}).(*sessions.AgentFunctionEvent)
	if call.Name != "search_history" || !call.ClientSide || call.Err != nil || !strings.Contains(call.Result, "quarterly budget") {
		t.Errorf("the call %+v", call)
	}
	ev.waitFor(t, ctx, "the answer", func(e sessions.Event) bool {
		x, ok := e.(*sessions.AgentTextEvent)
		return ok && x.Role == api.RoleAssistant && strings.Contains(x.Content, "quarterly budget is due on friday")
	})
	ev.waitFor(t, ctx, "the answer spoken", func(e sessions.Event) bool { _, ok := e.(*sessions.AgentAudioDoneEvent); return ok })

	// With the server forgotten, its model is gone from the list.
	s.AgentLLM = ""
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if ch, err = ws.AgentChoices(ctx); err != nil || len(ch.Models) != 1 {
		t.Errorf("the agent's models without a server: %+v, %v", ch.Models, err)
	}
}

// TestAgentNothingSaidNothingKept: a conversation started and stopped
// with nothing said by either side leaves no entry in history.
func TestAgentNothingSaidNothingKept(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	ws := agentWorkspace(t, db)
	a, err := ws.StartAgent(ctx, sessions.AgentRequest{Text: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := watchAgent(a)
	ev.waitFor(t, ctx, "the conversation", func(e sessions.Event) bool {
		w, ok := e.(*sessions.AgentWireEvent)
		return ok && w.Type == api.TypeSettingsApplied
	})
	if a.ID() == 0 {
		t.Fatal("the conversation has no entry while it runs")
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if a.Kept() {
		t.Error("Kept reports a conversation in which nothing was said")
	}
	list, err := db.Sessions(ctx, store.Filter{Kind: store.KindAgent})
	if err != nil || len(list) != 0 {
		t.Errorf("history %+v (%v), want nothing", list, err)
	}
}
