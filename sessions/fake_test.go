package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// This file holds in-memory stand-ins for what a captions session talks
// to: a service that records exactly what each connection received and
// answers what the test scripts, a source the test feeds frame by frame,
// and a history that records what was saved and when.

// --- the service -----------------------------------------------------------

// fakeStreamer is a scripted service. Each Listen call takes the next
// entry of script (nil or past the end: the connection opens); while
// hold is set, Listen waits until it is released or the dial is
// cancelled.
type fakeStreamer struct {
	mu      sync.Mutex
	script  []error
	dials   int
	dialAt  []time.Time
	streams []*fakeStream
	hold    chan struct{} // closed to release held dials; nil when not holding
	// autoClose makes each stream answer CloseStream with a final over
	// the audio not yet finalized, then Metadata and the end of stream.
	autoClose bool
	// pongs, when set, is where each stream's Ping waits for the test's
	// answer (nil: a pong); unset, a Ping is answered at once. noPong
	// makes every Ping fail: the service is gone.
	pongs  chan error
	noPong bool
	// now, when set, is the clock dialAt reads; unset, the real one.
	now func() time.Time
}

func newFakeStreamer(script ...error) *fakeStreamer {
	return &fakeStreamer{script: script, autoClose: true}
}

// Listen implements sessions.Streamer.
func (f *fakeStreamer) Listen(ctx context.Context, opts api.ListenOptions) (sessions.ListenStream, error) {
	f.mu.Lock()
	i := f.dials
	f.dials++
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	f.dialAt = append(f.dialAt, now())
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if i < len(f.script) && f.script[i] != nil {
		return nil, f.script[i]
	}
	s := &fakeStream{opts: opts, msgs: make(chan fakeMsg, 256), closed: make(chan struct{})}
	f.mu.Lock()
	s.autoClose, s.pongs, s.noPong = f.autoClose, f.pongs, f.noPong
	f.streams = append(f.streams, s)
	f.mu.Unlock()
	return s, nil
}

// holdDials makes the following dials wait until releaseDials.
func (f *fakeStreamer) holdDials() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = make(chan struct{})
}

func (f *fakeStreamer) releaseDials() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold != nil {
		close(f.hold)
		f.hold = nil
	}
}

func (f *fakeStreamer) dialCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials
}

// stream returns the i-th connection that opened, waiting for it.
func (f *fakeStreamer) stream(t *testing.T, i int) *fakeStream {
	t.Helper()
	var s *fakeStream
	eventually(t, fmt.Sprintf("connection %d to open", i), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.streams) > i {
			s = f.streams[i]
			return true
		}
		return false
	})
	return s
}

// op is something a client did on a stream.
type op struct {
	kind string // "audio", "KeepAlive", "Finalize", "CloseStream", "Ping"
	at   time.Time
	n    int // bytes, for audio
	off  int // offset of the audio in what the stream received
}

type fakeMsg struct {
	msg api.ListenMessage
	err error
}

// fakeStream is one connection of fakeStreamer. It records every byte
// and control message in order; the test answers with results.
type fakeStream struct {
	opts      api.ListenOptions
	msgs      chan fakeMsg
	closed    chan struct{}
	autoClose bool
	pongs     chan error
	noPong    bool

	mu        sync.Mutex
	ops       []op
	audio     []byte
	dropped   error   // set by drop: every later call fails with it
	cursor    float64 // end of the last final, in stream seconds
	closeOnce sync.Once
}

func (s *fakeStream) record(o op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped != nil {
		return s.dropped
	}
	select {
	case <-s.closed:
		return api.ErrClosed
	default:
	}
	o.at = time.Now()
	s.ops = append(s.ops, o)
	return nil
}

// Send implements sessions.ListenStream.
func (s *fakeStream) Send(_ context.Context, b []byte) error {
	if len(b) == 0 {
		return api.ErrEmptyAudio
	}
	s.mu.Lock()
	off := len(s.audio)
	s.mu.Unlock()
	if err := s.record(op{kind: "audio", n: len(b), off: off}); err != nil {
		return err
	}
	s.mu.Lock()
	s.audio = append(s.audio, b...)
	s.mu.Unlock()
	return nil
}

// KeepAlive implements sessions.ListenStream.
func (s *fakeStream) KeepAlive(context.Context) error { return s.record(op{kind: api.TypeKeepAlive}) }

// Finalize implements sessions.ListenStream: the service answers with a
// final over the audio it has, marked from_finalize.
func (s *fakeStream) Finalize(context.Context) error {
	if err := s.record(op{kind: api.TypeFinalize}); err != nil {
		return err
	}
	s.finalRest(true)
	return nil
}

