package api_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// wantOpt is the *OptionError a rule must produce. An empty Reason means
// the specification gives no message for the rule, so any text will do.
type wantOpt struct {
	Param  string
	Status int
	Code   string
	Reason string
}

func bad(param string) *wantOpt {
	return &wantOpt{Param: param, Status: http.StatusBadRequest, Code: api.CodeBadRequest}
}

func badMsg(param, reason string) *wantOpt {
	w := bad(param)
	w.Reason = reason
	return w
}

// checkOptionErr asserts that err is nil when want is nil, and otherwise an
// *OptionError matching want that also matches ErrInvalidOptions.
func checkOptionErr(t *testing.T, what string, err error, want *wantOpt) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: unexpected error %v", what, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s: no error, want %s %d %s", what, want.Param, want.Status, want.Code)
		return
	}
	if !errors.Is(err, api.ErrInvalidOptions) {
		t.Errorf("%s: %v does not match ErrInvalidOptions", what, err)
	}
	var oe *api.OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("%s: %T %v is not an *OptionError", what, err, err)
	}
	if oe.Param != want.Param || oe.Status != want.Status || oe.Code != want.Code {
		t.Errorf("%s: got param=%q status=%d code=%q, want param=%q status=%d code=%q (%v)",
			what, oe.Param, oe.Status, oe.Code, want.Param, want.Status, want.Code, err)
	}
	if want.Reason != "" && oe.Reason != want.Reason {
		t.Errorf("%s: reason %q, want the specification's %q", what, oe.Reason, want.Reason)
	}
	if oe.Reason == "" {
		t.Errorf("%s: empty reason", what)
	}
	if !strings.Contains(err.Error(), oe.Reason) {
		t.Errorf("%s: Error() %q does not carry the reason", what, err.Error())
	}
}

