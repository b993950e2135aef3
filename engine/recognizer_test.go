package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/clock"
)

// newTestClock returns a fake clock for an engine under test.
func newTestClock() *clock.Fake { return clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)) }

// waitArmed waits until a timer is waiting on clk: the engine arms the
// idle release when the handler of a request gives its decoder back,
// which can come just after the client has its answer.
func waitArmed(t *testing.T, ctx context.Context, clk *clock.Fake) {
	t.Helper()
	if !clk.WaitForWaiters(1, ctx.Done()) {
		t.Fatal("the idle release was never armed")
	}
}

// lazyEngine starts an engine whose idle release runs on clk. Its
// streams' idle window is a day, so that moving clk releases the
// recogniser without closing a stream.
func lazyEngine(t *testing.T, clk *clock.Fake, cfg Config) *Local {
	t.Helper()
	cfg.Clock = clk
	cfg.IdleTimeout = 24 * time.Hour
	return startEngine(t, cfg)
}

// recognizerState is what the tests check of a recogniser.
type recognizerState struct {
	ready           bool
	loads, releases int
	inUse, decoders int
	pools           int
}

func stateOf(l *Local) recognizerState {
	r := l.Engine.asr
	n := r.decoders()
	r.mu.Lock()
	defer r.mu.Unlock()
	return recognizerState{ready: r.ready, loads: r.loads, releases: r.releases, inUse: r.inUse, decoders: n, pools: len(r.pools)}
}

// transcribeWAV transcribes a WAV file in one batch request.
func transcribeWAV(ctx context.Context, l *Local, wav []byte) (string, error) {
	c, err := api.NewClient(api.Config{Endpoint: l.Endpoint(), APIKey: l.Key, HTTPClient: &http.Client{}})
	if err != nil {
		return "", err
	}
	resp, err := c.Transcribe(ctx, bytes.NewReader(wav), "audio/wav", api.ListenOptions{})
	if err != nil {
		return "", err
	}
	return resp.Results.Channels[0].Alternatives[0].Transcript, nil
}

// streamTranscript streams samples on /v1/listen and returns the finals'
// text.
func streamTranscript(ctx context.Context, l *Local, samples []int16) (string, error) {
	c, err := api.NewClient(api.Config{Endpoint: l.Endpoint(), APIKey: l.Key, HTTPClient: &http.Client{}})
	if err != nil {
		return "", err
	}
	s, err := c.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		return "", err
	}
	defer s.Close()
	if err := streamAudio(ctx, s, pcmBytes(samples), 3200, 0); err != nil {
		return "", err
	}
	if err := s.CloseStream(ctx); err != nil {
		return "", err
	}
	msgs, err := drain(ctx, s)
	if !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("stream ended with %v after %v", err, types(msgs))
	}
	return joinFinals(msgs), nil
}

// turnsTranscript streams samples on /v2/listen and returns the words of
// the last turn that ended.
func turnsTranscript(ctx context.Context, l *Local, samples []int16) (string, error) {
	c, err := api.NewClient(api.Config{Endpoint: l.Endpoint(), APIKey: l.Key, HTTPClient: &http.Client{}})
	if err != nil {
		return "", err
	}
	s, err := c.Turns(ctx, api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16", SampleRate: 16000})
	if err != nil {
		return "", err
	}
	defer s.Close()
	pcm := pcmBytes(samples)
	for off := 0; off < len(pcm); off += 3200 {
		if err := s.Send(ctx, pcm[off:min(off+3200, len(pcm))]); err != nil {
			return "", err
		}
	}
	if err := s.CloseStream(ctx); err != nil {
		return "", err
	}
	var text string
	for {
		m, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			return text, nil
		}
		if err != nil {
			return "", err
		}
		if ti, ok := m.(*api.TurnInfo); ok && ti.Event == api.EventEndOfTurn {
			text = ti.Transcript
		}
	}
}

