package api_test

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// randomOptions returns a random option set in the canonical form
// ParseListenQuery produces: names and values without surrounding space,
// lists nil when empty, enumerations in their canonical case.
func randomOptions(r *rand.Rand) api.ListenOptions {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	flip := func() bool { return r.IntN(2) == 0 }
	list := func(vs ...string) []string {
		var out []string
		for range r.IntN(4) {
			out = append(out, pick(vs...))
		}
		return out
	}
	o := api.ListenOptions{
		Model:            pick("", "nova-3", "nova-2-meeting", "enhanced", "base", "whisper-large"),
		Version:          pick("", "latest", "2024-12-20.0"),
		Language:         pick("", "en", "en-US", "multi", "de"),
		DetectLanguage:   flip(),
		Encoding:         pick("", "linear16", "mulaw", "opus", "flac"),
		Channels:         r.IntN(3),
		Multichannel:     flip(),
		Punctuate:        flip(),
		SmartFormat:      flip(),
		Numerals:         flip(),
		Paragraphs:       flip(),
		Utterances:       flip(),
		Dictation:        flip(),
		Measurements:     flip(),
		FillerWords:      flip(),
		ProfanityFilter:  flip(),
		DetectEntities:   flip(),
		Redact:           list("pci", "ssn", "numbers", "pii", "true"),
		Summarize:        pick("", "v2", "true"),
		Topics:           flip(),
		CustomTopic:      list("billing", "a topic with spaces", "ünïcode & symbols=?"),
		CustomTopicMode:  pick("", "extended", "strict"),
		Intents:          flip(),
		CustomIntent:     list("cancel", "upgrade phone"),
		CustomIntentMode: pick("", "extended", "strict"),
		Sentiment:        flip(),
		Keyterm:          list("Earshot", "tranquility", "Q3 revenue"),
		Keywords:         list("preamble:2", "union"),
		Search:           list("justice", "more perfect"),
		Replace:          list("tranquility:calm"),
		Tag:              list("test", "earshot"),
		Callback:         pick("", "https://example.com/cb?x=1&y=2"),
		CallbackMethod:   pick("", "POST", "PUT"),
		MipOptOut:        flip(),
		InterimResults:   flip(),
		UtteranceEndMs:   r.IntN(3) * 1000,
		VADEvents:        flip(),
	}
	if o.Encoding != "" {
		o.SampleRate = []int{8000, 16000, 48000}[r.IntN(3)]
	}
	if flip() {
		o.UttSplit = r.Float64()*5 + 0.01
	}
	switch r.IntN(3) {
	case 1:
		o.Endpointing = api.EndpointingOff
	case 2:
		o.Endpointing = api.Endpointing(1 + r.IntN(2000))
	}
	switch r.IntN(3) {
	case 1:
		o.DiarizeModel = pick("latest", "v1")
	case 2:
		o.Diarize = true
		o.DiarizeVersion = pick("", "v1")
	}
	if flip() {
		// Half the sets leave out the batch-only intelligence features,
		// so both modes are exercised.
		o.Summarize, o.Topics, o.Intents, o.CustomTopic, o.CustomIntent = "", false, false, nil, nil
	}
	if flip() {
		o.Extra = map[string]string{}
		for range 1 + r.IntN(3) {
			o.Extra[pick("team", "run", "k")] = pick("", "blue", "a:b:c", "x y")
		}
	}
	return o
}

func TestListenQueryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := map[api.Mode]int{}
	for i := range 2000 {
		o := randomOptions(r)
		ok := false
		for _, m := range []api.Mode{api.Batch, api.Streaming} {
			if o.Validate(m) == nil {
				valid[m]++
				ok = true
			}
		}
		if !ok {
			continue
		}
		q := o.Query()
		// Through the URL form, as a request carries it.
		parsed, err := url.ParseQuery(q.Encode())
		if err != nil {
			t.Fatalf("case %d: Query().Encode() does not parse: %v", i, err)
		}
		got, unknown, err := api.ParseListenQuery(parsed)
		if err != nil {
			t.Fatalf("case %d: ParseListenQuery(%s): %v", i, q.Encode(), err)
		}
		if len(unknown) != 0 {
			t.Fatalf("case %d: Query() emitted parameters ParseListenQuery does not know: %v", i, unknown)
		}
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("case %d: round trip changed the options\n in: %+v\nout: %+v\nquery: %s", i, o, got, q.Encode())
		}
	}
	for _, m := range []api.Mode{api.Batch, api.Streaming} {
		if valid[m] < 50 {
			t.Errorf("only %d valid %s option sets were generated; the property is not exercised", valid[m], m)
		}
	}
}

