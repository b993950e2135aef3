package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// turns opens a turn stream that the test's cleanup closes.
func turns(t *testing.T, c *api.Client, opts api.TurnOptions) *api.TurnStream {
	t.Helper()
	st, err := c.Turns(testContext(t), opts)
	if err != nil {
		t.Fatalf("Turns: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// scriptedTurns is a small /v2/listen server built on the package's own
// server-side helpers, as the local engine uses them: Connected first;
// audio starts a turn; Configure is applied with WithConfigure and
// confirmed or refused; ForceEndTurn ends the turn or warns outside one;
// CloseStream sends a last Update and closes without a status. Every
// frame received is sent on got when the session ends.
func scriptedTurns(opts api.TurnOptions, got chan<- []wsFrame) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		var frames []wsFrame
		defer func() { got <- frames }()
		seq, turn, inTurn := 0, 0, false
		send := func(m any) bool {
			err := writeText(ctx, c, m)
			seq++
			return err == nil
		}
		if !send(api.Connected{RequestID: "turn-req-1", SequenceID: seq}) {
			return
		}
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			frames = append(frames, wsFrame{binary: typ == websocket.MessageBinary, data: data})
			if typ == websocket.MessageBinary {
				if !inTurn {
					inTurn = true
					send(api.TurnInfo{RequestID: "turn-req-1", SequenceID: seq, Event: api.EventStartOfTurn, TurnIndex: turn,
						AudioWindowEnd: 0.25, Transcript: "hello", Words: []api.TurnWord{{Word: "hello", Confidence: 0.9}}})
				}
				continue
			}
			m, err := api.DecodeTurnClientMessage(data)
			if err != nil {
				send(api.ConfigureFailure{RequestID: "turn-req-1", SequenceID: seq})
				continue
			}
			switch m := m.(type) {
			case *api.Configure:
				n, err := opts.WithConfigure(*m)
				if err != nil {
					send(api.ConfigureFailure{RequestID: "turn-req-1", SequenceID: seq})
					continue
				}
				opts = n
				eot, ms := n.EffectiveEOTThreshold(), n.EffectiveEOTTimeoutMS()
				send(api.ConfigureSuccess{RequestID: "turn-req-1", SequenceID: seq,
					Thresholds: api.Thresholds{EOTThreshold: &eot, EOTTimeoutMS: &ms}, Keyterms: n.Keyterms})
			case *api.ForceEndTurn:
				if !inTurn {
					send(api.TurnWarning{RequestID: "turn-req-1", SequenceID: seq, Code: api.CodeForceEndTurnNoActive,
						Description: "ForceEndTurn arrived outside a turn."})
					continue
				}
				send(api.TurnInfo{RequestID: "turn-req-1", SequenceID: seq, Event: api.EventEndOfTurn, TurnIndex: turn,
					AudioWindowEnd: 0.5, Transcript: "hello", Words: []api.TurnWord{{Word: "hello", Confidence: 0.9}},
					EndOfTurnConfidence: 0.4, Trigger: api.TriggerManual})
				inTurn = false
				turn++
			case *api.CloseStream:
				send(api.TurnInfo{RequestID: "turn-req-1", SequenceID: seq, Event: api.EventUpdate, TurnIndex: turn})
				_ = c.Close(websocket.StatusNoStatusRcvd, "")
				return
			default:
				send(api.TurnWarning{RequestID: "turn-req-1", SequenceID: seq, Code: api.CodeUnparsableClientMessage})
			}
		}
	}
}

// nextTurn reads the next message, failing the test on an error.
func nextTurn(t *testing.T, st *api.TurnStream) api.TurnMessage {
	t.Helper()
	m, err := st.Next(testContext(t))
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return m
}

