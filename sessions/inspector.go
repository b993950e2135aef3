package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/store"
)

// Latency markers: the steps of a session the inspector times.
const (
	MarkFirstInterim = "first interim" // the first interim Results of a stream
	MarkFirstFinal   = "first final"   // the first final Results of a stream
	MarkEndOfTurn    = "end of turn"   // each EndOfTurn (/v2/listen) or AgentAudioDone (agent)
	MarkFirstAudio   = "first audio"   // the first audio of a synthesis, or of each reply of the agent
)

// WireEvent is an api.WireEvent as the inspector keeps it: numbered, tied
// to its history session, with the type of its message and the latency
// marker it carries, if any.
type WireEvent struct {
	api.WireEvent
	// Seq orders every event the inspector saw (live), or a session's
	// events (read back from history).
	Seq uint64 `json:"seq"`
	// Session is the history session the event belongs to, 0 for none.
	Session int64 `json:"session,omitempty"`
	// Message is the type of a JSON message ("Results", "TurnInfo"), or
	// for a TurnInfo its event ("TurnInfo EndOfTurn").
	Message string `json:"message,omitempty"`
	Marker  string `json:"marker,omitempty"`
	// Latency is, on a marked event, the time since the stream's first
	// audio sent, or else its request or open.
	Latency time.Duration `json:"latency,omitempty"`
}

// WireStore keeps the wire events of history sessions; *store.DB
// implements it.
type WireStore interface {
	AddWireEvents(ctx context.Context, sessionID int64, events []store.WireEvent) (int, error)
	WireEvents(ctx context.Context, sessionID int64, search string, limit int) ([]store.WireEvent, error)
}

// DefaultInspectorCapacity is how many recent events the inspector keeps
// in memory.
const DefaultInspectorCapacity = 100_000

// maxUnsaved bounds the events waiting to be written to history; past it
// they are counted as lost rather than grow memory without bound.
const maxUnsaved = 200_000

// wireLabelPrefix marks the label of a history session's calls.
const wireLabelPrefix = "session:"

// WireContext returns ctx labelled for the history session id, so that
// every wire event of the calls made with it is kept with that session.
func WireContext(ctx context.Context, id int64) context.Context {
	if id == 0 {
		return ctx
	}
	return api.WithWireLabel(ctx, wireLabelPrefix+strconv.FormatInt(id, 10))
}

// runLabelPrefix marks the label of a session that has no history entry
// yet (one that connects before it records, or records at its end); Bind
// ties it to its entry once there is one.
const runLabelPrefix = "run:"

// wireRuns numbers run labels.
var wireRuns atomic.Uint64

// runWire labels ctx with a new run label, and returns it.
func runWire(ctx context.Context) (context.Context, string) {
	label := runLabelPrefix + strconv.FormatUint(wireRuns.Add(1), 10)
	return api.WithWireLabel(ctx, label), label
}

// maxBound bounds the run labels the inspector remembers.
const maxBound = 4096

