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

func FuzzDecodeReadResponse(f *testing.F) {
	for _, s := range []string{
		readSentimentDoc,
		`{"metadata":{"request_id":"r","created":"2025-05-09T20:14:15.836Z","language":"en","summary_info":{"model_uuid":"u","input_tokens":1855,"output_tokens":113}},"results":{"summary":{"text":"A summary."}}}`,
		`{"request_id":"only-an-id"}`,
		`{"metadata":null,"results":null}`,
		`{"results":{"topics":{"results":{"topics":{"segments":[]}}}}}`,
		`{"results":{"sentiments":{"segments":[{"start_word":1e400}]}}}`,
		`{"results":{"intents":{"segments":[{"intents":[{"intent":"\ud800","confidence_score":-0}]}]}}}`,
		`[]`, `""`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	for _, b := range readRecorded("read", "*-response.json") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := api.DecodeReadResponse(data)
		if !bytes.Equal(in, data) {
			t.Fatal("the decoder changed its input")
		}
		if (r == nil) == (err == nil) {
			t.Fatalf("response %v and error %v", r, err)
		}
		if err != nil {
			return
		}
		// A decoded answer encodes to a fixed point.
		enc, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encode %+v: %v", r, err)
		}
		again, err := api.DecodeReadResponse(enc)
		if err != nil {
			t.Fatalf("decode of own encoding %s: %v", enc, err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip changed the answer:\n%+v\n%+v", r, again)
		}
	})
}

func FuzzParseReadOptions(f *testing.F) {
	fuzzQuery(f, []string{
		"language=en&summarize=v2&sentiment=true&topics=true&intents=true",
		"language=en-US&custom_topic=billing&custom_topic=refund&custom_topic_mode=strict",
		"summarize=true",
		"language=multi&sentiment=true",
		"language=en&sentiment=maybe&callback=https://x/cb&callback_method=put",
		"language=%00&custom_intent=%ff&custom_intent_mode=EXTENDED",
		"language=en&language=de&summarize=v1",
		"",
	}, func(t *testing.T, q url.Values) {
		o, _, err := api.ParseReadOptions(q)
		if err != nil {
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Status == 0 || oe.Code == "" || oe.Reason == "" {
				t.Fatalf("parse error %v is not a complete *OptionError", err)
			}
			if q.Get("language") == "" || len(bytes.TrimSpace([]byte(q.Get("language")))) == 0 {
				if oe.Reason != api.MsgReadMissingLanguage {
					t.Fatalf("missing language answered %q", oe.Reason)
				}
			}
			return
		}
		if o.Language == "" {
			t.Fatal("parsed without a language")
		}
		verr := o.Validate()
		// What parses and validates survives its own query unchanged.
		back, unknown, err := api.ParseReadOptions(o.Query())
		if err != nil || len(unknown) > 0 {
			t.Fatalf("own query %v: %v, unknown %v", o.Query(), err, unknown)
		}
		if !reflect.DeepEqual(back, o) {
			t.Fatalf("round trip\n got %+v\nwant %+v", back, o)
		}
		if (back.Validate() == nil) != (verr == nil) {
			t.Fatalf("validation changed through the query: %v then %v", verr, back.Validate())
		}
	})
}
