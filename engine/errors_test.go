package engine

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// TestSpecErrors checks every row of section 7 of the specification that
// concerns /v1/listen, with the status and message written there, on the
// transport the row names. The handshakes are made by hand: the client
// refuses these options before sending them.
func TestSpecErrors(t *testing.T) {
	t.Parallel()
	raw := "encoding=linear16&sample_rate=16000&"
	wav := wavBytes(t, silence(t, 1600), 16000, 1)
	for _, tc := range []struct {
		name      string
		streaming bool
		query     string
		status    int
		code      string
		msg       string // exact, or a prefix ending in "..."
	}{
		{"diarize_model with diarize, batch", false, "diarize_model=latest&diarize=true", 400, api.CodeBadRequest, api.MsgDiarizeConflict},
		{"diarize_model with diarize_version, batch", false, "diarize_model=v2&diarize_version=2021-07-14.0", 400, api.CodeBadRequest, api.MsgDiarizeConflict},
		{"diarize_model with diarize, streaming", true, "diarize_model=latest&diarize=true", 400, api.CodeBadRequest, api.MsgDiarizeConflict},
		{"diarize_model with diarize_version, streaming", true, "diarize_model=v1&diarize_version=latest", 400, api.CodeBadRequest, api.MsgDiarizeConflict},
		{"summarize, streaming", true, "summarize=v2", 400, api.CodeBadRequest, "Summarization is not available for streaming."},
		{"summarize=true, streaming", true, "summarize=true", 400, api.CodeBadRequest, "Summarization is not available for streaming."},
		{"topics, streaming", true, "topics=true", 403, api.CodeUnauthorizedFeatures, "..."},
		{"intents, streaming", true, "intents=true", 403, api.CodeUnauthorizedFeatures, "..."},
		{"custom_topic, streaming", true, "custom_topic=phones", 403, api.CodeUnauthorizedFeatures, "..."},
		{"custom_intent, streaming", true, "custom_intent=buy", 403, api.CodeUnauthorizedFeatures, "..."},
		{"topics and intents, streaming", true, "topics=true&intents=true", 403, api.CodeUnauthorizedFeatures,
			"Requested features are not available for streaming: topics, intents."},
		{"diarize_model v2, streaming", true, "diarize_model=v2", 400, api.CodeBadRequest, `diarize_model "v2" is not available for streaming...`},
		{"multichannel past the engine's channels, streaming", true, "multichannel=true&channels=9", 400, api.CodeBadRequest,
			"A multichannel stream of 9 channels is refused: the local engine recognises at most 8 channels of a stream, each with a recogniser of its own."},
		{"keyterm, streaming", true, "keyterm=earshot", 400, api.CodeBadRequest, "The local engine does not offer keyterm yet."},
		{"flux on /v1/listen, streaming", true, "model=flux-general-en", 400, api.CodeBadRequest, "flux-general-en is a turn-aware model..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var a answer
			if tc.streaming {
				ctx := testContext(t, time.Minute)
				conn, ans := dialRaw(t, ctx, shared, raw+tc.query, nil)
				if conn != nil {
					conn.Close(websocket.StatusNormalClosure, "")
					t.Fatal("handshake accepted")
				}
				a = *ans
			} else {
				a = postListen(t, tc.query, wav, "")
			}
			exact := tc.msg
			if strings.HasSuffix(exact, "...") {
				exact = ""
			}
			a.wantError(t, tc.status, tc.code, exact)
			if p := strings.TrimSuffix(tc.msg, "..."); !strings.HasPrefix(a.legacy(t).ErrMsg, p) {
				t.Errorf("err_msg %q, want prefix %q", a.legacy(t).ErrMsg, p)
			}
		})
	}
	t.Run("the client sees the same", func(t *testing.T) {
		t.Parallel()
		// The client checks options first: these rows never leave it, and
		// are refused with the same words.
		ctx := testContext(t, time.Minute)
		c := newClient(t, shared)
		_, err := c.Listen(ctx, linear16(api.ListenOptions{Summarize: "v2"}))
		var oe *api.OptionError
		if !errors.As(err, &oe) || oe.Reason != api.MsgSummarizeNotStreaming {
			t.Errorf("summarize on a stream: %v", err)
		}
		_, err = c.Listen(ctx, linear16(api.ListenOptions{Topics: true}))
		if !errors.As(err, &oe) || oe.Status != http.StatusForbidden || oe.Code != api.CodeUnauthorizedFeatures {
			t.Errorf("topics on a stream: %v", err)
		}
	})
}

// TestSpecRefusalsAreNotLimited checks that a handshake refused for its
// options does not keep a place of the concurrency allowance.
func TestSpecRefusalsAreNotLimited(t *testing.T) {
	t.Parallel()
	l := routingEngine(t, Config{MaxConnections: 1})
	ctx := testContext(t, time.Minute)
	for range 5 {
		conn, a := dialRaw(t, ctx, l, "summarize=v2&encoding=linear16&sample_rate=16000", nil)
		if conn != nil {
			t.Fatal("accepted")
		}
		a.wantError(t, http.StatusBadRequest, api.CodeBadRequest, api.MsgSummarizeNotStreaming)
	}
	if n := l.Engine.limit.inUse(); n != 0 {
		t.Errorf("%d places in use after refused handshakes", n)
	}
}
