package api_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// Messages of /v2/listen written from the shapes of wire-reference.md
// section 3 (its example, completed with the request id it abbreviates).
const (
	wireConnected      = `{"type":"Connected","request_id":"3b9a0f1e-6a7c-4a53-9f0e-2d6d3b1c7e11","sequence_id":0}`
	wireStartOfTurn    = `{"type":"TurnInfo","request_id":"3b9a0f1e-6a7c-4a53-9f0e-2d6d3b1c7e11","sequence_id":1,"event":"StartOfTurn","turn_index":0,"audio_window_start":0.0,"audio_window_end":0.56,"transcript":"Hello","words":[{"word":"Hello","confidence":0.93}],"end_of_turn_confidence":0.02}`
	wireEndOfTurn      = `{"type":"TurnInfo","request_id":"3b9a0f1e-6a7c-4a53-9f0e-2d6d3b1c7e11","sequence_id":5,"event":"EndOfTurn","turn_index":0,"audio_window_start":0.0,"audio_window_end":1.84,"transcript":"Hello there, how are you?","words":[{"word":"Hello","confidence":0.93},{"word":"there,","confidence":0.91},{"word":"how","confidence":0.99},{"word":"are","confidence":0.99},{"word":"you?","confidence":0.98}],"end_of_turn_confidence":0.87,"trigger":"model"}`
	wireMultiUpdate    = `{"type":"TurnInfo","request_id":"r","sequence_id":2,"event":"Update","turn_index":3,"audio_window_start":12.5,"audio_window_end":13.25,"transcript":"hola amigo","words":[{"word":"hola","confidence":0.9,"start":12.6,"end":12.9},{"word":"amigo","confidence":0.8,"start":12.9,"end":13.2}],"end_of_turn_confidence":0.1,"languages":["es"],"languages_hinted":["en","es"]}`
	wireConfigureOK    = `{"type":"ConfigureSuccess","request_id":"3b9a0f1e-6a7c-4a53-9f0e-2d6d3b1c7e11","sequence_id":6,"thresholds":{"eot_threshold":0.8},"keyterms":["Deepgram"]}`
	wireConfigureAll   = `{"type":"ConfigureSuccess","request_id":"r","sequence_id":7,"thresholds":{"eot_threshold":0.8,"eager_eot_threshold":0.5,"eot_timeout_ms":3000},"keyterms":[],"language_hints":["en"]}`
	wireConfigureFail  = `{"type":"ConfigureFailure","request_id":"r","sequence_id":8}`
	wireConfigureWhy   = `{"type":"ConfigureFailure","request_id":"r","sequence_id":42,"code":"INVALID_THRESHOLD","description":"eager_eot_threshold must be less than or equal to eot_threshold"}`
	wireMultiNoHints   = `{"type":"TurnInfo","request_id":"r","sequence_id":3,"event":"StartOfTurn","turn_index":0,"audio_window_start":0,"audio_window_end":0.25,"transcript":"","words":[],"end_of_turn_confidence":0,"languages":[],"languages_hinted":[]}`
	wireWarning        = `{"type":"Warning","request_id":"r","sequence_id":9,"code":"FORCE_END_TURN_NO_ACTIVE_TURN","description":"No active turn to end."}`
	wireError          = `{"type":"Error","sequence_id":7,"code":"INTERNAL_SERVER_ERROR","description":"..."}`
	wireClientConfig   = `{"type":"Configure","thresholds":{"eot_threshold":0.8,"eager_eot_threshold":0.5,"eot_timeout_ms":3000},"keyterms":["Deepgram"],"language_hints":["en"]}`
	wireClientForceEnd = `{"type":"ForceEndTurn"}`
	wireClientClose    = `{"type":"CloseStream"}`
)

