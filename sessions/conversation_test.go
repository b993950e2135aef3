package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// --- a turn-aware service the test scripts ----------------------------------

// fakeTurns opens fakeTurnStreams. failDial, when set, is the dial's error.
type fakeTurns struct {
	mu       sync.Mutex
	failDial error
	streams  []*fakeTurnStream
}

func (f *fakeTurns) Turns(ctx context.Context, opts api.TurnOptions) (sessions.TurnStream, error) {
	if f.failDial != nil {
		return nil, f.failDial
	}
	s := &fakeTurnStream{opts: opts, msgs: make(chan fakeTurnMsg, 256), closed: make(chan struct{}), turnOpen: -1}
	f.mu.Lock()
	f.streams = append(f.streams, s)
	f.mu.Unlock()
	return s, nil
}

func (f *fakeTurns) stream(t *testing.T) *fakeTurnStream {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.streams) != 1 {
		t.Fatalf("%d streams were opened, want 1", len(f.streams))
	}
	return f.streams[0]
}

type fakeTurnMsg struct {
	msg api.TurnMessage
	err error
}

// fakeTurnStream answers control messages as the specification says: a
// Configure is applied with TurnOptions.WithConfigure and answered with
// ConfigureSuccess echoing what is in force, or ConfigureFailure; a
// ForceEndTurn ends the turn the test opened (EndOfTurn, trigger manual)
// or, with none open, gives a Warning; CloseStream ends the stream
// without ending the turn. Audio is recorded.
type fakeTurnStream struct {
	msgs   chan fakeTurnMsg
	closed chan struct{}
	once   sync.Once

	mu               sync.Mutex
	opts             api.TurnOptions
	audio            int // bytes received
	controls         []string
	configures       []api.Configure
	seq              int
	turnOpen         int // the open turn's index, -1 when none
	nextTurn         int
	transcript       string
	winStart, winEnd float64 // the open turn's audio window
	closeErr         error   // how the stream ends at CloseStream; nil: io.EOF, as it should
}

func (s *fakeTurnStream) Send(_ context.Context, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audio += len(b)
	return nil
}

func (s *fakeTurnStream) Configure(_ context.Context, c api.Configure) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.controls = append(s.controls, api.TypeConfigure)
	s.configures = append(s.configures, c)
	n, err := s.opts.WithConfigure(c)
	if err != nil {
		s.pushLocked(&api.ConfigureFailure{})
		return nil
	}
	s.opts = n
	eot, eager, timeout := n.EffectiveEOTThreshold(), n.EagerEOTThreshold, n.EffectiveEOTTimeoutMS()
	th := api.Thresholds{EOTThreshold: &eot, EOTTimeoutMS: &timeout}
	if eager != 0 {
		th.EagerEOTThreshold = &eager
	}
	s.pushLocked(&api.ConfigureSuccess{Thresholds: th, Keyterms: slices.Clone(n.Keyterms)})
	return nil
}

func (s *fakeTurnStream) ForceEndTurn(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.controls = append(s.controls, api.TypeForceEndTurn)
	if s.turnOpen < 0 {
		s.pushLocked(&api.TurnWarning{Code: api.CodeForceEndTurnNoActive, Description: "no turn is in progress"})
		return nil
	}
	s.endLocked(api.TriggerManual, 0.2)
	return nil
}

func (s *fakeTurnStream) CloseStream(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.controls = append(s.controls, api.TypeCloseStream)
	err := s.closeErr
	if err == nil {
		err = io.EOF
	}
	s.msgs <- fakeTurnMsg{err: err}
	return nil
}

// Ping answers at once: the fake service is there until it closes.
func (s *fakeTurnStream) Ping(context.Context) error {
	select {
	case <-s.closed:
		return api.ErrClosed
	default:
		return nil
	}
}

