package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
)

// recordedRequest is what a test server saw of one request.
type recordedRequest struct {
	Method, Path, Auth, ContentType, UserAgent string
	Query                                      url.Values
	RawQuery                                   string
	Body                                       []byte
}

// restServer is an httptest server that records every request and answers
// with handle.
type restServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

func newRESTServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *restServer {
	t.Helper()
	s := &restServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, recordedRequest{
			Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), UserAgent: r.Header.Get("User-Agent"),
			Query: r.URL.Query(), Body: body,
		})
		s.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *restServer) requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.reqs...)
}

func (s *restServer) client(t *testing.T, cfg api.Config) *api.Client {
	t.Helper()
	base, err := api.ParseBaseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint.Base = base
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// batchAnswer is a small batch transcription.
const batchAnswer = `{"metadata":{"transaction_key":"deprecated","request_id":"req-1","sha256":"x","created":"2025-07-22T16:56:37.496Z","duration":1.5,"channels":1,
 "models":["m"],"model_info":{"m":{"name":"general-nova-3","version":"v","arch":"nova-3"}}},
 "results":{"channels":[{"alternatives":[{"transcript":"Hello there.","confidence":0.9,"words":[{"word":"hello","start":0,"end":0.5,"confidence":0.9,"punctuated_word":"Hello"}]}]}]}}`

func TestNewClient(t *testing.T) {
	tests := []struct {
		name  string
		cfg   api.Config
		param string // "" when accepted
	}{
		{"key", api.Config{APIKey: "k"}, ""},
		{"token", api.Config{AccessToken: "jwt"}, ""},
		{"nothing", api.Config{}, "key"},
		{"short-lived without key", api.Config{AccessToken: "jwt", ShortLivedTokens: true}, "key"},
		{"ttl too short", api.Config{APIKey: "k", TokenTTL: time.Millisecond}, "ttl_seconds"},
		{"ttl too long", api.Config{APIKey: "k", TokenTTL: 2 * time.Hour}, "ttl_seconds"},
		{"ttl max", api.Config{APIKey: "k", TokenTTL: time.Hour}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := api.NewClient(tt.cfg)
			if tt.param == "" {
				if err != nil || c == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != tt.param || !errors.Is(err, api.ErrInvalidOptions) {
				t.Errorf("err = %v, want an OptionError on %s", err, tt.param)
			}
		})
	}
}

func TestTranscribe(t *testing.T) {
	audio := make([]byte, 100_003) // odd size, raw PCM-like noise
	r := rand.New(rand.NewPCG(3, 4))
	for i := range audio {
		audio[i] = byte(r.IntN(256))
	}
	audio[0], audio[1] = 0x00, 0x01 // not a container signature
	wav := append([]byte("RIFF\x24\x08\x00\x00WAVEfmt "), audio[:500]...)
	tests := []struct {
		name     string
		cfg      api.Config
		audio    []byte
		ct       string
		opts     api.ListenOptions
		wantAuth string
		wantCT   string
	}{
		{
			name: "key and raw audio", cfg: api.Config{APIKey: "KEY"}, audio: audio, ct: "audio/l16",
			opts:     api.ListenOptions{Model: "nova-3", Encoding: "linear16", SampleRate: 16000, SmartFormat: true, Keyterm: []string{"Earshot", "Q3 revenue"}},
			wantAuth: "Token KEY", wantCT: "audio/l16",
		},
		{
			name: "access token and wav", cfg: api.Config{APIKey: "KEY", AccessToken: "JWT"}, audio: wav,
			opts:     api.ListenOptions{Model: "nova-3", DiarizeModel: "v2", Summarize: "v2"},
			wantAuth: "Bearer JWT", wantCT: "application/octet-stream",
		},
		{
			name: "tiny body", cfg: api.Config{APIKey: "KEY"}, audio: []byte{1, 2, 3}, ct: "audio/wav",
			wantAuth: "Token KEY", wantCT: "audio/wav",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, batchAnswer)
			})
			tt.cfg.UserAgent = "earshot-test/1"
			c := srv.client(t, tt.cfg)
			resp, err := c.Transcribe(testContext(t), bytes.NewReader(tt.audio), tt.ct, tt.opts)
			if err != nil {
				t.Fatalf("Transcribe: %v", err)
			}
			if resp.Transcript() != "Hello there." || resp.Metadata.RequestID != "req-1" {
				t.Errorf("response %+v", resp)
			}
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			got := reqs[0]
			if got.Method != http.MethodPost || got.Path != "/v1/listen" {
				t.Errorf("%s %s", got.Method, got.Path)
			}
			if got.Auth != tt.wantAuth {
				t.Errorf("Authorization %q, want %q", got.Auth, tt.wantAuth)
			}
			if got.ContentType != tt.wantCT {
				t.Errorf("Content-Type %q, want %q", got.ContentType, tt.wantCT)
			}
			if got.UserAgent != "earshot-test/1" {
				t.Errorf("User-Agent %q", got.UserAgent)
			}
			if !bytes.Equal(got.Body, tt.audio) {
				t.Errorf("body changed: sent %d bytes, server got %d", len(tt.audio), len(got.Body))
			}
			if want := tt.opts.Query(); got.Query.Encode() != want.Encode() {
				t.Errorf("query %s, want %s", got.Query.Encode(), want.Encode())
			}
		})
	}
}

