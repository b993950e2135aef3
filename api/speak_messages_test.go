package api_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// The /v1/speak server messages as the wire reference quotes them.
const (
	wireSpeakMetadata = `{"type":"Metadata","request_id":"1b051972-4d9e-47d3-83d0-6685786db1f2","model_name":"aura-asteria-en","model_version":"2024-11-19.0","model_uuid":"ecb76e9d-f2db-4127-8060-79b05590d22f"}`
	wireFlushed       = `{"type":"Flushed","sequence_id":0}`
	wireCleared       = `{"type":"Cleared","sequence_id":3}`
	wireSpeakWarnReal = `{"type":"Warning","warn_code":"EXCESSIVE_FLUSH","warn_msg":"Rate limit exceeded for flushes. Please try again later."}`
	wireSpeakWarnSpec = `{"type":"Warning","code":"EXCESSIVE_FLUSH","description":"Rate limit exceeded for flushes. Please try again later."}`
	wireSpeakError    = `{"type":"Error","code":"DATA-0001","description":"Character submission rate too high."}`
)

// The /v2/speak server messages as the wire reference gives them.
const (
	wireSpeechConnected   = `{"type":"Connected","request_id":"r-1","model_name":"flux-kit-en","model_version":"2026-05-01.0","model_uuids":["u-1","u-2"]}`
	wireSpeechStarted     = `{"type":"SpeechStarted","speech_id":"dg_sp_0123456789ab"}`
	wireSpeechFlushed     = `{"type":"Flushed","speech_id":"dg_sp_0123456789ab"}`
	wireSpeechMetadata    = `{"type":"SpeechMetadata","speech_id":"dg_sp_0123456789ab","audio_duration_ms":1234,"input_character_count":40,"billable_character_count":40,"controls_applied":{"pronunciations_applied":1,"pronunciation_warnings":0}}`
	wireSpeechInterrupted = `{"type":"SpeechInterrupted","speech_id":"dg_sp_0123456789ab","text_spoken":"Hello there,","text_remaining":" how are you?"}`
	wireSessionMetadata   = `{"type":"SessionMetadata","total_audio_duration_ms":5000,"total_input_character_count":120,"total_billable_character_count":118}`
	wireSpeechWarning     = `{"type":"Warning","code":"INPUT_MARKUP_STRIPPED","description":"Markup was removed from the input."}`
	wireSpeechUnknownWarn = `{"type":"Warning","code":"SOMETHING_NEW","description":"?"}`
	wireSpeechError       = `{"type":"Error","code":"NET-0004","description":"Time limit."}`
)

