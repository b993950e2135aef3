package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// sameJSON reports whether two JSON documents hold the same value, whatever
// the order of keys and the spacing.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestRecordedStreamingResults(t *testing.T) {
	for _, path := range recorded(t, "listen-websocket", "*-response.json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := api.DecodeListenMessage(raw)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			r, ok := msg.(*api.Results)
			if !ok {
				t.Fatalf("decoded as %T", msg)
			}
			if r.MessageType() != api.TypeResults || r.Type != "Results" {
				t.Errorf("type %q / %q", r.MessageType(), r.Type)
			}
			if r.Transcript() != "For the United States of America." {
				t.Errorf("transcript %q", r.Transcript())
			}
			if !reflect.DeepEqual(r.ChannelIndex, []int{0, 1}) || !r.IsFinal || !r.SpeechFinal || r.FromFinalize {
				t.Errorf("flags: channel_index %v is_final %v speech_final %v from_finalize %v", r.ChannelIndex, r.IsFinal, r.SpeechFinal, r.FromFinalize)
			}
			if r.Start != 17.0 || r.Duration != 1.6599998 {
				t.Errorf("start %v duration %v", r.Start, r.Duration)
			}
			alt := r.Channel.Alternatives[0]
			if alt.Confidence != 0.9990865 || len(alt.Words) != 6 {
				t.Fatalf("confidence %v, %d words", alt.Confidence, len(alt.Words))
			}
			var text []string
			for _, w := range alt.Words {
				text = append(text, w.Text())
			}
			if got := strings.Join(text, " "); got != r.Transcript() {
				t.Errorf("punctuated words %q do not make the transcript", got)
			}
			last := alt.Words[5]
			if last.Word != "america" || last.PunctuatedWord != "America." || last.Start != 18.2 || last.End != 18.66 || last.Confidence != 0.96024 {
				t.Errorf("last word %+v", last)
			}
			if last.Speaker != nil || last.SpeakerConfidence != nil {
				t.Error("speaker fields appear without diarization")
			}
			md := r.Metadata
			if md.RequestID != "e1985d01-b8bc-42ab-a16a-e7a8419c07f2" || md.ModelUUID != "c0d1a568-ce81-4fea-97e7-bd45cb1fdf3c" ||
				md.ModelInfo != (api.ModelInfo{Name: "2-general-nova", Version: "2024-01-18.26916", Arch: "nova-3"}) {
				t.Errorf("metadata %+v", md)
			}
			if r.Entities != nil {
				t.Errorf("entities %v without detect_entities", r.Entities)
			}
			checkReencode(t, raw, r, &api.Results{})
		})
	}
}