func TestTranscribeRefusedBeforeSending(t *testing.T) {
	wav := []byte("RIFF\x24\x08\x00\x00WAVEfmt data")
	tests := []struct {
		name   string
		region api.Region
		audio  []byte
		opts   api.ListenOptions
		param  string
	}{
		{"streaming-only parameter", "", wav, api.ListenOptions{InterimResults: true}, "interim_results"},
		{"diarize conflict", "", wav, api.ListenOptions{DiarizeModel: "latest", Diarize: true}, "diarize_model"},
		{"flux", "", wav, api.ListenOptions{Model: "flux"}, "model"},
		{"encoding with a container", "", wav, api.ListenOptions{Encoding: "linear16", SampleRate: 16000}, "encoding"},
		{"whisper in a region", api.RegionEU, wav, api.ListenOptions{Model: "whisper-large"}, "model"},
		{"empty audio", "", nil, api.ListenOptions{}, "audio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				_, _ = io.WriteString(w, batchAnswer)
			})
			c := srv.client(t, api.Config{APIKey: "KEY", Endpoint: api.Endpoint{Region: tt.region}})
			_, err := c.Transcribe(testContext(t), bytes.NewReader(tt.audio), "", tt.opts)
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != tt.param || !errors.Is(err, api.ErrInvalidOptions) {
				t.Errorf("err = %v, want an OptionError on %s", err, tt.param)
			}
			if n := len(srv.requests()); n != 0 {
				t.Errorf("%d requests reached the server", n)
			}
			if tt.param == "encoding" || tt.param == "audio" {
				return // rules of a file, not of the options
			}
			_, err = c.TranscribeURL(testContext(t), "https://example.com/a.wav", tt.opts)
			if !errors.As(err, &oe) || oe.Param != tt.param {
				t.Errorf("TranscribeURL err = %v, want an OptionError on %s", err, tt.param)
			}
			if n := len(srv.requests()); n != 0 {
				t.Errorf("TranscribeURL: %d requests reached the server", n)
			}
		})
	}
}

func TestTranscribeErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  string
		body    string
		want    api.Error
		matches error
	}{
		{"401 legacy", 401, "", `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"body-id"}`,
			api.Error{Status: 401, Code: "INVALID_AUTH", Message: "Invalid credentials.", RequestID: "body-id"}, api.ErrUnauthorized},
		{"400 request id from header", 400, "hdr-id", `{"err_code":"Bad Request","err_msg":"Bad Request: failed to process audio: corrupt or unsupported data"}`,
			api.Error{Status: 400, Code: "Bad Request", Message: "Bad Request: failed to process audio: corrupt or unsupported data", RequestID: "hdr-id"}, nil},
		{"429", 429, "hdr", `{"err_code":"TOO_MANY_REQUESTS","err_msg":"Too many requests. Please try again later"}`,
			api.Error{Status: 429, Code: "TOO_MANY_REQUESTS", Message: "Too many requests. Please try again later", RequestID: "hdr"}, api.ErrRateLimited},
		{"503 plain text", 503, "", "Service Unavailable",
			api.Error{Status: 503, Message: "Service Unavailable"}, nil},
		{"404 empty", 404, "", "", api.Error{Status: 404}, api.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				if tt.header != "" {
					w.Header().Set(api.HeaderRequestID, tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			c := srv.client(t, api.Config{APIKey: "KEY"})
			_, err := c.Transcribe(testContext(t), strings.NewReader("raw audio bytes"), "", api.ListenOptions{})
			var e *api.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T %v is not an *Error", err, err)
			}
			if *e != tt.want {
				t.Errorf("error %#v, want %#v", *e, tt.want)
			}
			if tt.matches != nil && !errors.Is(err, tt.matches) {
				t.Errorf("%v does not match %v", err, tt.matches)
			}
			if errors.Is(err, api.ErrInvalidOptions) {
				t.Error("a service error matches ErrInvalidOptions")
			}
		})
	}
}