// labelSession returns the history session of a label, or 0.
func labelSession(label string) int64 {
	s, ok := strings.CutPrefix(label, wireLabelPrefix)
	if !ok {
		return 0
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}

// wire labels ctx with the record's session; without a record ctx is
// returned as it is.
func (r *record) wire(ctx context.Context) context.Context {
	if r == nil {
		return ctx
	}
	return WireContext(ctx, r.id)
}

// Inspector watches the wire for the app: it implements api.WireObserver,
// keeps the recent events in memory, marks the latency steps, tells
// subscribers of new events and writes the events of history sessions to
// the store through one writer goroutine, which it owns (started when
// there is something to write, ended when there is not; Close waits for
// it). ObserveWire never blocks on the store or on a subscriber. It is
// safe for concurrent use.
type Inspector struct {
	store WireStore
	log   *slog.Logger
	cap   int

	mu      sync.Mutex // guards every field below
	ring    []WireEvent
	head    int // index of the oldest event when the ring is full
	seq     uint64
	streams map[uint64]*streamMarks
	subs    map[chan struct{}]struct{}
	bound   map[string]int64 // run label -> history session
	order   []string         // bound's labels, oldest first
	unsaved []WireEvent
	lost    int64 // events of history sessions never written
	queued  uint64
	written uint64 // events of history sessions handled (written or lost)
	writing bool
	closed  bool
	wrote   chan struct{} // closed and replaced after each batch

	wg sync.WaitGroup // the writer
}

// streamMarks is what the inspector knows of one stream to mark it.
type streamMarks struct {
	start     time.Time
	sentAudio bool
	interim   bool
	final     bool
	audio     bool
}

// InspectorConfig configures an Inspector.
type InspectorConfig struct {
	// Store keeps the events of history sessions; nil keeps none.
	Store WireStore
	// Capacity is how many recent events are kept in memory; 0 is
	// DefaultInspectorCapacity.
	Capacity int
	Logger   *slog.Logger
}

// NewInspector returns an inspector.
func NewInspector(cfg InspectorConfig) *Inspector {
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultInspectorCapacity
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Inspector{store: cfg.Store, log: cfg.Logger, cap: cfg.Capacity,
		streams: map[uint64]*streamMarks{}, bound: map[string]int64{}, subs: map[chan struct{}]struct{}{}, wrote: make(chan struct{})}
}

// ObserveWire implements api.WireObserver.
func (in *Inspector) ObserveWire(ev api.WireEvent) {
	e := WireEvent{WireEvent: ev, Session: labelSession(ev.Label)}
	var final bool
	if ev.Kind == api.WireText {
		e.Message, final = readMessage(ev.Text)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if e.Session == 0 && strings.HasPrefix(ev.Label, runLabelPrefix) {
		e.Session = in.bound[ev.Label]
	}
	in.seq++
	e.Seq = in.seq
	in.mark(&e, final)
	if len(in.ring) < in.cap {
		in.ring = append(in.ring, e)
	} else {
		in.ring[in.head] = e
		in.head = (in.head + 1) % in.cap
	}
	for ch := range in.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	in.persist(e)
}

// persist queues e to be written to its history session, if it has one.
// It runs with in.mu held.
func (in *Inspector) persist(e WireEvent) {
	if e.Session == 0 || in.store == nil || in.closed {
		return
	}
	in.queued++
	if len(in.unsaved) >= maxUnsaved {
		in.lost++
		in.written++
		return
	}
	in.unsaved = append(in.unsaved, e)
	if !in.writing {
		in.writing = true
		in.wg.Add(1)
		go in.write()
	}
}

// Bind ties the events of a run label (see runWire) to the history
// session id: those still in memory are written to it, and so are those
// to come. A nil inspector, an empty label or id 0 does nothing.
func (in *Inspector) Bind(label string, id int64) {
	if in == nil || label == "" || id == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.bound[label]; !ok {
		if len(in.order) == maxBound {
			delete(in.bound, in.order[0])
			in.order = in.order[1:]
		}
		in.order = append(in.order, label)
	}
	in.bound[label] = id
	n := len(in.ring)
	for i := range n {
		e := &in.ring[(in.head+i)%n]
		if e.Label == label && e.Session == 0 {
			e.Session = id
			in.persist(*e)
		}
	}
}

// mark sets the latency marker of e (final when it is a final Results)
// from what its stream did before. It runs with in.mu held.
func (in *Inspector) mark(e *WireEvent, final bool) {
	st := in.streams[e.Stream]
	if st == nil {
		st = &streamMarks{start: e.Time}
		in.streams[e.Stream] = st
	}
	setMark := func(m string) {
		e.Marker, e.Latency = m, e.Time.Sub(st.start)
	}
	speech := strings.Contains(e.Path, "/speak") || e.Path == api.PathAgent
	switch {
	case e.Direction == api.WireSent && e.Kind == api.WireBinary:
		if !st.sentAudio {
			st.sentAudio, st.start = true, e.Time
		}
	case e.Path == api.PathAgent && agentTurnEnds(e):
		// Each reply of the agent is timed from the end of the person's
		// turn: their words as the agent heard them, or a typed message.
		st.start, st.audio = e.Time, false
	case e.Direction == api.WireReceived && e.Kind == api.WireText:
		switch e.Message {
		case api.TypeResults:
			if final && !st.final {
				st.final = true
				setMark(MarkFirstFinal)
			} else if !final && !st.interim {
				st.interim = true
				setMark(MarkFirstInterim)
			}
		case api.TypeTurnInfo + " " + string(api.EventEndOfTurn), api.TypeAgentAudioDone:
			setMark(MarkEndOfTurn)
		}
	case e.Direction == api.WireReceived && speech && !st.audio &&
		(e.Kind == api.WireBinary || e.Kind == api.WireResponse && e.Status/100 == 2 && e.Text == ""):
		st.audio = true
		setMark(MarkFirstAudio)
	}
	switch e.Kind {
	case api.WireClose, api.WireError, api.WireBody:
		delete(in.streams, e.Stream)
	case api.WireResponse:
		if !speech || e.Text != "" {
			delete(in.streams, e.Stream)
		}
	}
}

// agentTurnEnds reports whether e ends the person's turn in a
// conversation with the agent: the agent's text of what the person said,
// or a message the person typed.
func agentTurnEnds(e *WireEvent) bool {
	switch {
	case e.Kind != api.WireText:
		return false
	case e.Direction == api.WireReceived:
		return e.Message == api.TypeConversationText &&
			(strings.Contains(e.Text, `"role":"user"`) || strings.Contains(e.Text, `"role": "user"`))
	default:
		return e.Message == api.TypeInjectUserMessage
	}
}

// readMessage reads the type of a JSON message (with the event of a
// TurnInfo), and whether it is a final Results, in one pass. A text cut
// at api.MaxWireText is no JSON and has no type.
func readMessage(text string) (typ string, final bool) {
	if !strings.HasPrefix(strings.TrimSpace(text), "{") {
		return "", false
	}
	var m struct {
		Type    string `json:"type"`
		Event   string `json:"event"`
		IsFinal bool   `json:"is_final"`
	}
	if json.Unmarshal([]byte(text), &m) != nil {
		return "", false
	}
	if m.Type == api.TypeTurnInfo && m.Event != "" {
		return m.Type + " " + m.Event, false
	}
	return m.Type, m.IsFinal
}

// write is the writer goroutine: it writes what is waiting, in batches,
// until nothing is.
func (in *Inspector) write() {
	defer in.wg.Done()
	for {
		in.mu.Lock()
		batch := in.unsaved
		in.unsaved = nil
		if len(batch) == 0 {
			in.writing = false
			in.mu.Unlock()
			return
		}
		in.mu.Unlock()
		in.save(batch)
		in.mu.Lock()
		in.written += uint64(len(batch))
		close(in.wrote)
		in.wrote = make(chan struct{})
		in.mu.Unlock()
	}
}

// save writes a batch, in runs of one session.
func (in *Inspector) save(batch []WireEvent) {
	for len(batch) > 0 {
		id := batch[0].Session
		n := 1
		for n < len(batch) && batch[n].Session == id {
			n++
		}
		rows := make([]store.WireEvent, n)
		for i, e := range batch[:n] {
			rows[i] = toStore(e)
		}
		if _, err := in.store.AddWireEvents(context.Background(), id, rows); err != nil {
			// A session deleted while it ran has nowhere to keep them.
			if !errors.Is(err, store.ErrNotFound) {
				in.log.Warn("sessions: wire events not saved", "session", id, "events", n, "err", err)
			}
			in.mu.Lock()
			in.lost += int64(n)
			in.mu.Unlock()
		}
		batch = batch[n:]
	}
}

func toStore(e WireEvent) store.WireEvent {
	return store.WireEvent{Time: e.Time, Stream: e.Stream, Direction: string(e.Direction), Kind: string(e.Kind),
		Method: e.Method, Path: e.Path, Query: e.Query, Status: e.Status, RequestID: e.RequestID, Size: e.Size,
		Text: e.Text, Truncated: e.Truncated, Marker: e.Marker, Latency: e.Latency, Elapsed: e.Elapsed}
}

func fromStore(id int64, s store.WireEvent) WireEvent {
	e := WireEvent{WireEvent: api.WireEvent{Time: s.Time, Stream: s.Stream, Label: wireLabelPrefix + strconv.FormatInt(id, 10),
		Direction: api.WireDirection(s.Direction), Kind: api.WireKind(s.Kind), Method: s.Method, Path: s.Path,
		Query: s.Query, Status: s.Status, RequestID: s.RequestID, Size: s.Size, Text: s.Text, Truncated: s.Truncated,
		Elapsed: s.Elapsed}, Seq: uint64(s.Seq), Session: id, Marker: s.Marker, Latency: s.Latency}
	if e.Kind == api.WireText {
		e.Message, _ = readMessage(e.Text)
	}
	return e
}

// Flush waits until every event of a history session seen before it was
// called has been written (or found unwritable).
func (in *Inspector) Flush(ctx context.Context) error {
	in.mu.Lock()
	target := in.queued
	for in.written < target {
		wrote := in.wrote
		in.mu.Unlock()
		select {
		case <-wrote:
		case <-ctx.Done():
			return ctx.Err()
		}
		in.mu.Lock()
	}
	in.mu.Unlock()
	return nil
}

// Close stops keeping events in history and waits for what is waiting to
// be written. Events seen later are still kept in memory. It is
// idempotent.
func (in *Inspector) Close() error {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.wg.Wait()
	return nil
}

// Lost returns how many events of history sessions could not be written.
func (in *Inspector) Lost() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.lost
}

// Since returns the events kept in memory numbered after seq, oldest
// first; Since(0) returns them all.
func (in *Inspector) Since(seq uint64) []WireEvent {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := len(in.ring)
	if n == 0 || in.seq <= seq {
		return nil
	}
	// The ring holds the events numbered in.seq-n+1 .. in.seq.
	skip := 0
	if first := in.seq - uint64(n) + 1; seq >= first {
		skip = int(seq - first + 1)
	}
	out := make([]WireEvent, 0, n-skip)
	for i := skip; i < n; i++ {
		out = append(out, in.ring[(in.head+i)%n])
	}
	return out
}

// Subscribe returns a channel that receives a signal (coalesced: at most
// one waits) whenever events arrive, and a function that ends the
// subscription. Read new events with Since.
func (in *Inspector) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	in.mu.Lock()
	in.subs[ch] = struct{}{}
	in.mu.Unlock()
	return ch, func() {
		in.mu.Lock()
		delete(in.subs, ch)
		in.mu.Unlock()
	}
}