// TestRecognizerNotLoadedForModels checks that an engine starts without
// its recogniser, and that what the app shows at start-up (the model
// list, a model's record, a grant) does not load it.
func TestRecognizerNotLoadedForModels(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{})
	ctx := testContext(t, time.Minute)
	if l.RecognizerReady() {
		t.Fatal("ready at start")
	}
	c := newClient(t, l)
	list, err := c.Models(ctx, false)
	if err != nil || len(list.STT) == 0 {
		t.Fatalf("Models: %v, %+v", err, list)
	}
	for _, path := range []string{api.PathModels, api.PathModels + "/nova-3", api.PathModels + "/" + api.ModelFluxGeneralEN} {
		if a := do(t, l, http.MethodGet, path, tokenAuth(l), nil, nil); a.status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, a.status, a.body)
		}
	}
	if _, err := c.Grant(ctx, time.Minute); err != nil {
		t.Errorf("Grant: %v", err)
	}
	if st := stateOf(l); st.ready || st.loads != 0 || st.decoders != 0 || l.RecognizerReady() {
		t.Errorf("after the model list: %+v, want nothing loaded", st)
	}
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers armed with nothing loaded", n)
	}
}

// TestRecognizerLazyLoad checks the recogniser's life: loaded by the first
// transcription, kept while a stream uses it however long that takes,
// released once idle for the release time (moved by fake timers), and
// loaded again, giving the same words, by the next transcription of each
// kind.
func TestRecognizerLazyLoad(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{})
	ctx := testContext(t, 3*time.Minute)
	clip := clipSamples(t, "0880")
	wav := wavBytes(t, clip, 16000, 1)
	want := batchTranscript(t, "0880").Results.Channels[0].Alternatives[0].Transcript

	// The first transcription after a cold start loads and transcribes.
	got, err := transcribeWAV(ctx, l, wav)
	if err != nil {
		t.Fatalf("first transcription: %v", err)
	}
	if got != want {
		t.Errorf("first transcription after a cold start %q, want %q", got, want)
	}
	waitArmed(t, ctx, clk)
	// A batch request loads the batch decoder alone: each holds the
	// whole model, and a file has no use for a stream's.
	if st := stateOf(l); !st.ready || st.loads != 1 || st.decoders != 1 || st.inUse != 0 {
		t.Errorf("after the first transcription: %+v, want ready, one load, one decoder", st)
	}
	if n := clk.Waiters(); n != 1 {
		t.Errorf("%d timers armed, want the idle release", n)
	}

	// Short of the release time nothing happens.
	clk.Advance(DefaultIdleRelease - time.Second)
	if !l.RecognizerReady() {
		t.Fatal("released before the release time")
	}

	// A stream in progress holds the recogniser however long it lasts.
	s := openStream(t, ctx, l, linear16(api.ListenOptions{}))
	if err := streamAudio(ctx, s, pcmBytes(clip[:len(clip)/2]), 3200, 0); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if st := stateOf(l); !st.ready || st.inUse != 1 || st.releases != 0 {
		t.Fatalf("with a stream open an hour: %+v, want ready and in use", st)
	}
	if err := streamAudio(ctx, s, pcmBytes(clip[len(clip)/2:]), 3200, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := drain(ctx, s)
	if !errors.Is(err, io.EOF) || joinFinals(msgs) == "" {
		t.Fatalf("the stream ended with %v, finals %q", err, joinFinals(msgs))
	}

	// Then, idle for the release time, the decoders go; each kind of
	// transcription loads them again and gives the same words.
	for i, tc := range []struct {
		name       string
		transcribe func() (string, error)
		want       string
	}{
		{"batch", func() (string, error) { return transcribeWAV(ctx, l, wav) }, want},
		{"/v1/listen stream", func() (string, error) { return streamTranscript(ctx, l, clip) }, joinFinals(msgs)},
		{"/v2/listen", func() (string, error) { return turnsTranscript(ctx, l, append(clip, silence(t, 24000)...)) }, ""},
	} {
		waitArmed(t, ctx, clk)
		clk.Advance(DefaultIdleRelease)
		if st := stateOf(l); st.ready || st.releases != i+1 || st.decoders != 0 || st.pools != 0 || l.RecognizerReady() {
			t.Fatalf("idle for %v before the %s: %+v, want released", DefaultIdleRelease, tc.name, st)
		}
		got, err := tc.transcribe()
		if err != nil {
			t.Fatalf("%s after the release: %v", tc.name, err)
		}
		if tc.want != "" && got != tc.want || got == "" {
			t.Errorf("%s after the release: %q, want %q", tc.name, got, tc.want)
		}
		if st := stateOf(l); !st.ready || st.loads != i+2 {
			t.Errorf("after the %s: %+v, want ready after load %d", tc.name, st, i+2)
		}
	}
}