func TestTurnsHandshake(t *testing.T) {
	opts := api.TurnOptions{Model: api.ModelFluxGeneralMulti, Encoding: "linear16", SampleRate: 16000, EOTThreshold: 0.8,
		EagerEOTThreshold: 0.5, EOTTimeoutMS: 3000, Keyterms: []string{"Earshot", "a&b"}, LanguageHints: []string{"en", "es"}}
	for _, tt := range handshakeAuths {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeak(t)
			got := make(chan []wsFrame, 1)
			srv := newTurnServer(t, scriptedTurns(opts, got))
			tt.cfg.UserAgent = "earshot-test/3"
			st := turns(t, srv.client(t, tt.cfg), opts)
			if st.RequestID() != "turn-req-1" {
				t.Errorf("RequestID %q", st.RequestID())
			}
			hs := srv.handshake(t, 0)
			if hs.Method != http.MethodGet || hs.Path != api.PathListenV2 || hs.Auth != tt.wantAuth || hs.UserAgent != "earshot-test/3" {
				t.Errorf("handshake %+v", hs)
			}
			if hs.Query.Encode() != opts.Query().Encode() {
				t.Errorf("query %s, want %s", hs.Query.Encode(), opts.Query().Encode())
			}
			parsed, unknown, err := api.ParseTurnOptions(hs.Query)
			if err != nil || len(unknown) != 0 {
				t.Errorf("the server reads %+v %v %v", parsed, unknown, err)
			}
			srv.checkGrants(t, tt.wantGrants)
			if c, ok := nextTurn(t, st).(*api.Connected); !ok || c.RequestID != "turn-req-1" || c.SequenceID != 0 {
				t.Errorf("first message %#v, want Connected", c)
			}
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			<-got
		})
	}
}

func TestTurnsWire(t *testing.T) {
	checkNoLeak(t)
	opts := api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16", SampleRate: 16000, Keyterms: []string{"old"}}
	got := make(chan []wsFrame, 1)
	srv := newTurnServer(t, scriptedTurns(opts, got))
	st := turns(t, srv.client(t, api.Config{}), opts)
	ctx := testContext(t)

	if c, ok := nextTurn(t, st).(*api.Connected); !ok {
		t.Fatalf("first message %#v", c)
	}
	// A ForceEndTurn before any audio: a warning, and the stream stays open.
	if err := st.ForceEndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := nextTurn(t, st).(*api.TurnWarning); !ok || w.Code != api.CodeForceEndTurnNoActive || w.SequenceID != 1 {
		t.Fatalf("got %#v, want the FORCE_END_TURN_NO_ACTIVE_TURN warning", w)
	}
	// An empty frame is refused and never sent.
	if err := st.Send(ctx, nil); !errors.Is(err, api.ErrEmptyAudio) {
		t.Fatalf("Send(nil) = %v", err)
	}
	if err := st.Send(ctx, []byte{}); !errors.Is(err, api.ErrEmptyAudio) {
		t.Fatalf("Send(empty) = %v", err)
	}
	audio := make([]byte, 640)
	for i := range audio {
		audio[i] = byte(i)
	}
	if err := st.Send(ctx, audio); err != nil {
		t.Fatal(err)
	}
	audio[0] = 0xff // the stream keeps its own copy
	if ti, ok := nextTurn(t, st).(*api.TurnInfo); !ok || ti.Event != api.EventStartOfTurn || ti.Transcript != "hello" {
		t.Fatalf("got %#v, want StartOfTurn", ti)
	}
	// A Configure that is out of range is refused before it leaves.
	err := st.Configure(ctx, api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.3)}})
	checkOptionErr(t, "Configure", err, bad("eot_threshold"))
	// One the server refuses (eager above the threshold in force).
	if err := st.Configure(ctx, api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0.8)}}); err != nil {
		t.Fatal(err)
	}
	if f, ok := nextTurn(t, st).(*api.ConfigureFailure); !ok {
		t.Fatalf("got %#v, want ConfigureFailure", f)
	}
	// One it applies; the untouched timeout keeps its value.
	if err := st.Configure(ctx, api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.85)}, Keyterms: []string{"Earshot"}}); err != nil {
		t.Fatal(err)
	}
	cs, ok := nextTurn(t, st).(*api.ConfigureSuccess)
	if !ok || cs.Thresholds.EOTThreshold == nil || *cs.Thresholds.EOTThreshold != 0.85 ||
		cs.Thresholds.EOTTimeoutMS == nil || *cs.Thresholds.EOTTimeoutMS != api.DefaultEOTTimeoutMS || len(cs.Keyterms) != 1 || cs.Keyterms[0] != "Earshot" {
		t.Fatalf("got %#v, want ConfigureSuccess echoing 0.85, 5000 ms and Earshot", cs)
	}
	// ForceEndTurn inside the turn ends it by hand.
	if err := st.ForceEndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if ti, ok := nextTurn(t, st).(*api.TurnInfo); !ok || ti.Event != api.EventEndOfTurn || ti.Trigger != api.TriggerManual || ti.TurnIndex != 0 {
		t.Fatalf("got %#v, want EndOfTurn manual", ti)
	}
	// CloseStream: a last Update, then a close without a status, which is
	// a normal end.
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	if ti, ok := nextTurn(t, st).(*api.TurnInfo); !ok || ti.Event != api.EventUpdate || ti.TurnIndex != 1 {
		t.Fatalf("got %#v, want the last Update", ti)
	}
	if m, err := st.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after CloseStream: %#v, %v; want io.EOF", m, err)
	}
	// Once closed, sending says so.
	if err := st.ForceEndTurn(ctx); !errors.Is(err, api.ErrClosed) {
		t.Errorf("ForceEndTurn after the close = %v, want ErrClosed", err)
	}

	frames := <-got
	want := []string{
		`text{"type":"ForceEndTurn"}`,
		"binary(640)",
		`text{"type":"Configure","thresholds":{"eager_eot_threshold":"0.8"}}`,
		`text{"type":"Configure","thresholds":{"eot_threshold":"0.85"},"keyterms":["Earshot"]}`,
		`text{"type":"ForceEndTurn"}`,
		`text{"type":"CloseStream"}`,
	}
	if len(frames) != len(want) {
		t.Fatalf("server received %v, want %v", frames, want)
	}
	for i := range want {
		if frames[i].String() != want[i] {
			t.Errorf("frame %d = %s, want %s", i, frames[i], want[i])
		}
	}
	if frames[1].data[0] != 0 || frames[1].data[639] != byte(639%256) {
		t.Error("audio changed on the way")
	}
}