func TestListenQueryEncoding(t *testing.T) {
	tests := []struct {
		name string
		opts api.ListenOptions
		want url.Values
	}{
		{"zero sends nothing", api.ListenOptions{}, url.Values{}},
		{"booleans only when true", api.ListenOptions{Punctuate: true, SmartFormat: false}, url.Values{"punctuate": {"true"}}},
		{"endpointing off", api.ListenOptions{Endpointing: api.EndpointingOff}, url.Values{"endpointing": {"false"}}},
		{"endpointing ms", api.ListenOptions{Endpointing: 300}, url.Values{"endpointing": {"300"}}},
		{"repeated keyterm", api.ListenOptions{Keyterm: []string{"a", "b"}}, url.Values{"keyterm": {"a", "b"}}},
		{"extra sorted", api.ListenOptions{Extra: map[string]string{"z": "1", "a": "2"}}, url.Values{"extra": {"a:2", "z:1"}}},
		{"utt_split", api.ListenOptions{UttSplit: 0.8}, url.Values{"utt_split": {"0.8"}}},
		{"recorded streaming", api.ListenOptions{Model: "nova-3", Encoding: "mulaw", SampleRate: 8000, Channels: 1, Language: "en-US", Punctuate: true, SmartFormat: true},
			url.Values{"model": {"nova-3"}, "encoding": {"mulaw"}, "sample_rate": {"8000"}, "channels": {"1"}, "language": {"en-US"}, "punctuate": {"true"}, "smart_format": {"true"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Query(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Query() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseListenQueryValues(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  api.ListenOptions
	}{
		{"booleans any case", "punctuate=TRUE&smart_format=True&numerals=false", api.ListenOptions{Punctuate: true, SmartFormat: true}},
		{"empty boolean is false", "punctuate=", api.ListenOptions{}},
		{"encoding lower-cased", "encoding=LINEAR16&sample_rate=16000", api.ListenOptions{Encoding: "linear16", SampleRate: 16000}},
		{"values trimmed", "model=%20nova-3%20", api.ListenOptions{Model: "nova-3"}},
		{"endpointing false", "endpointing=false", api.ListenOptions{Endpointing: api.EndpointingOff}},
		{"endpointing zero is off", "endpointing=0", api.ListenOptions{Endpointing: api.EndpointingOff}},
		{"endpointing true keeps default", "endpointing=true", api.ListenOptions{}},
		{"endpointing ms", "endpointing=300", api.ListenOptions{Endpointing: 300}},
		{"redact false dropped", "redact=false&redact=PCI", api.ListenOptions{Redact: []string{"pci"}}},
		{"summarize false dropped", "summarize=false", api.ListenOptions{}},
		{"summarize lower-cased", "summarize=V2", api.ListenOptions{Summarize: "v2"}},
		{"callback_method upper-cased", "callback_method=put", api.ListenOptions{CallbackMethod: "PUT"}},
		{"extra value keeps colons", "extra=k:a:b", api.ListenOptions{Extra: map[string]string{"k": "a:b"}}},
		{"repeated keyterm", "keyterm=a&keyterm=b", api.ListenOptions{Keyterm: []string{"a", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := api.ParseListenQuery(q)
			if err != nil {
				t.Fatalf("ParseListenQuery: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseListenQueryErrors(t *testing.T) {
	tests := []struct {
		query string
		param string
	}{
		{"punctuate=yes", "punctuate"},
		{"smart_format=1", "smart_format"},
		{"interim_results=on", "interim_results"},
		{"vad_events=maybe", "vad_events"},
		{"sample_rate=abc", "sample_rate"},
		{"sample_rate=-8000", "sample_rate"},
		{"sample_rate=16000.5", "sample_rate"},
		{"channels=two", "channels"},
		{"utterance_end_ms=1e3", "utterance_end_ms"},
		{"utt_split=abc", "utt_split"},
		{"utt_split=0", "utt_split"},
		{"utt_split=-1", "utt_split"},
		{"utt_split=4000", "utt_split"},
		{"endpointing=abc", "endpointing"},
		{"endpointing=-5", "endpointing"},
		{"extra=nocolon", "extra"},
		{"extra=:value", "extra"},
		// The first bad parameter in reading order is reported.
		{"sample_rate=x&punctuate=x", "sample_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = api.ParseListenQuery(q)
			checkOptionErr(t, "ParseListenQuery", err, &wantOpt{Param: tt.param, Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter})
		})
	}
}

func TestParseListenQueryUnknown(t *testing.T) {
	q := url.Values{"model": {"nova-3"}, "zebra": {"1"}, "diarise": {"true"}, "Punctuate": {"true"}}
	o, unknown, err := api.ParseListenQuery(q)
	if err != nil {
		t.Fatalf("unknown parameters must not be an error: %v", err)
	}
	if want := []string{"Punctuate", "diarise", "zebra"}; !slices.Equal(unknown, want) {
		t.Errorf("unknown = %v, want %v (sorted; names are case-sensitive)", unknown, want)
	}
	if o.Model != "nova-3" || o.Punctuate {
		t.Errorf("options %+v", o)
	}
	_, unknown, _ = api.ParseListenQuery(url.Values{"model": {"nova-3"}})
	if unknown != nil {
		t.Errorf("unknown = %v for a known-only query", unknown)
	}
}

func TestParseListenQueryErrorIsOptionError(t *testing.T) {
	_, _, err := api.ParseListenQuery(url.Values{"sample_rate": {strconv.Itoa(-1)}})
	var oe *api.OptionError
	if !errors.As(err, &oe) || !errors.Is(err, api.ErrInvalidOptions) {
		t.Fatalf("%T %v", err, err)
	}
}

// TestQueryRulesAcrossEndpoints holds the rules of the one query reader
// where the parsers of the endpoints had drifted apart: each case was
// read differently by one parser before they shared the reader.
func TestQueryRulesAcrossEndpoints(t *testing.T) {
	listen := func(query string) (api.ListenOptions, error) {
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := api.ParseListenQuery(q)
		return o, err
	}
	t.Run("a zero given on /v1/listen is refused, not taken as unset", func(t *testing.T) {
		// /v1/listen took channels=0 as one channel and sample_rate=0 as
		// none; /v2/listen and the speak endpoints refuse a zero given.
		for _, p := range []string{"channels", "sample_rate", "utterance_end_ms"} {
			for _, v := range []string{"0", "-8000"} {
				_, err := listen(p + "=" + v)
				checkOptionErr(t, "ParseListenQuery", err, &wantOpt{Param: p, Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter})
			}
		}
	})
	t.Run("utt_split=NaN is not a number", func(t *testing.T) {
		// NaN passed the range check of utt_split (NaN <= 0 and NaN >
		// 3600 are both false).
		_, err := listen("utt_split=NaN&utterances=true")
		checkOptionErr(t, "ParseListenQuery", err, &wantOpt{Param: "utt_split", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter})
	})
	t.Run("a blank repeated value on /v1/listen is no value", func(t *testing.T) {
		// A blank custom_topic counted as a custom topic, so a stream was
		// refused topics it never asked for; /v1/read and /v2/listen drop
		// blank values.
		o, err := listen("custom_topic=&custom_topic=%20&keyterm=%20Earshot%20&keyterm=")
		if err != nil {
			t.Fatal(err)
		}
		if o.CustomTopic != nil || !slices.Equal(o.Keyterm, []string{"Earshot"}) {
			t.Errorf("custom_topic %q, keyterm %q", o.CustomTopic, o.Keyterm)
		}
		if err := o.Validate(api.Streaming); err != nil {
			t.Errorf("a stream with only blank custom topics is refused: %v", err)
		}
	})
	t.Run("custom modes are read in any case on /v1/listen as on /v1/read", func(t *testing.T) {
		o, err := listen("custom_topic=a&custom_topic_mode=Strict&custom_intent=b&custom_intent_mode=EXTENDED")
		if err != nil {
			t.Fatal(err)
		}
		if o.CustomTopicMode != "strict" || o.CustomIntentMode != "extended" {
			t.Errorf("modes %q %q", o.CustomTopicMode, o.CustomIntentMode)
		}
		if err := o.Validate(api.Batch); err != nil {
			t.Error(err)
		}
	})
	t.Run("redact=false on /v2/listen is no redaction, as on /v1/listen", func(t *testing.T) {
		q := url.Values{"model": {api.ModelFluxGeneralEN}, "redact": {"false", "NUMBERS"}}
		o, _, err := api.ParseTurnOptions(q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(o.Redact, []string{"numbers"}) {
			t.Errorf("redact %q", o.Redact)
		}
	})
}