func (s *fakeTurnStream) Next(ctx context.Context) (api.TurnMessage, error) {
	select {
	case m := <-s.msgs:
		return m.msg, m.err
	case <-s.closed:
		return nil, errors.New("use of closed stream")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *fakeTurnStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *fakeTurnStream) pushLocked(m api.TurnMessage) {
	switch x := m.(type) {
	case *api.TurnInfo:
		x.SequenceID = s.seq
	case *api.ConfigureSuccess:
		x.SequenceID = s.seq
	case *api.TurnWarning:
		x.SequenceID = s.seq
	}
	s.seq++
	s.msgs <- fakeTurnMsg{msg: m}
}

// event sends a TurnInfo for the open turn (opening one on StartOfTurn).
func (s *fakeTurnStream) event(ev api.TurnEvent, transcript string, start, end, conf float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev == api.EventStartOfTurn {
		s.turnOpen = s.nextTurn
	}
	s.transcript = transcript
	if ev == api.EventStartOfTurn {
		s.winStart = start
	}
	s.winEnd = end
	var words []api.TurnWord
	for w := range strings.FieldsSeq(transcript) {
		words = append(words, api.TurnWord{Word: w, Confidence: 0.9})
	}
	s.pushLocked(&api.TurnInfo{Event: ev, TurnIndex: max(s.turnOpen, 0), AudioWindowStart: start, AudioWindowEnd: end,
		Transcript: transcript, Words: words, EndOfTurnConfidence: conf})
}

// end ends the open turn with trigger.
func (s *fakeTurnStream) end(trigger api.TurnTrigger, conf float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(trigger, conf)
}

func (s *fakeTurnStream) endLocked(trigger api.TurnTrigger, conf float64) {
	var words []api.TurnWord
	for w := range strings.FieldsSeq(s.transcript) {
		words = append(words, api.TurnWord{Word: w, Confidence: 0.9})
	}
	s.pushLocked(&api.TurnInfo{Event: api.EventEndOfTurn, TurnIndex: s.turnOpen, Transcript: s.transcript, Words: words,
		EndOfTurnConfidence: conf, Trigger: trigger, AudioWindowStart: s.winStart, AudioWindowEnd: max(s.winEnd, float64(s.audio)/2/16000)})
	s.turnOpen = -1
	s.nextTurn++
}

func (s *fakeTurnStream) push(m api.TurnMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushLocked(m)
}

func (s *fakeTurnStream) received() (audioBytes int, controls []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.audio, slices.Clone(s.controls)
}

// --- a conversation under test ----------------------------------------------

// convRecorder reads a conversation's events until they close.
type convRecorder struct{ *eventLog }

func recordConv(c *sessions.Conversation) *convRecorder {
	return &convRecorder{logEvents(c.Events(), nil)}
}

func (r *convRecorder) snapshot() []sessions.Event { return r.all() }

// waitFor waits until an event satisfies cond and returns it.
func (r *convRecorder) waitFor(t *testing.T, what string, cond func(sessions.Event) bool) sessions.Event {
	t.Helper()
	return r.first(t, what, cond)
}

func describeEvents(evs []sessions.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		switch e := ev.(type) {
		case *sessions.TurnInfoEvent:
			b.WriteString(string(e.Event) + "(" + string(e.Turn.State) + ") ")
		case *sessions.StateEvent:
			if i > 0 {
				if p, ok := evs[i-1].(*sessions.StateEvent); ok && p.State == e.State {
					continue // updates of the buffered audio while reconnecting
				}
			}
			b.WriteString("state:" + e.State.String())
			if e.Err != nil {
				b.WriteString("(" + e.Err.Error() + ")")
			}
			b.WriteString(" ")
		case *sessions.InterimEvent:
			b.WriteString("interim ")
		case *sessions.FinalEvent:
			fmt.Fprintf(&b, "final[%.2f-%.2f]%q ", e.Caption.Start, e.Caption.End, e.Caption.Text)
		case *sessions.LevelEvent:
		default:
			j, _ := json.Marshal(e)
			b.Write(j)
			b.WriteString(" ")
		}
	}
	return b.String()
}

func turnEvent(ev api.TurnEvent, index int) func(sessions.Event) bool {
	return func(e sessions.Event) bool {
		x, ok := e.(*sessions.TurnInfoEvent)
		return ok && x.Event == ev && x.Turn.Index == index
	}
}

// startConv starts a conversation on a fake service fed by a source the
// test pushes.
func startConv(t *testing.T, cfg sessions.ConversationConfig) (*sessions.Conversation, *fakeTurnStream, *pushSource, *convRecorder, *fakeHistory) {
	t.Helper()
	src := newPushSource(mono16k)
	svc := &fakeTurns{}
	h := &fakeHistory{}
	cfg.Streamer, cfg.Source, cfg.History, cfg.OwnsSource = svc, src, h, true
	if cfg.Title == "" {
		cfg.Title = "Conversation"
	}
	c := sessions.NewConversation(cfg)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec := recordConv(c)
	t.Cleanup(func() {
		c.Stop()
		rec.wait(t)
	})
	return c, svc.stream(t), src, rec, h
}

