package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// streamRate is the rate audio is sent at: 16 kHz mono linear16, which
// every model takes and which keeps the unsent buffer small.
const streamRate = 16000

// Defaults of a captions session.
const (
	DefaultKeepAlive = 4 * time.Second  // within the 3 to 5 s the service asks for
	DefaultMaxBuffer = 2 * time.Minute  // unfinalized audio kept for a reconnection
	dialTimeout      = 15 * time.Second // one connection attempt
	closeTimeout     = 10 * time.Second // waiting at Stop for the service to answer
	maxCloseWait     = 2 * time.Minute  // waiting at Stop for the last results, at most
	maxBackoff       = 15 * time.Second // between reconnection attempts
	rateLimitBackoff = 5 * time.Second  // the least wait after a 429
	levelInterval    = 50 * time.Millisecond
)

// CaptionHistory is where a captions session saves itself; *store.DB
// implements it.
type CaptionHistory interface {
	CreateSession(ctx context.Context, s store.Session) (int64, error)
	AddSegment(ctx context.Context, seg store.Segment) (int64, error)
	FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error
}

// CaptionsConfig configures a captions session.
type CaptionsConfig struct {
	// Streamer opens the streams.
	Streamer Streamer
	// Options are the stream's options; the session sets the audio format
	// (linear16, 16 kHz, mono) itself.
	Options api.ListenOptions
	// Source is the microphone or a replayed recording.
	Source audio.Source
	// History, when set, receives the session and every final as it arrives.
	History CaptionHistory
	// Title, SourceName and Backend describe the session in history.
	Title, SourceName, Backend string
	// KeepAlive is the interval of KeepAlive messages while no audio is
	// sent (muted); 0 means DefaultKeepAlive.
	KeepAlive time.Duration
	// MaxBuffer bounds the audio kept for a reconnection; 0 means
	// DefaultMaxBuffer. Older unfinalized audio is dropped beyond it.
	MaxBuffer time.Duration
	// OwnsSource makes the session close Source when it ends.
	OwnsSource bool
	// Logger receives the session's records; nil discards them.
	Logger *slog.Logger
	// Clock times the session (keep-alives, retries, levels, the wait
	// for the last results); nil is the real clock.
	Clock Clock
	// Recognizer, on the local engine, is loaded before the first
	// connection (StateLoading); the audio captured meanwhile is kept and
	// sent once connected.
	Recognizer Recognizer
	// Sides name the channels of a source that has several, such as
	// "You" and "Others" for the microphone and the computer's sound
	// (audio.Pair). With two or more, the source must be 16 kHz with as
	// many channels; they are sent as one multichannel stream, and each
	// caption says its channel and side. Without, the source is mixed to
	// mono.
	Sides []string
	// KeepAudio keeps the audio captured with the session in History,
	// which must also be an AudioHistory, as Ogg Opus (see keepaudio.go):
	// on the captions' clock, muted stretches as silence.
	KeepAudio bool
}

// Captions is a live captions session: audio from a source goes to a
// /v1/listen stream, and what comes back becomes interim text and final
// captions, saved to history as they arrive.
//
// A dropped connection is reopened with backoff (longer after a 429); the
// audio the service had not finalized is sent again, and the new
// connection's timestamps, which restart at zero, are shifted so the
// transcript stays continuous. While muted, no audio is sent and
// KeepAlive messages hold the connection open. While the disk is full,
// the captions go on and wait in memory to be saved, in order, once there
// is room (HistoryEvent says how many wait).
//
// Start, Stop, SetMuted and Events are safe for concurrent use. Events must
// be read until it is closed.
type Captions struct {
	*lifecycle
	cfg    CaptionsConfig
	log    *slog.Logger
	muteCh chan bool

	mu        sync.Mutex // guards sessionID
	sessionID int64
}