func TestRecordedBatchResponses(t *testing.T) {
	const transcriptPrefix = "We, the people of "
	for _, path := range recorded(t, "listen-rest", "*-response.json") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			optRaw, err := os.ReadFile(strings.TrimSuffix(path, "-response.json") + "-options.json")
			if err != nil {
				t.Fatal(err)
			}
			var opts struct {
				Model       string `json:"model"`
				SmartFormat bool   `json:"smart_format"`
				Summarize   string `json:"summarize"`
			}
			if err := json.Unmarshal(optRaw, &opts); err != nil {
				t.Fatal(err)
			}
			// The recorded request is one this client would send.
			lo := api.ListenOptions{Model: opts.Model, SmartFormat: opts.SmartFormat, Summarize: opts.Summarize}
			if err := lo.CheckRequest(api.Batch); err != nil {
				t.Errorf("recorded options refused: %v", err)
			}

			var resp api.ListenResponse
			if err := json.Unmarshal(raw, &resp); err != nil {
				t.Fatalf("decode: %v", err)
			}
			md := resp.Metadata
			if md.TransactionKey != "deprecated" || md.RequestID == "" || len(md.SHA256) != 64 || md.Duration != 19.097937 || md.Channels != 1 {
				t.Errorf("metadata %+v", md)
			}
			if !strings.HasSuffix(md.Created, "Z") {
				t.Errorf("created %q", md.Created)
			}
			if len(md.Models) != 1 {
				t.Fatalf("models %v", md.Models)
			}
			info, ok := md.ModelInfo[md.Models[0]]
			if !ok || info.Arch != "nova-3" || info.Name == "" || info.Version == "" {
				t.Errorf("model_info %+v does not describe model %s", md.ModelInfo, md.Models[0])
			}

			tr := resp.Transcript()
			if !strings.HasPrefix(tr, transcriptPrefix) || !strings.HasSuffix(tr, "America.") {
				t.Errorf("transcript %q", tr)
			}
			alt := resp.Results.Channels[0].Alternatives[0]
			if len(alt.Words) != 52 {
				t.Errorf("%d words, want 52", len(alt.Words))
			}
			var text []string
			for _, w := range alt.Words {
				if w.PunctuatedWord == "" {
					t.Errorf("word %q has no punctuated_word with smart_format", w.Word)
				}
				if w.End < w.Start {
					t.Errorf("word %q ends before it starts", w.Word)
				}
				text = append(text, w.Text())
			}
			if got := strings.Join(text, " "); got != tr {
				t.Errorf("punctuated words make %q, transcript is %q", got, tr)
			}
			if alt.Paragraphs == nil || len(alt.Paragraphs.Paragraphs) != 1 {
				t.Fatalf("paragraphs %+v", alt.Paragraphs)
			}
			if alt.Paragraphs.Transcript != "\n"+tr {
				t.Errorf("paragraphs transcript %q does not start the paragraph with a newline", alt.Paragraphs.Transcript)
			}
			p := alt.Paragraphs.Paragraphs[0]
			if p.NumWords != 52 || len(p.Sentences) == 0 || p.Start != alt.Words[0].Start || p.End != alt.Words[51].End || p.Speaker != nil {
				t.Errorf("paragraph num_words %d, %d sentences, %v-%v, speaker %v", p.NumWords, len(p.Sentences), p.Start, p.End, p.Speaker)
			}

			if opts.Summarize != "" {
				s := resp.Results.Summary
				if s == nil || s.Result != "success" || !strings.HasPrefix(s.Short, "Speaker 1 discusses") {
					t.Errorf("summary %+v", s)
				}
				if md.SummaryInfo == nil || md.SummaryInfo.InputTokens != 63 || md.SummaryInfo.OutputTokens != 53 || md.SummaryInfo.ModelUUID == "" {
					t.Errorf("summary_info %+v", md.SummaryInfo)
				}
			} else if resp.Results.Summary != nil || md.SummaryInfo != nil {
				t.Error("summary without summarize")
			}
			checkReencode(t, raw, &resp, &api.ListenResponse{})
		})
	}
}

// checkReencode encodes v, which was decoded from raw, and checks that the
// encoding holds exactly the recorded document (nothing dropped, nothing
// added) and decodes into fresh to a value equal to v.
func checkReencode(t *testing.T, raw []byte, v, fresh any) {
	t.Helper()
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !sameJSON(t, raw, enc) {
		t.Errorf("re-encoding changed the document:\n recorded %s\n encoded  %s", compact(t, raw), enc)
	}
	if err := json.Unmarshal(enc, fresh); err != nil {
		t.Fatalf("decode again: %v", err)
	}
	if !reflect.DeepEqual(v, fresh) {
		t.Errorf("decode(encode(x)) != x:\n%+v\n%+v", v, fresh)
	}
}