func TestTranscribeUnreadableAnswer(t *testing.T) {
	for _, body := range []string{"", "<html>proxy</html>", `{"metadata":`} {
		t.Run(body, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				_, _ = io.WriteString(w, body)
			})
			c := srv.client(t, api.Config{APIKey: "KEY"})
			resp, err := c.Transcribe(testContext(t), strings.NewReader("raw"), "", api.ListenOptions{})
			if err == nil {
				t.Fatalf("answer %q accepted as %+v", body, resp)
			}
			var e *api.Error
			if errors.As(err, &e) {
				t.Errorf("a 200 answer became a service error: %v", err)
			}
		})
	}
}

func TestTranscribeURL(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		_, _ = io.WriteString(w, batchAnswer)
	})
	c := srv.client(t, api.Config{APIKey: "KEY"})
	audioURL := "https://example.com/a file.wav?sig=a&b=c"
	resp, err := c.TranscribeURL(testContext(t), audioURL, api.ListenOptions{Model: "nova-3", Punctuate: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Transcript() != "Hello there." {
		t.Errorf("transcript %q", resp.Transcript())
	}
	got := srv.requests()[0]
	if got.Method != http.MethodPost || got.Path != api.PathListen || got.ContentType != "application/json" || got.Auth != "Token KEY" {
		t.Errorf("request %+v", got)
	}
	var body map[string]string
	if err := json.Unmarshal(got.Body, &body); err != nil || len(body) != 1 || body["url"] != audioURL {
		t.Errorf("body %s (%v)", got.Body, err)
	}
	if got.Query.Get("model") != "nova-3" || got.Query.Get("punctuate") != "true" {
		t.Errorf("query %v", got.Query)
	}
}

func TestTranscribeCallback(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		writeJSON(w, http.StatusOK, map[string]string{"request_id": "cb-req-7"})
	})
	c := srv.client(t, api.Config{APIKey: "KEY"})
	opts := api.ListenOptions{Callback: "https://example.com/hook", CallbackMethod: "PUT"}
	for name, call := range map[string]func() (*api.ListenResponse, error){
		"file": func() (*api.ListenResponse, error) {
			return c.Transcribe(testContext(t), strings.NewReader("raw"), "", opts)
		},
		"url": func() (*api.ListenResponse, error) {
			return c.TranscribeURL(testContext(t), "https://example.com/a.wav", opts)
		},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := call()
			if err != nil {
				t.Fatal(err)
			}
			if resp.Metadata.RequestID != "cb-req-7" || len(resp.Results.Channels) != 0 {
				t.Errorf("response %+v", resp)
			}
		})
	}
	for _, r := range srv.requests() {
		if r.Query.Get("callback") != "https://example.com/hook" || r.Query.Get("callback_method") != "PUT" {
			t.Errorf("query %v", r.Query)
		}
	}
}

func TestTranscribeContextCancel(t *testing.T) {
	release := make(chan struct{})
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := srv.client(t, api.Config{APIKey: "KEY"})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Transcribe(ctx, strings.NewReader("raw"), "", api.ListenOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's deadline", err)
	}
}