func TestConversationTurns(t *testing.T) {
	c, st, src, rec, h := startConv(t, sessions.ConversationConfig{})
	if o := st.opts; o.Model != api.ModelFluxGeneralEN || o.Encoding != "linear16" || o.SampleRate != 16000 {
		t.Errorf("stream opened with %+v, want flux-general-en linear16 at 16 kHz", o)
	}
	src.push(make([]int16, 16000), 320)
	waitAudio(t, st, 32000)

	// A turn goes through every state the specification names.
	steps := []struct {
		event api.TurnEvent
		text  string
		want  sessions.TurnState
	}{
		{api.EventStartOfTurn, "hello", sessions.TurnOpen},
		{api.EventUpdate, "hello there", sessions.TurnOpen},
		{api.EventEagerEndOfTurn, "hello there", sessions.TurnEager},
		{api.EventTurnResumed, "hello there how", sessions.TurnResumed},
		{api.EventUpdate, "hello there how are you", sessions.TurnResumed},
	}
	for i, s := range steps {
		t.Run(string(s.event), func(t *testing.T) {
			st.event(s.event, s.text, 0.1, 0.2*float64(i+1), 0.1*float64(i))
			ev := rec.waitFor(t, string(s.event), func(e sessions.Event) bool {
				x, ok := e.(*sessions.TurnInfoEvent)
				return ok && x.Turn.Events == i+1
			}).(*sessions.TurnInfoEvent)
			if ev.Event != s.event || ev.Turn.State != s.want || ev.Turn.Transcript != s.text || ev.Turn.Index != 0 {
				t.Errorf("after %s: event %s, turn %d %s %q; want %s, 0, %s, %q", s.event, ev.Event, ev.Turn.Index, ev.Turn.State, ev.Turn.Transcript, s.event, s.want, s.text)
			}
			if ev.At.IsZero() || ev.SequenceID != i {
				t.Errorf("event stamped at %v with sequence %d, want a time and %d", ev.At, ev.SequenceID, i)
			}
			if len(ev.Turn.Words) != len(strings.Fields(s.text)) {
				t.Errorf("turn has %d words, want %d", len(ev.Turn.Words), len(strings.Fields(s.text)))
			}
		})
	}
	st.end(api.TriggerModel, 0.93)
	end := rec.waitFor(t, "EndOfTurn", turnEvent(api.EventEndOfTurn, 0)).(*sessions.TurnInfoEvent)
	if tr := end.Turn; tr.State != sessions.TurnEnded || tr.Trigger != api.TriggerModel || tr.EndOfTurnConfidence != 0.93 ||
		tr.Transcript != "hello there how are you" || tr.Closed.IsZero() || tr.Opened.After(tr.Closed) {
		t.Errorf("ended turn = %+v", tr)
	}
	if tr := end.Turn; tr.SpeechEnd != 1 || !tr.HasLatency || tr.Start != 0.1 || tr.End != 1 {
		t.Errorf("speech end %.2f (latency known %v), window %.2f to %.2f; want 1 from the last Update, 0.1 to 1", tr.SpeechEnd, tr.HasLatency, tr.Start, tr.End)
	}

	// The next turn has the next index; an unknown trigger is kept.
	st.event(api.EventStartOfTurn, "second", 1.5, 1.75, 0)
	rec.waitFor(t, "the second turn", turnEvent(api.EventStartOfTurn, 1))
	st.end("vibes", 0.5)
	end2 := rec.waitFor(t, "the second EndOfTurn", turnEvent(api.EventEndOfTurn, 1)).(*sessions.TurnInfoEvent)
	if end2.Turn.Trigger != "vibes" || end2.Turn.Start != 1.5 {
		t.Errorf("second turn: trigger %q from %.2f, want vibes from 1.50", end2.Turn.Trigger, end2.Turn.Start)
	}
	if got := c.Turns(); len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 {
		t.Errorf("Turns() = %+v, want turns 0 and 1", got)
	}

	// Each turn was saved as it ended.
	segs := h.segmentList()
	if len(segs) != 2 || segs[0].Text != "hello there how are you" || segs[1].Text != "second" || segs[0].Seq != 0 || segs[1].Seq != 1 {
		t.Fatalf("saved %+v, want the two turns", segs)
	}
	var words []api.Word
	if err := json.Unmarshal([]byte(segs[0].Words), &words); err != nil || len(words) != 5 || words[0].Word != "hello" {
		t.Errorf("saved words %s (%v), want the turn's five words", segs[0].Words, err)
	}
	if h.sessions[0].Kind != store.KindConversation || h.sessions[0].Model != api.ModelFluxGeneralEN {
		t.Errorf("session saved as %q with %q, want %q with flux-general-en", h.sessions[0].Kind, h.sessions[0].Model, store.KindConversation)
	}

	// Stop closes the stream without ending a turn; the open one is saved.
	st.event(api.EventStartOfTurn, "cut off", 2, 2.25, 0)
	rec.waitFor(t, "the third turn", turnEvent(api.EventStartOfTurn, 2))
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t)
	if _, controls := st.received(); !slices.Equal(controls, []string{api.TypeCloseStream}) {
		t.Errorf("controls sent %q, want CloseStream only", controls)
	}
	if segs := h.segmentList(); len(segs) != 3 || segs[2].Text != "cut off" {
		t.Errorf("saved %+v, want the open turn saved at Stop", segs)
	}
	if f := h.finishes(); len(f) != 1 || f[0].status != store.StatusDone || f[0].duration != 1 {
		t.Errorf("finished %+v, want done after 1 s of audio", f)
	}
	if n, _ := st.received(); n != 32000 {
		t.Errorf("the service received %d bytes of audio, want 32000", n)
	}
}

