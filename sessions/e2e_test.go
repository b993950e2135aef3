package sessions_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// End-to-end tests of live captions: a session streams real recordings
// to the local engine on 127.0.0.1, through the fault proxy. They run in
// parallel with each other, after the package's other tests.

// liveSource stands in for a microphone: paced silence, into which the
// test puts speech as if someone started talking.
type liveSource struct {
	silence *audio.Replay

	mu    sync.Mutex // guards queue
	queue []int16
	frame []int16 // returned by Read, reused
}

func newLiveSource(t *testing.T) *liveSource {
	t.Helper()
	s, err := audio.NewSilence(mono16k, audio.ReplayConfig{Paced: true, FrameDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &liveSource{silence: s}
}

func (s *liveSource) Format() audio.Format { return mono16k }

func (s *liveSource) Read(ctx context.Context) ([]int16, error) {
	f, err := s.silence.Read(ctx)
	if err != nil {
		return nil, err
	}
	s.frame = append(s.frame[:0], f...)
	s.mu.Lock()
	n := copy(s.frame, s.queue)
	s.queue = s.queue[n:]
	s.mu.Unlock()
	return s.frame, nil
}

func (s *liveSource) Close() error { return s.silence.Close() }

// speak queues speech to replace the silence that follows.
func (s *liveSource) speak(pcm []int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, pcm...)
}

// spoken reports whether the queued speech has all been read.
func (s *liveSource) spoken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) == 0
}

