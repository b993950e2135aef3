// Package bench_test shows that the official Go SDK of the hosted speech
// service (github.com/deepgram/deepgram-go-sdk/v3) transcribes a file and a
// stream against `earshot serve` with only its host changed. The SDK lives
// in bench's own module so that it never enters the main module.
//
// The tests build the real earshot binary from the repository root once,
// start `earshot serve` on a free loopback port for each test and stop it
// with SIGINT at the end, then use the SDK exactly as its examples do.
package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	restapi "github.com/deepgram/deepgram-go-sdk/v3/pkg/api/listen/v1/rest"
	restresp "github.com/deepgram/deepgram-go-sdk/v3/pkg/api/listen/v1/rest/interfaces"
	wsmsg "github.com/deepgram/deepgram-go-sdk/v3/pkg/api/listen/v1/websocket/interfaces"
	"github.com/deepgram/deepgram-go-sdk/v3/pkg/client/interfaces"
	"github.com/deepgram/deepgram-go-sdk/v3/pkg/client/listen"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
)

const (
	// librivox is where pocketsphinx's package keeps its test clips.
	librivox = "/usr/share/pocketsphinx/test/data/librivox"
	// shortClip is the clip the file test transcribes.
	shortClip = "sense_and_sensibility_01_austen_64kb-0880.wav"
	// shortClipHeard is what pocketsphinx_continuous prints for shortClip
	// with its default model (the package's test-lm.match); the engine
	// runs the same recogniser, so the SDK must see the same words.
	shortClipHeard = "he was not an illness those young man"

	// sampleRate is the rate the stream is sent at, as linear16 mono.
	sampleRate = 16000
)

// binDir holds the earshot binary built for this run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "earshot-sdk-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdk test:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// earshotBinary builds the earshot command from the repository root once
// per run. bench's go.mod replaces the main module with ../, so the root is
// the parent directory.
var earshotBinary = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read the main module's go.mod: %w", err)
	}
	if !bytes.HasPrefix(mod, []byte("module github.com/earshot-app/earshot\n")) {
		return "", fmt.Errorf("%s is not the earshot repository root", root)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go command to build earshot: %w", err)
	}
	bin := filepath.Join(binDir, "earshot")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	cmd.Dir = root
	// The engine is pocketsphinx through cgo.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build earshot: %w\n%s", err, out)
	}
	return bin, nil
})

// needClips skips the test when pocketsphinx's test data is not installed.
func needClips(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(librivox, shortClip)); err != nil {
		t.Skipf("pocketsphinx's test clips are not installed (%v): apt-get install pocketsphinx-testdata", err)
	}
}

// isolateSDK clears the environment variables through which the SDK would
// override what the test sets (DEEPGRAM_HOST would replace the host,
// DEEPGRAM_ACCESS_TOKEN the key, and so on).
func isolateSDK(t *testing.T) {
	for _, k := range []string{
		"DEEPGRAM_API_KEY", "DEEPGRAM_ACCESS_TOKEN", "DEEPGRAM_HOST", "DEEPGRAM_API_VERSION",
		"DEEPGRAM_API_PATH", "DEEPGRAM_SELF_HOSTED", "DEEPGRAM_WEBSOCKET_SKIP_AUTH",
		"DEEPGRAM_WEBSOCKET_REDIRECT", "DEEPGRAM_WEBSOCKET_KEEP_ALIVE",
		"DEEPGRAM_WEBSOCKET_REPLY_AUTO_FLUSH", "DEEPGRAM_DEBUG",
	} {
		t.Setenv(k, "")
	}
}

// server is one `earshot serve` process.
type server struct {
	addr string // host:port of the main host
	key  string
}

// listening is the line serve prints once its main host accepts
// connections.
var listening = regexp.MustCompile(`main host listening on http://(127\.0\.0\.1:\d+)`)