func TestModels(t *testing.T) {
	list := `{"stt":[
	  {"name":"nova-3","canonical_name":"nova-3","architecture":"base","languages":["en","en-us"],"version":"2021-11-10.1","uuid":"6b28e919-8427-4f32-9847-492e2efd7daf","batch":true,"streaming":true,"formatted_output":true},
	  {"name":"whisper-large","canonical_name":"whisper-large","architecture":"whisper","languages":["en"],"version":"v","uuid":"u2","batch":true,"streaming":false,"formatted_output":true},
	  {"name":"large","canonical_name":"whisper-large","architecture":"whisper","languages":["en"],"version":"v","uuid":"u3","batch":true},
	  {"name":"flux-general-en","canonical_name":"flux-general-en","architecture":"flux","languages":["en"],"version":"v","uuid":"u4","streaming":true}],
	 "tts":[{"name":"zeus","canonical_name":"aura-2-zeus-en","architecture":"aura-2","languages":["en","en-US"],"version":"2025-04-07.0","uuid":"2baf189d",
	  "metadata":{"accent":"American","age":"Adult","color":"#C58DFF","image":"https://x/zeus.jpg","sample":"https://x/zeus.wav","tags":["masculine","deep"],"use_cases":["IVR"]}}]}`
	tests := []struct {
		name      string
		region    api.Region
		outdated  bool
		wantSTT   []string
		wantQuery string
	}{
		{"global", api.RegionGlobal, false, []string{"nova-3", "whisper-large", "large", "flux-general-en"}, ""},
		{"global outdated", api.RegionGlobal, true, []string{"nova-3", "whisper-large", "large", "flux-general-en"}, "include_outdated=true"},
		{"eu drops whisper", api.RegionEU, false, []string{"nova-3", "flux-general-en"}, ""},
		{"in drops whisper", api.RegionIN, false, []string{"nova-3", "flux-general-en"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				_, _ = io.WriteString(w, list)
			})
			c := srv.client(t, api.Config{AccessToken: "JWT", Endpoint: api.Endpoint{Region: tt.region}})
			ml, err := c.Models(testContext(t), tt.outdated)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range ml.STT {
				names = append(names, m.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantSTT, ",") {
				t.Errorf("stt %v, want %v", names, tt.wantSTT)
			}
			var listen []string
			for _, m := range ml.ListenModels() {
				listen = append(listen, m.Name)
				if api.IsTurnAwareModel(m.Name) {
					t.Errorf("ListenModels offers %s", m.Name)
				}
			}
			if len(listen) != len(names)-1 {
				t.Errorf("ListenModels %v", listen)
			}
			if len(ml.TTS) != 1 || ml.TTS[0].Metadata == nil || ml.TTS[0].Metadata.Accent != "American" || len(ml.TTS[0].Metadata.UseCases) != 1 {
				t.Errorf("tts %+v", ml.TTS)
			}
			nova := ml.STT[0]
			if !nova.Batch || !nova.Streaming || !nova.FormattedOutput || nova.UUID != "6b28e919-8427-4f32-9847-492e2efd7daf" || len(nova.Languages) != 2 {
				t.Errorf("nova-3 %+v", nova)
			}
			req := srv.requests()[0]
			if req.Method != http.MethodGet || req.Path != api.PathModels || req.Auth != "Bearer JWT" || req.Query.Encode() != tt.wantQuery {
				t.Errorf("request %+v", req)
			}
		})
	}
}