func TestDecodeSpeakMessage(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want api.SpeakMessage
	}{
		{"metadata", wireSpeakMetadata, &api.SpeakMetadata{Type: "Metadata", RequestID: "1b051972-4d9e-47d3-83d0-6685786db1f2",
			ModelName: "aura-asteria-en", ModelVersion: "2024-11-19.0", ModelUUID: "ecb76e9d-f2db-4127-8060-79b05590d22f"}},
		{"flushed", wireFlushed, &api.Flushed{Type: "Flushed", SequenceID: 0}},
		{"cleared", wireCleared, &api.Cleared{Type: "Cleared", SequenceID: 3}},
		{"warning as sent", wireSpeakWarnReal, &api.SpeakWarning{Type: "Warning", Code: api.CodeExcessiveFlush,
			Description: "Rate limit exceeded for flushes. Please try again later."}},
		{"warning as described", wireSpeakWarnSpec, &api.SpeakWarning{Type: "Warning", Code: api.CodeExcessiveFlush,
			Description: "Rate limit exceeded for flushes. Please try again later."}},
		{"error", wireSpeakError, &api.StreamError{Type: "Error", Code: "DATA-0001", Description: "Character submission rate too high."}},
		{"unknown", `{"type":"Novel","x":1}`, &api.UnknownMessage{Type: "Novel", Raw: json.RawMessage(`{"type":"Novel","x":1}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.DecodeSpeakMessage([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			if _, ok := got.(*api.UnknownMessage); ok {
				return
			}
			// What the engine writes reads back the same.
			enc, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := api.DecodeSpeakMessage(enc)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("re-encoded %s decodes to %#v, %v", enc, again, err)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"type":1}`, `{"type":"Flushed","sequence_id":"x"}`, `{"type":"Warning","warn_code":5}`} {
		if m, err := api.DecodeSpeakMessage([]byte(bad)); err == nil {
			t.Errorf("DecodeSpeakMessage(%s) = %#v, want an error", bad, m)
		}
	}
}

func TestSpeakWarningWritesBothSpellings(t *testing.T) {
	b, err := json.Marshal(api.SpeakWarning{Code: api.CodeExcessiveFlush, Description: "slow down"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"Warning","warn_code":"EXCESSIVE_FLUSH","warn_msg":"slow down","code":"EXCESSIVE_FLUSH","description":"slow down"}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func TestDecodeSpeechMessage(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want api.SpeechMessage
	}{
		{"connected", wireSpeechConnected, &api.SpeechConnected{Type: "Connected", RequestID: "r-1", ModelName: "flux-kit-en",
			ModelVersion: "2026-05-01.0", ModelUUIDs: []string{"u-1", "u-2"}}},
		{"started", wireSpeechStarted, &api.SpeechTurnStarted{Type: "SpeechStarted", SpeechID: "dg_sp_0123456789ab"}},
		{"flushed", wireSpeechFlushed, &api.SpeechFlushed{Type: "Flushed", SpeechID: "dg_sp_0123456789ab"}},
		{"metadata", wireSpeechMetadata, &api.SpeechMetadata{Type: "SpeechMetadata", SpeechID: "dg_sp_0123456789ab", AudioDurationMS: 1234,
			InputCharacterCount: 40, BillableCharacterCount: 40, ControlsApplied: api.SpeechControls{PronunciationsApplied: 1}}},
		{"interrupted", wireSpeechInterrupted, &api.SpeechInterrupted{Type: "SpeechInterrupted", SpeechID: "dg_sp_0123456789ab",
			TextSpoken: "Hello there,", TextRemaining: " how are you?"}},
		{"interrupted with played audio", `{"type":"SpeechInterrupted","speech_id":"s","text_spoken":"a","text_remaining":"b","audio_played_ms":640}`,
			&api.SpeechInterrupted{Type: "SpeechInterrupted", SpeechID: "s", TextSpoken: "a", TextRemaining: "b", AudioPlayedMS: 640}},
		{"session", wireSessionMetadata, &api.SessionMetadata{Type: "SessionMetadata", TotalAudioDurationMS: 5000,
			TotalInputCharacterCount: 120, TotalBillableCharacterCount: 118}},
		{"warning", wireSpeechWarning, &api.SpeechWarning{Type: "Warning", Code: api.CodeInputMarkupStripped, Description: "Markup was removed from the input."}},
		{"unknown warning code kept", wireSpeechUnknownWarn, &api.SpeechWarning{Type: "Warning", Code: "SOMETHING_NEW", Description: "?"}},
		{"error", wireSpeechError, &api.SpeechError{Type: "Error", Code: "NET-0004", Description: "Time limit."}},
		{"unknown", `{"type":"Novel"}`, &api.UnknownMessage{Type: "Novel", Raw: json.RawMessage(`{"type":"Novel"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.DecodeSpeechMessage([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			if _, ok := got.(*api.UnknownMessage); ok {
				return
			}
			enc, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, enc, []byte(tt.raw)) {
				t.Errorf("re-encoded\n%s\nwant\n%s", enc, tt.raw)
			}
		})
	}
	e := &api.SpeechError{Code: "NET-0004", Description: "Time limit."}
	if err := e.Err(); err.Code != "NET-0004" || err.Message != "Time limit." {
		t.Errorf("Err() = %#v", err)
	}
}

func TestSpeakClientMessages(t *testing.T) {
	tests := []struct {
		name  string
		msg   json.Marshaler
		wire  string
		v1    api.SpeakClientMessage // nil when /v1/speak does not know it
		v2    api.SpeakClientMessage // nil when /v2/speak does not know it
		isBad bool
	}{
		{"speak", api.SpeakText{Text: "Hello, \"world\""}, `{"type":"Speak","text":"Hello, \"world\""}`,
			&api.SpeakText{Text: "Hello, \"world\""}, &api.SpeakText{Text: "Hello, \"world\""}, false},
		{"flush", api.SpeakFlush{}, `{"type":"Flush"}`, &api.SpeakFlush{}, &api.SpeakFlush{}, false},
		{"clear", api.SpeakClear{}, `{"type":"Clear"}`, &api.SpeakClear{}, nil, false},
		{"close", api.SpeakClose{}, `{"type":"Close"}`, &api.SpeakClose{}, &api.SpeakClose{}, false},
		{"interrupt", api.SpeechInterrupt{}, `{"type":"Interrupt"}`, nil, &api.SpeechInterrupt{}, false},
		{"configure", api.SpeechConfigure{Speed: 1 + 0.05}, `{"type":"Configure","speed":1.05}`, nil, &api.SpeechConfigure{Speed: 1.05}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.msg.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.wire {
				t.Errorf("wire %s, want %s", b, tt.wire)
			}
			for _, c := range []struct {
				name   string
				decode func([]byte) (api.SpeakClientMessage, error)
				want   api.SpeakClientMessage
			}{{"v1", api.DecodeSpeakClientMessage, tt.v1}, {"v2", api.DecodeSpeechClientMessage, tt.v2}} {
				got, err := c.decode(b)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if c.want == nil {
					if u, ok := got.(*api.UnknownMessage); !ok || u.Type == "" {
						t.Errorf("%s: got %#v, want an unknown message", c.name, got)
					}
					continue
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: got %#v, want %#v", c.name, got, c.want)
				}
			}
		})
	}
	if _, err := (api.SpeechConfigure{Speed: math.NaN()}).MarshalJSON(); err == nil {
		t.Error("a NaN speed was written")
	}
	// A Speak without text reads as empty text, which the engine answers 400.
	if m, err := api.DecodeSpeakClientMessage([]byte(`{"type":"Speak"}`)); err != nil || m.(*api.SpeakText).Text != "" {
		t.Errorf("Speak without text: %#v %v", m, err)
	}
	for _, raw := range []string{`{"type":"Speak","text":5}`, `{"type":"Configure","speed":"fast"}`} {
		_, err := api.DecodeSpeechClientMessage([]byte(raw))
		if !errors.Is(err, api.ErrBadSpeakMessage) {
			t.Errorf("%s: %v, want ErrBadSpeakMessage", raw, err)
		}
	}
	if err := (&api.SpeechConfigure{Speed: 1.6}).Validate(); !errors.Is(err, api.ErrInvalidOptions) {
		t.Errorf("Configure 1.6: %v", err)
	}
}

func TestEmptyTextError(t *testing.T) {
	for _, text := range []string{"", " ", "\n\t"} {
		err := api.CheckSpeakText("", text)
		if !errors.Is(err, api.ErrEmptyText) || !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("%q: %v matches neither ErrEmptyText nor ErrInvalidOptions", text, err)
		}
		checkOptionErr(t, "CheckSpeakText", err, badMsg("text", api.MsgEmptyText))
	}
}