// startServe starts `earshot serve` on a free loopback port with a fresh
// key and stops it (SIGINT, as a person would) when the test ends; it must
// then exit cleanly.
func startServe(t *testing.T) *server {
	t.Helper()
	bin, err := earshotBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	key := "sdk-test-" + hex.EncodeToString(b)

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--key", key, "--log-level", "warn")
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	// The reader owns stdout until EOF, which comes when serve exits.
	addrc := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	stop := func() {
		if err := cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("signal earshot serve: %v", err)
		}
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		select {
		case <-readDone:
		case <-timer.C:
			t.Errorf("earshot serve did not stop within 10 s of SIGINT; killing it")
			_ = cmd.Process.Kill()
			<-readDone
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("earshot serve exited with %v; stderr:\n%s", err, stderr.String())
		}
	}

	select {
	case addr := <-addrc:
		t.Cleanup(stop)
		return &server{addr: addr, key: key}
	case <-readDone:
		err := cmd.Wait()
		t.Fatalf("earshot serve ended before listening (%v); stderr:\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("earshot serve printed no listening line within 30 s; stderr:\n%s", stderr.String())
	}
	return nil
}

// restClient is the SDK's prerecorded client with only its host changed:
// the same two lines as the SDK's examples/speech-to-text/rest/file, with
// Host set to the local engine instead of https://api.deepgram.com.
func (s *server) restClient(t *testing.T, key string) *restapi.Client {
	t.Helper()
	c := listen.NewREST(key, &interfaces.ClientOptions{Host: "http://" + s.addr})
	if c == nil {
		t.Fatal("listen.NewREST returned nil: the SDK refused its options")
	}
	return restapi.New(c)
}

// wsClientOptions are the SDK's client options for the streaming client
// with only the host changed. The SDK needs the scheme in Host to choose
// ws:// over wss://, and it copies Host verbatim into the HTTP Host header
// of the handshake (pkg/client/common/v1/websocket.go), where
// "ws://127.0.0.1:PORT" is malformed and any Go HTTP server answers 400.
// WSHeaderProcessor, the SDK's hook for the handshake's headers, puts back
// the host:port the dialer would have sent by itself. It changes nothing
// but the host: it is the client-side half of the same host change, needed
// against any server that is not reached through the SDK's default host.
func (s *server) wsClientOptions() *interfaces.ClientOptions {
	return &interfaces.ClientOptions{
		Host:              "ws://" + s.addr,
		WSHeaderProcessor: func(h http.Header) { h.Set("Host", s.addr) },
	}
}

// clip is a LibriVox clip as the tests send it.
type clip struct {
	path string
	wav  []byte  // the file as is
	pcm  []byte  // 16 kHz mono linear16, little-endian
	secs float64 // duration
}

// loadClip reads a clip and decodes it with the project's own decoder.
func loadClip(t *testing.T, name string) clip {
	t.Helper()
	path := filepath.Join(librivox, name)
	wav, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := audio.Decode(t.Context(), bytes.NewReader(wav))
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	samples, err := audio.To16kMono(buf)
	if err != nil {
		t.Fatalf("convert %s: %v", name, err)
	}
	return clip{
		path: path,
		wav:  wav,
		pcm:  audio.Int16ToBytes(nil, samples),
		secs: float64(len(samples)) / sampleRate,
	}
}

// normalize lower-cases a transcript and keeps only its words, so that
// transcripts compare without regard to case and punctuation.
func normalize(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	return strings.Join(f, " ")
}

// checkGoroutines fails the test if goroutines it started are still
// running a few seconds after it ends. Register it first so that it runs
// after every other cleanup (stopping the server, the SDK's clients).
func checkGoroutines(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines left running after the test (%d before):\n%s", n-base, base, buf)
		}
	})
}

