package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// shared is the engine most tests talk to: the default configuration
// (idle timeout 10 s, loopback only) with room for the tests that run in
// parallel. Tests that need another Config start their own.
var shared *Local

// sharedMaxConnections leaves room for the streams and requests of the
// tests running at once (-parallel is GOMAXPROCS, 2 here).
const sharedMaxConnections = 16

func TestMain(m *testing.M) {
	// The shared engine loads its recogniser before the tests and keeps it:
	// tests that time the engine measure recognition, not the lazy load,
	// which TestRecognizerLazyLoad and its neighbours check on engines of
	// their own.
	l, err := StartLocal(Config{MaxConnections: sharedMaxConnections, Recognizer: RecognizerConfig{IdleRelease: -1}})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = l.WarmRecognizer(ctx)
		cancel()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "engine tests need the pocketsphinx model (scripts/setup installs it): %v\n", err)
		os.Exit(1)
	}
	shared = l
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		runIdleProbe(l)
	}()
	code := m.Run()
	if err := l.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "closing the shared engine: %v\n", err)
		code = 1
	}
	<-probeDone
	http.DefaultClient.CloseIdleConnections()
	// Every goroutine the module started (the engine's sessions, its audio
	// decoders, the server, the clients' sockets) must be gone once every
	// test and the engine have ended.
	if leaks := leaktest.Report(); leaks != "" {
		fmt.Fprintln(os.Stderr, leaks)
		code = 1
	}
	os.Exit(code)
}

// The idle probe is a stream opened on the shared engine when the run
// starts and left silent: TestStreamIdleDefault checks how the engine ends
// it. Opened early, its 10 s wait runs beside the other tests instead of
// holding one of the run's few parallel places.
var (
	idleProbeDone   = make(chan struct{})
	idleProbeMsgs   []api.ListenMessage
	idleProbeErr    error
	idleProbeLasted time.Duration
)

// runIdleProbe opens the probe and reads it to its end: the engine's idle
// close, or the shared engine's Close when the probe's test is not run.
func runIdleProbe(l *Local) {
	defer close(idleProbeDone)
	c, err := api.NewClient(api.Config{Endpoint: l.Endpoint(), APIKey: l.Key})
	if err != nil {
		idleProbeErr = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	s, err := c.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		idleProbeErr = err
		return
	}
	defer s.Close()
	idleProbeMsgs, idleProbeErr = drain(ctx, s)
	idleProbeLasted = time.Since(start)
}