func TestDecodeTurnMessageShapes(t *testing.T) {
	rid := "3b9a0f1e-6a7c-4a53-9f0e-2d6d3b1c7e11"
	tests := []struct {
		name string
		in   string
		want api.TurnMessage
	}{
		{"Connected", wireConnected, &api.Connected{Type: "Connected", RequestID: rid}},
		{"StartOfTurn", wireStartOfTurn, &api.TurnInfo{Type: "TurnInfo", RequestID: rid, SequenceID: 1, Event: api.EventStartOfTurn,
			AudioWindowEnd: 0.56, Transcript: "Hello", Words: []api.TurnWord{{Word: "Hello", Confidence: 0.93}}, EndOfTurnConfidence: 0.02}},
		{"EndOfTurn", wireEndOfTurn, &api.TurnInfo{Type: "TurnInfo", RequestID: rid, SequenceID: 5, Event: api.EventEndOfTurn,
			AudioWindowEnd: 1.84, Transcript: "Hello there, how are you?", Words: []api.TurnWord{
				{Word: "Hello", Confidence: 0.93}, {Word: "there,", Confidence: 0.91}, {Word: "how", Confidence: 0.99},
				{Word: "are", Confidence: 0.99}, {Word: "you?", Confidence: 0.98}},
			EndOfTurnConfidence: 0.87, Trigger: api.TriggerModel}},
		{"multilingual Update with word times", wireMultiUpdate, &api.TurnInfo{Type: "TurnInfo", RequestID: "r", SequenceID: 2, Event: api.EventUpdate,
			TurnIndex: 3, AudioWindowStart: 12.5, AudioWindowEnd: 13.25, Transcript: "hola amigo", Words: []api.TurnWord{
				{Word: "hola", Confidence: 0.9, Start: 12.6, End: 12.9}, {Word: "amigo", Confidence: 0.8, Start: 12.9, End: 13.2}},
			EndOfTurnConfidence: 0.1, Languages: []string{"es"}, LanguagesHinted: []string{"en", "es"}}},
		{"ConfigureSuccess", wireConfigureOK, &api.ConfigureSuccess{Type: "ConfigureSuccess", RequestID: rid, SequenceID: 6,
			Thresholds: api.Thresholds{EOTThreshold: f64p(0.8)}, Keyterms: []string{"Deepgram"}}},
		{"ConfigureSuccess every field", wireConfigureAll, &api.ConfigureSuccess{Type: "ConfigureSuccess", RequestID: "r", SequenceID: 7,
			Thresholds: api.Thresholds{EOTThreshold: f64p(0.8), EagerEOTThreshold: f64p(0.5), EOTTimeoutMS: intp(3000)},
			Keyterms:   []string{}, LanguageHints: []string{"en"}}},
		{"ConfigureFailure", wireConfigureFail, &api.ConfigureFailure{Type: "ConfigureFailure", RequestID: "r", SequenceID: 8}},
		{"ConfigureFailure with its reason", wireConfigureWhy, &api.ConfigureFailure{Type: "ConfigureFailure", RequestID: "r", SequenceID: 42,
			Code: api.CodeInvalidThreshold, Description: "eager_eot_threshold must be less than or equal to eot_threshold"}},
		{"multilingual with empty language lists", wireMultiNoHints, &api.TurnInfo{Type: "TurnInfo", RequestID: "r", SequenceID: 3, Event: api.EventStartOfTurn,
			AudioWindowEnd: 0.25, Words: []api.TurnWord{}, Languages: []string{}, LanguagesHinted: []string{}}},
		{"Warning", wireWarning, &api.TurnWarning{Type: "Warning", RequestID: "r", SequenceID: 9, Code: api.CodeForceEndTurnNoActive, Description: "No active turn to end."}},
		{"Error", wireError, &api.TurnError{Type: "Error", SequenceID: 7, Code: api.CodeInternalServerError, Description: "..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.DecodeTurnMessage([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decoded\n %#v\nwant\n %#v", got, tt.want)
			}
			if got.MessageType() != tt.want.MessageType() {
				t.Errorf("MessageType %q", got.MessageType())
			}
			// The engine encodes the same messages: the encoding must be
			// the wire shape, field for field.
			if b := mustJSON(t, got); !sameJSON(t, b, []byte(tt.in)) {
				t.Errorf("re-encoded\n %s\nwant\n %s", b, tt.in)
			}
		})
	}
}