func TestSDKTranscribesFile(t *testing.T) {
	needClips(t)
	isolateSDK(t)
	checkGoroutines(t)
	srv := startServe(t)
	c := loadClip(t, shortClip)
	wantSHA := sha256.Sum256(c.wav)

	tests := []struct {
		name       string
		transcribe func(ctx context.Context, dg *restapi.Client, opts *interfaces.PreRecordedTranscriptionOptions) (*restresp.PreRecordedResponse, error)
	}{
		{"FromFile", func(ctx context.Context, dg *restapi.Client, opts *interfaces.PreRecordedTranscriptionOptions) (*restresp.PreRecordedResponse, error) {
			return dg.FromFile(ctx, c.path, opts)
		}},
		{"FromStream", func(ctx context.Context, dg *restapi.Client, opts *interfaces.PreRecordedTranscriptionOptions) (*restresp.PreRecordedResponse, error) {
			return dg.FromStream(ctx, bytes.NewReader(c.wav), opts)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			dg := srv.restClient(t, srv.key)
			// Everything the engine offers on a batch request that the
			// SDK has a field for; nothing it refuses (summarize,
			// topics, intents, sentiment, keyterm, search...).
			opts := &interfaces.PreRecordedTranscriptionOptions{
				Model:       "nova-3",
				Language:    "en-US",
				Punctuate:   true,
				SmartFormat: true,
				Paragraphs:  true,
				Utterances:  true,
				Diarize:     true,
				Tag:         []string{"earshot-sdk-test"},
				Extra:       []string{"suite:bench"},
			}
			res, err := tt.transcribe(ctx, dg, opts)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}

			md := res.Metadata
			if md == nil {
				t.Fatal("the SDK decoded no metadata")
			}
			if len(md.RequestID) != 36 {
				t.Errorf("metadata.request_id = %q, want a UUID", md.RequestID)
			}
			if md.Sha256 != hex.EncodeToString(wantSHA[:]) {
				t.Errorf("metadata.sha256 = %q, want the SHA-256 of the file sent, %x", md.Sha256, wantSHA)
			}
			if math.Abs(md.Duration-c.secs) > 0.01 {
				t.Errorf("metadata.duration = %v, want %.3f", md.Duration, c.secs)
			}
			if md.Channels != 1 {
				t.Errorf("metadata.channels = %d, want 1", md.Channels)
			}
			if _, err := time.Parse(time.RFC3339, md.Created); err != nil {
				t.Errorf("metadata.created = %q: %v", md.Created, err)
			}
			if len(md.Models) != 1 {
				t.Fatalf("metadata.models = %v, want one model", md.Models)
			}
			if mi, ok := md.ModelInfo[md.Models[0]]; !ok || mi.Name == "" || mi.Arch == "" {
				t.Errorf("metadata.model_info[%s] = %+v (present %t), want the model's name and arch", md.Models[0], mi, ok)
			}
			if got := md.Extra["suite"]; got != "bench" {
				t.Errorf("metadata.extra[suite] = %q, want bench (extra=suite:bench)", got)
			}

			if res.Results == nil || len(res.Results.Channels) != 1 || len(res.Results.Channels[0].Alternatives) == 0 {
				t.Fatalf("results = %+v, want one channel with an alternative", res.Results)
			}
			alt := res.Results.Channels[0].Alternatives[0]
			if got := normalize(alt.Transcript); got != shortClipHeard {
				t.Errorf("transcript = %q, want %q as pocketsphinx hears it", alt.Transcript, shortClipHeard)
			}
			if alt.Transcript == normalize(alt.Transcript) {
				t.Errorf("transcript %q is not formatted although punctuate and smart_format were asked", alt.Transcript)
			}
			if alt.Confidence <= 0 || alt.Confidence > 1 {
				t.Errorf("alternative confidence = %v, want (0, 1]", alt.Confidence)
			}
			checkWords(t, alt.Words, c.secs)
			if n := len(alt.Words); n != len(strings.Fields(shortClipHeard)) {
				t.Errorf("%d words, want %d", n, len(strings.Fields(shortClipHeard)))
			}
			if alt.Paragraphs == nil || len(alt.Paragraphs.Paragraphs) == 0 || len(alt.Paragraphs.Paragraphs[0].Sentences) == 0 {
				t.Errorf("paragraphs = %+v, want at least one paragraph with a sentence", alt.Paragraphs)
			}

			utts := res.Results.Utterances
			if len(utts) == 0 {
				t.Fatal("no utterances although utterances=true")
			}
			var heard []string
			for _, u := range utts {
				heard = append(heard, u.Transcript)
				if u.Speaker == nil || u.ID == "" || u.Start >= u.End || len(u.Words) == 0 {
					t.Errorf("utterance %+v: want a speaker, an id, start < end and words", u)
				}
			}
			if got := normalize(strings.Join(heard, " ")); got != shortClipHeard {
				t.Errorf("utterances say %q, want %q", got, shortClipHeard)
			}

			// The SDK's own caption helpers work on the engine's answer.
			//lint:ignore SA1019 deprecated in the SDK but still its public API; the criterion is that SDK users' code works.
			vtt, err := res.ToWebVTT()
			if err != nil {
				t.Fatalf("ToWebVTT: %v", err)
			}
			//lint:ignore SA1019 as above.
			srt, err := res.ToSRT()
			if err != nil {
				t.Fatalf("ToSRT: %v", err)
			}
			if !strings.HasPrefix(vtt, "WEBVTT\n") || !strings.Contains(vtt, "Request ID: "+md.RequestID) {
				t.Errorf("WebVTT does not start as the SDK writes it:\n%s", vtt)
			}
			for i, u := range utts {
				start, end := restresp.SecondsToTimestamp(u.Start), restresp.SecondsToTimestamp(u.End)
				cue := fmt.Sprintf("%d\n%s --> %s\n%s\n", i+1, start, end, u.Transcript)
				if !strings.Contains(vtt, cue) {
					t.Errorf("WebVTT lacks cue %q:\n%s", cue, vtt)
				}
				cue = fmt.Sprintf("%d\n%s --> %s\n%s\n", i+1, start, strings.ReplaceAll(end, ".", ","), u.Transcript)
				if !strings.Contains(srt, cue) {
					t.Errorf("SRT lacks cue %q:\n%s", cue, srt)
				}
			}
		})
	}
}