// TestReleaseBatch: with ReleaseBatch, as the app's engine runs, a batch
// request's decoder is closed as soon as the request is recognised, and
// the recogniser is cold again with no timer armed; the next request
// loads it and gives the same words. Streams' decoders, warmed for live
// captions, stay for the idle release time while batch ones come and go.
// (The app carried the model's 95 MB through the end of a file's
// transcription, while its transcript and audio were saved and shown.)
func TestReleaseBatch(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{Recognizer: RecognizerConfig{ReleaseBatch: true}})
	ctx := testContext(t, 3*time.Minute)
	wav := wavBytes(t, clipSamples(t, "0880"), 16000, 1)
	want := batchTranscript(t, "0880").Transcript()
	for i := range 2 {
		got, err := transcribeWAV(ctx, l, wav)
		if err != nil || got != want {
			t.Fatalf("transcription %d: %q, %v; want %q", i+1, got, err, want)
		}
		if st := stateOf(l); st.ready || st.decoders != 0 || st.pools != 0 || st.inUse != 0 || st.loads != i+1 || st.releases != i+1 {
			t.Errorf("after transcription %d: %+v, want the decoder released", i+1, st)
		}
		if n := clk.Waiters(); n != 0 {
			t.Errorf("after transcription %d: %d timers armed, want none", i+1, n)
		}
	}
	// Warmed for live captions, the stream's decoder stays.
	if err := l.WarmRecognizer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := transcribeWAV(ctx, l, wav); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(l); !st.ready || st.pools != 1 || st.decoders != 1 || st.inUse != 0 {
		t.Errorf("warmed, then a batch request: %+v, want the stream's decoder alone", st)
	}
	if n := clk.Waiters(); n != 1 {
		t.Fatalf("%d timers armed, want the idle release", n)
	}
	clk.Advance(DefaultIdleRelease - time.Second)
	if !l.RecognizerReady() {
		t.Error("the stream's decoder released before the idle release time")
	}
	clk.Advance(time.Second)
	if l.RecognizerReady() {
		t.Error("the stream's decoder kept past the idle release time")
	}
}

// TestRecognizerConcurrentFirstUse checks that on a cold engine the first
// requests of every kind, and the app's warm-up, arriving together share
// one load, and each is served.
func TestRecognizerConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{})
	ctx := testContext(t, 3*time.Minute)
	clip := clipSamples(t, "0880")
	wav := wavBytes(t, clip, 16000, 1)
	want := batchTranscript(t, "0880").Results.Channels[0].Alternatives[0].Transcript

	start := make(chan struct{})
	type result struct {
		name, text string
		err        error
	}
	jobs := []struct {
		name string
		run  func() (string, error)
	}{
		{"WarmRecognizer", func() (string, error) { return "", l.WarmRecognizer(ctx) }},
		{"WarmRecognizer again", func() (string, error) { return "", l.WarmRecognizer(ctx) }},
		{"batch", func() (string, error) { return transcribeWAV(ctx, l, wav) }},
		{"stream", func() (string, error) { return streamTranscript(ctx, l, clip) }},
	}
	results := make(chan result, len(jobs))
	for _, j := range jobs {
		go func() {
			<-start
			text, err := j.run()
			results <- result{j.name, text, err}
		}()
	}
	close(start)
	for range jobs {
		r := <-results
		switch {
		case r.err != nil:
			t.Errorf("%s: %v", r.name, r.err)
		case r.name == "batch" && r.text != want:
			t.Errorf("batch %q, want %q", r.text, want)
		case r.name == "stream" && r.text == "":
			t.Errorf("stream: no words")
		}
	}
	if st := stateOf(l); st.loads != 1 || !st.ready {
		t.Errorf("after concurrent first uses: %+v, want one load", st)
	}
}