// startEngine starts an engine of its own for a test and closes it at the
// end of the test.
func startEngine(t *testing.T, cfg Config) *Local {
	t.Helper()
	l, err := StartLocal(cfg)
	if err != nil {
		t.Fatalf("StartLocal: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// testContext is the context of a test, ended by a generous timeout so a
// hung engine fails the test instead of the whole binary.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newClient returns an api client of l authorised with its key.
func newClient(t *testing.T, l *Local) *api.Client {
	t.Helper()
	return newClientWith(t, api.Config{Endpoint: l.Endpoint(), APIKey: l.Key})
}

func newClientWith(t *testing.T, cfg api.Config) *api.Client {
	t.Helper()
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
		t.Cleanup(cfg.HTTPClient.CloseIdleConnections)
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// answer is an HTTP answer read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// legacy decodes the body as the service's {err_code, err_msg,
// request_id} error body, failing the test if it is not one.
func (a answer) legacy(t *testing.T) api.LegacyErrorBody {
	t.Helper()
	var b api.LegacyErrorBody
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.ErrCode == "" || b.ErrMsg == "" {
		t.Fatalf("status %d: body %q is not a legacy error body (%v)", a.status, a.body, err)
	}
	if rid := a.header.Get(api.HeaderRequestID); b.RequestID != rid || rid == "" {
		t.Errorf("error body request_id %q, header %s %q: want the same, non-empty", b.RequestID, api.HeaderRequestID, rid)
	}
	return b
}

// wantError checks an error answer: its status, code and message.
func (a answer) wantError(t *testing.T, status int, code, msg string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d; body %s", a.status, status, a.body)
	}
	b := a.legacy(t)
	if b.ErrCode != code {
		t.Errorf("err_code %q, want %q (err_msg %q)", b.ErrCode, code, b.ErrMsg)
	}
	if msg != "" && b.ErrMsg != msg {
		t.Errorf("err_msg %q, want %q", b.ErrMsg, msg)
	}
}

// do sends a request to l's main host with an Authorization header (none
// when authz is empty) and reads the whole answer.
func do(t *testing.T, l *Local, method, target, authz string, body []byte, header http.Header) answer {
	t.Helper()
	return doURL(t, l.URL.String()+target, method, authz, body, header)
}

func doURL(t *testing.T, u, method, authz string, body []byte, header http.Header) answer {
	t.Helper()
	ctx := testContext(t, 2*time.Minute)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, u, err)
	}
	if resp.Header.Get(api.HeaderRequestID) == "" {
		t.Errorf("%s %s: status %d without a %s header", method, u, resp.StatusCode, api.HeaderRequestID)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// tokenAuth is the Authorization header of l's key.
func tokenAuth(l *Local) string { return "Token " + l.Key.Reveal() }

// post sends a POST with a raw query to path on l.
func post(t *testing.T, l *Local, path, rawQuery string, body []byte, header http.Header) answer {
	t.Helper()
	target := path
	if rawQuery != "" {
		target += "?" + rawQuery
	}
	return do(t, l, http.MethodPost, target, tokenAuth(l), body, header)
}

// postTyped sends a POST with a raw query, a body and its Content-Type
// (none when ctype is empty) to path on the shared engine.
func postTyped(t *testing.T, path, rawQuery string, body []byte, ctype string) answer {
	t.Helper()
	h := http.Header{}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	return post(t, shared, path, rawQuery, body, h)
}

// dialRaw opens a WebSocket to l's /v1/listen with a raw query, as a
// client that checks nothing would. On a refused handshake it returns the
// answer instead of a connection.
func dialRaw(t *testing.T, ctx context.Context, l *Local, rawQuery string, header http.Header) (*websocket.Conn, *answer) {
	t.Helper()
	conn, a := dialPath(t, ctx, l, api.PathListen, rawQuery, header)
	if conn != nil {
		t.Cleanup(func() { conn.CloseNow() })
	}
	return conn, a
}

// dialPath opens a WebSocket to path on l with a raw query and header,
// which carries the key's Authorization unless it sets its own. On a
// refused handshake it returns the answer instead of a connection; the
// caller closes the connection.
func dialPath(t testing.TB, ctx context.Context, l *Local, path, rawQuery string, header http.Header) (*websocket.Conn, *answer) {
	t.Helper()
	u := "ws://" + l.URL.Host + path
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	h := http.Header{}
	for k, vs := range header {
		h[k] = vs
	}
	if h.Get("Authorization") == "" {
		h.Set("Authorization", tokenAuth(l))
	}
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		return conn, nil
	}
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		t.Fatalf("dial %s: %v", u, err)
	}
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	return nil, &answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// The LibriVox recordings shipped by pocketsphinx-testdata: one reader,
// 16 kHz mono 16-bit.
const librivoxDir = "/usr/share/pocketsphinx/test/data/librivox"

var clipIDs = []string{"0870", "0880", "0890", "0920", "0930"}

func clipPath(id string) string {
	return filepath.Join(librivoxDir, "sense_and_sensibility_01_austen_64kb-"+id+".wav")
}

// readFile reads a test file, skipping the test when a system package
// that ships it is missing.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("test file missing (scripts/setup installs it): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clipSamples reads a LibriVox clip's samples; the header is checked so a
// different file fails loudly instead of decoding garbage.
func clipSamples(t testing.TB, id string) []int16 {
	t.Helper()
	b := readFile(t, clipPath(id))
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " ||
		binary.LittleEndian.Uint16(b[20:]) != 1 || binary.LittleEndian.Uint16(b[22:]) != 1 ||
		binary.LittleEndian.Uint32(b[24:]) != 16000 || binary.LittleEndian.Uint16(b[34:]) != 16 ||
		string(b[36:40]) != "data" {
		t.Fatalf("clip %s: not a canonical 16 kHz mono 16-bit WAV file", id)
	}
	return audio.BytesToInt16(nil, b[44:])
}

// wavBytes encodes samples as a WAV file.
func wavBytes(t testing.TB, samples []int16, rate, channels int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := audio.EncodeWAV(&buf, samples, rate, channels); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pcmBytes is samples as raw little-endian linear16.
func pcmBytes(samples []int16) []byte { return audio.Int16ToBytes(nil, samples) }

// silence returns n samples of the recording's background noise: the
// first 100 ms of clip 0880, before the reader speaks, played forwards
// and backwards in turn so that no click joins the copies. Digital zeros
// would confuse the voice detector's noise estimate.
func silence(t testing.TB, n int) []int16 {
	t.Helper()
	fwd := clipSamples(t, "0880")[:1600]
	bwd := slices.Clone(fwd)
	slices.Reverse(bwd)
	out := make([]int16, 0, n)
	for i := 0; len(out) < n; i++ {
		seg := fwd
		if i%2 == 1 {
			seg = bwd
		}
		out = append(out, seg[:min(len(seg), n-len(out))]...)
	}
	return out
}

var (
	cliMu    sync.Mutex
	cliCache = map[string]*cliResult{}
)

type cliResult struct {
	once sync.Once
	text string
	err  error
}

// sphinxCLI returns what pocketsphinx_continuous prints for a WAV file:
// one hypothesis per utterance, joined by spaces. The test is skipped
// when the tool is not installed.
func sphinxCLI(t *testing.T, path string) string {
	t.Helper()
	bin, err := exec.LookPath("pocketsphinx_continuous")
	if err != nil {
		t.Skip("pocketsphinx_continuous is not installed")
	}
	cliMu.Lock()
	r, ok := cliCache[path]
	if !ok {
		r = &cliResult{}
		cliCache[path] = r
	}
	cliMu.Unlock()
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, "-infile", path)
		cmd.Stdout = &out
		if r.err = cmd.Run(); r.err != nil {
			return
		}
		var lines []string
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				lines = append(lines, l)
			}
		}
		r.text = strings.Join(lines, " ")
	})
	if r.err != nil {
		t.Fatalf("pocketsphinx_continuous %s: %v", path, r.err)
	}
	return r.text
}