// CloseStream implements sessions.ListenStream.
func (s *fakeStream) CloseStream(context.Context) error {
	if err := s.record(op{kind: api.TypeCloseStream}); err != nil {
		return err
	}
	if s.autoClose {
		s.finalRest(false)
		s.push(&api.Metadata{Type: api.TypeMetadata})
		s.end(io.EOF)
	}
	return nil
}

// Ping implements sessions.ListenStream.
func (s *fakeStream) Ping(ctx context.Context) error {
	if err := s.record(op{kind: "Ping"}); err != nil {
		return err
	}
	if s.noPong {
		return errors.New("no pong")
	}
	if s.pongs == nil {
		return nil
	}
	select {
	case err := <-s.pongs:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Next implements sessions.ListenStream.
func (s *fakeStream) Next(ctx context.Context) (api.ListenMessage, error) {
	select {
	case m := <-s.msgs:
		if m.err != nil {
			// The end stays the end for every later call.
			s.msgs <- m
		}
		return m.msg, m.err
	case <-s.closed:
		return nil, api.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close implements sessions.ListenStream.
func (s *fakeStream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

func (s *fakeStream) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

func (s *fakeStream) push(m api.ListenMessage) { s.msgs <- fakeMsg{msg: m} }

// end ends the stream as the service would: Next returns err.
func (s *fakeStream) end(err error) { s.msgs <- fakeMsg{err: err} }

// drop breaks the connection: Next returns err and every call fails.
func (s *fakeStream) drop(err error) {
	s.mu.Lock()
	s.dropped = err
	s.mu.Unlock()
	s.end(err)
}

// received returns a copy of the audio the stream received.
func (s *fakeStream) received() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.audio)
}

func (s *fakeStream) receivedLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.audio)
}

// opsOf returns the client's operations of a kind ("" for all).
func (s *fakeStream) opsOf(kind string) []op {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []op
	for _, o := range s.ops {
		if kind == "" || o.kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// final sends a final result from start for dur stream seconds, with
// words (each one word of text).
func (s *fakeStream) final(start, dur float64, ws ...api.Word) {
	s.mu.Lock()
	s.cursor = max(s.cursor, start+dur)
	s.mu.Unlock()
	s.push(results(start, dur, true, ws...))
}

// finalRest sends a final over the audio received since the last final:
// one word "rest" across it, or none when there is no audio left.
func (s *fakeStream) finalRest(fromFinalize bool) {
	s.mu.Lock()
	start := s.cursor
	end := float64(len(s.audio)/2) / 16000
	s.cursor = max(end, start)
	s.mu.Unlock()
	var ws []api.Word
	if end-start >= 0.1 {
		ws = []api.Word{{Word: "rest", Start: start, End: end, Confidence: 0.9}}
	}
	r := results(start, max(end-start, 0), true, ws...)
	r.FromFinalize = fromFinalize
	s.push(r)
}

// results builds a Results message whose transcript is its words.
func results(start, dur float64, final bool, ws ...api.Word) *api.Results {
	text := ""
	for i, w := range ws {
		if i > 0 {
			text += " "
		}
		text += w.Text()
	}
	if ws == nil {
		ws = []api.Word{}
	}
	return &api.Results{
		Type:     api.TypeResults,
		Start:    start,
		Duration: dur,
		IsFinal:  final,
		Channel:  api.ResultsChannel{Alternatives: []api.Alternative{{Transcript: text, Confidence: 0.9, Words: ws}}},
	}
}

// word is a word of text from start to end, with an optional speaker.
func word(text string, start, end float64, speaker ...int) api.Word {
	w := api.Word{Word: text, Start: start, End: end, Confidence: 0.9}
	if len(speaker) > 0 {
		w.Speaker = &speaker[0]
	}
	return w
}

// --- the source ------------------------------------------------------------

// pushSource is an audio source the test feeds: Read returns the frames
// pushed, in order, and io.EOF once finish is called and they are read.
type pushSource struct {
	format audio.Format
	frames chan []int16
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	pushed []int16 // everything pushed, for comparisons
}

func newPushSource(f audio.Format) *pushSource {
	return &pushSource{format: f, frames: make(chan []int16, 4096), done: make(chan struct{})}
}

func (p *pushSource) Format() audio.Format { return p.format }

func (p *pushSource) Read(ctx context.Context) ([]int16, error) {
	select {
	case <-p.done:
		return nil, audio.ErrSourceClosed
	default:
	}
	select {
	case f, ok := <-p.frames:
		if !ok {
			return nil, io.EOF
		}
		return f, nil
	case <-p.done:
		return nil, audio.ErrSourceClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pushSource) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// push feeds samples in frames of frameLen sample frames.
func (p *pushSource) push(samples []int16, frameLen int) {
	p.mu.Lock()
	p.pushed = append(p.pushed, samples...)
	p.mu.Unlock()
	step := frameLen * p.format.Channels
	for len(samples) > 0 {
		n := min(step, len(samples))
		p.frames <- slices.Clone(samples[:n])
		samples = samples[n:]
	}
}

// finish ends the source after the frames pushed so far.
func (p *pushSource) finish() { close(p.frames) }

// ramp returns n samples of a pattern that never repeats within ten
// minutes at 16 kHz, starting at sample from, so any stretch of audio
// shows where in the session it came from.
func ramp(from, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		k := from + i
		out[i] = int16(k%30011 - 15000 + k/30011%7)
	}
	return out
}

// pcmBytes is samples as linear16 bytes.
func pcmBytes(samples []int16) []byte { return audio.Int16ToBytes(nil, samples) }

// --- the history -----------------------------------------------------------

// fakeHistory records what a session saves. fail, when set, makes
// CreateSession fail with it.
type fakeHistory struct {
	mu       sync.Mutex
	fail     error
	sessions []store.Session
	segments []store.Segment
	finished []finishCall
}

type finishCall struct {
	id       int64
	duration float64
	status   string
	errText  string
}

func (h *fakeHistory) CreateSession(_ context.Context, s store.Session) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return 0, h.fail
	}
	h.sessions = append(h.sessions, s)
	return int64(len(h.sessions)), nil
}

func (h *fakeHistory) AddSegment(_ context.Context, g store.Segment) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.segments = append(h.segments, g)
	return int64(len(h.segments)), nil
}