// checkWords checks a diarized batch transcript's words: in order, each
// start before its end, all within the audio, each with a confidence, a
// punctuated form and a speaker.
func checkWords(t *testing.T, words []restresp.Word, secs float64) {
	t.Helper()
	if len(words) == 0 {
		t.Error("no words")
		return
	}
	prevEnd := 0.0
	for i, w := range words {
		if w.Word == "" || w.PunctuatedWord == "" {
			t.Errorf("word %d = %+v: want word and punctuated_word", i, w)
		}
		if w.Start >= w.End || w.Start < prevEnd-1e-9 || w.End > secs+0.01 {
			t.Errorf("word %d %q spans [%v, %v] after a word ending at %v in %.2f s of audio", i, w.Word, w.Start, w.End, prevEnd, secs)
		}
		if w.Confidence <= 0 || w.Confidence > 1 {
			t.Errorf("word %d %q confidence = %v, want (0, 1]", i, w.Word, w.Confidence)
		}
		if w.Speaker == nil {
			t.Errorf("word %d %q has no speaker although diarize=true", i, w.Word)
		}
		prevEnd = w.End
	}
}

// liveEvents records what the SDK's streaming client hands its callback.
// The SDK calls it from its own goroutines.
type liveEvents struct {
	mu       sync.Mutex
	opens    int
	results  []*wsmsg.MessageResponse
	metadata []*wsmsg.MetadataResponse
	speech   []*wsmsg.SpeechStartedResponse
	errs     []*wsmsg.ErrorResponse
	closes   int
	unknown  [][]byte

	// Each is closed the first time its event arrives.
	finalized, gotMetadata, gotError, closed chan struct{}
	onceFin, onceMD, onceErr, onceClose      sync.Once
}

func newLiveEvents() *liveEvents {
	return &liveEvents{
		finalized:   make(chan struct{}),
		gotMetadata: make(chan struct{}),
		gotError:    make(chan struct{}),
		closed:      make(chan struct{}),
	}
}

var _ wsmsg.LiveMessageCallback = (*liveEvents)(nil)

func (e *liveEvents) Open(*wsmsg.OpenResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opens++
	return nil
}

func (e *liveEvents) Message(m *wsmsg.MessageResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.results = append(e.results, m)
	if m.FromFinalize {
		e.onceFin.Do(func() { close(e.finalized) })
	}
	return nil
}

func (e *liveEvents) Metadata(m *wsmsg.MetadataResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.metadata = append(e.metadata, m)
	e.onceMD.Do(func() { close(e.gotMetadata) })
	return nil
}

func (e *liveEvents) SpeechStarted(m *wsmsg.SpeechStartedResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.speech = append(e.speech, m)
	return nil
}

func (e *liveEvents) UtteranceEnd(*wsmsg.UtteranceEndResponse) error { return nil }