func TestTurnServerMessagesEncodeTheirType(t *testing.T) {
	// The engine builds messages without setting Type; the encoding must
	// still carry the right discriminator and arrays where the wire has them.
	tests := []struct {
		msg  any
		want string
	}{
		{api.Connected{RequestID: "r"}, `{"type":"Connected","request_id":"r","sequence_id":0}`},
		{&api.TurnInfo{Event: api.EventStartOfTurn}, `{"type":"TurnInfo","request_id":"","sequence_id":0,"event":"StartOfTurn","turn_index":0,
			"audio_window_start":0,"audio_window_end":0,"transcript":"","words":[],"end_of_turn_confidence":0}`},
		{api.ConfigureSuccess{Type: "wrong"}, `{"type":"ConfigureSuccess","request_id":"","sequence_id":0,"thresholds":{},"keyterms":[]}`},
		{api.ConfigureFailure{SequenceID: 3}, `{"type":"ConfigureFailure","request_id":"","sequence_id":3}`},
		{api.TurnWarning{Code: "X"}, `{"type":"Warning","request_id":"","sequence_id":0,"code":"X","description":""}`},
		{api.TurnError{Code: "X"}, `{"type":"Error","sequence_id":0,"code":"X","description":""}`},
	}
	for _, tt := range tests {
		if b := mustJSON(t, tt.msg); !sameJSON(t, b, []byte(tt.want)) {
			t.Errorf("%T encoded\n %s\nwant\n %s", tt.msg, b, tt.want)
		}
	}
}

func TestTurnInfoOpenEnumerations(t *testing.T) {
	in := `{"type":"TurnInfo","event":"SpeakerChanged","turn_index":2,"trigger":"vad","transcript":"x","words":[],"end_of_turn_confidence":0.5}`
	m, err := api.DecodeTurnMessage([]byte(in))
	if err != nil {
		t.Fatalf("an unknown event or trigger must not be an error: %v", err)
	}
	ti, ok := m.(*api.TurnInfo)
	if !ok {
		t.Fatalf("decoded as %T", m)
	}
	if ti.Event != "SpeakerChanged" || ti.Trigger != "vad" {
		t.Errorf("event %q trigger %q: unknown values must be kept as sent", ti.Event, ti.Trigger)
	}
	if ti.Event.Known() || ti.Trigger.Known() {
		t.Error("unknown values reported as known")
	}
	for _, e := range api.TurnEvents {
		if !e.Known() {
			t.Errorf("%s not known", e)
		}
	}
	for _, tr := range api.TurnTriggers {
		if !tr.Known() {
			t.Errorf("%s not known", tr)
		}
	}
	if b := mustJSON(t, ti); !sameJSON(t, b, []byte(`{"type":"TurnInfo","request_id":"","sequence_id":0,"event":"SpeakerChanged","turn_index":2,
		"audio_window_start":0,"audio_window_end":0,"transcript":"x","words":[],"end_of_turn_confidence":0.5,"trigger":"vad"}`)) {
		t.Errorf("re-encoded %s", b)
	}
}

