package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
)

// serveRecorded runs one request through the shared engine's handler in
// process, so a panic reaches the fuzzer instead of net/http's recovery.
func serveRecorded(ctx context.Context, req *http.Request) *httptest.ResponseRecorder {
	req = req.WithContext(ctx)
	req.Host = "127.0.0.1"
	req.Header.Set("Authorization", tokenAuth(shared))
	rec := httptest.NewRecorder()
	shared.Engine.Handler().ServeHTTP(rec, req)
	return rec
}

// checkListenAnswer checks that an answer of POST /v1/listen is one the
// service could give: 200 with a transcription, or a client error with
// the legacy error body.
func checkListenAnswer(t *testing.T, rec *httptest.ResponseRecorder, allowed ...int) {
	t.Helper()
	body := rec.Body.Bytes()
	rid := rec.Header().Get(api.HeaderRequestID)
	if rid == "" {
		t.Fatalf("status %d without %s", rec.Code, api.HeaderRequestID)
	}
	ok := rec.Code == http.StatusOK
	for _, s := range allowed {
		ok = ok || rec.Code == s
	}
	if !ok {
		t.Fatalf("status %d: %s", rec.Code, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if rec.Code == http.StatusOK {
		var r api.ListenResponse
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("200 with a body that is not a transcription (%v): %s", err, body)
		}
		if r.Metadata.TransactionKey != "deprecated" || r.Metadata.RequestID != rid || len(r.Results.Channels) == 0 ||
			len(r.Metadata.Models) != 1 || r.Metadata.Created == "" {
			t.Fatalf("transcription %s", body)
		}
		for _, ch := range r.Results.Channels {
			if len(ch.Alternatives) != 1 || ch.Alternatives[0].Words == nil {
				t.Fatalf("channel %+v", ch)
			}
		}
		return
	}
	var e api.LegacyErrorBody
	if err := dec.Decode(&e); err != nil || e.ErrCode == "" || e.ErrMsg == "" || e.RequestID != rid {
		t.Fatalf("status %d with a body that is not an error body (%v): %s", rec.Code, err, body)
	}
}

// fuzzWAV is a WAV file of one spoken word ("he", 0.2 s), cheap to
// transcribe: recognition costs about a third of the audio's duration
// once the detector hears speech, so fuzz inputs keep their audio short.
func fuzzWAV(t testing.TB) []byte {
	return wavBytes(t, clipSamples(t, "0880")[2400:5600], 16000, 1)
}

// maxFuzzAudio bounds the audio bytes of one fuzz input, so that each
// input costs a few tens of milliseconds.
const maxFuzzAudio = 16 << 10

// FuzzListenQuery sends arbitrary query strings with a small valid WAV
// file to POST /v1/listen: the engine must never panic and must answer
// 200 or a client error, always in the service's shapes.
func FuzzListenQuery(f *testing.F) {
	wav := fuzzWAV(f)
	for _, q := range []string{
		"",
		"model=nova-3&language=en-US&punctuate=true&smart_format=true",
		"encoding=linear16&sample_rate=16000",
		"diarize_model=latest&diarize=true",
		"diarize_model=v1&utterances=true&utt_split=0.2&paragraphs=true",
		"summarize=v2&topics=true",
		"redact=pci&redact=ssn,numbers&detect_entities=true",
		"extra=a:b&extra=c:&tag=x&tag=y",
		"multichannel=true&channels=2&numerals=true",
		"model=whisper&version=latest",
		"endpointing=abc&utt_split=-1&sample_rate=99999999999999999999",
		"%zz&=&&==;a=b;c",
		"callback=http://127.0.0.1:1/&callback_method=get",
		"keyterm=a&keyterm=b&language=multi",
		"redact=true&redact=aggressive_numbers&smart_format=true&detect_entities=true&diarize_model=v2",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, api.PathListen, bytes.NewReader(wav))
		req.URL.RawQuery = q
		rec := serveRecorded(ctx, req)
		if ctx.Err() != nil {
			t.Fatalf("query %q: no answer within 20 s", q)
		}
		checkListenAnswer(t, rec, http.StatusBadRequest, http.StatusForbidden)
	})
}

// Raw formats a fuzzed body is declared as.
var fuzzBodyQueries = []string{
	"",
	"encoding=linear16&sample_rate=16000",
	"encoding=mulaw&sample_rate=8000",
	"encoding=alaw&sample_rate=8000&channels=2",
	"encoding=linear32&sample_rate=48000&multichannel=true&channels=2",
	"encoding=flac",
	"encoding=ogg-opus",
	"diarize_model=latest&utterances=true&smart_format=true&detect_entities=true",
}

