package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// speakFile runs earshot speak - -o FILE.wav with text on the harness and
// returns the exit status and the audio written, at 24 kHz.
func speakFile(t *testing.T, ctx context.Context, h *harness, text string) (int, []int16) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.wav")
	h.stdin = strings.NewReader(text)
	code := h.run(t, ctx, "speak", "-", "-o", out, "--model", "aura-asteria-en")
	b, err := os.ReadFile(out)
	if err != nil {
		return code, nil
	}
	buf, err := audio.Decode(ctx, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the file does not decode: %v", err)
	}
	return code, audio.Float32ToInt16(nil, buf.Samples)
}

// TestSpeakLongText (must show, with EARSHOT_LONG_SPEECH set, as
// docs/benchmarks.md says): 3,000 words and 20,000 characters of real
// prose through the local engine with speak -o: it exits 0, the entry is
// done, and the audio passes testkit.CheckLongSpeech, transcribed back
// whole, against the voice's rate measured on passages of the same
// prose. The normal suite holds the same for the app's session
// (sessions.TestLongSynthesisEngine) and speak's paths over a socket
// (TestSpeakResendsRefused, TestSpeakPartialFails); this costs minutes.
func TestSpeakLongText(t *testing.T) {
	if os.Getenv(testkit.EnvLongSpeech) == "" {
		t.Skipf("minutes of synthesis and recognition: set %s=1 to run it", testkit.EnvLongSpeech)
	}
	t.Parallel()
	type long struct {
		name            string
		words, maxChars int
	}
	texts := []long{{"3000 words", 3000, 0}, {"20000 characters", 0, sessions.MaxSynthesisChars}}
	rate, err := testkit.RatePassages()
	if err != nil {
		t.Skipf("no prose to speak: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Hour) // a bound for a hang: tens of minutes of recognition on 2 busy cores
	defer cancel()
	code, sample := speakFile(t, ctx, newHarness(t, nil), rate)
	if code != 0 {
		t.Fatalf("speak of the rate passages: exit %d", code)
	}
	wps := float64(len(strings.Fields(rate))) / (float64(len(sample)) / sessions.SynthesisRate)
	ep, key, err := startLocal()
	if err != nil {
		t.Fatal(err)
	}
	c, err := api.NewClient(api.Config{Endpoint: ep, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	transcribe := func(t *testing.T, pcm []int16) string {
		text, err := testkit.Transcribe(ctx, c, pcm, sessions.SynthesisRate)
		if err != nil {
			t.Error(err)
		}
		return text
	}
	ceiling := sync.OnceValue(func() float64 { return testkit.Covered(rate, transcribe(t, sample)) })
	for _, tt := range texts {
		t.Run(tt.name, func(t *testing.T) {
			text, err := testkit.Prose(0, tt.words, tt.maxChars)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, nil)
			code, pcm := speakFile(t, ctx, h, text)
			if code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			list, err := h.db.Sessions(ctx, store.Filter{Kind: store.KindSynthesis})
			if err != nil || len(list) != 1 || list[0].Status != store.StatusDone {
				t.Errorf("history %+v, %v; want one synthesis, done", list, err)
			}
			testkit.CheckLongSpeech(t, text, wps, pcm, sessions.SynthesisRate, func(pcm []int16) string { return transcribe(t, pcm) }, ceiling)
		})
	}
}

// scriptedSpeak is a /v1/speak WebSocket that answers each Flush with
// 10 ms of audio per character buffered, then Flushed; for the n-th
// Speak (from 0) it does as script says: "refuse" (a Warning DATA-0001,
// the text not taken), "fail" (the stream closes with an error), or
// takes it.
type scriptedSpeak struct {
	script func(n int) string
	mu     sync.Mutex
	speaks []string
}

func (s *scriptedSpeak) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	send := func(m any) error {
		b, _ := json.Marshal(m)
		return conn.Write(ctx, websocket.MessageText, b)
	}
	if send(api.SpeakMetadata{RequestID: "scripted", ModelName: "aura-asteria-en"}) != nil {
		return
	}
	buf, flushes := 0, 0
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		m, err := api.DecodeSpeakClientMessage(data)
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *api.SpeakText:
			s.mu.Lock()
			n := len(s.speaks)
			s.speaks = append(s.speaks, m.Text)
			s.mu.Unlock()
			switch s.script(n) {
			case "refuse":
				if send(api.SpeakWarning{Code: api.CodeRateTooHigh, Description: "Character submission rate too high."}) != nil {
					return
				}
			case "fail":
				send(api.StreamError{Type: api.TypeError, Code: "NET-0000", Description: "Internal error."})
				conn.Close(websocket.StatusInternalError, "NET-0000")
				return
			default:
				buf += len([]rune(m.Text))
			}
		case *api.SpeakFlush:
			pcm := make([]byte, buf*2*sessions.SynthesisRate/100)
			for i := 0; i < len(pcm); i += 2 {
				pcm[i] = byte(i) // not silence
			}
			buf = 0
			if conn.Write(ctx, websocket.MessageBinary, pcm) != nil || send(api.Flushed{SequenceID: flushes}) != nil {
				return
			}
			flushes++
		case *api.SpeakClose:
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

// onScripted runs speak -o with text against a scriptedSpeak as the
// local engine.
func onScripted(t *testing.T, s *scriptedSpeak, text string) (*harness, int, []int16) {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	base, err := api.ParseBaseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil, func(cfg *sessions.WorkspaceConfig) {
		cfg.Local = func() (api.Endpoint, api.Secret, error) { return api.Endpoint{Base: base}, "scripted-key", nil }
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code, pcm := speakFile(t, ctx, h, text)
	return h, code, pcm
}

// twoParts is a text of two parts of aura-asteria-en's 2,000 characters.
func twoParts() string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Sentence %d walks along the river with a few more words to fill the line. ", i+1)
	}
	return strings.TrimSpace(b.String())
}

// TestSpeakResendsRefused: speak -o sends again a part the service
// refused for rate, after a wait it says; all of the text is spoken and
// it exits 0. (It wrote the audio of the parts taken and exited 0.)
func TestSpeakResendsRefused(t *testing.T) {
	t.Parallel()
	s := &scriptedSpeak{script: func(n int) string {
		if n == 1 {
			return "refuse"
		}
		return ""
	}}
	text := twoParts()
	h, code, pcm := onScripted(t, s, text)
	if code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	// 10 ms a character, less the space between the two parts.
	if want := (len(text) - 1) * sessions.SynthesisRate / 100; len(pcm) != want {
		t.Errorf("%d samples written, want %d: a part is missing", len(pcm), want)
	}
	if !strings.Contains(h.stderr.String(), "The service asked to slow down: part 2 of 2 goes again in") {
		t.Errorf("stderr %q does not say the part goes again", h.stderr.String())
	}
	if len(s.speaks) != 3 || s.speaks[1] != s.speaks[2] {
		t.Errorf("the service got %d Speaks, want part 2 twice", len(s.speaks))
	}
}

// TestSpeakPartialFails: when the service ends the stream with part of
// the text unspoken, speak -o writes what was spoken, says how much and
// where it stopped, history keeps the entry as partial, and it exits
// non-zero.
func TestSpeakPartialFails(t *testing.T) {
	t.Parallel()
	s := &scriptedSpeak{script: func(n int) string {
		if n == 1 {
			return "fail"
		}
		return ""
	}}
	text := twoParts()
	h, code, pcm := onScripted(t, s, text)
	stderr := h.stderr.String()
	if code != 1 || !strings.Contains(stderr, "Only 405 of the 600 words were spoken (") || !strings.Contains(stderr, "it stopped at “Sentence 28 walks along") {
		t.Errorf("exit status %d; stderr %q; want 1 and how much was spoken", code, stderr)
	}
	if len(pcm) == 0 {
		t.Error("the audio of what was spoken was not written")
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindSynthesis})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusPartial || !strings.HasPrefix(list[0].Error, "Only 405 of the 600 words") {
		t.Errorf("history %+v, %v; want one synthesis, partial", list, err)
	}
}