func (e *liveEvents) Close(*wsmsg.CloseResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closes++
	e.onceClose.Do(func() { close(e.closed) })
	return nil
}

func (e *liveEvents) Error(er *wsmsg.ErrorResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, er)
	e.onceErr.Do(func() { close(e.gotError) })
	return nil
}

func (e *liveEvents) UnhandledEvent(b []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unknown = append(e.unknown, b)
	return nil
}

// closeStream ends a stream so that its Metadata reliably arrives, then
// stops the client. The SDK's Stop alone sends CloseStream and then its
// close frame while holding its connection lock for 2 x 100 ms; its reader
// needs that lock between messages, so it delivers at most the message it
// is already reading, and none if it was between two messages: Metadata is
// then lost although the engine sent it (pkg/client/common/v1/websocket.go,
// Stop, closeWs and listen). Sending CloseStream with the client's own
// WriteJSON, which Finalize and KeepAlive use too, lets the reader take
// Metadata and then the engine's close frame, after which the SDK calls
// Close by itself; Stop then only cancels the client's context.
func closeStream(t *testing.T, dg *listen.WSCallback, ev *liveEvents) {
	t.Helper()
	if err := dg.WriteJSON(map[string]string{"type": "CloseStream"}); err != nil {
		t.Fatalf("send CloseStream: %v", err)
	}
	wait(t, ev.gotMetadata, 5*time.Second, "Metadata after CloseStream")
	wait(t, ev.closed, 5*time.Second, "Close callback after the engine closed the stream")
	dg.Stop()
}

// wait waits for ch or fails the test after d.
func wait(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("no %s within %v", what, d)
	}
}