func (h *fakeHistory) FinishSession(_ context.Context, id int64, _ time.Time, duration float64, status, errText string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finished = append(h.finished, finishCall{id: id, duration: duration, status: status, errText: errText})
	return nil
}

func (h *fakeHistory) hasSegment(seq int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.segments {
		if g.Seq == seq {
			return true
		}
	}
	return false
}

func (h *fakeHistory) finishes() []finishCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.finished)
}

func (h *fakeHistory) segmentList() []store.Segment {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.segments)
}

// --- events ----------------------------------------------------------------

// recorder reads a session's events until the channel closes. onFinal,
// when set, runs for each final as it is read.
type recorder struct{ *eventLog }

func record(c *sessions.Captions, onFinal func(sessions.Caption)) *recorder {
	return &recorder{logEvents(c.Events(), func(ev sessions.Event) {
		if f, ok := ev.(*sessions.FinalEvent); ok && onFinal != nil {
			onFinal(f.Caption)
		}
	})}
}

func (r *recorder) finals() []sessions.Caption {
	var out []sessions.Caption
	for _, ev := range r.all() {
		if f, ok := ev.(*sessions.FinalEvent); ok {
			out = append(out, f.Caption)
		}
	}
	return out
}

func (r *recorder) states() []sessions.StateEvent {
	var out []sessions.StateEvent
	for _, ev := range r.all() {
		if s, ok := ev.(*sessions.StateEvent); ok {
			out = append(out, *s)
		}
	}
	return out
}

// waitState waits for a state event that satisfies ok and returns it.
func (r *recorder) waitState(t *testing.T, what string, ok func(sessions.StateEvent) bool) sessions.StateEvent {
	t.Helper()
	ev := r.first(t, what, func(ev sessions.Event) bool {
		s, is := ev.(*sessions.StateEvent)
		return is && ok(*s)
	})
	return *ev.(*sessions.StateEvent)
}

// waitFinals waits until n finals have been delivered.
func (r *recorder) waitFinals(t *testing.T, n int) []sessions.Caption {
	t.Helper()
	r.until(t, fmt.Sprintf("%d finals", n), func([]sessions.Event) bool { return len(r.finals()) >= n })
	return r.finals()
}

func isState(s sessions.State) func(sessions.StateEvent) bool {
	return func(e sessions.StateEvent) bool { return e.State == s }
}

// eventually waits until cond holds, looking again at each millisecond,
// for something that no event reports (a fake stream's or the proxy's
// state). It gives up after patience: only a fault takes that long.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", patience, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// errLost is how a dropped connection shows in Next.
var errLost = fmt.Errorf("connection lost: %w", io.ErrUnexpectedEOF)

// stopped stops c, failing t when Stop does not return in time.
func stopped(t *testing.T, c *sessions.Captions) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Stop() }()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("Stop did not return")
		return errors.New("unreachable")
	}
}
