package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// turnMessageSeeds are the documented shapes of every server message of
// the /v2/listen WebSocket, plus awkward near-misses.
var turnMessageSeeds = []string{
	wireConnected, wireStartOfTurn, wireEndOfTurn, wireMultiUpdate, wireConfigureOK, wireConfigureAll,
	wireConfigureFail, wireConfigureWhy, wireMultiNoHints, wireWarning, wireError,
	`{"type":"TurnInfo","event":"EagerEndOfTurn","turn_index":1,"transcript":"so","words":null,"end_of_turn_confidence":0.55}`,
	`{"type":"TurnInfo","event":"TurnResumed","trigger":"","words":[{"word":"","confidence":-1,"start":1e308}]}`,
	`{"type":"TurnInfo","event":"EndOfTurn","trigger":"manual","audio_window_end":-0}`,
	`{"type":"TurnInfo","event":"EndOfTurn","trigger":"timeout","turn_index":9007199254740993}`,
	`{"type":"ConfigureSuccess","thresholds":{"eot_threshold":"0.8","eot_timeout_ms":"3000"},"keyterms":null}`,
	`{"type":"ConfigureSuccess","thresholds":{"eot_timeout_ms":1e10}}`,
	`{"type":"ConfigureSuccess","thresholds":{"eager_eot_threshold":"0x1p-1"}}`,
	`{"type":"ConfigureSuccess","thresholds":null}`,
	`{"type":"Warning","code":"X"}`,
	`{"type":"TurnInfo","type":"Novel"}`,
	`{"type":"TurnInfo","turn_index":"1"}`,
	`{"type":"\u00e9\ud800"}`,
	`{"type":null}`, `[]`, `"x"`, ``,
	"{\"type\":\"TurnInfo\",\"transcript\":\"\xff\xfe\"}",
}

func FuzzDecodeTurnMessage(f *testing.F) {
	for _, s := range turnMessageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data, api.DecodeTurnMessage)
	})
}

func FuzzDecodeTurnClientMessage(f *testing.F) {
	for _, s := range []string{
		wireClientConfig, wireClientForceEnd, wireClientClose,
		`{"type":"Configure","thresholds":{"eot_threshold":"0.8","eot_timeout_ms":"3000"}}`,
		`{"type":"Configure","keyterms":[]}`,
		`{"type":"Configure","thresholds":{"eot_timeout_ms":"9e18"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":"Infinity"}}`,
		`{"type":"Configure","thresholds":"0.8"}`,
		`{"type":"KeepAlive"}`, `{"type":5}`, `{}`, `ForceEndTurn`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := api.DecodeTurnClientMessage(data)
		if err != nil {
			if m != nil {
				t.Fatalf("error %v with message %#v", err, m)
			}
			return
		}
		switch c := m.(type) {
		case *api.UnknownMessage:
			if !bytes.Equal(c.Raw, data) {
				t.Fatal("an unknown message does not keep its bytes")
			}
			return
		case *api.Configure:
			_ = c.Validate()
			_, _ = api.TurnOptions{Model: api.ModelFluxGeneralMulti}.WithConfigure(*c)
		}
		// What the engine reads, a client writes the same way.
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := api.DecodeTurnClientMessage(enc)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip of %s: %#v, %v (was %#v)", enc, again, err, m)
		}
	})
}

func FuzzParseTurnOptions(f *testing.F) {
	fuzzQuery(f, []string{
		"model=flux-general-en&encoding=linear16&sample_rate=16000",
		"model=flux-general-en",
		"model=flux-general-multi&language_hint=en&language_hints=es&keyterm=Earshot&keyterm=a%26b",
		"model=flux-general-en&eot_threshold=0.8&eager_eot_threshold=0.5&eot_timeout_ms=3000",
		"model=flux-general-en&eot_threshold=1&eager_eot_threshold=0.9&eot_timeout_ms=60000",
		"model=flux-general-en&smart_format=true&punctuate=true&diarize_model=latest",
		"model=flux&eot_threshold=NaN&eot_timeout_ms=-1&sample_rate=x",
		"model=FLUX-GENERAL-EN&encoding=MULAW&sample_rate=8000&redact=NUMBERS&tag=&tag=a&mip_opt_out=TRUE",
		"model=flux-general-en&eot_threshold=0x1p-1&keyterm=%20&language=en",
		"unknown=1&%zz=1&model=%20flux-general-multi%20",
		"model=fluX-generAl-multi&language_hint=0",
		"",
	}, func(t *testing.T, q url.Values) {
		o, _, err := api.ParseTurnOptions(q)
		if err != nil {
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Status != 400 || oe.Reason == "" || !errors.Is(err, api.ErrInvalidOptions) {
				t.Fatalf("parse error %T %v", err, err)
			}
			if oe.Code != api.CodeInvalidQueryParameter && oe.Code != api.CodeBadRequest && oe.Code != api.CodeInvalidParameter {
				t.Fatalf("code %q", oe.Code)
			}
			if !reflect.DeepEqual(o, api.TurnOptions{}) {
				t.Fatalf("options %+v with an error", o)
			}
			return
		}
		// What was read is valid, and is sent again unchanged.
		if err := o.Validate(); err != nil {
			t.Fatalf("parsed options do not validate: %v", err)
		}
		back, err := url.ParseQuery(o.Query().Encode())
		if err != nil {
			t.Fatalf("Query() does not encode: %v", err)
		}
		o2, unknown, err := api.ParseTurnOptions(back)
		if err != nil {
			t.Fatalf("Query() %s does not parse: %v", o.Query().Encode(), err)
		}
		if len(unknown) != 0 {
			t.Fatalf("Query() emits unknown parameters %v", unknown)
		}
		if !reflect.DeepEqual(o, o2) {
			t.Fatalf("round trip changed the options\n%+v\n%+v\nquery %s", o, o2, o.Query().Encode())
		}
	})
}