func TestSDKTranscribesStream(t *testing.T) {
	needClips(t)
	isolateSDK(t)
	checkGoroutines(t)
	srv := startServe(t)

	for _, name := range []string{shortClip, "sense_and_sensibility_01_austen_64kb-0920.wav"} {
		t.Run(name, func(t *testing.T) {
			c := loadClip(t, name)
			pcmSHA := sha256.Sum256(c.pcm)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()

			// The batch transcript of the same clip, through the SDK too.
			batch, err := srv.restClient(t, srv.key).FromStream(ctx, bytes.NewReader(c.wav),
				&interfaces.PreRecordedTranscriptionOptions{Model: "nova-3", Language: "en-US", Punctuate: true, SmartFormat: true})
			if err != nil {
				t.Fatalf("batch transcript: %v", err)
			}
			want := normalize(batch.Results.Channels[0].Alternatives[0].Transcript)
			if want == "" {
				t.Fatal("the batch transcript is empty")
			}

			ev := newLiveEvents()
			tOpts := &interfaces.LiveTranscriptionOptions{
				Model:          "nova-3",
				Language:       "en-US",
				Punctuate:      true,
				SmartFormat:    true,
				InterimResults: true,
				VadEvents:      true,
				Encoding:       "linear16",
				SampleRate:     sampleRate,
				Channels:       1,
				Extra:          []string{"suite:bench"},
			}
			dg, err := listen.NewWSUsingCallback(ctx, srv.key, srv.wsClientOptions(), tOpts, ev)
			if err != nil || dg == nil {
				t.Fatalf("NewWSUsingCallback = %v, %v", dg, err)
			}
			// Stop is safe to repeat; this one only matters if the test
			// fails before its own Stop below.
			defer dg.Stop()
			if !dg.Connect() {
				t.Fatal("Connect: the SDK could not open the stream")
			}
			// The SDK's io.Reader helper sends 2048-byte (64 ms) binary
			// frames, unpaced, until the reader's EOF.
			if err := dg.Stream(bytes.NewReader(c.pcm)); !errors.Is(err, io.EOF) {
				t.Fatalf("Stream = %v, want io.EOF at the end of the audio", err)
			}
			if err := dg.Finalize(); err != nil {
				t.Fatalf("Finalize: %v", err)
			}
			// The whole clip was sent unpaced: the engine decodes it all
			// before the finalized result, which on two loaded cores under
			// the race detector takes tens of seconds. The bound is for a
			// hang.
			wait(t, ev.finalized, time.Minute, "result with from_finalize after Finalize")
			closeStream(t, dg, ev)

			ev.mu.Lock()
			defer ev.mu.Unlock()
			if ev.opens != 1 || ev.closes != 1 || len(ev.metadata) != 1 {
				t.Errorf("callbacks: %d Open, %d Close, %d Metadata; want one each", ev.opens, ev.closes, len(ev.metadata))
			}
			for _, e := range ev.errs {
				t.Errorf("Error callback: %+v", *e)
			}
			for _, u := range ev.unknown {
				t.Errorf("UnhandledEvent callback: %s", u)
			}

			md := ev.metadata[0]
			if md.Type != "Metadata" || len(md.RequestID) != 36 {
				t.Errorf("Metadata type %q request_id %q, want Metadata and a UUID", md.Type, md.RequestID)
			}
			if md.Sha256 != hex.EncodeToString(pcmSHA[:]) {
				t.Errorf("Metadata sha256 = %q, want the SHA-256 of the audio the SDK sent, %x", md.Sha256, pcmSHA)
			}
			if math.Abs(md.Duration-c.secs) > 0.01 || md.Channels != 1 {
				t.Errorf("Metadata duration %v channels %d, want %.3f and 1", md.Duration, md.Channels, c.secs)
			}
			if _, err := time.Parse(time.RFC3339, md.Created); err != nil {
				t.Errorf("Metadata created = %q: %v", md.Created, err)
			}
			if len(md.Models) != 1 || md.ModelInfo[md.Models[0]].Name == "" {
				t.Fatalf("Metadata models %v model_info %v, want one model and its info", md.Models, md.ModelInfo)
			}
			if md.Extra["suite"] != "bench" {
				t.Errorf("Metadata extra = %v, want suite=bench", md.Extra)
			}

			// Interim results come and go; finals tile the audio from 0 to
			// its end, the last being Finalize's.
			var finals []string
			interims, finalized := 0, 0
			end := 0.0
			for i, r := range ev.results {
				if r.Type != "Results" || len(r.Channel.Alternatives) != 1 {
					t.Errorf("result %d: type %q with %d alternatives, want Results with one", i, r.Type, len(r.Channel.Alternatives))
					continue
				}
				if r.Metadata.RequestID != md.RequestID || r.Metadata.ModelUUID != md.Models[0] || r.Metadata.ModelInfo.Name == "" {
					t.Errorf("result %d metadata %+v, want request %s and model %s", i, r.Metadata, md.RequestID, md.Models[0])
				}
				if r.Metadata.Extra["suite"] != "bench" {
					t.Errorf("result %d metadata extra = %v, want suite=bench", i, r.Metadata.Extra)
				}
				alt := r.Channel.Alternatives[0]
				if !r.IsFinal {
					if alt.Transcript != "" {
						interims++
					}
					continue
				}
				if finalized > 0 {
					t.Errorf("result %d is final after Finalize's result", i)
				}
				if r.FromFinalize {
					finalized++
				}
				if math.Abs(r.Start-end) > 1e-3 || r.Duration < 0 {
					t.Errorf("final %d spans %v+%v, want it to start where the last ended, %v", i, r.Start, r.Duration, end)
				}
				end = r.Start + r.Duration
				for j, w := range alt.Words {
					if w.Start < r.Start-1e-3 || w.End > end+1e-3 || w.Start >= w.End || w.Confidence <= 0 || w.Confidence > 1 || w.PunctuatedWord == "" {
						t.Errorf("final %d word %d = %+v, outside [%v, %v] or without confidence or punctuated form", i, j, w, r.Start, end)
					}
				}
				finals = append(finals, alt.Transcript)
			}
			if interims == 0 {
				t.Error("no interim result with words although interim_results=true")
			}
			if finalized != 1 {
				t.Errorf("%d finals with from_finalize, want exactly one", finalized)
			}
			if math.Abs(end-c.secs) > 0.01 {
				t.Errorf("finals end at %v, want the end of the audio, %.3f", end, c.secs)
			}
			if got := normalize(strings.Join(finals, " ")); got != want {
				t.Errorf("the stream's finals say %q\nthe batch transcript says %q", got, want)
			}
			if len(ev.speech) == 0 {
				t.Error("no SpeechStarted although vad_events=true")
			}
			for _, s := range ev.speech {
				if s.Timestamp < 0 || s.Timestamp > c.secs {
					t.Errorf("SpeechStarted at %v, outside the audio", s.Timestamp)
				}
			}
		})
	}
}