// NewCaptions returns a session; Start starts it.
func NewCaptions(cfg CaptionsConfig) *Captions {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultMaxBuffer
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Captions{
		lifecycle: newLifecycle("captions", cfg.Clock),
		cfg:       cfg,
		log:       log,
		muteCh:    make(chan bool, 8),
	}
}

// SessionID returns the session's id in history (0 without history, and
// while a full disk has no room for its entry).
func (c *Captions) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *Captions) setSessionID(id int64) {
	c.mu.Lock()
	c.sessionID = id
	c.mu.Unlock()
}

// SourceName names the audio the session captions (the microphone), as
// history shows it.
func (c *Captions) SourceName() string { return c.cfg.SourceName }

// Start checks the options, records the session and starts capturing and
// streaming in the background. It returns once the work is under way; the
// connection is reported through StateEvents. ctx bounds the whole
// session: cancelling it stops the session like Stop.
func (c *Captions) Start(ctx context.Context) error { return c.start(ctx, c.prepare) }

func (c *Captions) prepare(ctx context.Context) (runFunc, error) {
	if c.cfg.Streamer == nil || c.cfg.Source == nil {
		return nil, errors.New("captions: a streamer and a source are needed")
	}
	opts := c.streamOptions()
	if err := opts.CheckRequest(api.Streaming); err != nil {
		return nil, err
	}
	f := c.cfg.Source.Format()
	channels := 1
	var conv *audio.Converter16kMono
	if n := len(c.cfg.Sides); n > 1 {
		if f.SampleRate != streamRate || f.Channels != n {
			return nil, fmt.Errorf("captions: %d sides need a %d-channel source at %d Hz, not %d channels at %d Hz", n, n, streamRate, f.Channels, f.SampleRate)
		}
		channels = n
	} else {
		var err error
		if conv, err = audio.NewConverter16kMono(f.SampleRate, f.Channels); err != nil {
			return nil, fmt.Errorf("captions: %w", err)
		}
	}
	optJSON, _ := json.Marshal(opts.Query())
	rec := openRecord(ctx, historyOrNil(c.cfg.History), store.Session{
		Kind:    store.KindCaptions,
		Title:   c.cfg.Title,
		Source:  c.cfg.SourceName,
		Backend: c.cfg.Backend,
		Model:   opts.Model,
		Options: string(optJSON),
	}, c.clock, c.log, lateID(c.emit, c.setSessionID))
	c.setSessionID(rec.ID())
	keep, err := newKeptAudio(c.cfg.KeepAudio && rec != nil, c.cfg.History, channels, c.log)
	if err != nil {
		c.log.Warn("captions: the audio will not be kept", "err", err)
	}

	r := &captionsRun{
		c:           c,
		rec:         rec,
		keep:        keep,
		opts:        opts,
		conv:        conv,
		channels:    channels,
		finalizedCh: make([]int64, channels),
		frames:      make(chan []int16, 256),
		dialed:      make(chan dialResult, 1),
		msgs:        make(chan received[connMessage], 64),
	}
	return r.run, nil
}

// historyOrNil keeps a nil CaptionHistory nil as a RecordHistory.
func historyOrNil(h CaptionHistory) RecordHistory {
	if h == nil {
		return nil
	}
	return h
}

// streamOptions are the configured options with the session's audio format.
func (c *Captions) streamOptions() api.ListenOptions {
	o := c.cfg.Options
	o.Encoding = "linear16"
	o.SampleRate = streamRate
	o.Channels = 1
	if n := len(c.cfg.Sides); n > 1 {
		o.Channels, o.Multichannel = n, true
	}
	return o
}

// SetMuted stops (true) or resumes (false) sending audio. While muted
// the connection stays open with KeepAlive messages.
func (c *Captions) SetMuted(muted bool) {
	select {
	case c.muteCh <- muted:
	case <-c.Done():
	}
}

// chunk is audio at streamRate starting at a session sample position.
type chunk struct {
	pos int64
	pcm []int16
}

// anchor maps a connection's sample position to the session's.
type anchor struct{ stream, session int64 }

