package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

func TestParseError(t *testing.T) {
	huge := strings.Repeat("é", 3000) // 6000 bytes, two per rune
	tests := []struct {
		name      string
		status    int
		body      string
		headerID  string
		want      api.Error
		wantError string // Error() text
	}{
		{
			name: "legacy 401", status: 401,
			body:      `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"uuid-1"}`,
			want:      api.Error{Status: 401, Code: "INVALID_AUTH", Message: "Invalid credentials.", RequestID: "uuid-1"},
			wantError: "401 Unauthorized INVALID_AUTH: Invalid credentials.",
		},
		{
			name: "legacy 403", status: 403,
			body: `{"err_code":"INSUFFICIENT_PERMISSIONS","err_msg":"User does not have sufficient permissions.","request_id":"uuid"}`,
			want: api.Error{Status: 403, Code: "INSUFFICIENT_PERMISSIONS", Message: "User does not have sufficient permissions.", RequestID: "uuid"},
		},
		{
			name: "legacy 402", status: 402,
			body: `{"err_code":"ASR_PAYMENT_REQUIRED","err_msg":"Project does not have enough credits.","request_id":"uuid"}`,
			want: api.Error{Status: 402, Code: "ASR_PAYMENT_REQUIRED", Message: "Project does not have enough credits.", RequestID: "uuid"},
		},
		{
			name: "legacy Bad Request code equal to status text", status: 400,
			body:      `{"err_code":"Bad Request","err_msg":"Bad Request: failed to process audio: corrupt or unsupported data","request_id":"uuid"}`,
			want:      api.Error{Status: 400, Code: "Bad Request", Message: "Bad Request: failed to process audio: corrupt or unsupported data", RequestID: "uuid"},
			wantError: "400 Bad Request: Bad Request: failed to process audio: corrupt or unsupported data",
		},
		{
			name: "legacy invalid query parameter", status: 400,
			body: "{\"err_code\":\"INVALID_QUERY_PARAMETER\",\"err_msg\":\"Failed to deserialize query parameters: missing field `language`\",\"request_id\":\"r\"}",
			want: api.Error{Status: 400, Code: "INVALID_QUERY_PARAMETER", Message: "Failed to deserialize query parameters: missing field `language`", RequestID: "r"},
		},
		{
			name: "legacy 429", status: 429,
			body: `{"err_code":"TOO_MANY_REQUESTS","err_msg":"Too many requests. Please try again later","request_id":"uuid"}`,
			want: api.Error{Status: 429, Code: "TOO_MANY_REQUESTS", Message: "Too many requests. Please try again later", RequestID: "uuid"},
		},
		{
			name: "legacy 404 without request id uses header", status: 404, headerID: "hdr-id",
			body: `{"err_code":"PROJECT_NOT_FOUND","err_msg":"Project not found."}`,
			want: api.Error{Status: 404, Code: "PROJECT_NOT_FOUND", Message: "Project not found.", RequestID: "hdr-id"},
		},
		{
			name: "body request id wins over header", status: 400, headerID: "hdr-id",
			body: `{"err_code":"PAYLOAD_ERROR","err_msg":"x","request_id":"body-id"}`,
			want: api.Error{Status: 400, Code: "PAYLOAD_ERROR", Message: "x", RequestID: "body-id"},
		},
		{
			name: "modern", status: 400,
			body:      "{\"category\":\"INVALID_JSON\",\"message\":\"Invalid JSON submitted.\",\"details\":\"Json deserialize error: missing field `xxx` at line 7 column 1\",\"request_id\":\"uuid\"}",
			want:      api.Error{Status: 400, Code: "INVALID_JSON", Message: "Invalid JSON submitted.", Details: "Json deserialize error: missing field `xxx` at line 7 column 1", RequestID: "uuid"},
			wantError: "400 Bad Request INVALID_JSON: Invalid JSON submitted.",
		},
		{
			name: "modern without message shows details", status: 422,
			body:      `{"category":"X","details":"only details"}`,
			want:      api.Error{Status: 422, Code: "X", Details: "only details"},
			wantError: "422 Unprocessable Entity X: only details",
		},
		{
			name: "503 error_code variant", status: 503,
			body:      `{"error_code":"Service Unavailable","err_msg":"Please try again later","request_id":"uuid"}`,
			want:      api.Error{Status: 503, Code: "Service Unavailable", Message: "Please try again later", RequestID: "uuid"},
			wantError: "503 Service Unavailable: Please try again later",
		},
		{
			name: "socket code and description", status: 400,
			body: `{"code":"DATA-0000","description":"could not decode"}`,
			want: api.Error{Status: 400, Code: "DATA-0000", Message: "could not decode"},
		},
		{
			name: "plain string", status: 502,
			body:      "  upstream connect error\n",
			want:      api.Error{Status: 502, Message: "upstream connect error"},
			wantError: "502 Bad Gateway: upstream connect error",
		},
		{
			name: "JSON string", status: 400,
			body: `"Bad \"audio\" sent"`,
			want: api.Error{Status: 400, Message: `Bad "audio" sent`},
		},
		{
			name: "broken JSON string kept as text", status: 400,
			body: `"unterminated`,
			want: api.Error{Status: 400, Message: `"unterminated`},
		},
		{
			name: "HTML page", status: 502,
			body: "<html><body>Bad gateway</body></html>",
			want: api.Error{Status: 502, Message: "<html><body>Bad gateway</body></html>"},
		},
		{
			name: "broken JSON object kept as text", status: 500,
			body: `{"err_code":`,
			want: api.Error{Status: 500, Message: `{"err_code":`},
		},
		{
			name: "empty", status: 500, body: "",
			want: api.Error{Status: 500}, wantError: "500 Internal Server Error",
		},
		{
			name: "whitespace only", status: 404, body: " \n\t",
			want: api.Error{Status: 404}, wantError: "404 Not Found",
		},
		{
			name: "unknown status", status: 599, body: "",
			want: api.Error{Status: 599}, wantError: "599",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := api.ParseError(tt.status, []byte(tt.body), tt.headerID)
			if *got != tt.want {
				t.Errorf("ParseError =\n %#v\nwant\n %#v", *got, tt.want)
			}
			if tt.wantError != "" && got.Error() != tt.wantError {
				t.Errorf("Error() = %q, want %q", got.Error(), tt.wantError)
			}
			if got.StatusCode() != tt.status {
				t.Errorf("StatusCode() = %d", got.StatusCode())
			}
		})
	}

	t.Run("huge", func(t *testing.T) {
		for _, body := range []string{huge, `"` + huge + `"`, `{"err_code":"X","err_msg":"` + huge + `"}`, "a" + huge} {
			got := api.ParseError(500, []byte(body), "")
			if len(got.Message) > 2000+len("…") {
				t.Errorf("message of %d bytes is not bounded", len(got.Message))
			}
			if !strings.HasSuffix(got.Message, "…") {
				t.Errorf("truncated message does not say so: ...%q", got.Message[len(got.Message)-10:])
			}
			if !utf8.ValidString(got.Message) {
				t.Errorf("truncation split a character: ...%q", got.Message[len(got.Message)-10:])
			}
		}
	})
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  api.Error
		want string
	}{
		{api.Error{}, "service error"},
		{api.Error{Code: "NET-0001"}, "NET-0001"},
		{api.Error{Message: "boom"}, "boom"},
		{api.Error{CloseCode: 1008, Code: "DATA-0000"}, "closed with 1008 DATA-0000"},
		{api.Error{CloseCode: 1011, Code: "NET-0001", Message: "no audio"}, "closed with 1011 NET-0001: no audio"},
		{api.Error{Code: "SchemaError", Message: "bad message"}, "SchemaError: bad message"},
		{api.Error{Status: 429, Code: "TOO_MANY_REQUESTS", Message: "slow down"}, "429 Too Many Requests TOO_MANY_REQUESTS: slow down"},
		{api.Error{Status: 401, Code: "unauthorized"}, "401 Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	sentinels := []error{api.ErrUnauthorized, api.ErrRateLimited, api.ErrNotFound, api.ErrUndecodableAudio, api.ErrInvalidOptions, api.ErrClosed}
	tests := []struct {
		name string
		err  *api.Error
		want []error
	}{
		{"401", api.ParseError(401, []byte(`{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}`), ""), []error{api.ErrUnauthorized}},
		{"403 handshake", &api.Error{Status: 403, Code: api.CodeUnauthorizedFeatures}, []error{api.ErrUnauthorized}},
		{"429", api.ParseError(429, nil, ""), []error{api.ErrRateLimited}},
		{"rate code on a socket", &api.Error{Code: api.CodeTooManyRequests}, []error{api.ErrRateLimited}},
		{"404", api.ParseError(404, []byte(`{"err_code":"PROJECT_NOT_FOUND"}`), ""), []error{api.ErrNotFound}},
		{"DATA-0000 close", &api.Error{CloseCode: 1008, Code: api.CodeUndecodable}, []error{api.ErrUndecodableAudio}},
		{"DATA-0000 body", api.ParseError(400, []byte(`{"err_code":"DATA-0000","err_msg":"x"}`), ""), []error{api.ErrUndecodableAudio}},
		{"400", api.ParseError(400, []byte(`{"err_code":"Bad Request"}`), ""), nil},
		{"500", api.ParseError(500, nil, ""), nil},
		{"NET-0001", &api.Error{CloseCode: 1011, Code: api.CodeNetTimeout}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("transcribe: %w", tt.err)
			for _, s := range sentinels {
				want := false
				for _, w := range tt.want {
					want = want || w == s
				}
				if got := errors.Is(wrapped, s); got != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, s, got, want)
				}
			}
			var e *api.Error
			if !errors.As(wrapped, &e) || e != tt.err {
				t.Error("errors.As does not find the *Error")
			}
		})
	}
}