// TestSDKAudioIntelligence asks for every audio-intelligence feature of a
// batch transcription through the SDK: the engine's summary, sentiment,
// topics and intents arrive in the shapes the SDK decodes, each segment
// pointing at the transcript's words.
func TestSDKAudioIntelligence(t *testing.T) {
	needClips(t)
	isolateSDK(t)
	checkGoroutines(t)
	srv := startServe(t)
	c := loadClip(t, shortClip)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	opts := interfaces.PreRecordedTranscriptionOptions{Model: "nova-3", SmartFormat: true, Summarize: "v2", Sentiment: true, Topics: true, Intents: true}
	res, err := srv.restClient(t, srv.key).FromStream(ctx, bytes.NewReader(c.wav), &opts)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results
	if r.Summary == nil || r.Summary.Result != "success" || r.Summary.Short == "" {
		t.Errorf("summary %+v, want a successful short summary", r.Summary)
	}
	words := r.Channels[0].Alternatives[0].Words
	if r.Sentiments == nil || len(r.Sentiments.Segments) == 0 {
		t.Fatalf("sentiments %+v, want segments", r.Sentiments)
	}
	for i, g := range r.Sentiments.Segments {
		if g.Sentiment == nil || g.SentimentScore == nil || *g.SentimentScore < -1 || *g.SentimentScore > 1 {
			t.Errorf("sentiment segment %d = %+v, want a label and a score in [-1, 1]", i, g)
		}
		if g.StartWord < 0 || g.EndWord < g.StartWord || g.EndWord >= len(words) {
			t.Errorf("sentiment segment %d spans words %d-%d of %d", i, g.StartWord, g.EndWord, len(words))
		}
	}
	switch a := r.Sentiments.Average.Sentiment; a {
	case "positive", "neutral", "negative":
	default:
		t.Errorf("average sentiment %q", a)
	}
	if r.Topics == nil || r.Intents == nil {
		t.Errorf("topics %+v, intents %+v: want both results present", r.Topics, r.Intents)
	}
}