// connection is one open stream.
type connection struct {
	stream   ListenStream
	anchors  []anchor
	sent     int64 // samples sent on this connection
	lastSend time.Time
	cancel   context.CancelFunc
	closing  bool // CloseStream was sent
}

type dialResult struct {
	stream ListenStream
	err    error
}

// connMessage is a message with the connection it came from, so that
// the run loop can drop what a connection it already left still said.
type connMessage struct {
	conn *connection
	msg  api.ListenMessage
}

// captionsRun is the state of a running session. Only the run loop
// touches it; the capture goroutine, the dialer and each connection's
// receiver talk to it through channels.
type captionsRun struct {
	c    *Captions
	rec  *record
	keep *keptAudio // the audio kept with the session, or nil
	opts api.ListenOptions
	conv *audio.Converter16kMono // nil for a multichannel source, sent as it is
	// channels sent: 1, or len(Sides). Positions count sample frames.
	channels int
	// finalizedCh is how far the finals of each channel reach; finalized
	// is the least of them.
	finalizedCh []int64

	frames chan []int16
	source sourceEnd // how the source ended
	dialed chan dialResult
	msgs   chan received[connMessage]

	wg sync.WaitGroup // capture, dialer and receivers

	conn      *connection
	dialing   bool
	attempt   int
	retry     Timer
	muted     bool
	stopping  bool
	state     State
	captured  int64   // session samples captured so far
	pending   []chunk // unfinalized audio, sent or not
	finalized int64   // session sample up to which finals cover
	seq       int
	model     string // the uuid of the model the service last named, as saved
	dropped   int64  // samples dropped from a full buffer
	lastLevel time.Time
	level     audio.Meter
	lastErr   error
}

func (r *captionsRun) run(ctx context.Context) error {
	c := r.c
	clk := c.clock
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.retry = clk.NewTimer(time.Hour)
	r.retry.Stop()
	keepAlive := clk.NewTicker(c.cfg.KeepAlive / 4)
	defer keepAlive.Stop()
	// While stopping, the session waits for the service to finish what
	// it was sent (see closeWait), giving up after a silence of
	// closeTimeout plus, while connected, twice the audio still to be
	// finalized: a busy machine or service is slow, not gone, and its
	// last lines are kept; an unreachable one is not waited for longer.
	cw := newCloseWait(clk, c.log, "captions")
	defer cw.stop()

	captureCtx, stopCapture := context.WithCancel(ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.capture(captureCtx)
	}()
	defer func() {
		stopCapture()
		if r.conn != nil {
			r.dropConn()
		}
		cancel()
		r.wg.Wait()
		if c.cfg.OwnsSource {
			c.cfg.Source.Close()
		}
	}()

	r.setState(StateConnecting, nil)
	r.dial(ctx)
	frames := r.frames
	stopCh := c.stopping()
	for {
		select {
		case <-ctx.Done():
			r.finish(store.StatusCancelled, nil)
			return ctx.Err()
		case <-stopCh:
			stopCh, frames = nil, nil // handled once
			stopCapture()
			if ended, err := r.beginStop(ctx, cw); ended {
				return err
			}
		case <-cw.silence():
			if ended, err := r.onSilence(ctx, cw); ended {
				return err
			}
		case err := <-cw.pong():
			if why := cw.answered(err, r.closeAfter()); why != nil {
				return r.finishDone(why)
			}
		case <-cw.bound():
			return r.finishDone(ErrServiceSlow)
		case m := <-r.muteCh():
			r.setMuted(ctx, m)
		case pcm, ok := <-frames:
			if !ok {
				frames = nil // the source ended: finish like Stop
				r.source.seen = true
				c.requestStop()
				continue
			}
			r.onAudio(ctx, pcm)
		case d := <-r.dialed:
			r.dialing = false
			r.onDialed(ctx, d)
			if d.err == nil {
				cw.progress(r.closeAfter())
			}
		case <-r.retry.C():
			r.dial(ctx)
		case m := <-r.msgs:
			if ended, err := r.onReceived(ctx, cw, m); ended {
				return err
			}
		case <-keepAlive.C():
			r.keepAlive(ctx)
		case <-r.rec.retry():
			r.rec.retryHeld(ctx)
		}
		if r.state == StateFailed {
			return r.lastErr
		}
	}
}