func TestConversationUnknownEventsKept(t *testing.T) {
	_, st, _, rec, _ := startConv(t, sessions.ConversationConfig{})
	st.event(api.EventStartOfTurn, "one", 0, 0.25, 0)
	st.event("Pondering", "", 0, 0.5, 0.3)
	ev := rec.waitFor(t, "the unknown event", func(e sessions.Event) bool {
		x, ok := e.(*sessions.TurnInfoEvent)
		return ok && x.Event == "Pondering"
	}).(*sessions.TurnInfoEvent)
	if ev.Turn.State != sessions.TurnOpen || ev.Turn.Transcript != "one" || ev.Turn.EndOfTurnConfidence != 0.3 {
		t.Errorf("after an unknown event the turn is %s %q (%.1f), want open, its transcript kept, the confidence taken", ev.Turn.State, ev.Turn.Transcript, ev.Turn.EndOfTurnConfidence)
	}
	st.push(&api.UnknownMessage{Type: "Telemetry", Raw: json.RawMessage(`{"type":"Telemetry","x":1}`)})
	u := rec.waitFor(t, "the unknown message", func(e sessions.Event) bool {
		_, ok := e.(*sessions.UnknownTurnMessageEvent)
		return ok
	}).(*sessions.UnknownTurnMessageEvent)
	if u.Type != "Telemetry" || !strings.Contains(string(u.Raw), `"x":1`) {
		t.Errorf("unknown message kept as %q %s", u.Type, u.Raw)
	}
}

