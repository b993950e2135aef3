package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func TestSpeakREST(t *testing.T) {
	first, rest := []byte("ID3-first-chunk"), bytes.Repeat([]byte{0xAB}, 50000)
	release := make(chan struct{})
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Header().Set("dg-model-name", "aura-2-thalia-en")
		w.Header().Set("dg-model-uuid", "e4979ab0-8475-4901-9d66-0a562a4949bb")
		w.Header().Set("dg-char-count", "32")
		w.Header().Set("dg-request-id", "bf6fc5c7")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(first)
		w.(http.Flusher).Flush()
		// The rest waits until the client has read the first bytes: the
		// body streams, it is not read whole before Speak returns.
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(rest)
	})
	c := srv.client(t, api.Config{APIKey: "KEY", UserAgent: "earshot-test/1"})
	text := "Hello, how can I help you today?"
	resp, err := c.Speak(testContext(t), text, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "mp3", BitRate: 48000, Speed: 1.1, Tag: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	if resp.ContentType != "audio/mpeg" || resp.ModelName != "aura-2-thalia-en" || resp.ModelUUID != "e4979ab0-8475-4901-9d66-0a562a4949bb" ||
		resp.CharCount != 32 || resp.RequestID != "bf6fc5c7" {
		t.Errorf("response %+v", resp)
	}
	got := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, got); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("first bytes %q, %v", got, err)
	}
	close(release)
	tail, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(tail, rest) {
		t.Fatalf("rest of the body: %d bytes, %v", len(tail), err)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != api.PathSpeak || r.ContentType != "application/json" || r.Auth != "Token KEY" || r.UserAgent != "earshot-test/1" {
		t.Errorf("request %+v", r)
	}
	if want := "bit_rate=48000&encoding=mp3&model=aura-2-thalia-en&speed=1.1&tag=t"; r.Query.Encode() != want {
		t.Errorf("query %s, want %s", r.Query.Encode(), want)
	}
	var sent api.SpeakRequest
	if err := json.Unmarshal(r.Body, &sent); err != nil || sent.Text != text {
		t.Errorf("body %s", r.Body)
	}
}

func TestSpeakResponseHeaders(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		want    api.SpeakResponse
		wantErr bool
	}{
		{"bare", map[string]string{"request-id": "r1", "model-name": "m", "model-uuid": "u", "char-count": "13"},
			api.SpeakResponse{RequestID: "r1", ModelName: "m", ModelUUID: "u", CharCount: 13}, false},
		{"dg", map[string]string{"dg-request-id": "r2", "dg-model-name": "m2", "dg-char-count": "0"},
			api.SpeakResponse{RequestID: "r2", ModelName: "m2", CharCount: 0}, false},
		{"x-dg", map[string]string{"x-dg-request-id": "r3", "x-dg-model-uuid": "u3", "x-dg-char-count": "7"},
			api.SpeakResponse{RequestID: "r3", ModelUUID: "u3", CharCount: 7}, false},
		{"bare wins", map[string]string{"request-id": "bare", "dg-request-id": "dg"}, api.SpeakResponse{RequestID: "bare", CharCount: -1}, false},
		{"no count", map[string]string{}, api.SpeakResponse{CharCount: -1}, false},
		{"count not a number", map[string]string{"dg-char-count": "many"}, api.SpeakResponse{}, true},
		{"count negative", map[string]string{"dg-char-count": "-3"}, api.SpeakResponse{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "audio/wav")
				_, _ = w.Write([]byte("RIFF"))
			})
			c := srv.client(t, api.Config{APIKey: "KEY"})
			resp, err := c.SpeakV2(testContext(t), "Hi", api.SpeakV2Options{Model: "flux-kit-en", Encoding: "linear16", Container: "wav"})
			if tt.wantErr {
				if err == nil {
					resp.Close()
					t.Fatal("no error for an unreadable character count")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Close()
			if resp.RequestID != tt.want.RequestID || resp.ModelName != tt.want.ModelName || resp.ModelUUID != tt.want.ModelUUID ||
				resp.CharCount != tt.want.CharCount || resp.ContentType != "audio/wav" {
				t.Errorf("got %+v, want %+v", resp, tt.want)
			}
			if r := srv.requests()[0]; r.Path != api.PathSpeakV2 || r.Query.Encode() != "container=wav&encoding=linear16&model=flux-kit-en" {
				t.Errorf("request %s %s", r.Path, r.Query.Encode())
			}
		})
	}
}

func TestSpeakRESTErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		is     error
		code   string
		msg    string
	}{
		{"empty text as the service says it", http.StatusBadRequest, `{"err_code":"Bad Request","err_msg":"Input text contains no characters.","request_id":"r"}`,
			nil, "Bad Request", api.MsgEmptyText},
		{"too long", http.StatusUnprocessableEntity, `{"err_code":"UNPROCESSABLE_ENTITY","err_msg":"Text exceeds the limit."}`, nil, "UNPROCESSABLE_ENTITY", "Text exceeds the limit."},
		{"auth", http.StatusUnauthorized, `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"r"}`, api.ErrUnauthorized, "INVALID_AUTH", "Invalid credentials."},
		{"busy", http.StatusTooManyRequests, `{"err_code":"TOO_MANY_REQUESTS","err_msg":"Too many requests. Please try again later"}`, api.ErrRateLimited, "TOO_MANY_REQUESTS", ""},
		{"modern", http.StatusBadRequest, `{"category":"INVALID_JSON","message":"Invalid JSON submitted.","details":"d","request_id":"r"}`, nil, "INVALID_JSON", "Invalid JSON submitted."},
		{"plain text", http.StatusBadGateway, `upstream down`, nil, "", "upstream down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			c := srv.client(t, api.Config{APIKey: "KEY"})
			_, err := c.Speak(testContext(t), "Hello", api.SpeakOptions{})
			var e *api.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is not an *api.Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code || (tt.msg != "" && e.Message != tt.msg) {
				t.Errorf("got %+v", e)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v does not match %v", err, tt.is)
			}
		})
	}
}

func TestSpeakRESTRefusedLocally(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		t.Errorf("a request left: %s %s", r.URL.Path, r.URL.RawQuery)
	})
	c := srv.client(t, api.Config{APIKey: "KEY"})
	ctx := testContext(t)
	tests := []struct {
		name string
		call func() error
		want *wantOpt
	}{
		{"empty text", func() error { _, err := c.Speak(ctx, "", api.SpeakOptions{}); return err }, badMsg("text", api.MsgEmptyText)},
		{"too long for aura-2", func() error {
			_, err := c.Speak(ctx, strings.Repeat("x", 1001), api.SpeakOptions{Model: "aura-2-thalia-en"})
			return err
		}, &wantOpt{Param: "text", Status: http.StatusUnprocessableEntity, Code: "Unprocessable Entity"}},
		{"flux voice on v1", func() error { _, err := c.Speak(ctx, "Hi", api.SpeakOptions{Model: "flux-kit-en"}); return err }, bad("model")},
		{"aura voice on v2", func() error {
			_, err := c.SpeakV2(ctx, "Hi", api.SpeakV2Options{Model: "aura-2-thalia-en"})
			return err
		}, bad("model")},
		{"no model on v2", func() error { _, err := c.SpeakV2(ctx, "Hi", api.SpeakV2Options{}); return err }, bad("model")},
		{"empty text on v2", func() error { _, err := c.SpeakV2(ctx, " ", api.SpeakV2Options{Model: "flux-kit-en"}); return err }, badMsg("text", api.MsgEmptyText)},
		{"priority without callback", func() error { _, err := c.Speak(ctx, "Hi", api.SpeakOptions{Priority: "low"}); return err }, bad("priority")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, tt.name, tt.call(), tt.want)
		})
	}
}

func TestSpeakCallback(t *testing.T) {
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("dg-request-id", "req-cb")
		writeJSON(w, http.StatusOK, map[string]string{"request_id": "req-cb"})
	})
	c := srv.client(t, api.Config{AccessToken: "JWT"})
	resp, err := c.Speak(testContext(t), "Later", api.SpeakOptions{Callback: "https://example.com/hook", CallbackMethod: "PUT", Priority: "low"})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := api.DecodeCallbackAccepted(resp)
	if err != nil || ack.RequestID != "req-cb" {
		t.Fatalf("ack %+v, %v", ack, err)
	}
	r := srv.requests()[0]
	if r.Auth != "Bearer JWT" || r.Query.Get("callback") != "https://example.com/hook" || r.Query.Get("callback_method") != "PUT" || r.Query.Get("priority") != "low" {
		t.Errorf("request %+v", r)
	}
}
