package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

func TestSpeechSeparator(t *testing.T) {
	tests := []struct {
		name, prev, next, want string
	}{
		{"start of a turn", "", "Hello", ""},
		{"two words", "Hello", "world", " "},
		{"prev ends with a space", "Hello ", "world", ""},
		{"next starts with a space", "Hello", " world", ""},
		{"prev ends with a newline", "Hello\n", "world", ""},
		{"comma", "Hello", ", world", ""},
		{"full stop", "Hello", ".", ""},
		{"question mark", "Really", "?", ""},
		{"closing bracket", "(see above", ")", ""},
		{"after a full stop", "Hello.", "How are you?", " "},
		{"digits", "It costs 5", "dollars", " "},
		{"non-breaking space counts as space", "Hello\u00a0", "world", ""},
		{"accented letters", "café", "olé", " "},
		{"opening bracket takes a space", "see", "(above)", " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := api.SpeechSeparator(tt.prev, tt.next); got != tt.want {
				t.Errorf("SpeechSeparator(%q, %q) = %q, want %q", tt.prev, tt.next, got, tt.want)
			}
		})
	}
}

// scriptedSpeech is a small /v2/speak server built on the package's own
// types, as the local engine uses them. Connected first. Speak texts are
// joined verbatim into the turn; the first of a turn answers SpeechStarted
// and each one a binary frame. Flush answers Flushed then SpeechMetadata;
// Interrupt answers SpeechInterrupted, or NO_ACTIVE_SPEECH outside a
// turn; Configure is checked and kept; Close answers SessionMetadata and
// closes. Every frame received is sent on got when the session ends, and
// every finished turn's text on turns.
func scriptedSpeech(got chan<- []wsFrame, turns chan<- string) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		var frames []wsFrame
		defer func() { got <- frames }()
		if writeText(ctx, c, api.SpeechConnected{RequestID: "speak-req-1", ModelName: "flux-kit-en", ModelVersion: "v", ModelUUIDs: []string{"u"}}) != nil {
			return
		}
		turn, n, total := "", 0, 0
		id := func() string { return "dg_sp_00000000000" + string(rune('0'+n)) }
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			frames = append(frames, wsFrame{data: data})
			m, err := api.DecodeSpeechClientMessage(data)
			if err != nil {
				_ = writeText(ctx, c, api.SpeechError{Code: "MESSAGE-0000", Description: err.Error()})
				_ = c.Close(websocket.StatusUnsupportedData, "MESSAGE-0000")
				return
			}
			switch m := m.(type) {
			case *api.SpeakText:
				if turn == "" {
					_ = writeText(ctx, c, api.SpeechTurnStarted{SpeechID: id()})
				}
				turn += m.Text
				_ = c.Write(ctx, websocket.MessageBinary, make([]byte, 2*len(m.Text)))
			case *api.SpeakFlush:
				if turn == "" {
					_ = writeText(ctx, c, api.SpeechWarning{Code: api.CodeNoActiveSpeech, Description: "No speech in progress."})
					continue
				}
				_ = writeText(ctx, c, api.SpeechFlushed{SpeechID: id()})
				_ = writeText(ctx, c, api.SpeechMetadata{SpeechID: id(), AudioDurationMS: 60 * len(turn), InputCharacterCount: len(turn), BillableCharacterCount: len(turn)})
				turns <- turn
				total += len(turn)
				turn, n = "", n+1
			case *api.SpeechInterrupt:
				if turn == "" {
					_ = writeText(ctx, c, api.SpeechWarning{Code: api.CodeNoActiveSpeech, Description: "No speech in progress."})
					continue
				}
				half := len(turn) / 2
				_ = writeText(ctx, c, api.SpeechInterrupted{SpeechID: id(), TextSpoken: turn[:half], TextRemaining: turn[half:]})
				turns <- turn
				turn, n = "", n+1
			case *api.SpeechConfigure:
				if m.Validate() != nil {
					_ = writeText(ctx, c, api.SpeechWarning{Code: "INVALID_CONFIGURE"})
				}
			case *api.SpeakClose:
				_ = writeText(ctx, c, api.SessionMetadata{TotalAudioDurationMS: 60 * total, TotalInputCharacterCount: total, TotalBillableCharacterCount: total})
				_ = c.Close(websocket.StatusNormalClosure, "")
				return
			default:
				_ = writeText(ctx, c, api.SpeechWarning{Code: "UNKNOWN_MESSAGE"})
			}
		}
	}
}