func TestTurnsRefusedHandshake(t *testing.T) {
	checkNoLeak(t)
	srv := newTurnServer(t, func(context.Context, *websocket.Conn) { t.Error("a refused handshake was accepted") })
	srv.refuse = func(w http.ResponseWriter, r *http.Request) bool {
		// The answer the engine gives a parameter the service refuses.
		_, _, err := api.ParseTurnOptions(url.Values{"model": {"flux-general-en"}, "smart_format": {"true"}})
		var oe *api.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("ParseTurnOptions: %v", err)
			return true
		}
		w.Header().Set(api.HeaderRequestID, "hs-9")
		writeJSON(w, oe.Status, api.LegacyErrorBody{ErrCode: oe.Code, ErrMsg: oe.Reason})
		return true
	}
	st, err := srv.client(t, api.Config{}).Turns(testContext(t), api.TurnOptions{Model: api.ModelFluxGeneralEN})
	if err == nil {
		_ = st.Close()
		t.Fatal("Turns succeeded")
	}
	var e *api.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != api.CodeBadRequest || e.RequestID != "hs-9" || e.Message == "" {
		t.Errorf("err %T %#v", err, err)
	}
}

func TestTurnsRefusedBeforeDial(t *testing.T) {
	tests := []struct {
		name string
		opts api.TurnOptions
		want *wantOpt
	}{
		{"no model", api.TurnOptions{}, bad("model")},
		{"model=flux", api.TurnOptions{Model: "flux"}, bad("model")},
		{"continuous model", api.TurnOptions{Model: "nova-3"}, bad("model")},
		{"hints with the english model", api.TurnOptions{Model: api.ModelFluxGeneralEN, LanguageHints: []string{"es"}}, invalidParam("language_hint")},
		{"sample_rate for containerized audio", api.TurnOptions{Model: api.ModelFluxGeneralEN, SampleRate: 16000}, bad("sample_rate")},
		{"eot_timeout_ms out of range", api.TurnOptions{Model: api.ModelFluxGeneralEN, EOTTimeoutMS: 100}, bad("eot_timeout_ms")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTurnServer(t, func(context.Context, *websocket.Conn) {})
			_, err := srv.client(t, api.Config{}).Turns(testContext(t), tt.opts)
			checkOptionErr(t, "Turns", err, tt.want)
			srv.mu.Lock()
			n := len(srv.handshakes)
			srv.mu.Unlock()
			if n != 0 {
				t.Errorf("%d handshakes reached the server", n)
			}
		})
	}
}