func TestConversationConfigure(t *testing.T) {
	c, st, _, rec, _ := startConv(t, sessions.ConversationConfig{Options: api.TurnOptions{Keyterms: []string{"Earshot"}}})
	if s := c.Settings(); s.EOTThreshold != 0.7 || s.EOTTimeoutMS != 5000 || !slices.Equal(s.Keyterms, []string{"Earshot"}) {
		t.Errorf("initial settings %+v, want the defaults and the keyterm", s)
	}
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	tests := []struct {
		name    string
		cfg     api.Configure
		wantErr bool // refused before it is sent
		wantOK  bool
		want    sessions.TurnSettings
	}{
		{"threshold", api.Configure{Thresholds: api.Thresholds{EOTThreshold: f(0.85)}}, false, true,
			sessions.TurnSettings{EOTThreshold: 0.85, EOTTimeoutMS: 5000, Keyterms: []string{"Earshot"}}},
		{"timeout and keyterms", api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: i(1500)}, Keyterms: []string{"Flux", "turn"}}, false, true,
			sessions.TurnSettings{EOTThreshold: 0.85, EOTTimeoutMS: 1500, Keyterms: []string{"Flux", "turn"}}},
		{"eager above the threshold in force", api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f(0.9)}}, false, false,
			sessions.TurnSettings{EOTThreshold: 0.85, EOTTimeoutMS: 1500, Keyterms: []string{"Flux", "turn"}}},
		{"out of range", api.Configure{Thresholds: api.Thresholds{EOTThreshold: f(0.2)}}, true, false, sessions.TurnSettings{}},
	}
	answers := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Configure(t.Context(), tc.cfg)
			if tc.wantErr {
				var oe *api.OptionError
				if !errors.As(err, &oe) {
					t.Fatalf("Configure = %v, want an *api.OptionError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			answers++
			var ev *sessions.ConfigureEvent
			rec.waitFor(t, "the answer", func(e sessions.Event) bool {
				var got []*sessions.ConfigureEvent
				for _, x := range rec.snapshot() {
					if c, ok := x.(*sessions.ConfigureEvent); ok {
						got = append(got, c)
					}
				}
				if len(got) < answers {
					return false
				}
				ev = got[answers-1]
				return true
			})
			if ev.OK != tc.wantOK || ev.At.IsZero() {
				t.Errorf("answer OK=%v at %v, want %v", ev.OK, ev.At, tc.wantOK)
			}
			a := ev.Applied
			if a.EOTThreshold != tc.want.EOTThreshold || a.EOTTimeoutMS != tc.want.EOTTimeoutMS || !slices.Equal(a.Keyterms, tc.want.Keyterms) {
				t.Errorf("applied %+v, want %+v", a, tc.want)
			}
			if !sameConfigure(ev.Requested, tc.cfg) {
				t.Errorf("the answer is matched to %+v, want %+v", ev.Requested, tc.cfg)
			}
		})
	}
	if got := len(st.configures); got != 3 {
		t.Errorf("%d Configure messages sent, want 3 (the refused one is not sent)", got)
	}
	// The timeline shows what was sent.
	sent := 0
	for _, ev := range rec.snapshot() {
		if s, ok := ev.(*sessions.SentEvent); ok && s.Type == api.TypeConfigure {
			sent++
		}
	}
	if sent != 3 {
		t.Errorf("%d Configure sends reported, want 3", sent)
	}
}

// waitAudio waits until the service has received n bytes of audio.
func waitAudio(t *testing.T, st *fakeTurnStream, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d bytes of audio at the service", n), func() bool {
		got, _ := st.received()
		return got >= n
	})
}