func TestOptionErrorText(t *testing.T) {
	tests := []struct {
		err  api.OptionError
		want string
	}{
		{api.OptionError{Param: "model", Reason: "unknown"}, "model: unknown"},
		{api.OptionError{Reason: "no key"}, "no key"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q", got)
			}
			if !errors.Is(&tt.err, api.ErrInvalidOptions) || errors.Is(&tt.err, api.ErrNotFound) {
				t.Error("an OptionError matches ErrInvalidOptions and nothing else")
			}
		})
	}
}

func TestErrorBodiesRoundTrip(t *testing.T) {
	// The bodies the local engine writes are read back by ParseError.
	tests := []struct {
		name string
		body any
		want api.Error
	}{
		{"legacy", api.LegacyErrorBody{ErrCode: api.CodeBadRequest, ErrMsg: "m", RequestID: "r"}, api.Error{Status: 400, Code: api.CodeBadRequest, Message: "m", RequestID: "r"}},
		{"modern", api.ModernErrorBody{Category: "INVALID_JSON", Message: "m", Details: "d"}, api.Error{Status: 400, Code: "INVALID_JSON", Message: "m", Details: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustJSON(t, tt.body)
			if got := api.ParseError(http.StatusBadRequest, b, ""); *got != tt.want {
				t.Errorf("ParseError(%s) = %#v", b, *got)
			}
		})
	}
}