func TestListenOptionRules(t *testing.T) {
	topics100 := make([]string, 101)
	for i := range topics100 {
		topics100[i] = "topic " + strconv.Itoa(i)
	}
	// One case per rule. validate is what Validate answers (the service's
	// own rules); check is what CheckRequest answers on top of it. When a
	// rule is one of Validate's, CheckRequest answers the same.
	tests := []struct {
		name     string
		mode     api.Mode
		opts     api.ListenOptions
		validate *wantOpt
		check    *wantOpt
	}{
		// Accepted requests.
		{name: "empty batch", mode: api.Batch},
		{name: "empty streaming", mode: api.Streaming},
		{name: "recorded batch options", mode: api.Batch, opts: api.ListenOptions{Model: "nova-3", SmartFormat: true, Summarize: "v2"}},
		{name: "recorded streaming options", mode: api.Streaming, opts: api.ListenOptions{Model: "nova-3", Encoding: "mulaw", SampleRate: 8000, Channels: 1, Language: "en-US", Punctuate: true, SmartFormat: true}},
		{name: "streaming detect_entities", mode: api.Streaming, opts: api.ListenOptions{DetectEntities: true}},
		{name: "model variant nova-2-meeting", mode: api.Batch, opts: api.ListenOptions{Model: "nova-2-meeting"}},
		{name: "model variant nova-3-medical", mode: api.Streaming, opts: api.ListenOptions{Model: "nova-3-medical"}},
		{name: "model variant enhanced-phonecall", mode: api.Batch, opts: api.ListenOptions{Model: "enhanced-phonecall"}},
		{name: "model variant base-voicemail", mode: api.Batch, opts: api.ListenOptions{Model: "base-voicemail"}},
		{name: "model upper case", mode: api.Batch, opts: api.ListenOptions{Model: "NOVA-3"}},
		{name: "model whisper globally", mode: api.Batch, opts: api.ListenOptions{Model: "whisper-large"}},
		{name: "model use-case alias", mode: api.Batch, opts: api.ListenOptions{Model: "meeting"}},
		{name: "model custom uuid", mode: api.Batch, opts: api.ListenOptions{Model: "6b28e919-8427-4f32-9847-492e2efd7daf"}},
		{name: "language multi", mode: api.Streaming, opts: api.ListenOptions{Language: "multi"}},
		{name: "raw opus needs no sample_rate", mode: api.Batch, opts: api.ListenOptions{Encoding: "opus"}},
		{name: "batch diarize_model v2", mode: api.Batch, opts: api.ListenOptions{DiarizeModel: "v2"}},
		{name: "streaming diarize_model latest", mode: api.Streaming, opts: api.ListenOptions{DiarizeModel: "latest"}},
		{name: "streaming diarize_model v1", mode: api.Streaming, opts: api.ListenOptions{DiarizeModel: "v1"}},
		{name: "deprecated diarize with version", mode: api.Batch, opts: api.ListenOptions{Diarize: true, DiarizeVersion: "2024-01-01"}},
		{name: "redact classes", mode: api.Batch, opts: api.ListenOptions{Redact: []string{"pci", "ssn", "true"}}},
		{name: "summarize legacy true", mode: api.Batch, opts: api.ListenOptions{Summarize: "true"}},
		{name: "batch intelligence", mode: api.Batch, opts: api.ListenOptions{Topics: true, Intents: true, Sentiment: true, CustomTopic: []string{"billing"}, CustomTopicMode: "strict"}},
		{name: "streaming callback GET", mode: api.Streaming, opts: api.ListenOptions{Callback: "https://example.com/cb", CallbackMethod: "GET"}},
		{name: "batch callback PUT", mode: api.Batch, opts: api.ListenOptions{Callback: "http://example.com/cb", CallbackMethod: "PUT"}},
		{name: "keyterm with nova-3", mode: api.Streaming, opts: api.ListenOptions{Model: "nova-3-medical", Keyterm: []string{"Earshot"}}},
		{name: "utterance_end_ms with interims", mode: api.Streaming, opts: api.ListenOptions{InterimResults: true, UtteranceEndMs: 1000, VADEvents: true, Endpointing: 300}},
		{name: "endpointing off streaming", mode: api.Streaming, opts: api.ListenOptions{Endpointing: api.EndpointingOff}},
		{name: "utterances with utt_split", mode: api.Batch, opts: api.ListenOptions{Utterances: true, UttSplit: 0.8}},

		// Rules of the specification (section 2.1, 4.1, 7).
		{name: "model=flux", mode: api.Batch, opts: api.ListenOptions{Model: "flux"}, validate: bad("model")},
		{name: "model=Flux streaming", mode: api.Streaming, opts: api.ListenOptions{Model: "Flux"}, validate: bad("model")},
		{name: "turn-aware flux-general-en", mode: api.Streaming, opts: api.ListenOptions{Model: "flux-general-en"}, validate: bad("model")},
		{name: "turn-aware flux-general-multi", mode: api.Batch, opts: api.ListenOptions{Model: "flux-general-multi"}, validate: bad("model")},
		{name: "aura voice", mode: api.Batch, opts: api.ListenOptions{Model: "aura-asteria-en"}, validate: bad("model")},
		{name: "aura-2 voice", mode: api.Streaming, opts: api.ListenOptions{Model: "aura-2-thalia-en"}, validate: bad("model")},
		{name: "flux TTS voice", mode: api.Batch, opts: api.ListenOptions{Model: "flux-kit-en"}, validate: bad("model")},
		{name: "unknown model", mode: api.Batch, opts: api.ListenOptions{Model: "gpt-4"}, validate: bad("model")},
		{name: "bare family prefix", mode: api.Batch, opts: api.ListenOptions{Model: "nova-"}, validate: bad("model")},
		{name: "bad language tag", mode: api.Batch, opts: api.ListenOptions{Language: "english!"}, validate: bad("language")},
		{name: "unknown encoding", mode: api.Batch, opts: api.ListenOptions{Encoding: "wav"}, validate: bad("encoding")},
		{name: "linear16 without sample_rate", mode: api.Streaming, opts: api.ListenOptions{Encoding: "linear16"}, validate: bad("sample_rate")},
		{name: "linear32 without sample_rate", mode: api.Batch, opts: api.ListenOptions{Encoding: "linear32"}, validate: bad("sample_rate")},
		{name: "mulaw without sample_rate", mode: api.Streaming, opts: api.ListenOptions{Encoding: "mulaw"}, validate: bad("sample_rate")},
		{name: "alaw without sample_rate", mode: api.Batch, opts: api.ListenOptions{Encoding: "alaw"}, validate: bad("sample_rate")},
		{name: "sample_rate too low", mode: api.Streaming, opts: api.ListenOptions{Encoding: "linear16", SampleRate: 3999}, validate: bad("sample_rate")},
		{name: "sample_rate too high", mode: api.Batch, opts: api.ListenOptions{Encoding: "linear16", SampleRate: 192001}, validate: bad("sample_rate")},
		{name: "too many channels", mode: api.Batch, opts: api.ListenOptions{Channels: 33}, validate: bad("channels")},
		{name: "diarize_model with diarize", mode: api.Batch, opts: api.ListenOptions{DiarizeModel: "latest", Diarize: true},
			validate: badMsg("diarize_model", "diarize_model cannot be used together with diarize or diarize_version.")},
		{name: "diarize_model with diarize_version streaming", mode: api.Streaming, opts: api.ListenOptions{DiarizeModel: "v1", DiarizeVersion: "v1"},
			validate: badMsg("diarize_model", "diarize_model cannot be used together with diarize or diarize_version.")},
		{name: "batch diarize_model unknown", mode: api.Batch, opts: api.ListenOptions{DiarizeModel: "v3"}, validate: bad("diarize_model")},
		{name: "streaming diarize_model v2", mode: api.Streaming, opts: api.ListenOptions{DiarizeModel: "v2"}, validate: bad("diarize_model")},
		{name: "bad redaction class", mode: api.Batch, opts: api.ListenOptions{Redact: []string{"PCI!"}}, validate: bad("redact")},
		{name: "summarize v1", mode: api.Batch, opts: api.ListenOptions{Summarize: "v1"}, validate: bad("summarize")},
		{name: "custom_topic_mode value", mode: api.Batch, opts: api.ListenOptions{CustomTopic: []string{"a"}, CustomTopicMode: "loose"}, validate: bad("custom_topic_mode")},
		{name: "custom_intent_mode value", mode: api.Batch, opts: api.ListenOptions{CustomIntent: []string{"a"}, CustomIntentMode: "loose"}, validate: bad("custom_intent_mode")},
		{name: "over 100 custom topics", mode: api.Batch, opts: api.ListenOptions{CustomTopic: topics100}, validate: bad("custom_topic")},
		{name: "batch callback_method GET", mode: api.Batch, opts: api.ListenOptions{Callback: "https://example.com/cb", CallbackMethod: "GET"}, validate: bad("callback_method")},
		{name: "callback not http", mode: api.Batch, opts: api.ListenOptions{Callback: "ftp://example.com/cb"}, validate: bad("callback")},
		{name: "streaming summarize", mode: api.Streaming, opts: api.ListenOptions{Summarize: "v2"},
			validate: badMsg("summarize", "Summarization is not available for streaming.")},
		{name: "streaming topics", mode: api.Streaming, opts: api.ListenOptions{Topics: true},
			validate: &wantOpt{Param: "topics", Status: http.StatusForbidden, Code: "UNAUTHORIZED_FEATURES_REQUESTED"}},
		{name: "streaming custom_topic", mode: api.Streaming, opts: api.ListenOptions{CustomTopic: []string{"billing"}},
			validate: &wantOpt{Param: "topics", Status: http.StatusForbidden, Code: "UNAUTHORIZED_FEATURES_REQUESTED"}},
		{name: "streaming intents", mode: api.Streaming, opts: api.ListenOptions{Intents: true},
			validate: &wantOpt{Param: "intents", Status: http.StatusForbidden, Code: "UNAUTHORIZED_FEATURES_REQUESTED"}},
		{name: "streaming custom_intent", mode: api.Streaming, opts: api.ListenOptions{CustomIntent: []string{"cancel"}},
			validate: &wantOpt{Param: "intents", Status: http.StatusForbidden, Code: "UNAUTHORIZED_FEATURES_REQUESTED"}},
		{name: "streaming sentiment", mode: api.Streaming, opts: api.ListenOptions{Sentiment: true}, check: bad("sentiment")},

		// Rules a careful client adds (CheckRequest only).
		{name: "sample_rate without encoding", mode: api.Batch, opts: api.ListenOptions{SampleRate: 16000}, check: bad("sample_rate")},
		{name: "diarize_version without diarize", mode: api.Batch, opts: api.ListenOptions{DiarizeVersion: "v1"}, check: bad("diarize_version")},
		{name: "utt_split without utterances", mode: api.Batch, opts: api.ListenOptions{UttSplit: 0.8}, check: bad("utt_split")},
		{name: "custom_topic_mode without topics", mode: api.Batch, opts: api.ListenOptions{CustomTopicMode: "strict"}, check: bad("custom_topic_mode")},
		{name: "keyterm with nova-2", mode: api.Batch, opts: api.ListenOptions{Model: "nova-2", Keyterm: []string{"Earshot"}}, check: bad("keyterm")},
		{name: "utterance_end_ms without interims", mode: api.Streaming, opts: api.ListenOptions{UtteranceEndMs: 1000}, check: bad("utterance_end_ms")},
		{name: "batch interim_results", mode: api.Batch, opts: api.ListenOptions{InterimResults: true}, check: bad("interim_results")},
		{name: "batch endpointing", mode: api.Batch, opts: api.ListenOptions{Endpointing: 300}, check: bad("endpointing")},
		{name: "batch endpointing off", mode: api.Batch, opts: api.ListenOptions{Endpointing: api.EndpointingOff}, check: bad("endpointing")},
		{name: "batch vad_events", mode: api.Batch, opts: api.ListenOptions{VADEvents: true}, check: bad("vad_events")},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String()+"/"+tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.opts.Validate(tt.mode), tt.validate)
			want := tt.check
			if tt.validate != nil {
				want = tt.validate
			}
			checkOptionErr(t, "CheckRequest", tt.opts.CheckRequest(tt.mode), want)
		})
	}
}