func TestTurnsRegionalHost(t *testing.T) {
	o := en()
	for _, tt := range []struct {
		region api.Region
		want   string
	}{
		{api.RegionGlobal, "wss://api.deepgram.com/v2/listen?"},
		{api.RegionEU, "wss://api.eu.deepgram.com/v2/listen?"},
		{api.RegionAU, "wss://api.au.deepgram.com/v2/listen?"},
		{api.RegionIN, "wss://api.in.deepgram.com/v2/listen?"},
	} {
		u, err := api.Endpoint{Region: tt.region}.WebSocketURL(api.PathListenV2, o.Query())
		if err != nil {
			t.Fatalf("%s: %v", tt.region, err)
		}
		if want := tt.want + o.Query().Encode(); u.String() != want {
			t.Errorf("%s: %s, want %s", tt.region, u, want)
		}
	}
}

func TestTurnsServerErrorAndOddFrames(t *testing.T) {
	checkNoLeak(t)
	srv := newTurnServer(t, func(ctx context.Context, c *websocket.Conn) {
		_ = c.Write(ctx, websocket.MessageBinary, []byte{1, 2})
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"SpeakerChanged","speaker":1}`))
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"TurnInfo","turn_index":"x"}`))
		_ = writeText(ctx, c, api.TurnError{SequenceID: 3, Code: api.CodeUndecodable, Description: "bad audio"})
		_ = c.Close(websocket.StatusPolicyViolation, "DATA-0000: bad audio")
	})
	st := turns(t, srv.client(t, api.Config{}), en())
	if u, ok := nextTurn(t, st).(*api.UnknownMessage); !ok || u.Type != "SpeakerChanged" {
		t.Fatalf("got %#v, want the unknown message kept (binary frames skipped)", u)
	}
	if u, ok := nextTurn(t, st).(*api.UnknownMessage); !ok || u.Type != "" || string(u.Raw) != `{"type":"TurnInfo","turn_index":"x"}` {
		t.Fatalf("got %#v, want an undecodable frame as an UnknownMessage without type", u)
	}
	e, ok := nextTurn(t, st).(*api.TurnError)
	if !ok || !errors.Is(e.Err(), api.ErrUndecodableAudio) {
		t.Fatalf("got %#v, want the Error message", e)
	}
	_, err := st.Next(testContext(t))
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeUndecodable || ae.CloseCode != int(websocket.StatusPolicyViolation) {
		t.Errorf("end of stream: %v", err)
	}
}

func TestTurnsNextContextAndClose(t *testing.T) {
	checkNoLeak(t)
	srv := newTurnServer(t, func(ctx context.Context, c *websocket.Conn) {
		_, _ = readAll(ctx, c)
	})
	st := turns(t, srv.client(t, api.Config{}), en())
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	if _, err := st.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next with nothing to read = %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := st.Send(testContext(t), []byte{1}); !errors.Is(err, api.ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if _, err := st.Next(testContext(t)); !errors.Is(err, api.ErrClosed) {
		t.Errorf("Next after Close = %v", err)
	}
}