func TestGrant(t *testing.T) {
	tests := []struct {
		name     string
		ttl      time.Duration
		wantBody string
	}{
		{"default lifetime", 0, `{}`},
		{"90 s", 90 * time.Second, `{"ttl_seconds":90}`},
		{"1.5 s", 1500 * time.Millisecond, `{"ttl_seconds":1.5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				writeJSON(w, http.StatusOK, map[string]any{"access_token": "eyJhbGciOi.payload.sig", "expires_in": 30})
			})
			// The key mints tokens even when an access token is configured.
			c := srv.client(t, api.Config{APIKey: "KEY", AccessToken: "OTHER-JWT"})
			g, err := c.Grant(testContext(t), tt.ttl)
			if err != nil {
				t.Fatal(err)
			}
			if g.AccessToken.Reveal() != "eyJhbGciOi.payload.sig" || g.ExpiresIn != 30 {
				t.Errorf("grant %v %v", g.AccessToken.Reveal(), g.ExpiresIn)
			}
			req := srv.requests()[0]
			if req.Method != http.MethodPost || req.Path != api.PathAuthGrant || req.Auth != "Token KEY" || req.ContentType != "application/json" {
				t.Errorf("request %+v", req)
			}
			if !sameJSON(t, req.Body, []byte(tt.wantBody)) {
				t.Errorf("body %s, want %s", req.Body, tt.wantBody)
			}
		})
	}
}

func TestGrantRefused(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("Authorization") != "Token KEY" {
			writeJSON(w, http.StatusUnauthorized, api.LegacyErrorBody{ErrCode: api.CodeInvalidAuth, ErrMsg: "Invalid credentials."})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"expires_in": 30})
	})
	t.Run("needs a key", func(t *testing.T) {
		c := srv.client(t, api.Config{AccessToken: "JWT"})
		if _, err := c.Grant(testContext(t), 0); !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ttl out of range", func(t *testing.T) {
		c := srv.client(t, api.Config{APIKey: "KEY"})
		for _, ttl := range []time.Duration{time.Millisecond, -time.Second, time.Hour + time.Second} {
			if _, err := c.Grant(testContext(t), ttl); !errors.Is(err, api.ErrInvalidOptions) {
				t.Errorf("ttl %v: err = %v", ttl, err)
			}
		}
	})
	if n := len(srv.requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	t.Run("bad key", func(t *testing.T) {
		c := srv.client(t, api.Config{APIKey: "WRONG"})
		_, err := c.Grant(testContext(t), 0)
		var e *api.Error
		if !errors.As(err, &e) || e.Status != 401 || e.Code != api.CodeInvalidAuth || !errors.Is(err, api.ErrUnauthorized) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("answer without token", func(t *testing.T) {
		c := srv.client(t, api.Config{APIKey: "KEY"})
		if g, err := c.Grant(testContext(t), 0); err == nil {
			t.Errorf("grant %+v accepted", g)
		}
	})
}

func TestCheckTokenTTL(t *testing.T) {
	tests := []struct {
		ttl time.Duration
		ok  bool
	}{
		{0, true}, {time.Second, true}, {api.DefaultTokenTTL, true}, {api.MaxTokenTTL, true},
		{time.Second - 1, false}, {api.MaxTokenTTL + 1, false}, {-time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.ttl.String(), func(t *testing.T) {
			err := api.CheckTokenTTL(tt.ttl)
			if tt.ok {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			checkOptionErr(t, "CheckTokenTTL", err, bad("ttl_seconds"))
		})
	}
}

func TestTokenDetails(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("Authorization") != "Bearer GOOD" {
			writeJSON(w, http.StatusUnauthorized, api.LegacyErrorBody{ErrCode: api.CodeInvalidAuth, ErrMsg: "Invalid credentials.", RequestID: "r"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"scopes": []string{"usage:write"}, "accessor": "abc", "expires": 30})
	})
	c := srv.client(t, api.Config{APIKey: "KEY", AccessToken: "GOOD"})
	d, err := c.TokenDetails(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.String("accessor") != "abc" || d.String("expires") != "" || d.String("missing") != "" || len(d.Fields) != 3 {
		t.Errorf("details %v", d.Fields)
	}
	req := srv.requests()[0]
	if req.Method != http.MethodGet || req.Path != api.PathAuthToken || len(req.Body) != 0 {
		t.Errorf("request %+v", req)
	}

	bad := srv.client(t, api.Config{AccessToken: "EXPIRED"})
	_, err = bad.TokenDetails(testContext(t))
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 401 || e.RequestID != "r" || !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("err = %v", err)
	}
}

func TestClientLogsNoSecret(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set(api.HeaderRequestID, "logged-id")
		_, _ = io.WriteString(w, batchAnswer)
	})
	var buf testkit.Buffer
	c := srv.client(t, api.Config{APIKey: testKey, Logger: newDebugLogger(&buf)})
	if _, err := c.Transcribe(testContext(t), strings.NewReader("raw"), "", api.ListenOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "logged-id") {
		t.Errorf("the request was not logged: %q", out)
	}
	if strings.Contains(out, testKey) {
		t.Errorf("the log shows the key: %s", out)
	}
	if s := c.String(); strings.Contains(s, testKey) || !strings.Contains(s, "127.0.0.1") {
		t.Errorf("String() = %q", s)
	}
}