// truth returns the words of each LibriVox line, as read, from the
// transcription that ships with them.
func truth(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(librivoxDir, "transcription"))
	if os.IsNotExist(err) {
		t.Skipf("test file missing (scripts/setup installs it): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text, file, ok := strings.Cut(sc.Text(), " (")
		if !ok {
			continue
		}
		id := strings.TrimSuffix(file[strings.LastIndex(file, "-")+1:], ")")
		text = strings.TrimSpace(strings.NewReplacer("<s>", "", "</s>", "").Replace(text))
		out[id] = text
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// clientFrame is a WebSocket frame a client sent, unmasked.
type clientFrame struct {
	opcode  byte
	payload []byte
}

// clientFrames decodes the client frames that begin a chunk of upstream
// bytes, stopping at the first that does not fit in it.
func clientFrames(b []byte) []clientFrame {
	var out []clientFrame
	for len(b) >= 2 {
		opcode := b[0] & 0x0f
		masked := b[1]&0x80 != 0
		n := uint64(b[1] & 0x7f)
		b = b[2:]
		switch n {
		case 126:
			if len(b) < 2 {
				return out
			}
			n, b = uint64(binary.BigEndian.Uint16(b)), b[2:]
		case 127:
			if len(b) < 8 {
				return out
			}
			n, b = binary.BigEndian.Uint64(b), b[8:]
		}
		var mask []byte
		if masked {
			if len(b) < 4 {
				return out
			}
			mask, b = b[:4], b[4:]
		}
		if uint64(len(b)) < n {
			return out
		}
		p := append([]byte(nil), b[:n]...)
		for i := range p {
			if mask != nil {
				p[i] ^= mask[i%4]
			}
		}
		out = append(out, clientFrame{opcode: opcode, payload: p})
		b = b[n:]
	}
	return out
}

// streamOptions are the options the app's default settings give a stream.
func streamOptions() api.ListenOptions {
	return api.ListenOptions{Model: "nova-3", Language: "en", Punctuate: true, SmartFormat: true, InterimResults: true}
}

// checkSaved checks that history holds exactly the finals delivered.
func checkSaved(t *testing.T, db *store.DB, id int64, finals []sessions.Caption, status string) {
	t.Helper()
	ctx := testContext(t, 10*time.Second)
	sess, err := db.Session(ctx, id)
	if err != nil {
		t.Fatalf("the session is not in history: %v", err)
	}
	if sess.Status != status || sess.Kind != store.KindCaptions {
		t.Errorf("history has a %s session %s, want captions %s", sess.Kind, sess.Status, status)
	}
	segs, err := db.Segments(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != len(finals) {
		t.Fatalf("history has %d segments, %d finals were delivered", len(segs), len(finals))
	}
	for i, g := range segs {
		f := finals[i]
		if g.Seq != f.Seq || g.Text != f.Text || g.Start != f.Start || g.End != f.End {
			t.Errorf("segment %d is %d %q [%v, %v], the final delivered %d %q [%v, %v]", i, g.Seq, g.Text, g.Start, g.End, f.Seq, f.Text, f.Start, f.End)
		}
	}
}

// TestCaptionsMutedStaysConnected mutes a session for longer than the
// engine lets a silent stream live: KeepAlive messages must hold the one
// connection open, and speech after the unmute must be captioned at its
// place in session time.
func TestCaptionsMutedStaysConnected(t *testing.T) {
	t.Parallel()
	const muteFor = 30 * time.Second
	eng := localEngine(t)
	speech := loadPCM(t, librivoxPath("0880"))
	want := truth(t)["0880"]
	proxy := newFaultProxy(t, eng.URL.Host)
	db := openDB(t)
	ctx := testContext(t, 2*time.Minute)
	src := newLiveSource(t)
	c := sessions.NewCaptions(sessions.CaptionsConfig{
		Streamer:   sessions.ClientStreamer{Client: newClient(t, proxy.endpoint(), eng.Key)},
		Options:    streamOptions(),
		Source:     src,
		History:    db,
		OwnsSource: true,
	})
	rec := record(c, nil)
	started := time.Now()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	rec.waitState(t, "live", isState(sessions.StateLive))

	c.SetMuted(true)
	rec.waitState(t, "muted", isState(sessions.StateMuted))
	mutedAt := time.Now()
	select {
	case <-time.After(muteFor):
	case <-c.Done():
		t.Fatalf("the session ended while muted: %v", c.Stop())
	}
	unmutedAt := time.Now()
	conns := proxy.connections()
	if len(conns) != 1 || !conns[0].isOpen() {
		t.Fatalf("after %v muted: %d connections, the first open %v; want the one still open", muteFor, len(conns), len(conns) > 0 && conns[0].isOpen())
	}
	// While muted only control frames go up, KeepAlive every 3 to 5 s
	// (the ticker's second of resolution and the scheduler may add a
	// little to the 4 s interval).
	var keepAlives []time.Time
	for _, ch := range conns[0].upChunks() {
		if ch.at.Before(mutedAt.Add(500*time.Millisecond)) || ch.at.After(unmutedAt) {
			continue
		}
		frames := clientFrames(ch.data)
		if len(frames) == 0 || ch.n > 200 {
			t.Fatalf("%d bytes went up %v into the mute: not a control message", ch.n, ch.at.Sub(mutedAt))
		}
		for _, f := range frames {
			if f.opcode != 1 || string(f.payload) != `{"type":"KeepAlive"}` {
				t.Errorf("frame %d %q went up while muted, want KeepAlive text", f.opcode, f.payload)
				continue
			}
			keepAlives = append(keepAlives, ch.at)
		}
	}
	if len(keepAlives) < int(muteFor/(5*time.Second)) {
		t.Errorf("%d KeepAlives in %v muted, want one every 3 to 5 s", len(keepAlives), muteFor)
	}
	for i := 1; i < len(keepAlives); i++ {
		if gap := keepAlives[i].Sub(keepAlives[i-1]); gap < 3*time.Second || gap > 5300*time.Millisecond {
			t.Errorf("KeepAlive %d came %v after the one before, want 3 to 5 s", i, gap)
		}
	}

	c.SetMuted(false)
	eventually(t, "live again", func() bool {
		st := rec.states()
		return st[len(st)-1].State == sessions.StateLive
	})
	src.speak(speech)
	spokeAt := time.Since(started).Seconds() // an upper bound of the session time then
	eventually(t, "the speech after the unmute captioned", func() bool {
		return src.spoken() && testkit.WordOverlap(captionsText(rec.finals()), want) >= 0.6
	})
	if err := stopped(t, c); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	rec.wait(t)
	for _, s := range rec.states() {
		if s.State == sessions.StateReconnecting || s.State == sessions.StateFailed {
			t.Errorf("the session went %v (%v)", s.State, s.Err)
		}
	}
	if n := len(proxy.connections()); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	finals := rec.finals()
	got := captionsText(finals)
	if o := testkit.WordOverlap(got, want); o < 0.6 {
		t.Errorf("captions %q match %q at %.2f, want at least 0.6", got, want, o)
	}
	// Session time runs on through the mute: the speech is captioned
	// where it came, after the mute.
	for _, f := range finals {
		if len(f.Words) > 0 && (f.Start < spokeAt-1 || f.Start > spokeAt+float64(len(speech))/16000) {
			t.Errorf("final %q starts at %.2f s; the speech began at about %.2f s", f.Text, f.Start, spokeAt)
		}
	}
	checkSaved(t, db, c.SessionID(), finals, store.StatusDone)
}

// TestCaptionsResumeAfterFaults streams the joined reading through the
// proxy, which cuts the connection twice mid-utterance, then holds the
// reconnection until streams of another client take the engine's two
// slots, so the engine refuses it with 429. (Two slots, not one: a cut
// connection's slot may not be free yet when the session redials.) No final may be lost, and
// the finals' times must run on across the breaks.
func TestCaptionsResumeAfterFaults(t *testing.T) {
	t.Parallel()
	pcm, lines := reading(t)
	want := truth(t)
	const slots = 2
	eng := startEngine(t, engine.Config{MaxConnections: slots})
	ctx := testContext(t, 3*time.Minute)

	// The reference: the same recording, unpaced, without faults.
	ref := runReading(t, ctx, newClient(t, eng.Endpoint(), eng.Key), nil, pcm, nil, nil, nil)
	refText := captionsText(ref)

	proxy := newFaultProxy(t, eng.URL.Host)
	// Cut the first connection 4 s into the first line, the second once
	// it is live again and has carried 3 s of new audio.
	const bytesPerSecond = 2 * 16000
	proxy.setKillAfter(4 * bytesPerSecond)
	db := openDB(t)
	clock := testkit.FastClock{Origin: time.Now(), Factor: 2}
	var blockers []*api.ListenStream
	defer func() {
		for _, b := range blockers {
			b.Close()
		}
	}()
	var (
		c    *sessions.Captions
		recd *recorder
	)
	// The recording from 8 s on waits until the session is live on its
	// second connection, and its last quarter until it is live again
	// after the refusal: however slow the machine, the reconnections
	// happen while there is still speech to send, as they would with a
	// person talking.
	liveAgain, lastQuarter := make(chan struct{}), make(chan struct{})
	gate := &gatedSource{holdAt: 8 * 16000, release: liveAgain, later: []gate{{at: len(pcm) * 3 / 4, release: lastQuarter}}}
	finals := runReading(t, ctx, newClient(t, proxy.endpoint(), eng.Key), db, pcm, clock, gate, func(cs *sessions.Captions, rec *recorder) {
		c, recd = cs, rec
		// The first cut: reconnecting with the unfinalized audio buffered,
		// then live on a second connection.
		first := rec.waitState(t, "reconnecting after the first cut", isState(sessions.StateReconnecting))
		if first.Buffered <= 0 || first.Err == nil {
			t.Errorf("reconnecting with %v buffered, error %v; want audio buffered and why", first.Buffered, first.Err)
		}
		rec.until(t, "live on a second connection", func([]sessions.Event) bool { return liveCount(rec) == 2 })
		close(liveAgain)
		conns := proxy.connections()
		second := conns[len(conns)-1] // the live one: the newest
		resent := second.upBytes()    // the unfinalized audio, sent again
		eventually(t, "new audio on the second connection", func() bool { return second.upBytes() >= resent+3*bytesPerSecond })
		proxy.hold() // the third connection waits at the proxy
		second.close(true)
		eventually(t, "the reconnection after the second cut", func() bool { return proxy.held() == 1 })
		// Another client takes the engine's slots (the cut connection's
		// once the engine has let it go), then the held handshake goes
		// on: the engine refuses it.
		direct := newClient(t, eng.Endpoint(), eng.Key)
		eventually(t, "the engine's slots", func() bool {
			s, err := direct.Listen(ctx, streamOptions())
			if err != nil {
				if !errors.Is(err, api.ErrRateLimited) {
					t.Fatalf("a blocking stream: %v", err)
				}
				return false
			}
			blockers = append(blockers, s)
			return len(blockers) == slots
		})
		proxy.release()
		refused := rec.waitState(t, "a 429", func(s sessions.StateEvent) bool {
			return s.State == sessions.StateReconnecting && errors.Is(s.Err, api.ErrRateLimited)
		})
		if refused.RetryIn < 5*time.Second {
			t.Errorf("after a 429 the session retries in %v, want at least 5 s", refused.RetryIn)
		}
		for _, b := range blockers {
			b.Close()
		}
		blockers = nil
		rec.until(t, "live after the refusal", func([]sessions.Event) bool { return liveCount(rec) == 3 })
		close(lastQuarter)
	})

	// Four handshakes: two connections cut, one refused, one to the end
	// (a refused handshake's connection may be reused for the next).
	conns := proxy.connections()
	if len(conns) < 3 || !conns[0].wasKilled() || !conns[1].wasKilled() {
		t.Errorf("%d connections, want the first two cut", len(conns))
	}
	if hs := requestsTo(proxy, "GET", api.PathListen); len(hs) != 4 {
		t.Errorf("%d handshakes, want 4", len(hs))
	}
	refused := 0 // retries scheduled after a 429 (updates of the buffered audio repeat the error without one)
	for _, s := range recd.states() {
		if errors.Is(s.Err, api.ErrRateLimited) && s.RetryIn > 0 {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d handshakes refused, want 1", refused)
	}
	live := 0
	for _, s := range recd.states() {
		if s.State == sessions.StateLive {
			live++
		}
	}
	if live != 3 {
		t.Errorf("live %d times, want 3: at the start and after each reconnection that got through", live)
	}

	got := captionsText(finals)
	t.Logf("overlap with the run without faults %.2f, with the text read %.2f", testkit.WordOverlap(got, refText), testkit.WordOverlap(got, strings.Join([]string{want["0870"], want["0880"], want["0890"], want["0920"], want["0930"]}, " ")))
	if o := testkit.WordOverlap(got, refText); o < 0.85 {
		t.Errorf("the captions match the run without faults at %.2f, want at least 0.85\n got %q\nwant %q", o, got, refText)
	}
	// Every line is there, at its place in the recording.
	for _, l := range lines {
		var in []string
		for _, f := range finals {
			for _, w := range f.Words {
				if w.Start >= l.start-0.3 && w.End <= l.end+0.3 {
					in = append(in, w.Text())
				}
			}
		}
		text := strings.Join(in, " ")
		t.Logf("line %s: %.2f", l.id, testkit.WordOverlap(text, want[l.id]))
		if o := testkit.WordOverlap(text, want[l.id]); o < 0.5 {
			t.Errorf("line %s [%.1f, %.1f]: the words there %q match %q at %.2f, want at least 0.5", l.id, l.start, l.end, text, want[l.id], o)
		}
	}
	// Times only go forward, across the breaks too.
	for i := 1; i < len(finals); i++ {
		p, f := finals[i-1], finals[i]
		if f.Start < p.Start || f.Start < p.End-0.05 {
			t.Errorf("final %d %q [%.2f, %.2f] goes back before final %d %q [%.2f, %.2f]", i, f.Text, f.Start, f.End, i-1, p.Text, p.Start, p.End)
		}
	}
	total := float64(len(pcm)) / 16000
	for _, f := range finals {
		if f.Start < 0 || f.End > total+0.1 || f.End < f.Start {
			t.Errorf("final %q at [%.2f, %.2f], outside the %.1f s recording", f.Text, f.Start, f.End, total)
		}
	}
	checkSaved(t, db, c.SessionID(), finals, store.StatusDone)
}

// runReading streams pcm to the engine through client (paced by clock
// when it is not nil), saving to db when it is not nil, until the source
// ends, with during running meanwhile, and returns the finals delivered.
func runReading(t *testing.T, ctx context.Context, client *api.Client, db *store.DB, pcm []int16, clock audio.Clock, gate *gatedSource, during func(*sessions.Captions, *recorder)) []sessions.Caption {
	t.Helper()
	var src audio.Source
	src, err := audio.NewReplay(mono16k, pcm, audio.ReplayConfig{Paced: clock != nil, Clock: clock, FrameDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if gate != nil {
		gate.Source = src
		src = gate
	}
	cfg := sessions.CaptionsConfig{
		Streamer:   sessions.ClientStreamer{Client: client},
		Options:    streamOptions(),
		Source:     src,
		OwnsSource: true,
	}
	if db != nil {
		cfg.History = db
	}
	c := sessions.NewCaptions(cfg)
	rec := record(c, nil)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(c, rec)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end with its source")
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	rec.wait(t)
	finals := rec.finals()
	if len(finals) == 0 {
		t.Fatal("no finals")
	}
	return finals
}

// liveCount counts the times a session went live.
func liveCount(rec *recorder) int {
	live := 0
	for _, s := range rec.states() {
		if s.State == sessions.StateLive {
			live++
		}
	}
	return live
}

// gatedSource holds a source's audio from sample holdAt on until release
// is closed, then at each of later's holds in turn.
type gatedSource struct {
	audio.Source
	holdAt  int
	release chan struct{}
	later   []gate
	read    int // only Read touches it: the session reads from one goroutine
}

// gate is a hold of a gatedSource: from sample at on until release is
// closed.
type gate struct {
	at      int
	release chan struct{}
}

func (g *gatedSource) Read(ctx context.Context) ([]int16, error) {
	for g.release != nil && g.read >= g.holdAt {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		g.release = nil
		if len(g.later) > 0 {
			g.holdAt, g.release, g.later = g.later[0].at, g.later[0].release, g.later[1:]
		}
	}
	f, err := g.Source.Read(ctx)
	g.read += len(f)
	return f, err
}

// request is an HTTP request a client sent through the proxy.
type request struct {
	at                  time.Time
	method, path, token string // token: the Authorization header
}

// requestsTo returns the requests with method to path that went through
// p, in the order they were sent. A client writes a request's head in
// one go, so each starts a chunk.
func requestsTo(p *faultProxy, method, path string) []request {
	var out []request
	for _, c := range p.connections() {
		for _, ch := range c.upChunks() {
			head, _, _ := strings.Cut(string(ch.data), "\r\n\r\n")
			reqLine, fields, _ := strings.Cut(head, "\r\n")
			parts := strings.Fields(reqLine)
			if len(parts) != 3 || parts[0] != method || !strings.HasPrefix(parts[1], path) {
				continue
			}
			r := request{at: ch.at, method: parts[0], path: parts[1]}
			for _, f := range strings.Split(fields, "\r\n") {
				if k, v, ok := strings.Cut(f, ":"); ok && strings.EqualFold(k, "Authorization") {
					r.token = strings.TrimSpace(v)
				}
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b request) int { return a.at.Compare(b.at) })
	return out
}
