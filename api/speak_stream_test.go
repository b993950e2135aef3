package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// testFlushLimit stands for the service's 20 flushes a minute, kept small.
const testFlushLimit = 2

// scriptedSpeak is a small /v1/speak server built on the package's own
// types, as the local engine uses them: Metadata first; each Speak is
// answered with one binary frame per character; Flush with Flushed, or
// beyond testFlushLimit with the EXCESSIVE_FLUSH warning; Clear with
// Cleared; Close with a normal close. Every frame received is sent on got
// when the session ends.
func scriptedSpeak(got chan<- []wsFrame) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		var frames []wsFrame
		defer func() { got <- frames }()
		if writeText(ctx, c, api.SpeakMetadata{RequestID: "speak-req-1", ModelName: "aura-2-thalia-en", ModelVersion: "v", ModelUUID: "u"}) != nil {
			return
		}
		flushes, clears := 0, 0
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			frames = append(frames, wsFrame{binary: typ == websocket.MessageBinary, data: data})
			m, err := api.DecodeSpeakClientMessage(data)
			if err != nil {
				_ = c.Close(websocket.StatusUnsupportedData, "DATA-0000 unrecognized command")
				return
			}
			switch m := m.(type) {
			case *api.SpeakText:
				if m.Text == "" {
					_ = c.Close(websocket.StatusPolicyViolation, "Input text contains no characters.")
					return
				}
				_ = c.Write(ctx, websocket.MessageBinary, make([]byte, 2*len(m.Text)))
			case *api.SpeakFlush:
				if flushes >= testFlushLimit {
					_ = writeText(ctx, c, api.SpeakWarning{Code: api.CodeExcessiveFlush, Description: "Rate limit exceeded for flushes. Please try again later."})
					continue
				}
				_ = writeText(ctx, c, api.Flushed{SequenceID: flushes})
				flushes++
			case *api.SpeakClear:
				_ = writeText(ctx, c, api.Cleared{SequenceID: clears})
				clears++
			case *api.SpeakClose:
				_ = c.Close(websocket.StatusNormalClosure, "")
				return
			}
		}
	}
}