func compact(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func intp(i int) *int { return &i }

func TestDecodeListenMessageShapes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want api.ListenMessage
	}{
		{
			name: "UtteranceEnd",
			in:   `{"channel":[0,1],"last_word_end":2.395,"type":"UtteranceEnd"}`,
			want: &api.UtteranceEnd{Type: "UtteranceEnd", Channel: []int{0, 1}, LastWordEnd: 2.395},
		},
		{
			name: "SpeechStarted",
			in:   `{"type":"SpeechStarted","channel":[0,1],"timestamp":9.54}`,
			want: &api.SpeechStarted{Type: "SpeechStarted", Channel: []int{0, 1}, Timestamp: 9.54},
		},
		{
			name: "Metadata with models",
			in: `{"type":"Metadata","transaction_key":"deprecated","request_id":"46c3cc07-0c72-4b3e-8c9e-17605fba5a7e","sha256":"incomplete",
				"created":"2025-10-08T17:04:31.096Z","duration":4.0799375,"channels":1,"models":["40bd3654-e622-47c4-a111-63a61b23bfe8"],
				"model_info":{"40bd3654-e622-47c4-a111-63a61b23bfe8":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"}}}`,
			want: &api.Metadata{Type: "Metadata", TransactionKey: "deprecated", RequestID: "46c3cc07-0c72-4b3e-8c9e-17605fba5a7e", SHA256: "incomplete",
				Created: "2025-10-08T17:04:31.096Z", Duration: 4.0799375, Channels: 1, Models: []string{"40bd3654-e622-47c4-a111-63a61b23bfe8"},
				ModelInfo: map[string]api.ModelInfo{"40bd3654-e622-47c4-a111-63a61b23bfe8": {Name: "general-nova-3", Version: "2025-04-17.21547", Arch: "nova-3"}}},
		},
		{
			name: "Metadata without audio",
			in:   `{"type":"Metadata","transaction_key":"deprecated","request_id":"f71f632f","sha256":"16d2","created":"2024-10-08T04:41:55.587Z","duration":0,"channels":0}`,
			want: &api.Metadata{Type: "Metadata", TransactionKey: "deprecated", RequestID: "f71f632f", SHA256: "16d2", Created: "2024-10-08T04:41:55.587Z"},
		},
		{
			name: "Error variant",
			in:   `{"type":"Error","variant":"SchemaError","description":"unknown field","code":"UNPARSABLE_CLIENT_MESSAGE"}`,
			want: &api.StreamError{Type: "Error", Variant: "SchemaError", Description: "unknown field", Code: "UNPARSABLE_CLIENT_MESSAGE"},
		},
		{
			name: "Error message only",
			in:   `{"type":"Error","message":"boom"}`,
			want: &api.StreamError{Type: "Error", Message: "boom"},
		},
		{
			name: "Results interim in silence",
			in: `{"type":"Results","channel_index":[0,1],"duration":0.5,"start":1.5,"is_final":false,"speech_final":false,"from_finalize":false,
				"channel":{"alternatives":[{"transcript":"","confidence":0.0,"words":[]}]},"metadata":{"request_id":"r","model_info":{"name":"n","version":"v","arch":"a"},"model_uuid":"u"}}`,
			want: &api.Results{Type: "Results", ChannelIndex: []int{0, 1}, Duration: 0.5, Start: 1.5,
				Channel:  api.ResultsChannel{Alternatives: []api.Alternative{{Words: []api.Word{}}}},
				Metadata: api.ResultsMetadata{RequestID: "r", ModelInfo: api.ModelInfo{Name: "n", Version: "v", Arch: "a"}, ModelUUID: "u"}},
		},
		{
			name: "Results with entities and diarization",
			in: `{"type":"Results","is_final":true,"from_finalize":true,"channel":{"alternatives":[{"transcript":"call Ann","confidence":0.9,"languages":["en"],
				"words":[{"word":"call","start":0,"end":0.2,"confidence":0.9,"speaker":0,"speaker_confidence":0.5,"language":"en"},{"word":"ann","start":0.2,"end":0.5,"confidence":0.8,"punctuated_word":"Ann","speaker":1}]}]},
				"entities":[{"label":"NAME","value":"Ann","raw_value":"ann","confidence":0.99,"start_word":1,"end_word":2}],"metadata":{"extra":{"k":"v"}}}`,
			want: &api.Results{Type: "Results", IsFinal: true, FromFinalize: true,
				Channel: api.ResultsChannel{Alternatives: []api.Alternative{{Transcript: "call Ann", Confidence: 0.9, Languages: []string{"en"},
					Words: []api.Word{
						{Word: "call", End: 0.2, Confidence: 0.9, Speaker: intp(0), SpeakerConfidence: func() *float64 { f := 0.5; return &f }(), Language: "en"},
						{Word: "ann", Start: 0.2, End: 0.5, Confidence: 0.8, PunctuatedWord: "Ann", Speaker: intp(1)},
					}}}},
				Entities: []api.Entity{{Label: "NAME", Value: "Ann", RawValue: "ann", Confidence: 0.99, StartWord: 1, EndWord: 2}},
				Metadata: api.ResultsMetadata{Extra: map[string]string{"k": "v"}}},
		},
		{
			name: "unknown fields ignored",
			in:   `{"type":"SpeechStarted","channel":[1,2],"timestamp":1,"future":{"x":[1,2]}}`,
			want: &api.SpeechStarted{Type: "SpeechStarted", Channel: []int{1, 2}, Timestamp: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.DecodeListenMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
			if got.MessageType() != tt.want.MessageType() {
				t.Errorf("MessageType %q", got.MessageType())
			}
			// Encoding and decoding again gives the same message.
			enc, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := api.DecodeListenMessage(enc)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("round trip: %v\n%s\n%#v", err, enc, again)
			}
		})
	}
}