// FuzzBatchBody sends arbitrary bodies to POST /v1/listen, as containers
// and declared raw formats, and as the JSON {"url": ...} form: the engine
// must never panic and answer 200, 400 or 413.
func FuzzBatchBody(f *testing.F) {
	for _, name := range []string{"speech-8k.mulaw", "speech-float.wav", "speech-44k-stereo.wav"} {
		b := readFile(f, "../audio/testdata/"+name)
		f.Add(b[:min(len(b), 4096)], uint8(0))
	}
	wav := fuzzWAV(f)
	f.Add(wav, uint8(0))
	f.Add(wav, uint8(1))
	f.Add(wav[44:], uint8(1))
	f.Add(wav[:300], uint8(7))
	f.Add(readFile(f, "../audio/testdata/speech.opus")[:3000], uint8(6))
	f.Add(readFile(f, "../audio/testdata/speech.flac")[:3000], uint8(5))
	f.Add([]byte{}, uint8(2))
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), uint8(0))
	f.Add([]byte(`{"url": "ftp://127.0.0.1/"}`), uint8(100))
	f.Add([]byte(`{"url": "http://127.0.0.1:1/a.wav"}`), uint8(100))
	f.Add([]byte(`{"url": `), uint8(100))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		body = body[:min(len(body), maxFuzzAudio)]
		ctype := "application/octet-stream"
		q := fuzzBodyQueries[int(mode)%len(fuzzBodyQueries)]
		if mode >= 100 {
			// The JSON form makes the engine fetch the URL: only ever let
			// it reach this machine.
			ctype, q = "application/json", ""
			if !loopbackURL(body) {
				t.Skip("the body names a URL outside this machine")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, api.PathListen+"?"+q, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		rec := serveRecorded(ctx, req)
		if ctx.Err() != nil {
			// A small body can hold a long recording (FLAC compresses
			// silence a thousandfold): the engine stopped when the caller
			// went away, which is all that is asked of it.
			t.Skip("the recording is too long for a fuzz input")
		}
		checkListenAnswer(t, rec, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
	})
}

// loopbackURL reports whether a JSON body, read as the engine reads it,
// names no URL or one on this machine.
func loopbackURL(body []byte) bool {
	var req struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		return true
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return true
	}
	ip := net.ParseIP(strings.Trim(u.Hostname(), "[]"))
	return ip != nil && ip.IsLoopback()
}

// Queries of a fuzzed stream.
var fuzzStreamQueries = []string{
	"encoding=linear16&sample_rate=16000",
	"",
	"encoding=mulaw&sample_rate=8000&interim_results=true&vad_events=true",
	"encoding=linear16&sample_rate=16000&interim_results=true&utterance_end_ms=1000&detect_entities=true&smart_format=true",
	"encoding=alaw&sample_rate=16000&channels=2&diarize_model=latest&endpointing=10",
	"encoding=linear32&sample_rate=8000&endpointing=false&punctuate=true&redact=numbers",
}

// Control messages a fuzzed stream sends.
var fuzzControls = []string{
	`{"type":"KeepAlive"}`, `{"type":"Finalize"}`, `{"type":"CloseStream"}`, `{"type":"Finalize","channel":0}`,
	`{"type":"Configure"}`, `{}`, `null`,
}

// fuzzFrame is one frame a fuzzed client sends.
type fuzzFrame struct {
	typ  websocket.MessageType
	data []byte
}

// fuzzFrames reads a sequence of frames from fuzz data: each starts with
// an operation byte; binary and text frames take their length from the
// next byte. The audio of all frames together is at most maxFuzzAudio.
func fuzzFrames(data []byte) []fuzzFrame {
	var out []fuzzFrame
	audioBytes := 0
	take := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n]
		data = data[n:]
		return b
	}
	for len(data) > 0 && len(out) < 64 {
		op := take(1)[0]
		switch op % 5 {
		case 0, 1: // binary audio, up to 4 KiB
			n := 0
			if l := take(1); len(l) == 1 {
				n = min(int(l[0])*16+1, maxFuzzAudio-audioBytes)
			}
			b := bytes.Clone(take(n))
			audioBytes += len(b)
			if len(b) > 0 {
				out = append(out, fuzzFrame{websocket.MessageBinary, b})
			}
		case 2: // a text frame of arbitrary bytes
			n := 0
			if l := take(1); len(l) == 1 {
				n = int(l[0])
			}
			out = append(out, fuzzFrame{websocket.MessageText, bytes.Clone(take(n))})
		case 3:
			out = append(out, fuzzFrame{websocket.MessageText, []byte(fuzzControls[int(op/5)%len(fuzzControls)])})
		case 4: // the zero-length binary frame that closes a stream
			out = append(out, fuzzFrame{websocket.MessageBinary, nil})
		}
	}
	return out
}