var (
	batchMu    sync.Mutex
	batchCache = map[string]*batchResult{}
)

type batchResult struct {
	once sync.Once
	resp *api.ListenResponse
	err  error
}

// batchFile returns the shared engine's batch transcription of a file
// with default options, computed once per file for all tests.
func batchFile(t *testing.T, path string) *api.ListenResponse {
	t.Helper()
	body := readFile(t, path)
	batchMu.Lock()
	r, ok := batchCache[path]
	if !ok {
		r = &batchResult{}
		batchCache[path] = r
	}
	batchMu.Unlock()
	r.once.Do(func() {
		c, err := api.NewClient(api.Config{Endpoint: shared.Endpoint(), APIKey: shared.Key})
		if err != nil {
			r.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r.resp, r.err = c.Transcribe(ctx, bytes.NewReader(body), "", api.ListenOptions{})
	})
	if r.err != nil {
		t.Fatalf("batch transcription of %s: %v", path, r.err)
	}
	return r.resp
}

// batchTranscript returns the batch transcription of a LibriVox clip.
func batchTranscript(t *testing.T, id string) *api.ListenResponse {
	t.Helper()
	return batchFile(t, clipPath(id))
}

// streamAudio sends pcm in frames of frameBytes, sleeping pace between
// frames (0: as fast as the socket takes them).
func streamAudio(ctx context.Context, s *api.ListenStream, pcm []byte, frameBytes int, pace time.Duration) error {
	var tick *time.Ticker
	if pace > 0 {
		tick = time.NewTicker(pace)
		defer tick.Stop()
	}
	for off := 0; off < len(pcm); off += frameBytes {
		if err := s.Send(ctx, pcm[off:min(off+frameBytes, len(pcm))]); err != nil {
			return err
		}
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// drain reads a stream to its end and returns every message and the
// error that ended it (io.EOF for a normal close).
func drain(ctx context.Context, s *api.ListenStream) ([]api.ListenMessage, error) {
	var msgs []api.ListenMessage
	for {
		m, err := s.Next(ctx)
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
}

// finals returns the final Results among msgs.
func finals(msgs []api.ListenMessage) []*api.Results {
	var out []*api.Results
	for _, m := range msgs {
		if r, ok := m.(*api.Results); ok && r.IsFinal {
			out = append(out, r)
		}
	}
	return out
}

// joinFinals concatenates the transcripts of the finals.
func joinFinals(msgs []api.ListenMessage) string {
	var parts []string
	for _, r := range finals(msgs) {
		if tr := r.Transcript(); tr != "" {
			parts = append(parts, tr)
		}
	}
	return strings.Join(parts, " ")
}

// types lists the message types, for failure messages.
func types(msgs []api.ListenMessage) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		t := m.MessageType()
		if r, ok := m.(*api.Results); ok {
			t = fmt.Sprintf("Results(final=%v speech_final=%v from_finalize=%v %q)", r.IsFinal, r.SpeechFinal, r.FromFinalize, r.Transcript())
		}
		out = append(out, t)
	}
	return out
}

// openStream opens a /v1/listen stream on l with the api client.
func openStream(t *testing.T, ctx context.Context, l *Local, opts api.ListenOptions) *api.ListenStream {
	t.Helper()
	s, err := newClient(t, l).Listen(ctx, opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// linear16 are the options of a stream of raw 16 kHz linear16 audio.
func linear16(o api.ListenOptions) api.ListenOptions {
	o.Encoding, o.SampleRate = "linear16", 16000
	return o
}

// streamClip streams clip id as linear16 in frames of frameMs, sends
// CloseStream and reads the stream to its end.
func streamClip(t *testing.T, ctx context.Context, l *Local, id string, opts api.ListenOptions, frameMs int) ([]api.ListenMessage, error) {
	t.Helper()
	s := openStream(t, ctx, l, linear16(opts))
	pcm := pcmBytes(clipSamples(t, id))
	if err := streamAudio(ctx, s, pcm, 32*frameMs, 0); err != nil {
		t.Fatalf("send: %v", err)
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	return drain(ctx, s)
}

// checkWords checks the timing and confidence invariants of words.
func checkWords(t *testing.T, ws []api.Word) {
	t.Helper()
	prevEnd := 0.0
	for i, w := range ws {
		if w.Word == "" || !(w.Start < w.End) || w.Start < prevEnd-1e-9 || w.Confidence < 0 || w.Confidence > 1 {
			t.Errorf("word %d %+v: want a word, start < end, start >= previous end %.4f, confidence in [0,1]", i, w, prevEnd)
		}
		prevEnd = w.End
	}
}

// sortedKeys returns the keys of a JSON object, sorted.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
