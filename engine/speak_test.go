package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/tts"
)

// speakBody is the JSON body of a synthesis request.
func speakBody(t testing.TB, text string) []byte {
	t.Helper()
	b, err := json.Marshal(api.SpeakRequest{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// postSpeak posts text to a speak path with a raw query, as a client that
// checks nothing would.
func postSpeak(t *testing.T, l *Local, path, rawQuery, text string) answer {
	t.Helper()
	return post(t, l, path, rawQuery, speakBody(t, text), jsonHeader)
}

// dialSpeakRaw opens a WebSocket on a speak path with a raw query. On a
// refused handshake it returns the answer instead.
func dialSpeakRaw(t *testing.T, ctx context.Context, l *Local, path, rawQuery string) (*websocket.Conn, *answer) {
	t.Helper()
	conn, a := dialPath(t, ctx, l, path, rawQuery, nil)
	if conn != nil {
		conn.SetReadLimit(16 << 20)
		t.Cleanup(func() { conn.CloseNow() })
	}
	return conn, a
}

// rawFrame is a frame read from a raw socket: audio, or a message.
type rawFrame struct {
	audio []byte
	msg   map[string]any
}

func (f rawFrame) typ() string {
	if f.msg == nil {
		return api.TypeAudio
	}
	s, _ := f.msg["type"].(string)
	return s
}

func readFrame(t *testing.T, ctx context.Context, c *websocket.Conn) rawFrame {
	t.Helper()
	typ, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ == websocket.MessageBinary {
		return rawFrame{audio: data}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message %s: %v", data, err)
	}
	return rawFrame{msg: m}
}

// readUntilType reads frames up to and including the first message of
// type typ.
func readUntilType(t *testing.T, ctx context.Context, c *websocket.Conn, typ string) []rawFrame {
	t.Helper()
	var out []rawFrame
	for {
		f := readFrame(t, ctx, c)
		out = append(out, f)
		if f.typ() == typ {
			return out
		}
	}
}

func sendJSON(t *testing.T, ctx context.Context, c *websocket.Conn, s string) {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		t.Fatalf("write %s: %v", s, err)
	}
}

// frameTypes summarises frames, runs of audio as one "Audio".
func frameTypes(fs []rawFrame) []string {
	var out []string
	for _, f := range fs {
		ty := f.typ()
		if ty == api.TypeAudio && len(out) > 0 && out[len(out)-1] == api.TypeAudio {
			continue
		}
		out = append(out, ty)
	}
	return out
}

func TestSpeakModels(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	list, err := newClient(t, shared).Models(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	voices := tts.Voices()
	if len(list.TTS) != len(voices) {
		t.Fatalf("%d tts records, want one per voice (%d)", len(list.TTS), len(voices))
	}
	uuids := map[string]bool{}
	for i, m := range list.TTS {
		v := voices[i]
		if m.CanonicalName != v.Name || !strings.Contains(v.Name, "-"+m.Name+"-") {
			t.Errorf("record %+v: want canonical_name %s and its short name", m, v.Name)
		}
		if m.Engine != v.Engine || !strings.HasPrefix(v.Engine, m.Architecture+" "+m.Version+" ") {
			t.Errorf("%s: architecture %q version %q engine %q, want them from %q", v.Name, m.Architecture, m.Version, m.Engine, v.Engine)
		}
		if m.Architecture != "flite" && m.Architecture != "espeak-ng" {
			t.Errorf("%s: architecture %q", v.Name, m.Architecture)
		}
		if len(m.Languages) == 0 || m.Languages[0] != v.Language {
			t.Errorf("%s: languages %v, want %s first", v.Name, m.Languages, v.Language)
		}
		if m.Metadata == nil || m.Metadata.Accent != v.Accent || !slices.Contains(m.Metadata.Tags, string(v.Gender)) {
			t.Errorf("%s: metadata %+v, want accent %s and tag %s", v.Name, m.Metadata, v.Accent, v.Gender)
		}
		if m.UUID == "" || uuids[m.UUID] {
			t.Errorf("%s: uuid %q empty or repeated", v.Name, m.UUID)
		}
		uuids[m.UUID] = true
	}
	for _, m := range list.SpeakVoices() {
		if strings.HasPrefix(m.CanonicalName, "flux-") {
			t.Errorf("flux voice %s offered on /v1/speak", m.CanonicalName)
		}
	}
	turn := list.TurnVoices()
	if len(turn) == 0 {
		t.Error("no voice for /v2/speak")
	}
	for _, m := range turn {
		if !strings.HasPrefix(m.CanonicalName, "flux-") {
			t.Errorf("voice %s offered on /v2/speak", m.CanonicalName)
		}
	}
	if len(list.SpeakVoices())+len(turn) != len(voices) {
		t.Errorf("%d + %d voices by family, want %d", len(list.SpeakVoices()), len(turn), len(voices))
	}
	// One record by canonical name and by uuid.
	for _, id := range []string{"aura-2-thalia-en", list.TTS[0].UUID} {
		a := do(t, shared, http.MethodGet, api.PathModels+"/"+id, tokenAuth(shared), nil, nil)
		var m api.TTSModel
		if a.status != http.StatusOK || json.Unmarshal(a.body, &m) != nil || (m.CanonicalName != id && m.UUID != id) {
			t.Errorf("GET /v1/models/%s: %d %s", id, a.status, a.body)
		}
	}
}

func TestSpeakRESTErrors(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		name, path, query, text string
		status                  int
		code, msg               string
	}{
		{"empty text", api.PathSpeak, "", "", 400, api.CodeBadRequest, api.MsgEmptyText},
		{"white space only", api.PathSpeak, "", "  \n ", 400, api.CodeBadRequest, api.MsgEmptyText},
		{"markup only", api.PathSpeak, "", "<speak></speak>", 400, api.CodeBadRequest, api.MsgEmptyText},
		{"aura-2 over 1000", api.PathSpeak, "model=aura-2-thalia-en", long(1001), 422, "Unprocessable Entity", ""},
		{"aura over 2000", api.PathSpeak, "model=aura-asteria-en", long(2001), 422, "Unprocessable Entity", ""},
		{"default voice over 2000", api.PathSpeak, "", long(2001), 422, "Unprocessable Entity", ""},
		{"flux voice on v1", api.PathSpeak, "model=flux-kit-en", "Hello.", 400, api.CodeBadRequest, ""},
		{"unknown aura voice", api.PathSpeak, "model=aura-2-nobody-en", "Hello.", 400, api.CodeBadRequest,
			`No voice "aura-2-nobody-en" is served by the local engine; GET /v1/models lists its voices.`},
		{"speed on aura-1", api.PathSpeak, "model=aura-asteria-en&speed=1.2", "Hello.", 400, api.CodeBadRequest, ""},
		{"speed on aura-2 german", api.PathSpeak, "model=aura-2-julius-de&speed=1.2", "Hallo.", 400, api.CodeBadRequest, ""},
		{"speed out of range", api.PathSpeak, "model=aura-2-thalia-en&speed=1.6", "Hello.", 400, api.CodeBadRequest, ""},
		{"bad callback method", api.PathSpeak, "callback=http%3A%2F%2F127.0.0.1%3A1%2Fcb&callback_method=GET", "Hello.", 400, api.CodeBadRequest, ""},
		{"mp3 bit rate", api.PathSpeak, "encoding=mp3&bit_rate=64000", "Hello.", 400, api.CodeBadRequest, ""},
		{"v2 without model", api.PathSpeakV2, "", "Hello.", 400, api.CodeBadRequest, ""},
		{"v2 with aura", api.PathSpeakV2, "model=aura-asteria-en", "Hello.", 400, api.CodeBadRequest, ""},
		{"v2 unknown flux voice", api.PathSpeakV2, "model=flux-nobody-en", "Hello.", 400, api.CodeBadRequest,
			`No voice "flux-nobody-en" is served by the local engine; GET /v1/models lists its voices.`},
		{"v2 speed off step", api.PathSpeakV2, "model=flux-kit-en&speed=1.03", "Hello.", 400, api.CodeBadRequest, ""},
		{"v2 expressivity", api.PathSpeakV2, "model=flux-kit-en&expressivity=3", "Hello.", 400, api.CodeBadRequest, ""},
		{"v2 empty", api.PathSpeakV2, "model=flux-kit-en", "", 400, api.CodeBadRequest, api.MsgEmptyText},
		{"v2 over the flux limit", api.PathSpeakV2, "model=flux-kit-en", long(maxFluxChars + 1), 422, "Unprocessable Entity", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			postSpeak(t, shared, tc.path, tc.query, tc.text).wantError(t, tc.status, tc.code, tc.msg)
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		a := do(t, shared, http.MethodPost, api.PathSpeak, tokenAuth(shared), []byte("{text"), jsonHeader)
		a.wantError(t, 400, api.CodeBadRequest, "")
	})
	t.Run("GET", func(t *testing.T) {
		a := do(t, shared, http.MethodGet, api.PathSpeak, tokenAuth(shared), nil, nil)
		a.wantError(t, 405, api.CodeMethodNotAllowed, "")
	})
}

// TestSpeakRESTStreams: the answer carries the service's headers and
// streams: the first bytes arrive well before the last sentence is
// synthesised.
func TestSpeakRESTStreams(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	text := strings.Repeat("This sentence is one of many in a long text that takes a while to say. ", 6)
	c := newClient(t, shared)
	start := time.Now()
	resp, err := c.Speak(ctx, text, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16"})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	firstAt := time.Since(start)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	t.Logf("first byte after %v, last after %v, %d bytes", firstAt, total, len(rest)+1)
	if firstAt > total/2 {
		t.Errorf("first byte after %v of %v: the answer is not streamed", firstAt, total)
	}
	if resp.ContentType != "audio/wav" || resp.ModelName != "aura-2-thalia-en" || resp.ModelUUID != voiceUUID("aura-2-thalia-en") ||
		resp.CharCount != len(text) || resp.RequestID == "" {
		t.Errorf("answer %+v: want audio/wav, the voice, its uuid, %d characters and a request id", resp, len(text))
	}
	if !slices.Contains(resp.Header.Values("Transfer-Encoding"), "chunked") && resp.Header.Get("Content-Length") != "" {
		// net/http hides Transfer-Encoding; a Content-Length would mean the
		// answer was buffered whole.
		t.Errorf("answer has Content-Length %s: not streamed", resp.Header.Get("Content-Length"))
	}
	buf, err := audio.Decode(ctx, bytes.NewReader(append(first, rest...)))
	if err != nil {
		t.Fatal(err)
	}
	if buf.SampleRate != api.DefaultSpeakSampleRate || buf.Frames() < 10*buf.SampleRate {
		t.Errorf("%d Hz, %d frames: want 24000 Hz and over 10 s", buf.SampleRate, buf.Frames())
	}
}

// TestSpeakRESTEncodings: every encoding decodes back with package audio
// to the duration of the same text in linear16.
func TestSpeakRESTEncodings(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	text := "Every encoding carries the same few seconds of speech."
	c := newClient(t, shared)
	get := func(t *testing.T, o api.SpeakOptions) (*api.SpeakResponse, []byte) {
		t.Helper()
		resp, err := c.Speak(ctx, text, o)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	_, ref := get(t, api.SpeakOptions{Encoding: "linear16", Container: "wav"})
	rb, err := audio.Decode(ctx, bytes.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	want := float64(rb.Frames()) / float64(rb.SampleRate)
	if want < 2 {
		t.Fatalf("reference of %.2f s: too short", want)
	}
	for _, tc := range []struct {
		o           api.SpeakOptions
		contentType string
		rate        int
		raw         audio.Encoding
	}{
		{api.SpeakOptions{}, "audio/mpeg", 22050, 0},
		{api.SpeakOptions{Encoding: "mp3", BitRate: 32000}, "audio/mpeg", 22050, 0},
		{api.SpeakOptions{Encoding: "opus"}, "audio/ogg;codecs=opus", 48000, 0},
		{api.SpeakOptions{Encoding: "flac", SampleRate: 16000}, "audio/flac", 16000, 0},
		{api.SpeakOptions{Encoding: "aac"}, "audio/aac", 22050, 0},
		{api.SpeakOptions{Encoding: "linear16", SampleRate: 8000}, "audio/wav", 8000, 0},
		{api.SpeakOptions{Encoding: "mulaw"}, "audio/wav", 8000, 0},
		{api.SpeakOptions{Encoding: "alaw", SampleRate: 16000}, "audio/wav", 16000, 0},
		{api.SpeakOptions{Encoding: "linear16", Container: "none", SampleRate: 48000}, "audio/l16;rate=48000", 48000, audio.EncodingLinear16},
		{api.SpeakOptions{Encoding: "mulaw", Container: "none"}, "audio/mulaw;rate=8000", 8000, audio.EncodingMulaw},
	} {
		name := tc.o.Encoding + "/" + tc.o.Container + "/" + strconv.Itoa(tc.o.SampleRate)
		t.Run(name, func(t *testing.T) {
			resp, b := get(t, tc.o)
			if resp.ContentType != tc.contentType {
				t.Errorf("content-type %q, want %q", resp.ContentType, tc.contentType)
			}
			var buf *audio.Buffer
			var err error
			if tc.raw != 0 {
				buf, err = audio.DecodeRaw(ctx, bytes.NewReader(b), audio.Format{Encoding: tc.raw, SampleRate: tc.rate, Channels: 1})
			} else {
				buf, err = audio.Decode(ctx, bytes.NewReader(b))
			}
			if err != nil {
				t.Fatalf("decode %d bytes: %v", len(b), err)
			}
			got := float64(buf.Frames()) / float64(buf.SampleRate)
			if buf.SampleRate != tc.rate || math.Abs(got-want) > 0.15 {
				t.Errorf("%d Hz, %.3f s; want %d Hz, %.3f s", buf.SampleRate, got, tc.rate, want)
			}
		})
	}
	t.Run("v2 flux voice", func(t *testing.T) {
		exp := 2
		resp, err := c.SpeakV2(ctx, text, api.SpeakV2Options{Model: "flux-kit-en", Speed: 1.5, Expressivity: &exp, Encoding: "flac"})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Close()
		buf, err := audio.Decode(ctx, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(buf.Frames()) / float64(buf.SampleRate)
		if resp.ModelName != "flux-kit-en" || got > want*0.85 || got < want*0.5 {
			t.Errorf("model %s, %.2f s at speed 1.5; want flux-kit-en, clearly shorter than %.2f s", resp.ModelName, got, want)
		}
	})
}

// TestSpeakCallback: with a callback the answer is {"request_id"} and the
// audio goes to the callback URL, with the same headers.
func TestSpeakCallback(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	type delivery struct {
		method string
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Method, r.Header, b}
	}))
	defer srv.Close()
	c := newClient(t, shared)
	resp, err := c.Speak(ctx, "The audio goes to the callback.", api.SpeakOptions{Encoding: "linear16", Callback: srv.URL + "/cb", CallbackMethod: "PUT"})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := api.DecodeCallbackAccepted(resp)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if d.method != http.MethodPut || d.header.Get(api.HeaderRequestID) != ack.RequestID || d.header.Get(headerModelName) != api.DefaultSpeakModel {
			t.Errorf("delivery %s %v; want PUT with request id %s", d.method, d.header, ack.RequestID)
		}
		buf, err := audio.Decode(ctx, bytes.NewReader(d.body))
		if err != nil || buf.Frames() < buf.SampleRate {
			t.Errorf("delivered audio: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("no delivery")
	}
}

func TestSpeakStreamHandshake(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	for _, tc := range []struct {
		name, path, query string
	}{
		{"v1 mp3", api.PathSpeak, "encoding=mp3"},
		{"v1 opus", api.PathSpeak, "encoding=opus"},
		{"v1 flac", api.PathSpeak, "encoding=flac"},
		{"v1 aac", api.PathSpeak, "encoding=aac"},
		{"v1 container", api.PathSpeak, "container=wav"},
		{"v1 flux voice", api.PathSpeak, "model=flux-kit-en"},
		{"v1 mulaw 24000", api.PathSpeak, "encoding=mulaw&sample_rate=24000"},
		{"v2 no model", api.PathSpeakV2, ""},
		{"v2 aura", api.PathSpeakV2, "model=aura-asteria-en"},
		{"v2 mp3", api.PathSpeakV2, "model=flux-kit-en&encoding=mp3"},
		{"v2 opus", api.PathSpeakV2, "model=flux-kit-en&encoding=opus"},
		{"v2 flac", api.PathSpeakV2, "model=flux-kit-en&encoding=flac"},
		{"v2 aac", api.PathSpeakV2, "model=flux-kit-en&encoding=aac"},
		{"v2 container", api.PathSpeakV2, "model=flux-kit-en&container=none"},
		{"v2 bit_rate", api.PathSpeakV2, "model=flux-kit-en&bit_rate=48000"},
		{"v2 callback", api.PathSpeakV2, "model=flux-kit-en&callback=http%3A%2F%2F127.0.0.1%2F"},
		{"v2 callback_method", api.PathSpeakV2, "model=flux-kit-en&callback_method=POST"},
		{"v2 priority", api.PathSpeakV2, "model=flux-kit-en&priority=low"},
		{"v2 unknown", api.PathSpeakV2, "model=flux-kit-en&sped=1.1"},
		{"v2 speed off step", api.PathSpeakV2, "model=flux-kit-en&speed=1.07"},
		{"v2 expressivity", api.PathSpeakV2, "model=flux-kit-en&expressivity=-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, a := dialSpeakRaw(t, ctx, shared, tc.path, tc.query)
			if conn != nil {
				t.Fatal("handshake accepted")
			}
			if a.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400: %s", a.status, a.body)
			}
			a.legacy(t)
		})
	}
}

// TestSpeakStreamV1 runs a /v1/speak WebSocket through the client: Metadata
// first, audio then Flushed for each Flush, Clear answered Cleared, Close
// ending with 1000.
func TestSpeakStreamV1(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	st, err := newClient(t, shared).SpeakStream(ctx, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "mulaw", SampleRate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	next := func() api.SpeakMessage {
		t.Helper()
		m, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		return m
	}
	md, ok := next().(*api.SpeakMetadata)
	if !ok || md.ModelName != "aura-2-thalia-en" || md.ModelUUID != voiceUUID("aura-2-thalia-en") || md.RequestID == "" {
		t.Fatalf("first message %#v, want Metadata of the voice", md)
	}
	audioUntil := func(typ string) (int, api.SpeakMessage) {
		t.Helper()
		n := 0
		for {
			m := next()
			if a, ok := m.(*api.SpeakAudio); ok {
				n += len(a.Data)
				continue
			}
			if m.MessageType() != typ {
				t.Fatalf("got %#v, want audio then %s", m, typ)
			}
			return n, m
		}
	}
	for seq := range 2 {
		if err := st.Speak(ctx, "Hello there."); err != nil {
			t.Fatal(err)
		}
		if err := st.Speak(ctx, "How are you today?"); err != nil {
			t.Fatal(err)
		}
		if err := st.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		n, m := audioUntil(api.TypeFlushed)
		if f := m.(*api.Flushed); f.SequenceID != seq {
			t.Errorf("Flushed %d, want %d", f.SequenceID, seq)
		}
		// mu-law at 16 kHz: a byte a sample; two short sentences.
		if n < 16000 || n > 16000*6 {
			t.Errorf("flush %d: %d bytes of audio", seq, n)
		}
	}
	// A Flush of nothing is answered at once, with no audio.
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, m := audioUntil(api.TypeFlushed); n != 0 || m.(*api.Flushed).SequenceID != 2 {
		t.Errorf("empty flush: %d bytes, %#v", n, m)
	}
	if err := st.Speak(ctx, "This is never spoken."); err != nil {
		t.Fatal(err)
	}
	if err := st.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if n, m := audioUntil(api.TypeCleared); n != 0 || m.(*api.Cleared).SequenceID != 0 {
		t.Errorf("clear: %d bytes, %#v", n, m)
	}
	// Close speaks what is buffered, then closes normally.
	if err := st.Speak(ctx, "Goodbye."); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		m, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after Close: %v", err)
		}
		a, ok := m.(*api.SpeakAudio)
		if !ok {
			t.Fatalf("after Close: %#v", m)
		}
		n += len(a.Data)
	}
	if n == 0 {
		t.Error("Close dropped the buffered text")
	}
}

// TestSpeakStreamClearDropsAudio: Clear stops the audio of a Flush in
// progress; nothing of it arrives after Cleared, and the stream goes on.
func TestSpeakStreamClearDropsAudio(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	conn, a := dialSpeakRaw(t, ctx, shared, api.PathSpeak, "")
	if a != nil {
		t.Fatalf("handshake: %d %s", a.status, a.body)
	}
	if f := readFrame(t, ctx, conn); f.typ() != api.TypeMetadata {
		t.Fatalf("first %v", f.msg)
	}
	long := strings.Repeat("A long text keeps the engine busy for a good while. ", 30)
	sendJSON(t, ctx, conn, `{"type":"Speak","text":"`+long+`"}`)
	sendJSON(t, ctx, conn, `{"type":"Flush"}`)
	if f := readFrame(t, ctx, conn); f.audio == nil {
		t.Fatalf("got %v, want audio", f.msg)
	}
	sendJSON(t, ctx, conn, `{"type":"Clear"}`)
	fs := readUntilType(t, ctx, conn, api.TypeCleared)
	bytesAfter := 0
	for _, f := range fs {
		bytesAfter += len(f.audio)
		if f.typ() == api.TypeFlushed {
			t.Errorf("Flushed of a cleared flush: %v", f.msg)
		}
	}
	// 30 sentences are about 90 s of audio, 4.3 MB of linear16 at 24 kHz.
	if bytesAfter > 2<<20 {
		t.Errorf("%d bytes of audio came between Clear and Cleared", bytesAfter)
	}
	sendJSON(t, ctx, conn, `{"type":"Speak","text":"Still here."}`)
	sendJSON(t, ctx, conn, `{"type":"Flush"}`)
	fs = readUntilType(t, ctx, conn, api.TypeFlushed)
	if got := frameTypes(fs); !slices.Equal(got, []string{api.TypeAudio, api.TypeFlushed}) {
		t.Errorf("after Clear: %v, want audio then Flushed", got)
	}
	if seq := fs[len(fs)-1].msg["sequence_id"]; seq != 1.0 {
		t.Errorf("sequence_id %v, want 1 (the cleared flush was 0)", seq)
	}
}

// TestSpeakStreamLimits: empty text, too many flushes and characters too
// fast are answered as the service answers them, and the client slows
// down on DATA-0001.
func TestSpeakStreamLimits(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	t.Run("empty text", func(t *testing.T) {
		conn, _ := dialSpeakRaw(t, ctx, shared, api.PathSpeak, "")
		readFrame(t, ctx, conn)
		sendJSON(t, ctx, conn, `{"type":"Speak","text":""}`)
		f := readFrame(t, ctx, conn)
		m, err := api.DecodeSpeakMessage(mustJSON(t, f.msg))
		if e, ok := m.(*api.StreamError); err != nil || !ok || e.Err().Code != api.CodeBadRequest || e.Err().Message != api.MsgEmptyText {
			t.Fatalf("got %v, want the 400 error", f.msg)
		}
		// The stream goes on.
		sendJSON(t, ctx, conn, `{"type":"Flush"}`)
		if f := readFrame(t, ctx, conn); f.typ() != api.TypeFlushed {
			t.Errorf("got %v, want Flushed", f.msg)
		}
	})
	t.Run("excessive flush", func(t *testing.T) {
		conn, _ := dialSpeakRaw(t, ctx, shared, api.PathSpeak, "")
		readFrame(t, ctx, conn)
		for range api.MaxFlushesPerMinute + 1 {
			sendJSON(t, ctx, conn, `{"type":"Flush"}`)
		}
		// The warning is sent at once; each Flushed after the audio (none
		// here) of the flushes before it.
		var seqs []float64
		warned := false
		for range api.MaxFlushesPerMinute + 1 {
			f := readFrame(t, ctx, conn)
			switch f.typ() {
			case api.TypeFlushed:
				seqs = append(seqs, f.msg["sequence_id"].(float64))
			case api.TypeWarning:
				if f.msg["warn_code"] != api.CodeExcessiveFlush || f.msg["warn_msg"] != msgExcessiveFlush {
					t.Errorf("got %v, want Warning EXCESSIVE_FLUSH with warn_code and warn_msg", f.msg)
				}
				warned = true
			default:
				t.Fatalf("got %v", f.msg)
			}
		}
		if !warned || len(seqs) != api.MaxFlushesPerMinute || seqs[0] != 0 || seqs[len(seqs)-1] != api.MaxFlushesPerMinute-1 {
			t.Errorf("warned %v, flushed %v: want 20 flushes, 0 to 19, and the warning", warned, seqs)
		}
	})
	t.Run("character rate", func(t *testing.T) {
		st, err := newClient(t, shared).SpeakStream(ctx, api.SpeakOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		chunk := strings.Repeat("word ", 200) // 1000 characters
		for range speakCharBurst/len(chunk) + 2 {
			if err := st.Speak(ctx, chunk); err != nil {
				t.Fatal(err)
			}
		}
		for {
			m, err := st.Next(ctx)
			if err != nil {
				t.Fatalf("no DATA-0001: %v", err)
			}
			if w, ok := m.(*api.SpeakWarning); ok {
				if w.Code != api.CodeRateTooHigh {
					t.Fatalf("warning %+v, want DATA-0001", w)
				}
				break
			}
		}
	})
	t.Run("binary frame", func(t *testing.T) {
		conn, _ := dialSpeakRaw(t, ctx, shared, api.PathSpeak, "")
		readFrame(t, ctx, conn)
		if err := conn.Write(ctx, websocket.MessageBinary, []byte{1, 2}); err != nil {
			t.Fatal(err)
		}
		if f := readFrame(t, ctx, conn); f.typ() != api.TypeError || f.msg["code"] != codeMessageType {
			t.Errorf("got %v, want Error MESSAGE-0000", f.msg)
		}
		_, _, err := conn.Read(ctx)
		if websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
			t.Errorf("closed with %v, want 1003", err)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// speechConn is a /v2/speak client of the tests.
type speechConn struct {
	t   *testing.T
	ctx context.Context
	st  *api.SpeechStream
}

func openSpeech(t *testing.T, ctx context.Context, o api.SpeakV2Options) *speechConn {
	t.Helper()
	if o.Model == "" {
		o.Model = "flux-kit-en"
	}
	st, err := newClient(t, shared).SpeechStream(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sc := &speechConn{t: t, ctx: ctx, st: st}
	if c, ok := sc.next().(*api.SpeechConnected); !ok || c.ModelName != o.Model || c.RequestID == "" || len(c.ModelUUIDs) != 1 {
		t.Fatalf("first message %#v, want Connected", c)
	}
	return sc
}

func (c *speechConn) next() api.SpeechMessage {
	c.t.Helper()
	m, err := c.st.Next(c.ctx)
	if err != nil {
		c.t.Fatalf("Next: %v", err)
	}
	return m
}

// until reads messages up to and including the first of type typ.
func (c *speechConn) until(typ string) []api.SpeechMessage {
	c.t.Helper()
	var out []api.SpeechMessage
	for {
		m := c.next()
		out = append(out, m)
		if m.MessageType() == typ {
			return out
		}
	}
}

func speechTypes(ms []api.SpeechMessage) []string {
	var out []string
	for _, m := range ms {
		ty := m.MessageType()
		if ty == api.TypeAudio && len(out) > 0 && out[len(out)-1] == api.TypeAudio {
			continue
		}
		out = append(out, ty)
	}
	return out
}

func audioBytes(ms []api.SpeechMessage) int {
	n := 0
	for _, m := range ms {
		if a, ok := m.(*api.SpeakAudio); ok {
			n += len(a.Data)
		}
	}
	return n
}

// TestSpeechStreamTurn: a turn is SpeechStarted, audio, Flushed,
// SpeechMetadata, with audio before the Flush; Close ends with
// SessionMetadata and 1000.
func TestSpeechStreamTurn(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := openSpeech(t, ctx, api.SpeakV2Options{Encoding: "linear16", SampleRate: 16000})
	first := "The first sentence is complete."
	if err := c.st.Speak(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := c.st.Speak(ctx, "And the second is still"); err != nil {
		t.Fatal(err)
	}
	// Audio of the first sentence comes before any Flush.
	ms := c.until(api.TypeAudio)
	st, ok := ms[0].(*api.SpeechTurnStarted)
	if !ok || len(ms) != 2 || !strings.HasPrefix(st.SpeechID, "dg_sp_") || len(st.SpeechID) != 18 {
		t.Fatalf("before the Flush: %v, want SpeechStarted with a dg_sp_ id and audio", speechTypes(ms))
	}
	if err := c.st.Speak(ctx, "being written."); err != nil {
		t.Fatal(err)
	}
	if err := c.st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ms = append(ms, c.until(api.TypeSpeechMetadata)...)
	if got, want := speechTypes(ms), []string{api.TypeSpeechStarted, api.TypeAudio, api.TypeFlushed, api.TypeSpeechMetadata}; !slices.Equal(got, want) {
		t.Fatalf("turn %v, want %v", got, want)
	}
	fl := ms[len(ms)-2].(*api.SpeechFlushed)
	md := ms[len(ms)-1].(*api.SpeechMetadata)
	sent := first + " And the second is still being written."
	n := audioBytes(ms)
	if fl.SpeechID != st.SpeechID || md.SpeechID != st.SpeechID || md.InputCharacterCount != len(sent) || md.BillableCharacterCount != len(sent) ||
		math.Abs(float64(md.AudioDurationMS)-float64(n)/2*1000/16000) > 1 {
		t.Errorf("Flushed %+v, metadata %+v; want id %s, %d characters, %d ms", fl, md, st.SpeechID, len(sent), n/2*1000/16000)
	}
	// A second turn has a new id.
	if err := c.st.Speak(ctx, "Another turn."); err != nil {
		t.Fatal(err)
	}
	if err := c.st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ms2 := c.until(api.TypeSpeechMetadata)
	if st2, ok := ms2[0].(*api.SpeechTurnStarted); !ok || st2.SpeechID == st.SpeechID {
		t.Errorf("second turn starts %#v", ms2[0])
	}
	if err := c.st.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	sm, ok := c.next().(*api.SessionMetadata)
	total := len(sent) + len("Another turn.")
	if !ok || sm.TotalInputCharacterCount != total || sm.TotalAudioDurationMS < md.AudioDurationMS {
		t.Errorf("session %#v, want %d characters", sm, total)
	}
	if _, err := c.st.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after SessionMetadata: %v, want the normal close", err)
	}
}

// TestSpeechStreamInterrupt (must show): an Interrupt in the middle of a
// turn stops its audio at once, and text_spoken + text_remaining is the
// turn's text as sent.
func TestSpeechStreamInterrupt(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := openSpeech(t, ctx, api.SpeakV2Options{})
	parts := []string{
		"Once upon a time there was a small village by the sea.",
		"Every morning the fishermen went out in their boats,",
		"and every evening they came home with their nets full.",
	}
	var sent string
	for range 6 {
		for _, p := range parts {
			if err := c.st.Speak(ctx, p); err != nil {
				t.Fatal(err)
			}
			sent += api.SpeechSeparator(lastOr(sent), p) + p
		}
	}
	if err := c.st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A second of audio (24 kHz linear16), then the interrupt.
	var ms []api.SpeechMessage
	for audioBytes(ms) < 48000 {
		ms = append(ms, c.next())
	}
	if err := c.st.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	ms = append(ms, c.until(api.TypeSpeechInterrupted)...)
	in := ms[len(ms)-1].(*api.SpeechInterrupted)
	id := ms[0].(*api.SpeechTurnStarted).SpeechID
	if in.SpeechID != id {
		t.Errorf("interrupted %s, want %s", in.SpeechID, id)
	}
	if in.TextSpoken+in.TextRemaining != sent {
		t.Fatalf("text_spoken %q + text_remaining %q is not the text sent %q", in.TextSpoken, in.TextRemaining, sent)
	}
	if in.TextSpoken == "" || in.TextRemaining == "" {
		t.Errorf("spoken %q, remaining %q: want the interrupt mid-turn", in.TextSpoken, in.TextRemaining)
	}
	for _, m := range ms {
		if ty := m.MessageType(); ty == api.TypeFlushed || ty == api.TypeSpeechMetadata {
			t.Errorf("%s in an interrupted turn", ty)
		}
	}
	// Speech of the words spoken: at most the audio sent (24 kHz linear16),
	// at a generous 30 characters a second.
	secs := float64(audioBytes(ms)) / 2 / 24000
	if float64(len(in.TextSpoken)) > 30*secs+80 {
		t.Errorf("%d characters spoken in %.2f s of audio", len(in.TextSpoken), secs)
	}
	t.Logf("interrupted after %.2f s of audio: spoken %q", secs, in.TextSpoken)
	// Nothing more of that turn: the next message belongs to a new turn.
	if err := c.st.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := c.next().(*api.SpeechWarning); !ok || w.Code != api.CodeNoActiveSpeech {
		t.Errorf("second Interrupt: %#v, want Warning NO_ACTIVE_SPEECH", w)
	}
	if err := c.st.Speak(ctx, "A new turn."); err != nil {
		t.Fatal(err)
	}
	if err := c.st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ms = c.until(api.TypeSpeechMetadata)
	if got := speechTypes(ms); !slices.Equal(got, []string{api.TypeSpeechStarted, api.TypeAudio, api.TypeFlushed, api.TypeSpeechMetadata}) {
		t.Errorf("turn after the interrupt: %v", got)
	}
}

func lastOr(s string) string {
	if s == "" {
		return ""
	}
	return s[len(s)-1:]
}

// TestSpeechStreamMessages: warnings and Configure.
func TestSpeechStreamMessages(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	t.Run("no active speech", func(t *testing.T) {
		c := openSpeech(t, ctx, api.SpeakV2Options{})
		for _, send := range []func(context.Context) error{c.st.Flush, c.st.Interrupt} {
			if err := send(ctx); err != nil {
				t.Fatal(err)
			}
			if w, ok := c.next().(*api.SpeechWarning); !ok || w.Code != api.CodeNoActiveSpeech {
				t.Errorf("got %#v, want Warning NO_ACTIVE_SPEECH", w)
			}
		}
	})
	t.Run("markup stripped", func(t *testing.T) {
		c := openSpeech(t, ctx, api.SpeakV2Options{})
		if err := c.st.Speak(ctx, `<speak>Hello <break time="1s"/> world.</speak>`); err != nil {
			t.Fatal(err)
		}
		if w, ok := c.next().(*api.SpeechWarning); !ok || w.Code != api.CodeInputMarkupStripped {
			t.Fatalf("got %#v, want Warning INPUT_MARKUP_STRIPPED", w)
		}
		if err := c.st.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		ms := c.until(api.TypeSpeechMetadata)
		md := ms[len(ms)-1].(*api.SpeechMetadata)
		if md.BillableCharacterCount != len("Hello world.") && md.BillableCharacterCount != len("Hello  world.") {
			t.Errorf("billable %d: markup counted", md.BillableCharacterCount)
		}
	})
	t.Run("configure speed", func(t *testing.T) {
		c := openSpeech(t, ctx, api.SpeakV2Options{Speed: 1.5})
		text := "The speed changes between these two turns."
		turn := func() int {
			t.Helper()
			if err := c.st.Speak(ctx, text); err != nil {
				t.Fatal(err)
			}
			if err := c.st.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			ms := c.until(api.TypeSpeechMetadata)
			return ms[len(ms)-1].(*api.SpeechMetadata).AudioDurationMS
		}
		fast := turn()
		if err := c.st.Configure(ctx, 0.5); err != nil {
			t.Fatal(err)
		}
		slow := turn()
		if float64(slow) < 2*float64(fast) {
			t.Errorf("turn at speed 0.5 lasts %d ms, at 1.5 %d ms: want about three times longer", slow, fast)
		}
	})
	t.Run("configure refused", func(t *testing.T) {
		conn, _ := dialSpeakRaw(t, ctx, shared, api.PathSpeakV2, "model=flux-kit-en")
		readFrame(t, ctx, conn)
		sendJSON(t, ctx, conn, `{"type":"Configure","speed":2}`)
		if f := readFrame(t, ctx, conn); f.typ() != api.TypeWarning || f.msg["code"] != codeConfigureRefused {
			t.Errorf("got %v, want Warning %s", f.msg, codeConfigureRefused)
		}
	})
	t.Run("unknown message", func(t *testing.T) {
		conn, _ := dialSpeakRaw(t, ctx, shared, api.PathSpeakV2, "model=flux-kit-en")
		readFrame(t, ctx, conn)
		sendJSON(t, ctx, conn, `{"type":"Clear"}`)
		f := readFrame(t, ctx, conn)
		if f.typ() != api.TypeError || f.msg["code"] != codeUnrecognized || f.msg["description"] == "" {
			t.Errorf("got %v, want Error DATA-0000 with a description", f.msg)
		}
		_, _, err := conn.Read(ctx)
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("closed with %v, want 1008", err)
		}
	})
}

// TestSpeakStreamsCount: speak sockets count against the connection
// allowance, and Close ends them.
func TestSpeakStreamsCount(t *testing.T) {
	t.Parallel()
	l := startEngine(t, Config{MaxConnections: 1})
	ctx := testContext(t, time.Minute)
	conn, a := dialSpeakRaw(t, ctx, l, api.PathSpeakV2, "model=flux-kit-en")
	if a != nil {
		t.Fatalf("first: %d %s", a.status, a.body)
	}
	readFrame(t, ctx, conn)
	if _, a := dialSpeakRaw(t, ctx, l, api.PathSpeak, ""); a == nil || a.status != http.StatusTooManyRequests {
		t.Fatalf("second socket: %+v, want 429", a)
	}
	postSpeak(t, l, api.PathSpeak, "", "Hello.").wantError(t, http.StatusTooManyRequests, api.CodeTooManyRequests, "")
	sendJSON(t, ctx, conn, `{"type":"Speak","text":"`+strings.Repeat("Keep talking for a while. ", 40)+`"}`)
	sendJSON(t, ctx, conn, `{"type":"Flush"}`)
	readUntilType(t, ctx, conn, api.TypeAudio)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Engine.Close()
	}()
	for {
		_, _, err := conn.Read(ctx)
		if err != nil {
			if s := websocket.CloseStatus(err); s != websocket.StatusGoingAway {
				t.Errorf("closed with %v, want 1001", err)
			}
			break
		}
	}
	<-done
}

func TestStreamFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		enc  string
		rate int
		want audio.Encoding
		wr   int
	}{
		{"", 0, audio.EncodingLinear16, 24000},
		{"linear16", 44100, audio.EncodingLinear16, 44100},
		{"mulaw", 0, audio.EncodingMulaw, 8000},
		{"alaw", 16000, audio.EncodingAlaw, 16000},
	} {
		t.Run(tc.enc, func(t *testing.T) {
			e, r, err := streamFormat(tc.enc, tc.rate)
			if err != nil || e != tc.want || r != tc.wr {
				t.Errorf("streamFormat(%q, %d) = %v, %d, %v", tc.enc, tc.rate, e, r, err)
			}
		})
	}
	if _, _, err := streamFormat("mp3", 0); err == nil {
		t.Error("mp3 streams")
	}
}

// TestSpeakUnsayable: a text with nothing the voice can say (emoji only,
// another language's script) is refused with words that say so, on
// every path, where the voices gave 0 s of audio (flite) or spelled out
// "caractère chinois" (espeak-ng) in silence; in a text with words, the
// rest is left out, and the socket says what.
func TestSpeakUnsayable(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	c := newClient(t, shared)
	for _, tt := range []struct{ voice, text, says string }{
		{"aura-asteria-en", "😀🎉👍", "only 3 emoji and symbols (😀 🎉 👍)"},
		{"aura-asteria-en", "你好世界。", "speaks English, and this text has nothing it can say: only 4 Chinese characters"},
		{"aura-2-agathe-fr", "你好世界。", "speaks French, and this text has nothing it can say: only 4 Chinese characters"},
	} {
		_, err := c.Speak(ctx, tt.text, api.SpeakOptions{Model: tt.voice, Encoding: "linear16", Container: "wav"})
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, tt.says) {
			t.Errorf("POST /v1/speak %s %q = %v, want 400 saying %q", tt.voice, tt.text, err, tt.says)
		}
	}
	// With words, the words are said and the rest left out: the audio
	// is that of the words alone.
	length := func(text string) time.Duration {
		resp, err := c.Speak(ctx, text, api.SpeakOptions{Model: "aura-2-agathe-fr", Encoding: "linear16", Container: "none", SampleRate: 16000})
		if err != nil {
			t.Fatalf("Speak %q: %v", text, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Close()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(len(b)/2) * time.Second / 16000
	}
	if mixed, plain := length("Bonjour 你好 le monde 😀."), length("Bonjour le monde."); mixed > plain+300*time.Millisecond {
		t.Errorf("mixed text: %v of audio, the words alone %v: what is not said was spelled out", mixed, plain)
	}

	// answer sends a Speak of text on a new socket and reads the answer.
	answer := func(t *testing.T, path, query, text string) (*websocket.Conn, rawFrame) {
		conn, _ := dialSpeakRaw(t, ctx, shared, path, query)
		readFrame(t, ctx, conn)
		sendJSON(t, ctx, conn, `{"type":"Speak","text":"`+text+`"}`)
		return conn, readFrame(t, ctx, conn)
	}
	t.Run("v1 socket", func(t *testing.T) {
		conn, f := answer(t, api.PathSpeak, "", "😀")
		if f.typ() != api.TypeError || f.msg["code"] != api.CodeBadRequest || !strings.Contains(fmt.Sprint(f.msg["description"]), "only 1 emoji") {
			t.Errorf("got %v, want a 400 error saying the voice has nothing to say", f.msg)
		}
		sendJSON(t, ctx, conn, `{"type":"Speak","text":"Hello 😀 there."}`)
		if f := readFrame(t, ctx, conn); f.typ() != api.TypeWarning || f.msg["warn_code"] != api.CodeTextSkipped || !strings.Contains(fmt.Sprint(f.msg["warn_msg"]), "does not say 1 emoji and symbols (😀)") {
			t.Errorf("got %v, want a Warning TEXT_SKIPPED", f.msg)
		}
		sendJSON(t, ctx, conn, `{"type":"Flush"}`)
		audioBytes := 0
		for _, f := range readUntilType(t, ctx, conn, api.TypeFlushed) {
			audioBytes += len(f.audio)
		}
		if audioBytes == 0 {
			t.Error("no audio for the words")
		}
	})
	t.Run("v2 socket", func(t *testing.T) {
		if _, f := answer(t, api.PathSpeakV2, "model=flux-kit-en", "你好"); f.typ() != api.TypeWarning || f.msg["code"] != api.CodeTextSkipped || !strings.Contains(fmt.Sprint(f.msg["description"]), "nothing it can say: only 2 Chinese characters") {
			t.Errorf("got %v, want a Warning TEXT_SKIPPED saying there is nothing to say", f.msg)
		}
	})
}