// Session returns the events kept of a history session, in order, after
// writing those still waiting; a non-empty search keeps those whose text,
// path, kind or request id contains it.
func (in *Inspector) Session(ctx context.Context, id int64, search string) ([]WireEvent, error) {
	if in.store == nil {
		return nil, errors.New("no history keeps wire events")
	}
	if err := in.Flush(ctx); err != nil {
		return nil, err
	}
	rows, err := in.store.WireEvents(ctx, id, search, 0)
	if err != nil {
		return nil, fmt.Errorf("wire events of session %d: %w", id, err)
	}
	out := make([]WireEvent, len(rows))
	for i, r := range rows {
		out[i] = fromStore(id, r)
	}
	return out, nil
}

// Matches reports whether e shows search in its text, path, kind, message
// type, marker or request id, without regard to case; "" matches all.
func (e *WireEvent) Matches(search string) bool {
	if search == "" {
		return true
	}
	s := strings.ToLower(search)
	for _, f := range []string{e.Text, e.Path, string(e.Kind), e.Message, e.Marker, e.RequestID} {
		if strings.Contains(strings.ToLower(f), s) {
			return true
		}
	}
	return false
}

// ExportWire writes events as JSON lines, one event a line.
func ExportWire(w io.Writer, events []WireEvent) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("export wire events: %w", err)
		}
	}
	return nil
}