// TestWarmRecognizerContext checks that a warm-up whose context ends
// returns at once while the load goes on, and that the next one waits
// for that same load.
func TestWarmRecognizerContext(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{})
	ctx := testContext(t, 2*time.Minute)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WarmRecognizer(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("WarmRecognizer with an ended context: %v", err)
	}
	if err := l.WarmRecognizer(ctx); err != nil {
		t.Fatalf("WarmRecognizer: %v", err)
	}
	if st := stateOf(l); !st.ready || st.loads != 1 || st.decoders != 2 {
		t.Errorf("after two warm-ups: %+v, want ready after one load", st)
	}
	// Warming a loaded recogniser is a use: it re-arms the release.
	waitArmed(t, ctx, clk)
	clk.Advance(DefaultIdleRelease - time.Second)
	if err := l.WarmRecognizer(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	if !l.RecognizerReady() {
		t.Errorf("released %v after a warm-up", 2*time.Second)
	}
	clk.Advance(DefaultIdleRelease)
	if l.RecognizerReady() {
		t.Errorf("ready: want released %v after the warm-up", DefaultIdleRelease)
	}
}

// TestRecognizerReleaseRace runs requests while the test fires every idle
// release the engine arms, at once: the recogniser is released whenever
// no request holds a decoder, and every request must still get a working
// one (-race watches the hand-overs). Warm: -1 makes each load cheap (a
// request builds the one decoder it needs).
func TestRecognizerReleaseRace(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{Recognizer: RecognizerConfig{Warm: -1, IdleRelease: time.Second}})
	ctx := testContext(t, 3*time.Minute)
	clip := clipSamples(t, "0880")[:32000]
	use := func(frames int) error {
		d, release, err := l.Engine.asr.decoder(ctx, frames)
		if err != nil {
			return err
		}
		defer release()
		res, err := d.Transcribe(ctx, clip)
		if err != nil || len(res) == 0 {
			return fmt.Errorf("transcribe: %v, %d results", err, len(res))
		}
		return nil
	}

	// One request after another, each released behind it.
	for i := range 2 {
		if err := use(streamingPostSpeechFrames); err != nil {
			t.Fatal(err)
		}
		waitArmed(t, ctx, clk)
		clk.Advance(time.Second)
		if st := stateOf(l); st.ready || st.releases != i+1 || st.loads != i+1 {
			t.Fatalf("after request %d and the release: %+v", i+1, st)
		}
	}

	// Requests of both pools at once, releases fired as soon as armed:
	// the only timer of this engine is the idle release, and each
	// Advance fires the one armed, if it is not stopped meanwhile.
	done := make(chan struct{})
	fired := make(chan int)
	go func() {
		n := 0
		defer func() { fired <- n }()
		for clk.WaitForWaiters(1, done) {
			clk.Advance(time.Second)
			n++
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, frames := range []int{streamingPostSpeechFrames, batchPostSpeechFrames} {
		wg.Go(func() {
			for range 3 {
				if err := use(frames); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	n := <-fired
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := stateOf(l)
	if st.inUse != 0 || st.releases > n+2 {
		t.Errorf("%+v after %d timers fired", st, n)
	}
	t.Logf("%d loads, %d releases", st.loads, st.releases)
}

// heldBody is a request body that stops before its end until released,
// telling when it is asked for more than it gave.
type heldBody struct {
	first, rest []byte
	asked       chan struct{} // closed when the first part is all read
	release     chan struct{} // closed to let the rest be read
	once        sync.Once
}

func (b *heldBody) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	b.once.Do(func() { close(b.asked) })
	<-b.release
	if len(b.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// TestBatchRecognisesAsItArrives checks that a batch request's audio goes
// to the recogniser as it is read, not into memory until the body ends:
// with part of the body read and the rest still to come, the request's
// decoder is at work (a 2-hour file held 230 MB of 16 kHz samples in the
// engine, and the app, whose engine it is, as much). A batch request
// loads the batch decoder alone.
func TestBatchRecognisesAsItArrives(t *testing.T) {
	t.Parallel()
	clk := newTestClock()
	l := lazyEngine(t, clk, Config{})
	ctx := testContext(t, 2*time.Minute)
	wav := wavBytes(t, clipSamples(t, "0880"), 16000, 1)
	want := batchTranscript(t, "0880").Transcript()
	cut := len(wav) - 16000 // the last half second waits
	body := &heldBody{first: wav[:cut], rest: wav[cut:], asked: make(chan struct{}), release: make(chan struct{})}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1"+api.PathListen, body)
	req.Header.Set("Authorization", tokenAuth(l))
	req.Header.Set("Content-Type", "audio/wav")
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		l.Engine.Handler().ServeHTTP(rec, req)
	}()
	select {
	case <-body.asked:
	case <-served:
		t.Fatalf("answered before the body ended: %d %s", rec.Code, rec.Body)
	case <-ctx.Done():
		t.Fatal("the engine did not read the body")
	}
	if st := stateOf(l); st.inUse != 1 || st.decoders != 1 {
		t.Errorf("with the body read but its end: %+v, want the request's decoder at work, and it alone", st)
	}
	close(body.release)
	<-served
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var resp api.ListenResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.Transcript(); got != want {
		t.Errorf("transcript %q, want %q as from the whole file", got, want)
	}
	if st := stateOf(l); st.inUse != 0 {
		t.Errorf("after the request: %+v, want its decoder given back", st)
	}
}

// TestBatchBodyDecodedInPieces: what a batch body decodes to is handed on
// a small piece at a time, so that the engine's memory does not grow with
// what a piece of the body holds. Ten minutes of FLAC of digital silence,
// the quiet of a recording the app decoded, is 30 KB: decoded as one
// piece, 9.6 million samples, 38 MB as the decoder gives them and 19 MB
// more at 16 kHz. Each decoding runs in a fresh process (this test binary
// again), whose peak resident memory the kernel keeps: ten minutes must
// cost no more than a second does, within a margin.
func TestBatchBodyDecodedInPieces(t *testing.T) {
	if s := os.Getenv("EARSHOT_DECODE_SECONDS"); s != "" {
		seconds, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		decodeSilence(t, seconds)
		return
	}
	t.Parallel()
	peak := func(seconds int) int64 {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBatchBodyDecodedInPieces$")
		cmd.Env = append(os.Environ(), "EARSHOT_DECODE_SECONDS="+strconv.Itoa(seconds))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("decoding %d s: %v\n%s", seconds, err, out)
		}
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // kB
	}
	second, tenMinutes := peak(1), peak(600)
	t.Logf("peak RSS decoding 1 s: %d kB; 10 minutes: %d kB", second, tenMinutes)
	const margin = 64 << 10 // kB: decoding it whole took 190 MB more
	if tenMinutes-second > margin {
		t.Errorf("decoding 10 minutes of FLAC took %d kB more at its peak than 1 s, want at most %d", tenMinutes-second, margin)
	}
}

// decodeSilence decodes seconds of FLAC of digital silence as a batch
// request's body, into the recogniser.
func decodeSilence(t *testing.T, seconds int) {
	l := startEngine(t, Config{})
	ctx := testContext(t, 2*time.Minute)
	var body bytes.Buffer
	enc, err := audio.NewEncoder(ctx, &body, audio.EncodeSpec{Encoding: "flac", SampleRate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	second := make([]int16, 16000)
	for range seconds {
		if err := enc.Write(second); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	plan, err := l.Engine.planListen(url.Values{}, api.Batch)
	if err != nil {
		t.Fatal(err)
	}
	in, err := plan.decode(ctx, &body, time.Hour, l.Engine.channelSinks(plan))
	if in != nil {
		defer in.release()
	}
	if err != nil {
		t.Fatal(err)
	}
	if in.seconds != float64(seconds) || len(in.channels) != 1 || in.channels[0].pcm != nil {
		t.Fatalf("decoded %v s into %d channels; want %d s recognised as it came", in.seconds, len(in.channels), seconds)
	}
}