// speakStream opens a /v1/speak stream that the test's cleanup closes.
func speakStream(t *testing.T, c *api.Client, opts api.SpeakOptions) *api.SpeakStream {
	t.Helper()
	st, err := c.SpeakStream(testContext(t), opts)
	if err != nil {
		t.Fatalf("SpeakStream: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func nextSpeak(t *testing.T, st *api.SpeakStream) api.SpeakMessage {
	t.Helper()
	m, err := st.Next(testContext(t))
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return m
}

func TestSpeakStreamHandshake(t *testing.T) {
	opts := api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16", SampleRate: 16000, Speed: 1.2, Tag: []string{"a b"}, MipOptOut: true}
	for _, tt := range handshakeAuths {
		t.Run(tt.name, func(t *testing.T) {
			checkNoLeak(t)
			got := make(chan []wsFrame, 1)
			srv := newSpeakServer(t, api.PathSpeak, scriptedSpeak(got))
			st := speakStream(t, srv.client(t, tt.cfg), opts)
			if st.RequestID() != "speak-req-1" {
				t.Errorf("RequestID %q", st.RequestID())
			}
			hs := srv.handshake(t, 0)
			raw := hs.RawQuery
			if hs.Method != http.MethodGet || hs.Path != api.PathSpeak || hs.Auth != tt.wantAuth {
				t.Errorf("handshake %+v", hs)
			}
			if want := "encoding=linear16&mip_opt_out=true&model=aura-2-thalia-en&sample_rate=16000&speed=1.2&tag=a+b"; raw != want {
				t.Errorf("dialled query %s, want %s", raw, want)
			}
			parsed, unknown, err := api.ParseSpeakOptions(hs.Query)
			if err != nil || len(unknown) != 0 || parsed.Validate(api.Streaming) != nil {
				t.Errorf("the engine reads %+v %v %v", parsed, unknown, err)
			}
			srv.checkGrants(t, tt.wantGrants)
			if m, ok := nextSpeak(t, st).(*api.SpeakMetadata); !ok || m.RequestID != "speak-req-1" || m.ModelName != "aura-2-thalia-en" {
				t.Errorf("first message %#v, want Metadata", m)
			}
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			<-got
		})
	}
}

func TestSpeakStreamRefusedLocally(t *testing.T) {
	srv := newSpeakServer(t, api.PathSpeak, func(ctx context.Context, c *websocket.Conn) {})
	c := srv.client(t, api.Config{})
	tests := []struct {
		name string
		opts api.SpeakOptions
		want string
	}{
		{"mp3", api.SpeakOptions{Encoding: "mp3"}, "encoding"},
		{"container", api.SpeakOptions{Container: "wav"}, "container"},
		{"bit rate", api.SpeakOptions{BitRate: 32000}, "bit_rate"},
		{"callback", api.SpeakOptions{Callback: "https://example.com/cb"}, "callback"},
		{"priority", api.SpeakOptions{Priority: "low"}, "priority"},
		{"flux voice", api.SpeakOptions{Model: "flux-kit-en"}, "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := c.SpeakStream(testContext(t), tt.opts)
			if err == nil {
				st.Close()
			}
			checkOptionErr(t, "SpeakStream", err, bad(tt.want))
		})
	}
	if n := srv.handshakeCount(); n != 0 {
		t.Errorf("%d handshakes for refused options", n)
	}
}

func TestSpeakStreamWire(t *testing.T) {
	checkNoLeak(t)
	got := make(chan []wsFrame, 1)
	srv := newSpeakServer(t, api.PathSpeak, scriptedSpeak(got))
	st := speakStream(t, srv.client(t, api.Config{}), api.SpeakOptions{Model: "aura-2-thalia-en"})
	ctx := testContext(t)

	if _, ok := nextSpeak(t, st).(*api.SpeakMetadata); !ok {
		t.Fatal("no Metadata first")
	}
	if err := st.Speak(ctx, ""); !errors.Is(err, api.ErrEmptyText) {
		t.Fatalf("Speak(\"\") = %v, want ErrEmptyText", err)
	}
	if err := st.Speak(ctx, "Hello"); err != nil {
		t.Fatal(err)
	}
	if a, ok := nextSpeak(t, st).(*api.SpeakAudio); !ok || len(a.Data) != 10 {
		t.Fatalf("got %#v, want 10 bytes of audio", a)
	}
	for i := range testFlushLimit {
		if err := st.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if f, ok := nextSpeak(t, st).(*api.Flushed); !ok || f.SequenceID != i {
			t.Fatalf("got %#v, want Flushed %d", f, i)
		}
	}
	// One flush too many: the service's warning reaches the caller.
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := nextSpeak(t, st).(*api.SpeakWarning); !ok || w.Code != api.CodeExcessiveFlush {
		t.Fatalf("got %#v, want the EXCESSIVE_FLUSH warning", w)
	}
	if err := st.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if c, ok := nextSpeak(t, st).(*api.Cleared); !ok || c.SequenceID != 0 {
		t.Fatalf("got %#v, want Cleared 0", c)
	}
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after Close: %#v, %v; want io.EOF", m, err)
	}
	if err := st.Flush(ctx); !errors.Is(err, api.ErrClosed) {
		t.Errorf("Flush after the close = %v, want ErrClosed", err)
	}
	frames := <-got
	want := []string{`text{"type":"Speak","text":"Hello"}`, `text{"type":"Flush"}`, `text{"type":"Flush"}`, `text{"type":"Flush"}`,
		`text{"type":"Clear"}`, `text{"type":"Close"}`}
	if len(frames) != len(want) {
		t.Fatalf("server got %v, want %v", frames, want)
	}
	for i, f := range frames {
		if f.String() != want[i] {
			t.Errorf("frame %d: %s, want %s", i, f, want[i])
		}
	}
}