// FuzzStreamFrames sends arbitrary sequences of binary and text frames on
// a real /v1/listen socket. The engine must never panic, must answer only
// with messages of the interface, and must always end the stream with a
// close frame (normal, DATA-0000 or a timeout), never by dropping it.
func FuzzStreamFrames(f *testing.F) {
	eng, err := New(Config{Key: "fuzz-key", MaxConnections: 4, IdleTimeout: 3 * time.Second, Recognizer: RecognizerConfig{Warm: -1}})
	if err != nil {
		f.Fatal(err)
	}
	var panicked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				panicked.Store(fmt.Sprintf("%v\n%s", p, debug.Stack()))
			}
		}()
		eng.Handler().ServeHTTP(w, r)
	}))
	f.Cleanup(func() {
		eng.Close()
		srv.Close()
	})
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + api.PathListen

	speech := pcmBytes(clipSamples(f, "0880")[2400:12000])
	frame := func(op byte, b []byte) []byte { return append([]byte{op, byte((len(b) - 1) / 16)}, b...) }
	f.Add(uint8(0), append(frame(0, speech[:4000]), frame(0, speech[4000:8000])...))
	f.Add(uint8(0), append(frame(0, speech[:4000]), 3, 4+5, 3+10))                          // audio, Finalize, KeepAlive, CloseStream
	f.Add(uint8(1), frame(0, fuzzWAV(f)[:4000]))                                            // a WAV file, containerized
	f.Add(uint8(1), append(frame(0, []byte("garbage, not audio at all: no container")), 4)) // undecodable
	f.Add(uint8(0), []byte{2, 8, 'n', 'o', 't', ' ', 'j', 's', 'o', 'n', 3, 5 * 5})
	f.Add(uint8(3), append(frame(1, speech[:4000]), 4))
	f.Add(uint8(4), append(frame(0, speech[:4000]), 3, 5*1))
	f.Add(uint8(2), []byte{0, 0, 0, 0, 4, 0, 3})
	f.Add(uint8(5), frame(0, audio.EncodePCM(nil, audio.Int16ToFloat32(nil, clipSamples(f, "0880")[:1000]), audio.EncodingLinear32)))

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		runStreamFrames(t, wsURL, mode, data)
		if p := panicked.Load(); p != nil {
			t.Fatalf("the engine panicked: %v", p)
		}
	})
}

// runStreamFrames plays the frames of fuzz data on a /v1/listen socket
// at wsURL and checks what the engine answers.
func runStreamFrames(t *testing.T, wsURL string, mode uint8, data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := fuzzStreamQueries[int(mode)%len(fuzzStreamQueries)]
	var conn *websocket.Conn
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, resp, err := websocket.Dial(ctx, wsURL+"?"+q, &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Token fuzz-key"}},
		})
		if err == nil {
			conn = c
			break
		}
		// The streams of the inputs before may still hold their places
		// for a moment after the client saw them close.
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("handshake %q: %v (%v)", q, err, resp)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer conn.CloseNow()

	// Read everything the engine says, in order, until it closes.
	readDone := make(chan error, 1)
	go func() {
		for {
			typ, msg, err := conn.Read(ctx)
			if err != nil {
				readDone <- err
				return
			}
			if typ != websocket.MessageText {
				readDone <- fmt.Errorf("binary frame from the engine")
				return
			}
			if _, err := api.DecodeListenMessage(msg); err != nil {
				readDone <- fmt.Errorf("message %q: %w", msg, err)
				return
			}
			var m struct{ Type string }
			_ = json.Unmarshal(msg, &m)
			switch m.Type {
			case api.TypeResults, api.TypeMetadata, api.TypeUtteranceEnd, api.TypeSpeechStarted, api.TypeError:
			default:
				readDone <- fmt.Errorf("message of type %q: %s", m.Type, msg)
				return
			}
		}
	}()
	for _, fr := range fuzzFrames(data) {
		if conn.Write(ctx, fr.typ, fr.data) != nil {
			break // the engine has closed the stream
		}
	}
	// Whatever was sent, a CloseStream ends a stream still open.
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"CloseStream"}`))
	err := <-readDone
	switch code := websocket.CloseStatus(err); code {
	case websocket.StatusNormalClosure, websocket.StatusPolicyViolation, websocket.StatusInternalError:
	default:
		t.Fatalf("stream %q ended with %v (close code %d), want a close frame", q, err, code)
	}
}