func speechStream(t *testing.T, c *api.Client, opts api.SpeakV2Options) *api.SpeechStream {
	t.Helper()
	st, err := c.SpeechStream(testContext(t), opts)
	if err != nil {
		t.Fatalf("SpeechStream: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func nextSpeech(t *testing.T, st *api.SpeechStream) api.SpeechMessage {
	t.Helper()
	m, err := st.Next(testContext(t))
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return m
}

func TestSpeechStreamHandshake(t *testing.T) {
	checkNoLeak(t)
	got, turns := make(chan []wsFrame, 1), make(chan string, 8)
	srv := newSpeakServer(t, api.PathSpeakV2, scriptedSpeech(got, turns))
	opts := withV2(func(o *api.SpeakV2Options) {
		o.Encoding, o.SampleRate, o.Speed, o.Expressivity, o.Tag, o.MipOptOut = "mulaw", 8000, 1+0.05, intp(0), []string{"t"}, true
	})
	st := speechStream(t, srv.client(t, api.Config{APIKey: "KEY", ShortLivedTokens: true}), opts)
	hs := srv.handshake(t, 0)
	raw := hs.RawQuery
	if hs.Path != api.PathSpeakV2 || hs.Auth != "Bearer jwt-1" {
		t.Errorf("handshake %+v", hs)
	}
	if want := "encoding=mulaw&expressivity=0&mip_opt_out=true&model=flux-kit-en&sample_rate=8000&speed=1.05&tag=t"; raw != want {
		t.Errorf("dialled query %s, want %s", raw, want)
	}
	if _, unknown, err := api.ParseSpeakV2Options(hs.Query, api.Streaming); err != nil || len(unknown) != 0 {
		t.Errorf("the engine refuses the handshake: %v %v", unknown, err)
	}
	if c, ok := nextSpeech(t, st).(*api.SpeechConnected); !ok || c.RequestID != "speak-req-1" || st.RequestID() != "speak-req-1" {
		t.Errorf("first message %#v", c)
	}
	_ = st.Close()
	<-got
}

// TestSpeechStreamNoBatchOnlyParameter sets, one at a time, every
// setting the WebSocket fails the connection on: the stream refuses it
// before any handshake, so none ever reaches the service.
func TestSpeechStreamNoBatchOnlyParameter(t *testing.T) {
	srv := newSpeakServer(t, api.PathSpeakV2, func(ctx context.Context, c *websocket.Conn) {})
	c := srv.client(t, api.Config{})
	for _, tt := range batchOnlyV2 {
		t.Run(tt.name, func(t *testing.T) {
			o := kit()
			tt.set(&o)
			st, err := c.SpeechStream(testContext(t), o)
			if err == nil {
				st.Close()
			}
			checkOptionErr(t, "SpeechStream", err, bad(tt.param))
		})
	}
	for _, tt := range []struct{ name, model string }{{"aura", "aura-2-thalia-en"}, {"none", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.SpeechStream(testContext(t), api.SpeakV2Options{Model: tt.model})
			checkOptionErr(t, "SpeechStream", err, bad("model"))
		})
	}
	if n := srv.handshakeCount(); n != 0 {
		t.Errorf("%d handshakes for refused options", n)
	}
}

func TestSpeechStreamWire(t *testing.T) {
	checkNoLeak(t)
	got, turns := make(chan []wsFrame, 1), make(chan string, 8)
	srv := newSpeakServer(t, api.PathSpeakV2, scriptedSpeech(got, turns))
	st := speechStream(t, srv.client(t, api.Config{}), withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(1) }))
	ctx := testContext(t)

	if _, ok := nextSpeech(t, st).(*api.SpeechConnected); !ok {
		t.Fatal("no Connected first")
	}
	// Outside a turn, Interrupt is only warned about.
	if err := st.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := nextSpeech(t, st).(*api.SpeechWarning); !ok || w.Code != api.CodeNoActiveSpeech {
		t.Fatalf("got %#v, want NO_ACTIVE_SPEECH", w)
	}
	if err := st.Speak(ctx, ""); !errors.Is(err, api.ErrEmptyText) {
		t.Fatalf("Speak(\"\") = %v, want ErrEmptyText", err)
	}
	// A turn from pieces, as a language model streams them.
	for _, piece := range []string{"Hello", "there", ", how", " are", "you?"} {
		if err := st.Speak(ctx, piece); err != nil {
			t.Fatal(err)
		}
	}
	if s, ok := nextSpeech(t, st).(*api.SpeechTurnStarted); !ok || s.SpeechID == "" {
		t.Fatalf("got %#v, want SpeechStarted", s)
	}
	// Audio starts before the Flush.
	if a, ok := nextSpeech(t, st).(*api.SpeakAudio); !ok || len(a.Data) != 10 {
		t.Fatalf("got %#v, want the audio of Hello", a)
	}
	for range 4 {
		if _, ok := nextSpeech(t, st).(*api.SpeakAudio); !ok {
			t.Fatal("missing audio")
		}
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f, ok := nextSpeech(t, st).(*api.SpeechFlushed); !ok || f.SpeechID != "dg_sp_000000000000" {
		t.Fatalf("got %#v, want Flushed", f)
	}
	if m, ok := nextSpeech(t, st).(*api.SpeechMetadata); !ok || m.InputCharacterCount != len("Hello there, how are you?") {
		t.Fatalf("got %#v, want SpeechMetadata", m)
	}
	if turn := <-turns; turn != "Hello there, how are you?" {
		t.Errorf("the service heard %q", turn)
	}
	// A new turn starts with no separator; Interrupt ends it early.
	if err := st.Speak(ctx, "Again"); err != nil {
		t.Fatal(err)
	}
	if err := st.Speak(ctx, "and again"); err != nil {
		t.Fatal(err)
	}
	if err := st.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	var interrupted *api.SpeechInterrupted
	for interrupted == nil {
		switch m := nextSpeech(t, st).(type) {
		case *api.SpeechInterrupted:
			interrupted = m
		case *api.SpeechTurnStarted, *api.SpeakAudio:
		default:
			t.Fatalf("unexpected %#v", m)
		}
	}
	if interrupted.TextSpoken+interrupted.TextRemaining != "Again and again" || interrupted.SpeechID != "dg_sp_000000000001" {
		t.Errorf("interrupted %#v", interrupted)
	}
	if turn := <-turns; turn != "Again and again" {
		t.Errorf("the service heard %q", turn)
	}
	// After Interrupt, too, the next turn starts clean.
	if err := st.Speak(ctx, "Third"); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Speed only changes through Configure, and only to a valid step.
	checkOptionErr(t, "Configure", st.Configure(ctx, 1.6), bad("speed"))
	checkOptionErr(t, "Configure", st.Configure(ctx, 1.01), bad("speed"))
	if err := st.Configure(ctx, 0.9); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	var session *api.SessionMetadata
	for {
		m, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if s, ok := m.(*api.SessionMetadata); ok {
			session = s
		}
		if w, ok := m.(*api.SpeechWarning); ok {
			t.Errorf("warning %#v", w)
		}
	}
	if session == nil || session.TotalInputCharacterCount != len("Hello there, how are you?")+len("Third") {
		t.Errorf("session metadata %#v", session)
	}
	if turn := <-turns; turn != "Third" {
		t.Errorf("the service heard %q", turn)
	}
	if err := st.Speak(ctx, "late"); !errors.Is(err, api.ErrClosed) {
		t.Errorf("Speak after the close = %v, want ErrClosed", err)
	}

	frames := <-got
	want := []string{`{"type":"Interrupt"}`,
		`{"type":"Speak","text":"Hello"}`, `{"type":"Speak","text":" there"}`, `{"type":"Speak","text":", how"}`,
		`{"type":"Speak","text":" are"}`, `{"type":"Speak","text":" you?"}`, `{"type":"Flush"}`,
		`{"type":"Speak","text":"Again"}`, `{"type":"Speak","text":" and again"}`, `{"type":"Interrupt"}`,
		`{"type":"Speak","text":"Third"}`, `{"type":"Flush"}`, `{"type":"Configure","speed":0.9}`, `{"type":"Close"}`}
	var sent []string
	for _, f := range frames {
		sent = append(sent, string(f.data))
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server got\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

func TestSpeechStreamError(t *testing.T) {
	checkNoLeak(t)
	srv := newSpeakServer(t, api.PathSpeakV2, func(ctx context.Context, c *websocket.Conn) {
		_ = writeText(ctx, c, api.SpeechError{Code: "BIG-0000", Description: "Message too large."})
		_ = c.Close(websocket.StatusMessageTooBig, "BIG-0000 Message too large.")
	})
	st := speechStream(t, srv.client(t, api.Config{}), kit())
	m := nextSpeech(t, st)
	e, ok := m.(*api.SpeechError)
	if !ok || e.Err().Code != "BIG-0000" {
		t.Fatalf("got %#v, want the Error message", m)
	}
	_, err := st.Next(testContext(t))
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != "BIG-0000" || ae.CloseCode != int(websocket.StatusMessageTooBig) {
		t.Fatalf("after the close: %v", err)
	}
}

func TestSpeechStreamRefusedHandshake(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		writeJSON(w, http.StatusBadRequest, api.LegacyErrorBody{ErrCode: api.CodeBadRequest, ErrMsg: "No such voice.", RequestID: "r"})
	})
	c := srv.client(t, api.Config{APIKey: "KEY"})
	_, err := c.SpeechStream(testContext(t), kit())
	var e *api.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message != "No such voice." {
		t.Fatalf("got %v, want the service's 400", err)
	}
	_, err = c.SpeakStream(testContext(t), api.SpeakOptions{})
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Fatalf("v1: got %v, want the service's 400", err)
	}
}