func TestStreamErrorErr(t *testing.T) {
	tests := []struct {
		msg  api.StreamError
		want api.Error
	}{
		{api.StreamError{Variant: "SchemaError", Description: "d"}, api.Error{Code: "SchemaError", Message: "d"}},
		{api.StreamError{Code: "DATA-0000", Variant: "v", Message: "m"}, api.Error{Code: "DATA-0000", Message: "m"}},
		{api.StreamError{Code: "c", Description: "d", Message: "m"}, api.Error{Code: "c", Message: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.want.Error(), func(t *testing.T) {
			if got := tt.msg.Err(); *got != tt.want {
				t.Errorf("Err() = %#v", *got)
			}
		})
	}
	if err := (&api.StreamError{Code: api.CodeUndecodable}).Err(); !errors.Is(err, api.ErrUndecodableAudio) {
		t.Error("a DATA-0000 Error message does not match ErrUndecodableAudio")
	}
}

func TestDecodeListenMessageUnknown(t *testing.T) {
	for _, in := range []string{
		`{"type":"Warning","code":"X","description":"d"}`,
		`{"type":"TurnInfo","event":"EndOfTurn"}`,
		`{"type":""}`,
		`{"type":"results"}`,
	} {
		t.Run(in, func(t *testing.T) {
			got, err := api.DecodeListenMessage([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			u, ok := got.(*api.UnknownMessage)
			if !ok {
				t.Fatalf("decoded as %T", got)
			}
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(in), &head)
			if u.Type != head.Type || u.MessageType() != head.Type || string(u.Raw) != in {
				t.Errorf("unknown message %q %q", u.Type, u.Raw)
			}
		})
	}
	// Raw is a copy: the caller may reuse its buffer.
	buf := []byte(`{"type":"Novel"}`)
	got, _ := api.DecodeListenMessage(buf)
	copy(buf, "XXXXXXXX")
	if string(got.(*api.UnknownMessage).Raw) != `{"type":"Novel"}` {
		t.Error("Raw aliases the input")
	}
}

func TestDecodeListenMessageErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`null`,
		`[]`,
		`"Results"`,
		`{}`,
		`{"type":null}`,
		`{"type":5}`,
		`{"type":"Results"`,
		`{"type":"Results","channel_index":"zero"}`,
		`{"type":"Metadata","duration":"long"}`,
		`{"type":"Results","is_final":1}`,
	} {
		t.Run(in, func(t *testing.T) {
			if m, err := api.DecodeListenMessage([]byte(in)); err == nil {
				t.Errorf("decoded %#v", m)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		big := `{"type":"Results","x":"` + strings.Repeat("a", 5<<20) + `"}`
		if _, err := api.DecodeListenMessage([]byte(big)); err == nil {
			t.Error("a 5 MiB message was accepted")
		}
	})
	t.Run("not an object is ErrNotJSONObject", func(t *testing.T) {
		for _, in := range []string{`[]`, `{}`, `{"type":1}`} {
			if _, err := api.DecodeListenMessage([]byte(in)); !errors.Is(err, api.ErrNotJSONObject) {
				t.Errorf("%s: %v", in, err)
			}
		}
	})
}

func TestResultsEntitiesOmitzero(t *testing.T) {
	tests := []struct {
		name     string
		entities []api.Entity
		want     string // the entities member, or "" when absent
	}{
		{"nil omitted", nil, ""},
		{"empty encodes []", []api.Entity{}, `[]`},
		{"one", []api.Entity{{Label: "CITY", Value: "Paris", Confidence: 1, StartWord: 2, EndWord: 3}},
			`[{"label":"CITY","value":"Paris","confidence":1,"start_word":2,"end_word":3}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := api.Results{Type: api.TypeResults, Entities: tt.entities}
			b := mustJSON(t, r)
			var top map[string]json.RawMessage
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			got, present := top["entities"]
			if tt.want == "" {
				if present {
					t.Errorf("entities present: %s", b)
				}
			} else if string(got) != tt.want {
				t.Errorf("entities = %s, want %s", got, tt.want)
			}
			if _, ok := top["channel"]; !ok {
				t.Errorf("channel missing: %s", b)
			}
			// Entities sit at the top level, never inside the alternative.
			if strings.Contains(string(top["channel"]), "entities") {
				t.Errorf("entities inside channel: %s", b)
			}
			var back api.Results
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if (back.Entities == nil) != (tt.entities == nil) || len(back.Entities) != len(tt.entities) {
				t.Errorf("decoded entities %#v", back.Entities)
			}
		})
	}
}

func TestDecodeControlMessage(t *testing.T) {
	tests := []struct {
		in      string
		want    api.ControlMessage
		wantErr bool
	}{
		{in: `{"type":"KeepAlive"}`, want: api.ControlMessage{Type: api.TypeKeepAlive}},
		{in: `{"type":"Finalize"}`, want: api.ControlMessage{Type: api.TypeFinalize}},
		{in: `{"type":"Finalize","channel":0}`, want: api.ControlMessage{Type: api.TypeFinalize, Channel: intp(0)}},
		{in: `{"type":"CloseStream"}`, want: api.ControlMessage{Type: api.TypeCloseStream}},
		{in: `{"type":"Configure","keyterms":["a"]}`, want: api.ControlMessage{Type: api.TypeConfigure}},
		{in: `{"type":"KeepAlive","channel":"zero"}`, wantErr: true},
		{in: `{"channel":0}`, wantErr: true},
		{in: `KeepAlive`, wantErr: true},
		{in: ``, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := api.DecodeControlMessage([]byte(tt.in))
			if tt.wantErr {
				if err == nil {
					t.Errorf("decoded %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// The client's control messages encode exactly as documented.
	for _, typ := range []string{api.TypeKeepAlive, api.TypeFinalize, api.TypeCloseStream} {
		if b := mustJSON(t, api.ControlMessage{Type: typ}); string(b) != `{"type":"`+typ+`"}` {
			t.Errorf("%s encodes as %s", typ, b)
		}
	}
}

func TestWordText(t *testing.T) {
	if got := (api.Word{Word: "ensure", PunctuatedWord: "Ensure"}).Text(); got != "Ensure" {
		t.Errorf("Text() = %q", got)
	}
	if got := (api.Word{Word: "ensure"}).Text(); got != "ensure" {
		t.Errorf("Text() = %q", got)
	}
	if (&api.Results{}).Transcript() != "" || (&api.ListenResponse{}).Transcript() != "" {
		t.Error("empty messages have a transcript")
	}
}