func TestSDKSeesErrors(t *testing.T) {
	needClips(t)
	isolateSDK(t)
	checkGoroutines(t)
	srv := startServe(t)
	c := loadClip(t, shortClip)

	t.Run("prerecorded", func(t *testing.T) {
		tests := []struct {
			name string
			key  string
			opts interfaces.PreRecordedTranscriptionOptions
			// status is the HTTP status the SDK's StatusError carries.
			status int
			// inMsg is a word of the err_msg the SDK decodes; the SDK
			// decodes the error body of a 400 only.
			inMsg string
		}{
			{"wrong key", "not-" + srv.key, interfaces.PreRecordedTranscriptionOptions{Model: "nova-3"}, http.StatusUnauthorized, ""},
			{"custom topics, not offered", srv.key, interfaces.PreRecordedTranscriptionOptions{Model: "nova-3", Topics: true, CustomTopic: []string{"weather"}}, http.StatusBadRequest, "custom_topic"},
			{"a language the engine lacks", srv.key, interfaces.PreRecordedTranscriptionOptions{Model: "nova-3", Language: "fr"}, http.StatusBadRequest, "English"},
			{"a model that does not exist", srv.key, interfaces.PreRecordedTranscriptionOptions{Model: "nova-99"}, http.StatusBadRequest, "model"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
				defer cancel()
				res, err := srv.restClient(t, tt.key).FromStream(ctx, bytes.NewReader(c.wav), &tt.opts)
				var se *interfaces.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("FromStream = %+v, %v; want a *StatusError", res, err)
				}
				if se.Resp.StatusCode != tt.status {
					t.Errorf("status %d, want %d", se.Resp.StatusCode, tt.status)
				}
				if tt.inMsg == "" {
					return
				}
				if se.DeepgramError == nil {
					t.Fatalf("the SDK decoded no error body from %v", err)
				}
				if se.DeepgramError.ErrCode != "Bad Request" || !strings.Contains(se.DeepgramError.ErrMsg, tt.inMsg) {
					t.Errorf("err_code %q err_msg %q, want Bad Request and a message naming %s", se.DeepgramError.ErrCode, se.DeepgramError.ErrMsg, tt.inMsg)
				}
			})
		}
	})

	t.Run("streaming handshake", func(t *testing.T) {
		tests := []struct {
			name string
			key  string
			// params go through the SDK's custom parameters, for what
			// LiveTranscriptionOptions has no field.
			params   map[string][]string
			wantOpen bool
		}{
			{"accepted", srv.key, nil, true},
			{"wrong key", "not-" + srv.key, nil, false},
			{"summarize, refused on streams", srv.key, map[string][]string{"summarize": {"v2"}}, false},
			{"topics, refused on streams", srv.key, map[string][]string{"topics": {"true"}}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
				defer cancel()
				if tt.params != nil {
					ctx = interfaces.WithCustomParameters(ctx, tt.params)
				}
				ev := newLiveEvents()
				opts := &interfaces.LiveTranscriptionOptions{Model: "nova-3", Encoding: "linear16", SampleRate: sampleRate}
				dg, err := listen.NewWSUsingCallbackWithCancel(ctx, cancel, tt.key, srv.wsClientOptions(), opts, ev)
				if err != nil || dg == nil {
					t.Fatalf("NewWSUsingCallbackWithCancel = %v, %v", dg, err)
				}
				defer dg.Stop()
				start := time.Now()
				// One attempt: Connect would try three times, 2 s apart.
				opened := dg.ConnectWithCancel(ctx, cancel, 1)
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("ConnectWithCancel took %v", took)
				}
				if opened != tt.wantOpen {
					t.Fatalf("ConnectWithCancel = %t, want %t", opened, tt.wantOpen)
				}
				if !opened {
					// The SDK reports a refused handshake only as false:
					// it logs the status and drops it.
					ev.mu.Lock()
					defer ev.mu.Unlock()
					if ev.opens != 0 || len(ev.results) != 0 {
						t.Errorf("refused stream yet %d Open callbacks and %d results", ev.opens, len(ev.results))
					}
					return
				}
				closeStream(t, dg, ev)
			})
		}
	})

	t.Run("mid-stream", func(t *testing.T) {
		tests := []struct {
			name     string
			encoding string
			rate     int
			send     func(dg *listen.WSCallback) error
			// The SDK hands its Error callback this variant.
			variant string
			// closed: the engine ends the stream (the SDK then calls Close
			// by itself); otherwise the stream stays usable.
			closed bool
		}{
			{
				name: "bytes that are no audio",
				send: func(dg *listen.WSCallback) error {
					_, err := dg.Write(bytes.Repeat([]byte("this is not audio. "), 256))
					return err
				},
				variant: "1008", closed: true,
			},
			{
				name: "an unknown control message", encoding: "linear16", rate: sampleRate,
				send:    func(dg *listen.WSCallback) error { return dg.WriteJSON(map[string]string{"type": "Flush"}) },
				variant: "SchemaError",
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
				defer cancel()
				ev := newLiveEvents()
				opts := &interfaces.LiveTranscriptionOptions{Model: "nova-3", Encoding: tt.encoding, SampleRate: tt.rate}
				dg, err := listen.NewWSUsingCallback(ctx, srv.key, srv.wsClientOptions(), opts, ev)
				if err != nil || dg == nil {
					t.Fatalf("NewWSUsingCallback = %v, %v", dg, err)
				}
				defer dg.Stop()
				if !dg.Connect() {
					t.Fatal("Connect failed")
				}
				if err := tt.send(dg); err != nil {
					t.Fatal(err)
				}
				wait(t, ev.gotError, 10*time.Second, "Error callback")
				if tt.closed {
					wait(t, ev.closed, 5*time.Second, "Close callback after the engine closed the stream")
				} else {
					closeStream(t, dg, ev)
				}
				ev.mu.Lock()
				defer ev.mu.Unlock()
				e := ev.errs[0]
				if e.Variant != tt.variant || e.Description == "" {
					t.Errorf("Error callback got %+v, want variant %s with a description", *e, tt.variant)
				}
				t.Logf("the SDK reported: %+v", *e)
			})
		}
	})
}