// closeAfter is how long a stopping session waits for a word from the
// service: closeTimeout, plus, while connected, twice the audio still to
// be finalized.
func (r *captionsRun) closeAfter() time.Duration {
	if r.conn == nil {
		return closeTimeout
	}
	return closeTimeout + 2*r.buffered()
}

// beginStop starts the end of the session, at Stop or at the end of its
// source: the service is asked to finish what it was sent, and the wait
// for it begins. It reports whether the session has ended already, with
// its error: with no connection, and none coming.
func (r *captionsRun) beginStop(ctx context.Context, cw *closeWait) (bool, error) {
	r.stopping = true
	r.setState(StateStopping, nil)
	cw.begin(r.closeAfter())
	if r.conn == nil {
		if r.bufferedSamples() == 0 || !r.dialing && r.attempt == 0 {
			return true, r.finishDone(ErrNotConnected)
		}
		return false, nil // a connection is coming: it will take the audio first
	}
	if err := r.closeStream(ctx); err != nil {
		return true, r.finishDone(err)
	}
	return false, nil
}

// onSilence handles a stopping session's wait that ended without a word
// from the service, and reports whether the session has ended, with its
// error.
func (r *captionsRun) onSilence(ctx context.Context, cw *closeWait) (bool, error) {
	if r.dialing {
		// A connection attempt is under way, bounded by its own timeout:
		// its answer decides whether there is a service to wait for.
		cw.progress(closeTimeout)
		return false, nil
	}
	if r.conn != nil && cw.silent(ctx, &r.wg, r.conn.stream.Ping, r.closeAfter()) {
		return false, nil
	}
	return true, r.finishDone(ErrServiceSilent)
}

// onReceived handles what a connection's reader delivered: a message, or
// the end of the connection. It reports whether the session has ended,
// with its error.
func (r *captionsRun) onReceived(ctx context.Context, cw *closeWait, m received[connMessage]) (bool, error) {
	if m.msg.conn != r.conn {
		return false, nil // from a connection already dropped
	}
	if m.err != nil {
		if r.stopping && r.conn.closing && errors.Is(m.err, io.EOF) {
			return true, r.finishDone(nil) // the service finished
		}
		if r.stopping {
			return true, r.finishDone(m.err)
		}
		r.lost(ctx, m.err)
		return false, nil
	}
	cw.progress(r.closeAfter())
	if err := r.onMessage(ctx, m.msg.msg); err != nil {
		r.finish(store.StatusFailed, err)
		return true, err
	}
	return false, nil
}

func (r *captionsRun) muteCh() <-chan bool { return r.c.muteCh }