func TestDecodeTurnMessageUnknown(t *testing.T) {
	for _, in := range []string{
		`{"type":"Results","channel":{}}`,
		`{"type":"SpeechStarted"}`,
		`{"type":""}`,
		`{"type":"turninfo","event":"EndOfTurn"}`,
	} {
		t.Run(in, func(t *testing.T) {
			got, err := api.DecodeTurnMessage([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			u, ok := got.(*api.UnknownMessage)
			if !ok {
				t.Fatalf("decoded as %T", got)
			}
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(in), &head)
			if u.Type != head.Type || string(u.Raw) != in {
				t.Errorf("kept %q %s", u.Type, u.Raw)
			}
		})
	}
}

func TestDecodeTurnMessageErrors(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"x"`, `{}`, `{"type":null}`, `{"type":1}`,
		`{"type":"TurnInfo","turn_index":"0"}`,
		`{"type":"TurnInfo","words":{}}`,
		`{"type":"TurnInfo","sequence_id":1.5}`,
		`{"type":"Connected","sequence_id":"0"}`,
		`{"type":"ConfigureSuccess","thresholds":{"eot_threshold":"high"}}`,
		`{"type":"ConfigureSuccess","thresholds":{"eot_timeout_ms":1.5}}`,
		`{"type":"ConfigureSuccess","thresholds":[]}`,
		`{"type":"Error","code":7}`,
	} {
		t.Run(in, func(t *testing.T) {
			m, err := api.DecodeTurnMessage([]byte(in))
			if err == nil {
				t.Fatalf("decoded %#v", m)
			}
			if m != nil {
				t.Errorf("a message %#v with the error", m)
			}
		})
	}
}

func TestTurnErrorErr(t *testing.T) {
	got := (&api.TurnError{Code: api.CodeUndecodable, Description: "bad audio"}).Err()
	if got.Code != api.CodeUndecodable || got.Message != "bad audio" || got.Status != 0 {
		t.Errorf("Err() = %#v", *got)
	}
	if !errors.Is(got, api.ErrUndecodableAudio) {
		t.Error("a DATA-0000 Error message does not match ErrUndecodableAudio")
	}
}

func TestConfigureMarshal(t *testing.T) {
	tests := []struct {
		name string
		c    api.Configure
		want string
	}{
		{"nothing set sends only the type", api.Configure{}, `{"type":"Configure"}`},
		{"one threshold, as a string", api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.8)}},
			`{"type":"Configure","thresholds":{"eot_threshold":"0.8"}}`},
		{"every field", api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.85), EagerEOTThreshold: f64p(0.5), EOTTimeoutMS: intp(3000)},
			Keyterms: []string{"Deepgram"}, LanguageHints: []string{"en"}},
			`{"type":"Configure","thresholds":{"eot_threshold":"0.85","eager_eot_threshold":"0.5","eot_timeout_ms":"3000"},"keyterms":["Deepgram"],"language_hints":["en"]}`},
		{"keyterms only", api.Configure{Keyterms: []string{"a", "b"}}, `{"type":"Configure","keyterms":["a","b"]}`},
		{"empty keyterms clear the list", api.Configure{Keyterms: []string{}}, `{"type":"Configure","keyterms":[]}`},
		{"timeout only", api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: intp(500)}}, `{"type":"Configure","thresholds":{"eot_timeout_ms":"500"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustJSON(t, tt.c)
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
			// And back, as the engine reads it.
			m, err := api.DecodeTurnClientMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := m.(*api.Configure); !ok || !reflect.DeepEqual(*got, tt.c) {
				t.Errorf("read back %#v, want %#v", m, tt.c)
			}
		})
	}
	for _, m := range []any{api.ForceEndTurn{}, &api.ForceEndTurn{}} {
		if b := mustJSON(t, m); string(b) != wireClientForceEnd {
			t.Errorf("ForceEndTurn = %s", b)
		}
	}
	if b := mustJSON(t, api.CloseStream{}); string(b) != wireClientClose {
		t.Errorf("CloseStream = %s", b)
	}
}

