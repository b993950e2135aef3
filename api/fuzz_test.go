package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

// listenMessageSeeds are the documented shapes of every message of the
// /v1/listen WebSocket, plus awkward near-misses.
var listenMessageSeeds = []string{
	`{"channel":{"alternatives":[{"transcript":"Ensure domestic tranquility.","confidence":0.9897461,"words":[{"word":"ensure","start":6.251818,"end":6.6427274,"confidence":0.9897461,"punctuated_word":"Ensure"}]}]},"metadata":{"model_info":{"name":"general","version":"2024-01-26.8851","arch":"base"},"request_id":"4b21fb93-0ece-46c8-a7c8-05709d2119dc","model_uuid":"1ed36bac-f71c-4f3f-a31f-02fd6525c489"},"type":"Results","channel_index":[0,1],"duration":1.73,"start":5.9,"is_final":true,"from_finalize":false,"speech_final":true}`,
	`{"type":"Results","channel":{"alternatives":[{"transcript":"","confidence":0.0,"words":[]}]},"entities":[]}`,
	`{"type":"Results","entities":[{"label":"NAME","value":"Ann","raw_value":"ann","confidence":0.9,"start_word":0,"end_word":1}],"channel":{"alternatives":[{"words":[{"word":"a","speaker":0,"speaker_confidence":0.5}]}]}}`,
	`{"type":"Metadata","transaction_key":"deprecated","request_id":"46c3cc07","sha256":"incomplete","created":"2025-10-08T17:04:31.096Z","duration":4.0799375,"channels":1,"models":["40bd3654"],"model_info":{"40bd3654":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"}}}`,
	`{"type":"Metadata","transaction_key":"deprecated","request_id":"f71f632f","sha256":"16d2","created":"2024-10-08T04:41:55.587Z","duration":0,"channels":0}`,
	`{"channel":[0,1],"last_word_end":2.395,"type":"UtteranceEnd"}`,
	`{"type":"SpeechStarted","channel":[0,1],"timestamp":9.54}`,
	`{"type":"Error","variant":"SchemaError","description":"d","code":"c","message":"m"}`,
	`{"type":"Warning","code":"X"}`,
	`{"type":"Results","models":null,"channel_index":[1e308,-0]}`,
	`{"Type":"Results","TYPE":"Metadata"}`,
	`{"type":"Results","type":"Novel"}`,
	`{"type":"Results","duration":"1"}`,
	`{"type":"\u00e9\ud800"}`,
	`{"type":null}`,
	`[]`,
	`"x"`,
	``,
	"{\"type\":\"Results\",\"channel\":{\"alternatives\":[{\"transcript\":\"\xff\xfe\"}]}}",
}

// fuzzQuery fuzzes check with every input that parses as a URL query,
// seeded with seeds: the parsers of options see only parsed queries.
func fuzzQuery(f *testing.F, seeds []string, check func(t *testing.T, q url.Values)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check(t, q)
	})
}

// checkDecoded asserts what every decoder of untrusted messages promises:
// the input is not changed, exactly one of a message and an error, an
// unknown type keeps its bytes, and a known message encodes to a fixed
// point of its own type.
func checkDecoded[M interface{ MessageType() string }](t *testing.T, data []byte, decode func([]byte) (M, error)) {
	t.Helper()
	in := bytes.Clone(data)
	m, err := decode(data)
	if !bytes.Equal(in, data) {
		t.Fatal("the decoder changed its input")
	}
	var none M
	if err != nil {
		if !reflect.DeepEqual(m, none) {
			t.Fatalf("both a message %#v and an error %v", m, err)
		}
		return
	}
	if reflect.DeepEqual(m, none) {
		t.Fatal("no message and no error")
	}
	if u, ok := any(m).(*api.UnknownMessage); ok {
		if !bytes.Equal(u.Raw, data) {
			t.Fatal("an unknown message does not keep its bytes")
		}
		return
	}
	enc, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("encode %#v: %v", m, err)
	}
	again, err := decode(enc)
	if err != nil {
		t.Fatalf("decode of own encoding %s: %v", enc, err)
	}
	if reflect.TypeOf(again) != reflect.TypeOf(m) || again.MessageType() != m.MessageType() {
		t.Fatalf("%T became %T through %s", m, again, enc)
	}
	enc2, err := json.Marshal(again)
	if err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
	}
}

func FuzzDecodeListenMessage(f *testing.F) {
	for _, s := range listenMessageSeeds {
		f.Add([]byte(s))
	}
	for _, b := range readRecorded("listen-websocket", "*-response.json") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data, api.DecodeListenMessage)
	})
}

func FuzzDecodeControlMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"KeepAlive"}`, `{"type":"Finalize"}`, `{"type":"Finalize","channel":0}`, `{"type":"CloseStream"}`,
		`{"type":"Configure","keyterms":["a"],"features":{"numerals":true}}`,
		`{"type":"KeepAlive","channel":null}`, `{"type":"KeepAlive","channel":1.5}`, `{"type":5}`, `{}`, `KeepAlive`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := api.DecodeControlMessage(data)
		if err != nil {
			if !reflect.DeepEqual(m, api.ControlMessage{}) {
				t.Fatalf("error %v with message %+v", err, m)
			}
			return
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := api.DecodeControlMessage(enc)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip of %s: %+v, %v", enc, again, err)
		}
	})
}

func FuzzParseError(f *testing.F) {
	seeds := []string{
		`{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"uuid"}`,
		`{"category":"INVALID_JSON","message":"Invalid JSON submitted.","details":"Json deserialize error","request_id":"uuid"}`,
		`{"error_code":"Service Unavailable","err_msg":"Please try again later","request_id":"uuid"}`,
		`{"code":"DATA-0000","description":"d"}`,
		`"a JSON string"`, `"broken`, `plain text`, ``, ` `, `{`, `{"err_code":5}`, `null`, `[1,2]`,
		strings.Repeat("é", 1500), "\xff\xfe\xfd",
	}
	for i, s := range seeds {
		f.Add(400+i, []byte(s), "hdr-id")
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, requestID string) {
		e := api.ParseError(status, body, requestID)
		if e == nil {
			t.Fatal("nil error")
		}
		if e.Status != status {
			t.Fatalf("status %d became %d", status, e.Status)
		}
		if len(e.Message) > 2000+len("…") {
			t.Fatalf("message of %d bytes", len(e.Message))
		}
		if utf8.Valid(body) && !utf8.ValidString(e.Message) {
			t.Fatalf("valid UTF-8 body gave an invalid message %q", e.Message)
		}
		if requestID != "" && e.RequestID == "" {
			t.Fatal("the header's request id was lost")
		}
		if e.Error() == "" {
			t.Fatal("empty Error()")
		}
		_ = errors.Is(e, api.ErrUnauthorized)
	})
}

func FuzzParseListenQuery(f *testing.F) {
	fuzzQuery(f, []string{
		"model=nova-3&smart_format=true",
		"model=nova-3&smart_format=true&summarize=v2",
		"channels=1&encoding=mulaw&language=en-US&model=nova-3&punctuate=true&sample_rate=8000&smart_format=true",
		"interim_results=true&utterance_end_ms=1000&vad_events=true&endpointing=300",
		"endpointing=false&endpointing=0&diarize_model=latest&diarize=true&diarize_version=v1",
		"redact=pci&redact=false&redact=SSN&extra=k:v:w&extra=k2:&tag=a&keyterm=a&keyterm=b",
		"custom_topic=a&custom_topic_mode=strict&custom_intent=b&custom_intent_mode=extended&topics=TRUE&intents=false",
		"utt_split=0.8&utterances=true&callback=https://x/cb&callback_method=put",
		"punctuate=yes&sample_rate=-1&utt_split=NaN&endpointing=abc&extra=nocolon",
		"unknown=1&%zz=1&model=%20flux%20",
		"summarize=V2&encoding=LINEAR16&callback_method=%C3%9F",
		"",
	}, func(t *testing.T, q url.Values) {
		o, _, err := api.ParseListenQuery(q)
		if err != nil {
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Status != 400 || !errors.Is(err, api.ErrInvalidOptions) {
				t.Fatalf("parse error %T %v", err, err)
			}
			if oe.Code != api.CodeInvalidQueryParameter && oe.Code != api.CodeBadRequest {
				t.Fatalf("code %q", oe.Code)
			}
			if !reflect.DeepEqual(o, api.ListenOptions{}) {
				t.Fatalf("options %+v with an error", o)
			}
			return
		}
		for _, m := range []api.Mode{api.Batch, api.Streaming} {
			if err := o.Validate(m); err != nil && !errors.Is(err, api.ErrInvalidOptions) {
				t.Fatalf("Validate(%s) = %v", m, err)
			}
			_ = o.CheckRequest(m)
		}
		// What was read is sent again unchanged.
		back, err := url.ParseQuery(o.Query().Encode())
		if err != nil {
			t.Fatalf("Query() does not encode: %v", err)
		}
		o2, unknown, err := api.ParseListenQuery(back)
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

func FuzzContainerKind(f *testing.F) {
	for _, s := range []string{
		"RIFF\x24\x08\x00\x00WAVEfmt ", "OggS\x00\x02", "fLaC\x00\x00\x00\x22", "ID3\x04\x00",
		"\xff\xfb\x90\x64", "\xff\xf1\x50\x80", "\x1a\x45\xdf\xa3", "\x00\x00\x00\x20ftypisom",
		"RIFF", "", "\x01\x00\x02\x00\xfe\xff\x10\x00\x00\x00\x00\x00",
	} {
		f.Add([]byte(s))
	}
	known := map[string]bool{"": true, "wav": true, "ogg": true, "flac": true, "mp3": true, "webm": true, "mp4": true}
	f.Fuzz(func(t *testing.T, head []byte) {
		kind := api.ContainerKind(head)
		if !known[kind] {
			t.Fatalf("unknown kind %q", kind)
		}
		// At most the first 12 bytes decide.
		if k := api.ContainerKind(head[:min(len(head), 12)]); k != kind {
			t.Fatalf("the first 12 bytes say %q, the whole %q", k, kind)
		}
		// The encoding rule follows the kind exactly.
		err := api.CheckEncodingFor(head, "linear16")
		if (err != nil) != (kind != "") {
			t.Fatalf("kind %q but CheckEncodingFor = %v", kind, err)
		}
		if err != nil && !errors.Is(err, api.ErrInvalidOptions) {
			t.Fatalf("CheckEncodingFor = %T %v", err, err)
		}
		if err := api.CheckEncodingFor(head, ""); err != nil {
			t.Fatalf("no encoding refused: %v", err)
		}
	})
}