// capture reads the source and hands 16 kHz frames to the run loop. When
// the loop falls behind, capture waits; a live source then drops audio in
// its own buffer (the microphone's ring), and a recording simply waits.
func (r *captionsRun) capture(ctx context.Context) {
	defer close(r.frames)
	r.source.err = capture(ctx, r.c.clock, r.c.cfg.Source, r.conv, r.c.log, func(pcm []int16, _ time.Time) bool {
		select {
		case r.frames <- pcm:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// sourceEnd is how a run's source ended: err is set by the capture
// goroutine before it closes the run's frames channel, and read only
// once the run loop has seen that close (seen), so never while the
// capture may still write it.
type sourceEnd struct {
	err  error
	seen bool
}

// failure is why the source failed, once the run has seen it end.
func (s *sourceEnd) failure() error {
	if !s.seen {
		return nil
	}
	return s.err
}

// capture reads src until it ends or fails, converts each frame to 16 kHz
// mono with conv and hands it to out with the time it was read; out
// returns false to stop. At the end of the source it hands on what conv
// still holds (the resampler keeps the last milliseconds). It returns a
// failure of the source other than its end or the context's: the session
// then finishes what it has, and fails with it, rather than look stopped
// by the person.
func capture(ctx context.Context, clk Clock, src audio.Source, conv *audio.Converter16kMono, log *slog.Logger, out func(pcm []int16, at time.Time) bool) error {
	var buf []float32
	for {
		frame, err := src.Read(ctx)
		at := clk.Now()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if conv == nil {
					return nil
				}
				if tail := append([]int16(nil), conv.Flush()...); len(tail) > 0 {
					out(tail, at)
				}
			} else if ctx.Err() == nil {
				log.Warn("audio source failed", "err", err)
				return err
			}
			return nil
		}
		var pcm []int16
		if conv == nil {
			pcm = append([]int16(nil), frame...) // sent as it is
		} else {
			buf = audio.Int16ToFloat32(buf[:0], frame)
			pcm = append([]int16(nil), conv.Convert(buf)...)
		}
		if len(pcm) == 0 {
			continue
		}
		if !out(pcm, at) {
			return nil
		}
	}
}

// frameCount is the sample frames of interleaved pcm.
func (r *captionsRun) frameCount(pcm []int16) int64 { return int64(len(pcm) / r.channels) }

func (r *captionsRun) onAudio(ctx context.Context, pcm []int16) {
	pos := r.captured
	r.captured += r.frameCount(pcm)
	r.keep.add(pcm, r.muted)
	if now := r.c.clock.Now(); now.Sub(r.lastLevel) >= levelInterval {
		r.lastLevel = now
		rms, peak := r.level.Update(pcm)
		r.c.emit(&LevelEvent{RMS: rms, Peak: peak})
	} else {
		r.level.Update(pcm)
	}
	if r.muted {
		return
	}
	ch := chunk{pos: pos, pcm: pcm}
	r.pending = append(r.pending, ch)
	r.trimBuffer()
	if r.conn != nil && !r.conn.closing {
		r.send(ctx, ch)
	} else if r.state == StateReconnecting {
		r.setState(StateReconnecting, r.lastErr)
	}
}

// trimBuffer drops the oldest unfinalized audio beyond MaxBuffer.
func (r *captionsRun) trimBuffer() {
	limit := int64(r.c.cfg.MaxBuffer.Seconds() * streamRate)
	total := r.bufferedSamples()
	for total > limit && len(r.pending) > 0 {
		total -= r.frameCount(r.pending[0].pcm)
		r.dropped += r.frameCount(r.pending[0].pcm)
		r.pending = r.pending[1:]
	}
}

func (r *captionsRun) bufferedSamples() int64 {
	var n int64
	for _, ch := range r.pending {
		if end := ch.pos + r.frameCount(ch.pcm); end > r.finalized {
			n += end - max(ch.pos, r.finalized)
		}
	}
	return n
}

// send puts a chunk on the current connection.
func (r *captionsRun) send(ctx context.Context, ch chunk) {
	conn := r.conn
	pcm := ch.pcm
	pos := ch.pos
	if pos < r.finalized { // partly covered by finals already
		skip := min(r.finalized-pos, r.frameCount(pcm))
		pcm, pos = pcm[skip*int64(r.channels):], pos+skip
	}
	if len(pcm) == 0 {
		return
	}
	if n := len(conn.anchors); n == 0 || conn.anchors[n-1].session+(conn.sent-conn.anchors[n-1].stream) != pos {
		conn.anchors = append(conn.anchors, anchor{stream: conn.sent, session: pos})
	}
	conn.sent += r.frameCount(pcm)
	conn.lastSend = r.c.clock.Now()
	if err := conn.stream.Send(ctx, audio.Int16ToBytes(nil, pcm)); err != nil {
		r.lost(ctx, err)
	}
}

// toSession maps seconds on the current connection to session seconds.
func (r *captionsRun) toSession(conn *connection, t float64) float64 {
	s := int64(t*streamRate + 0.5)
	a := anchor{}
	for _, x := range conn.anchors {
		if x.stream > s {
			break
		}
		a = x
	}
	return float64(a.session+(s-a.stream)) / streamRate
}

func (r *captionsRun) setMuted(ctx context.Context, m bool) {
	if m == r.muted || r.stopping {
		return
	}
	r.muted = m
	if m && r.conn != nil {
		// Let the service finish the words it has; no more audio comes.
		if err := r.conn.stream.Finalize(ctx); err != nil {
			r.lost(ctx, err)
			return
		}
	}
	switch {
	case r.conn == nil:
		r.setState(StateReconnecting, r.lastErr)
	case m:
		r.setState(StateMuted, nil)
	default:
		r.setState(StateLive, nil)
	}
}

// keepAlive holds the connection open while no audio is being sent.
func (r *captionsRun) keepAlive(ctx context.Context) {
	conn := r.conn
	now := r.c.clock.Now()
	if conn == nil || conn.closing || now.Sub(conn.lastSend) < r.c.cfg.KeepAlive {
		return
	}
	conn.lastSend = now
	if err := conn.stream.KeepAlive(ctx); err != nil {
		r.lost(ctx, err)
	}
}

// dial starts a connection attempt in the background.
func (r *captionsRun) dial(ctx context.Context) {
	if r.dialing || r.conn != nil || r.stopping && r.bufferedSamples() == 0 {
		return
	}
	r.dialing = true
	wire := r.rec.wire(ctx) // the record is the run loop's: read here
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		var st ListenStream
		err := warm(ctx, r.c.cfg.Recognizer, r.c.emit)
		dctx, cancel := context.WithTimeout(wire, dialTimeout)
		defer cancel()
		if err == nil {
			st, err = r.c.cfg.Streamer.Listen(dctx, r.opts)
		}
		if err != nil && st != nil {
			st.Close()
			st = nil
		}
		select {
		case r.dialed <- dialResult{stream: st, err: err}:
		case <-ctx.Done():
			if st != nil {
				st.Close()
			}
		}
	}()
}

func (r *captionsRun) onDialed(ctx context.Context, d dialResult) {
	if d.err != nil {
		if permanent(d.err) {
			r.fail(d.err)
			return
		}
		r.retryLater(d.err)
		return
	}
	if r.stopping && r.bufferedSamples() == 0 {
		d.stream.Close()
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	conn := &connection{stream: d.stream, cancel: cancel, lastSend: r.c.clock.Now()}
	r.conn = conn
	r.attempt = 0
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.receive(rctx, conn)
	}()
	// Send again what the service had not finalized, then go live.
	for _, ch := range r.pending {
		if r.conn != conn {
			return // lost while resending
		}
		r.send(ctx, ch)
	}
	if r.stopping {
		if err := r.closeStream(ctx); err != nil {
			r.lost(ctx, err)
		}
		return
	}
	if r.muted {
		r.setState(StateMuted, nil)
	} else {
		r.setState(StateLive, nil)
	}
}

// closeStream asks the service to finish what it was sent and close.
func (r *captionsRun) closeStream(ctx context.Context) error {
	r.conn.closing = true
	return r.conn.stream.CloseStream(ctx)
}

// receive moves a connection's messages to the run loop.
func (r *captionsRun) receive(ctx context.Context, conn *connection) {
	pump(ctx, r.c.clock, func(ctx context.Context) (connMessage, error) {
		for {
			m, err := conn.stream.Next(ctx)
			if err != nil || m != nil {
				return connMessage{conn: conn, msg: m}, err
			}
		}
	}, r.msgs)
}

// lost drops the current connection and schedules a new one.
func (r *captionsRun) lost(ctx context.Context, err error) {
	if r.conn == nil {
		return
	}
	r.c.log.Info("captions: connection lost", "err", err)
	r.dropConn()
	if errors.Is(err, io.EOF) {
		err = errors.New("the service closed the connection")
	}
	if permanent(err) {
		r.fail(err)
		return
	}
	r.retryLater(err)
}

func (r *captionsRun) dropConn() {
	conn := r.conn
	r.conn = nil
	conn.cancel()
	conn.stream.Close()
}

// retryLater waits before the next attempt: exponential with jitter, and
// at least rateLimitBackoff after a 429.
func (r *captionsRun) retryLater(err error) {
	r.lastErr = err
	r.attempt++
	d := min(250*time.Millisecond<<min(r.attempt-1, 8), maxBackoff)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	if errors.Is(err, api.ErrRateLimited) {
		// After the jitter: the least wait must hold whatever was drawn.
		d = max(d, rateLimitBackoff+time.Duration(rand.Int64N(int64(rateLimitBackoff/2)+1)))
	}
	r.retry.Reset(d)
	r.c.emit(&StateEvent{State: StateReconnecting, Buffered: r.buffered(), Attempt: r.attempt, RetryIn: d, Err: err})
	r.state = StateReconnecting
}

func (r *captionsRun) buffered() time.Duration {
	return time.Duration(r.bufferedSamples()) * time.Second / streamRate
}

// permanent reports errors that another attempt would not fix: refused
// credentials or options.
func permanent(err error) bool {
	var e *api.Error
	if errors.As(err, &e) && (e.Status == 400 || e.Status == 401 || e.Status == 402 || e.Status == 403 || e.Status == 404) {
		return true
	}
	return errors.Is(err, api.ErrInvalidOptions) || errors.Is(err, api.ErrUnauthorized)
}

func (r *captionsRun) fail(err error) {
	r.lastErr = err
	r.finish(store.StatusFailed, err)
}

func (r *captionsRun) onMessage(ctx context.Context, m api.ListenMessage) error {
	conn := r.conn
	switch msg := m.(type) {
	case *api.Results:
		if len(msg.Channel.Alternatives) == 0 {
			return nil
		}
		alt := msg.Channel.Alternatives[0]
		words := make([]api.Word, len(alt.Words))
		for i, w := range alt.Words {
			w.Start = round3(r.toSession(conn, w.Start))
			w.End = round3(r.toSession(conn, w.End))
			words[i] = w
		}
		start := r.toSession(conn, msg.Start)
		end := r.toSession(conn, msg.Start+msg.Duration)
		channel := 0
		if r.channels > 1 && len(msg.ChannelIndex) == 2 && msg.ChannelIndex[0] >= 0 && msg.ChannelIndex[0] < r.channels {
			channel = msg.ChannelIndex[0]
		}
		side := ""
		if r.channels > 1 {
			side = r.c.cfg.Sides[channel]
		}
		if !msg.IsFinal {
			if alt.Transcript != "" {
				r.c.emit(&InterimEvent{Start: start, End: end, Text: alt.Transcript, Words: words, Channel: channel, Side: side})
			}
			return nil
		}
		r.finalizedCh[channel] = max(r.finalizedCh[channel], int64(end*streamRate+0.5))
		r.finalized = slices.Min(r.finalizedCh)
		r.dropFinalized()
		// The model the service names is kept with the first caption it
		// made, and again whenever it names another: what the export says
		// transcribed the session.
		var named *namedModel
		if u := msg.Metadata.ModelUUID; u != "" && u != r.model {
			r.model = u
			named = &namedModel{UUID: u, Info: msg.Metadata.ModelInfo}
		}
		for _, cap := range splitBySpeaker(words, alt, msg.SpeechFinal) {
			cap.Channel, cap.Side = channel, side
			cap.Seq = r.seq
			r.seq++
			r.save(ctx, cap, named)
			named = nil
			r.c.emit(&FinalEvent{Caption: cap})
		}
	case *api.UtteranceEnd:
		r.c.emit(&UtteranceEndEvent{LastWordEnd: r.toSession(conn, msg.LastWordEnd)})
	case *api.StreamError:
		r.c.log.Warn("captions: the service reported an error", "err", msg.Err())
	}
	return nil
}

// dropFinalized forgets audio the finals now cover.
func (r *captionsRun) dropFinalized() {
	i := 0
	for i < len(r.pending) && r.pending[i].pos+r.frameCount(r.pending[i].pcm) <= r.finalized {
		i++
	}
	r.pending = r.pending[i:]
}

// splitBySpeaker turns a final's words into captions, one per run of a
// speaker. A final without words gives none.
func splitBySpeaker(words []api.Word, alt api.Alternative, speechFinal bool) []Caption {
	if len(words) == 0 {
		return nil
	}
	var out []Caption
	startRun := 0
	for i := 1; i <= len(words); i++ {
		if i < len(words) && sameSpeaker(words[i].Speaker, words[startRun].Speaker) {
			continue
		}
		run := words[startRun:i]
		cap := Caption{
			Start:   run[0].Start,
			End:     run[len(run)-1].End,
			Speaker: run[0].Speaker,
			Words:   run,
		}
		var conf float64
		for j, w := range run {
			if j > 0 {
				cap.Text += " "
			}
			cap.Text += w.Text()
			conf += w.Confidence
		}
		cap.Confidence = conf / float64(len(run))
		out = append(out, cap)
		startRun = i
	}
	if len(out) == 1 && alt.Transcript != "" {
		out[0].Text = alt.Transcript // keep the service's own spacing and punctuation
	}
	out[len(out)-1].SpeechFinal = speechFinal
	return out
}

func sameSpeaker(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// save writes a caption to history as it arrives, with the model the
// service named for it when it is the first of that model's.
func (r *captionsRun) save(ctx context.Context, cap Caption, named *namedModel) {
	h := r.c.cfg.History
	if h == nil {
		return
	}
	words, _ := json.Marshal(cap.Words)
	details := ""
	if d := (captionDetails{Side: cap.Side, Model: named}); d != (captionDetails{}) {
		b, _ := json.Marshal(d)
		details = string(b)
	}
	r.rec.save(ctx, "a caption", func(ctx context.Context, id int64) error {
		_, err := h.AddSegment(ctx, store.Segment{
			SessionID:  id,
			Seq:        cap.Seq,
			Start:      cap.Start,
			End:        cap.End,
			Speaker:    cap.Speaker,
			Text:       cap.Text,
			Words:      string(words),
			Confidence: cap.Confidence,
			Channel:    cap.Channel,
			Details:    details,
		})
		return err
	})
}

func (r *captionsRun) setState(s State, err error) {
	r.state = s
	ev := &StateEvent{State: s, Err: err}
	if s == StateReconnecting {
		ev.Buffered = r.buffered()
		ev.Attempt = r.attempt
	}
	r.c.emit(ev)
}

// finishDone records a session that ended as asked, or with its source:
// a failure when the source failed. why is nil when the service finished
// what it was sent (it closed the stream after CloseStream: the silence
// after the last word may have no final); otherwise audio the finals do
// not cover makes the session partial.
func (r *captionsRun) finishDone(why error) error {
	if lost := r.buffered(); why != nil && lost >= untranscribedMin && r.source.failure() == nil {
		err := &UntranscribedError{Audio: lost, Err: why}
		r.finish(store.StatusPartial, err)
		return err
	}
	r.finish(store.StatusDone, nil)
	return r.source.failure()
}

// finish records the end of the session. Done after the source failed
// is a failure, with the source's error.
func (r *captionsRun) finish(status string, err error) {
	if status == store.StatusDone && r.source.failure() != nil {
		status, err = store.StatusFailed, r.source.failure()
	}
	r.keep.save(r.rec)
	r.rec.finish(status, float64(r.captured)/streamRate, err)
	if status == store.StatusFailed {
		r.setState(StateFailed, err)
		r.state = StateFailed
		return
	}
	r.setState(StateStopped, nil)
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