func TestDecodeTurnClientMessage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want api.TurnClientMessage
	}{
		{"Configure with numbers (wire reference)", wireClientConfig, &api.Configure{
			Thresholds: api.Thresholds{EOTThreshold: f64p(0.8), EagerEOTThreshold: f64p(0.5), EOTTimeoutMS: intp(3000)},
			Keyterms:   []string{"Deepgram"}, LanguageHints: []string{"en"}}},
		{"Configure with strings (specification)", `{"type":"Configure","thresholds":{"eot_threshold":"0.75","eot_timeout_ms":"1500"}}`,
			&api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.75), EOTTimeoutMS: intp(1500)}}},
		{"Configure with nulls keeps values", `{"type":"Configure","thresholds":{"eot_threshold":null},"keyterms":null}`, &api.Configure{}},
		{"Configure whole-number timeout written as float", `{"type":"Configure","thresholds":{"eot_timeout_ms":2000.0}}`,
			&api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: intp(2000)}}},
		{"ForceEndTurn", wireClientForceEnd, &api.ForceEndTurn{}},
		{"CloseStream", wireClientClose, &api.CloseStream{}},
		{"KeepAlive is not of this family", `{"type":"KeepAlive"}`, &api.UnknownMessage{Type: "KeepAlive", Raw: json.RawMessage(`{"type":"KeepAlive"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.DecodeTurnClientMessage([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
	for _, in := range []string{
		`{"type":"Configure","thresholds":{"eot_threshold":"high"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":"NaN"}}`,
		`{"type":"Configure","thresholds":{"eot_timeout_ms":"1.5"}}`,
		`{"type":"Configure","thresholds":{"eot_timeout_ms":1e300}}`,
		`{"type":"Configure","thresholds":{"eager_eot_threshold":true}}`,
		`{"type":"Configure","keyterms":"Deepgram"}`,
	} {
		t.Run(in, func(t *testing.T) {
			_, err := api.DecodeTurnClientMessage([]byte(in))
			if !errors.Is(err, api.ErrBadConfigure) {
				t.Errorf("err = %v, want ErrBadConfigure", err)
			}
		})
	}
	if _, err := api.DecodeTurnClientMessage([]byte(`{"kind":"Configure"}`)); !errors.Is(err, api.ErrNotJSONObject) {
		t.Errorf("a message without a type: %v", err)
	}
}

func TestConfigureValidate(t *testing.T) {
	tests := []struct {
		name string
		c    api.Configure
		want *wantOpt
	}{
		{name: "empty", c: api.Configure{}},
		{name: "in range", c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.9), EagerEOTThreshold: f64p(0.6), EOTTimeoutMS: intp(1000)}}},
		{name: "eager alone up to 0.9", c: api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0.9)}}},
		{name: "eot out of range", c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(1.2)}}, want: bad("eot_threshold")},
		{name: "eot zero", c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0)}}, want: bad("eot_threshold")},
		{name: "eager zero", c: api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0)}}, want: bad("eager_eot_threshold")},
		{name: "eager above eot", c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.6), EagerEOTThreshold: f64p(0.7)}}, want: bad("eager_eot_threshold")},
		{name: "timeout zero", c: api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: intp(0)}}, want: bad("eot_timeout_ms")},
		{name: "timeout too long", c: api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: intp(60001)}}, want: bad("eot_timeout_ms")},
		{name: "weighted keyterm", c: api.Configure{Keyterms: []string{"x:1.5"}}, want: bad("keyterm")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.c.Validate(), tt.want)
		})
	}
}

func TestNewConfigureFailure(t *testing.T) {
	opts := en()
	_, thresholdErr := opts.WithConfigure(api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0.8)}})
	_, hintErr := opts.WithConfigure(api.Configure{LanguageHints: []string{"es"}})
	_, readErr := api.DecodeTurnClientMessage([]byte(`{"type":"Configure","thresholds":{"eot_threshold":"high"}}`))
	tests := []struct {
		name     string
		err      error
		wantCode string
	}{
		{"threshold", thresholdErr, api.CodeInvalidThreshold},
		{"language hint", hintErr, api.CodeInvalidParameter},
		{"unreadable", readErr, api.CodeUnparsableClientMessage},
		{"other", errors.New("boom"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the rule did not refuse")
			}
			f := api.NewConfigureFailure("r", 4, tt.err)
			if f.Code != tt.wantCode || f.Description == "" || f.RequestID != "r" || f.SequenceID != 4 || f.Type != api.TypeConfigureFailure {
				t.Errorf("got %#v", f)
			}
		})
	}
	if f := api.NewConfigureFailure("r", 1, nil); f.Code != "" || f.Description != "" {
		t.Errorf("without an error: %#v", f)
	}
}