func TestModeString(t *testing.T) {
	if api.Batch.String() != "batch" || api.Streaming.String() != "streaming" {
		t.Errorf("modes named %q and %q", api.Batch, api.Streaming)
	}
}

func TestCheckListenModel(t *testing.T) {
	for _, m := range api.ListenModels {
		if err := api.CheckListenModel(m); err != nil {
			t.Errorf("%s is named by the specification but refused: %v", m, err)
		}
	}
	for _, m := range []string{"flux", "flux-general-en", "flux-general-multi", "aura-asteria-en", "flux-kit-en"} {
		if err := api.CheckListenModel(m); !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("%s accepted on /v1/listen (err %v)", m, err)
		}
	}
}

func TestIsTurnAwareModel(t *testing.T) {
	tests := []struct {
		model string
		want  bool
	}{
		{"flux-general-en", true},
		{"FLUX-General-Multi", true},
		{"flux", false},
		{"flux-kit-en", false},
		{"nova-3", false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := api.IsTurnAwareModel(tt.model); got != tt.want {
				t.Errorf("IsTurnAwareModel(%q) = %v", tt.model, got)
			}
		})
	}
}

func TestContainerKind(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"wav", []byte("RIFF\x24\x08\x00\x00WAVEfmt "), "wav"},
		{"riff not wave", []byte("RIFF\x24\x08\x00\x00AVI LIST"), ""},
		{"ogg", []byte("OggS\x00\x02"), "ogg"},
		{"flac", []byte("fLaC\x00\x00\x00\x22"), "flac"},
		{"mp3 id3", []byte("ID3\x04\x00"), "mp3"},
		{"mp3 frame sync", []byte{0xFF, 0xFB, 0x90, 0x64}, "mp3"},
		{"mp2 layer bits", []byte{0xFF, 0xF3}, "mp3"},
		{"aac adts is not mp3", []byte{0xFF, 0xF1, 0x50, 0x80}, ""},
		{"webm", []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F}, "webm"},
		{"mp4", []byte("\x00\x00\x00\x20ftypisom"), "mp4"},
		{"raw pcm", []byte{0x01, 0x00, 0x02, 0x00, 0xFE, 0xFF, 0x10, 0x00, 0, 0, 0, 0}, ""},
		{"silence", make([]byte, 32), ""},
		{"empty", nil, ""},
		{"short riff", []byte("RIFF"), ""},
		{"one byte", []byte{0xFF}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := api.ContainerKind(tt.head); got != tt.want {
				t.Errorf("ContainerKind = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckEncodingFor(t *testing.T) {
	wav := []byte("RIFF\x24\x08\x00\x00WAVEfmt ")
	raw := []byte{0x01, 0x00, 0x02, 0x00, 0xFE, 0xFF, 0x10, 0x00, 0, 0, 0, 0}
	tests := []struct {
		name     string
		head     []byte
		encoding string
		want     *wantOpt
	}{
		{"wav without encoding", wav, "", nil},
		{"wav with linear16", wav, "linear16", bad("encoding")},
		{"ogg with opus", []byte("OggS\x00\x02"), "ogg-opus", bad("encoding")},
		{"mp3 with mulaw", []byte("ID3\x04"), "mulaw", bad("encoding")},
		{"flac with flac", []byte("fLaC\x00"), "flac", bad("encoding")},
		{"raw with linear16", raw, "linear16", nil},
		{"raw without encoding", raw, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "CheckEncodingFor", api.CheckEncodingFor(tt.head, tt.encoding), tt.want)
		})
	}
}

func TestIsRawPCM(t *testing.T) {
	for _, e := range api.ListenEncodings {
		want := e == "linear16" || e == "linear32" || e == "mulaw" || e == "alaw"
		if got := api.IsRawPCM(e); got != want {
			t.Errorf("IsRawPCM(%q) = %v, want %v", e, got, want)
		}
	}
}