func sameConfigure(a, b api.Configure) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestConversationForceEndTurn(t *testing.T) {
	c, st, _, rec, h := startConv(t, sessions.ConversationConfig{})
	// No turn: a Warning, and the stream goes on.
	if err := c.ForceEndTurn(t.Context()); err != nil {
		t.Fatal(err)
	}
	w := rec.waitFor(t, "the warning", func(e sessions.Event) bool {
		_, ok := e.(*sessions.TurnWarningEvent)
		return ok
	}).(*sessions.TurnWarningEvent)
	if w.Code != api.CodeForceEndTurnNoActive || w.Description == "" {
		t.Errorf("warning %+v", w)
	}
	// In a turn: it ends, manual.
	st.event(api.EventStartOfTurn, "please stop", 0, 0.5, 0.1)
	rec.waitFor(t, "the turn", turnEvent(api.EventStartOfTurn, 0))
	if err := c.ForceEndTurn(t.Context()); err != nil {
		t.Fatal(err)
	}
	end := rec.waitFor(t, "the manual end", turnEvent(api.EventEndOfTurn, 0)).(*sessions.TurnInfoEvent)
	if end.Turn.Trigger != api.TriggerManual || end.Turn.Transcript != "please stop" {
		t.Errorf("turn ended %q with %q, want manual with its transcript", end.Turn.Trigger, end.Turn.Transcript)
	}
	if segs := h.segmentList(); len(segs) != 1 {
		t.Errorf("saved %d turns, want 1", len(segs))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.ForceEndTurn(t.Context()); !errors.Is(err, sessions.ErrNotRunning) {
		t.Errorf("ForceEndTurn after Stop = %v, want ErrNotRunning", err)
	}
	if err := c.Configure(t.Context(), api.Configure{Keyterms: []string{"x"}}); !errors.Is(err, sessions.ErrNotRunning) {
		t.Errorf("Configure after Stop = %v, want ErrNotRunning", err)
	}
}

// TestConversationLatency: the latency runs from the end of speech, the
// window end of the last event before EndOfTurn mapped to when that audio
// was captured, to the arrival of EndOfTurn.
func TestConversationLatency(t *testing.T) {
	// The session's clock moves only when the test moves it: the
	// latencies are exact whatever the machine is doing.
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	_, st, src, rec, _ := startConv(t, sessions.ConversationConfig{Clock: clk})
	// One frame of a second of audio, captured now: its sample at 0.5 s
	// was captured half a second before the frame was delivered.
	src.push(make([]int16, 16000), 16000)
	pushed := clk.Now()
	waitAudio(t, st, 32000)
	st.event(api.EventStartOfTurn, "a", 0, 0.25, 0)
	st.event(api.EventUpdate, "a b", 0, 0.5, 0.2)
	rec.waitFor(t, "the Update", turnEvent(api.EventUpdate, 0))
	const wait = 150 * time.Millisecond
	clk.Advance(wait)
	st.end(api.TriggerModel, 0.8)
	end := rec.waitFor(t, "EndOfTurn", turnEvent(api.EventEndOfTurn, 0)).(*sessions.TurnInfoEvent)
	lat := end.Turn.Latency
	if !end.Turn.HasLatency || lat < 500*time.Millisecond+wait || lat > 500*time.Millisecond+wait+300*time.Millisecond {
		t.Errorf("latency %v (known %v), want about %v", lat, end.Turn.HasLatency, 500*time.Millisecond+wait)
	}

	// An EndOfTurn with no event before it has no latency to measure.
	st.event(api.EventStartOfTurn, "x", 0.6, 0.7, 0)
	rec.waitFor(t, "turn 1", turnEvent(api.EventStartOfTurn, 1))
	st.mu.Lock()
	st.pushLocked(&api.TurnInfo{Event: api.EventEndOfTurn, TurnIndex: 7, Trigger: api.TriggerTimeout})
	st.mu.Unlock()
	lone := rec.waitFor(t, "a lone EndOfTurn", turnEvent(api.EventEndOfTurn, 7)).(*sessions.TurnInfoEvent)
	if lone.Turn.HasLatency {
		t.Errorf("a turn of one event has latency %v", lone.Turn.Latency)
	}

	// With timed words, speech ends with the last word (0.3 s, captured
	// 0.7 s before the frame came), not with the last event's window.
	st.mu.Lock()
	st.pushLocked(&api.TurnInfo{Event: api.EventStartOfTurn, TurnIndex: 8, Transcript: "c", AudioWindowStart: 0.1, AudioWindowEnd: 0.2})
	st.pushLocked(&api.TurnInfo{Event: api.EventUpdate, TurnIndex: 8, Transcript: "c d", AudioWindowStart: 0.1, AudioWindowEnd: 0.9})
	st.pushLocked(&api.TurnInfo{Event: api.EventEndOfTurn, TurnIndex: 8, Trigger: api.TriggerModel, AudioWindowStart: 0.1, AudioWindowEnd: 0.95,
		Words: []api.TurnWord{{Word: "c", Start: 0.1, End: 0.2}, {Word: "d", Start: 0.2, End: 0.3}}})
	st.mu.Unlock()
	timed := rec.waitFor(t, "the timed EndOfTurn", turnEvent(api.EventEndOfTurn, 8)).(*sessions.TurnInfoEvent)
	since := clk.Now().Sub(pushed)
	if lat := timed.Turn.Latency; !timed.Turn.HasLatency || lat < 650*time.Millisecond || lat > since+750*time.Millisecond {
		t.Errorf("latency %v (known %v), want from the last word's end: 0.7 s before the frame came, %v ago", lat, timed.Turn.HasLatency, since)
	}
}

// TestConversationFileTail: a recording that ends mid-turn is followed by
// silence, in real time, until the turn ends, then the stream is closed.
func TestConversationFileTail(t *testing.T) {
	_, st, src, rec, h := startConv(t, sessions.ConversationConfig{Tail: 2 * time.Second})
	src.push(make([]int16, 3200), 320)
	st.event(api.EventStartOfTurn, "last words", 0, 0.2, 0)
	rec.waitFor(t, "the turn", turnEvent(api.EventStartOfTurn, 0))
	src.finish()
	// Silence keeps coming while the turn is open.
	eventually(t, "silence after the recording", func() bool {
		n, _ := st.received()
		return n >= 6400+3200
	})
	if _, controls := st.received(); len(controls) != 0 {
		t.Errorf("controls %q sent while the turn was open", controls)
	}
	st.end(api.TriggerTimeout, 0.4)
	rec.wait(t)
	if _, controls := st.received(); !slices.Equal(controls, []string{api.TypeCloseStream}) {
		t.Errorf("controls %q, want CloseStream once the turn ended", controls)
	}
	if segs := h.segmentList(); len(segs) != 1 || segs[0].Text != "last words" {
		t.Errorf("saved %+v", segs)
	}
	if n, _ := st.received(); n > 6400+2*32000 {
		t.Errorf("%d bytes sent, more than the tail allows", n)
	}
}

func TestConversationFailures(t *testing.T) {
	t.Run("dial", func(t *testing.T) {
		svc := &fakeTurns{failDial: &api.Error{Status: 401, Code: api.CodeInvalidAuth, Message: "bad key"}}
		c := sessions.NewConversation(sessions.ConversationConfig{Streamer: svc, Source: newPushSource(mono16k)})
		err := c.Start(t.Context())
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != 401 {
			t.Errorf("Start = %v, want the 401", err)
		}
		for range c.Events() {
		}
		if err := c.Stop(); err != nil {
			t.Errorf("Stop after a failed Start = %v", err)
		}
	})
	t.Run("options", func(t *testing.T) {
		c := sessions.NewConversation(sessions.ConversationConfig{Streamer: &fakeTurns{}, Source: newPushSource(mono16k),
			Options: api.TurnOptions{Model: "nova-3"}})
		if err := c.Start(t.Context()); !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("Start with nova-3 = %v, want ErrInvalidOptions", err)
		}
	})
	t.Run("service error", func(t *testing.T) {
		c, st, _, rec, h := startConv(t, sessions.ConversationConfig{})
		st.push(&api.TurnError{Code: "INTERNAL_SERVER_ERROR", Description: "boom"})
		rec.wait(t)
		err := c.Stop()
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Code != "INTERNAL_SERVER_ERROR" {
			t.Errorf("Stop = %v, want the service's error", err)
		}
		if f := h.finishes(); len(f) != 1 || f[0].status != store.StatusFailed {
			t.Errorf("finished %+v, want failed", f)
		}
	})
	t.Run("connection lost at Stop", func(t *testing.T) {
		// The service has reported on the first half second of two when
		// the connection drops at Stop: the session is partial, and says
		// the last 1.5 s were not transcribed.
		c, st, src, rec, h := startConv(t, sessions.ConversationConfig{})
		src.push(make([]int16, 2*16000), 320)
		waitAudio(t, st, 2*32000)
		st.event(api.EventStartOfTurn, "hello", 0, 0.5, 0.1)
		rec.waitFor(t, "the turn", turnEvent(api.EventStartOfTurn, 0))
		st.mu.Lock()
		st.closeErr = errors.New("connection reset")
		st.mu.Unlock()
		checkUntranscribed(t, c.Stop(), h, 1500*time.Millisecond, "connection reset")
		rec.wait(t)
	})
	t.Run("connection lost", func(t *testing.T) {
		c, st, _, rec, _ := startConv(t, sessions.ConversationConfig{})
		st.msgs <- fakeTurnMsg{err: errors.New("connection reset")}
		rec.wait(t)
		if err := c.Stop(); err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Errorf("Stop = %v, want the lost connection", err)
		}
	})
}

func TestTurnOptionsFor(t *testing.T) {
	tests := []struct {
		lang      string
		model     string
		wantHints []string
	}{
		{"", api.ModelFluxGeneralEN, nil},
		{"en", api.ModelFluxGeneralEN, nil},
		{"en-GB", api.ModelFluxGeneralEN, nil},
		{"es", api.ModelFluxGeneralMulti, []string{"es"}},
		{"pt-BR", api.ModelFluxGeneralMulti, []string{"pt"}},
	}
	for _, tc := range tests {
		t.Run(tc.lang, func(t *testing.T) {
			s := store.DefaultSettings()
			s.Language = tc.lang
			o := sessions.TurnOptionsFor(s)
			if o.Model != tc.model || !slices.Equal(o.LanguageHints, tc.wantHints) {
				t.Errorf("TurnOptionsFor(%q) = %s %q, want %s %q", tc.lang, o.Model, o.LanguageHints, tc.model, tc.wantHints)
			}
			if err := o.Validate(); err != nil {
				t.Errorf("the options are refused: %v", err)
			}
		})
	}
}
