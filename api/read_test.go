package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func invalidQuery(param, reason string) *wantOpt {
	return &wantOpt{Param: param, Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter, Reason: reason}
}

func TestReadOptionsValidate(t *testing.T) {
	t.Parallel()
	missing := invalidQuery("language", api.MsgReadMissingLanguage)
	tests := []struct {
		name  string
		opts  api.ReadOptions
		want  *wantOpt // Validate
		check *wantOpt // CheckRequest, when it differs from Validate
	}{
		{"en summarize", api.ReadOptions{Language: "en", Summarize: "true"}, nil, nil},
		{"en-US summarize v2", api.ReadOptions{Language: "en-US", Summarize: "v2"}, nil, nil},
		{"en-GB every feature", api.ReadOptions{Language: "en-GB", Summarize: "v2", Sentiment: true, Topics: true, Intents: true}, nil, nil},
		{"missing language", api.ReadOptions{Summarize: "true"}, missing, missing},
		{"missing language masks a bad summarize", api.ReadOptions{Summarize: "v9", CustomTopicMode: "loose"}, missing, missing},
		{"blank language", api.ReadOptions{Language: "  ", Sentiment: true}, missing, missing},
		{"multi", api.ReadOptions{Language: "multi", Sentiment: true}, bad("language"), bad("language")},
		{"Spanish", api.ReadOptions{Language: "es", Sentiment: true}, bad("language"), bad("language")},
		{"not a tag", api.ReadOptions{Language: "english", Sentiment: true}, bad("language"), bad("language")},
		{"summarize v1", api.ReadOptions{Language: "en", Summarize: "v1"}, bad("summarize"), bad("summarize")},
		{"bad topic mode", api.ReadOptions{Language: "en", CustomTopic: []string{"a"}, CustomTopicMode: "loose"}, bad("custom_topic_mode"), bad("custom_topic_mode")},
		{"bad intent mode", api.ReadOptions{Language: "en", CustomIntent: []string{"a"}, CustomIntentMode: "x"}, bad("custom_intent_mode"), bad("custom_intent_mode")},
		{"strict topics", api.ReadOptions{Language: "en", CustomTopic: []string{"billing"}, CustomTopicMode: "strict"}, nil, nil},
		{"too many custom topics", api.ReadOptions{Language: "en", CustomTopic: make([]string, 101)}, bad("custom_topic"), bad("custom_topic")},
		{"topic mode without topics", api.ReadOptions{Language: "en", Topics: true, CustomTopicMode: "strict"}, nil, bad("custom_topic_mode")},
		{"intent mode without intents", api.ReadOptions{Language: "en", Intents: true, CustomIntentMode: "extended"}, nil, bad("custom_intent_mode")},
		{"callback", api.ReadOptions{Language: "en", Sentiment: true, Callback: "https://example.com/cb", CallbackMethod: "PUT"}, nil, nil},
		{"callback not http", api.ReadOptions{Language: "en", Sentiment: true, Callback: "ftp://example.com/cb"}, bad("callback"), bad("callback")},
		{"callback method GET", api.ReadOptions{Language: "en", Sentiment: true, Callback: "https://example.com/cb", CallbackMethod: "GET"}, bad("callback_method"), bad("callback_method")},
		{"callback method alone", api.ReadOptions{Language: "en", Sentiment: true, CallbackMethod: "POST"}, nil, bad("callback_method")},
		{"no feature", api.ReadOptions{Language: "en"}, nil, bad("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.opts.Validate(), tt.want)
			checkOptionErr(t, "CheckRequest", tt.opts.CheckRequest(), tt.check)
		})
	}
}

func TestReadLanguage(t *testing.T) {
	t.Parallel()
	for tag, want := range map[string]string{
		"en": "en", "en-US": "en", "EN-us": "en", "en_GB": "en", "en-Latn-US": "en",
		"multi": "", "es": "", "": "", "eng": "", "en-": "", "en US": "",
	} {
		t.Run(tag, func(t *testing.T) {
			if got := api.ReadLanguage(tag); got != want {
				t.Errorf("ReadLanguage(%q) = %q, want %q", tag, got, want)
			}
		})
	}
}

func TestParseReadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		query   string
		want    api.ReadOptions
		unknown []string
		err     *wantOpt
	}{
		{"every parameter",
			"language=en-US&summarize=V2&sentiment=true&topics=TRUE&intents=false&custom_topic=billing&custom_topic=%20&custom_topic_mode=Strict&custom_intent=cancel&custom_intent_mode=extended&callback=https://x/cb&callback_method=put&model=x",
			api.ReadOptions{Language: "en-US", Summarize: "v2", Sentiment: true, Topics: true, CustomTopic: []string{"billing"}, CustomTopicMode: "strict",
				CustomIntent: []string{"cancel"}, CustomIntentMode: "extended", Callback: "https://x/cb", CallbackMethod: "PUT"},
			[]string{"model"}, nil},
		{"summarize false", "language=en&summarize=false", api.ReadOptions{Language: "en"}, nil, nil},
		{"missing language first", "sentiment=maybe&topics=1", api.ReadOptions{}, nil, invalidQuery("language", api.MsgReadMissingLanguage)},
		{"bad boolean", "language=en&sentiment=maybe", api.ReadOptions{}, nil, invalidQuery("sentiment", "")},
		{"first bad boolean wins", "language=en&topics=1&intents=2", api.ReadOptions{}, nil, invalidQuery("topics", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, unknown, err := api.ParseReadOptions(q)
			checkOptionErr(t, "ParseReadOptions", err, tt.err)
			if tt.err != nil {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("options\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(unknown, tt.unknown) {
				t.Errorf("unknown %v, want %v", unknown, tt.unknown)
			}
		})
	}
}

func TestReadOptionsQueryRoundTrip(t *testing.T) {
	t.Parallel()
	for _, o := range []api.ReadOptions{
		{Language: "en", Summarize: "true"},
		{Language: "en-US", Summarize: "v2", Sentiment: true, Topics: true, Intents: true},
		{Language: "en", CustomTopic: []string{"billing", "refund"}, CustomTopicMode: "strict", CustomIntent: []string{"cancel"}, CustomIntentMode: "extended",
			Callback: "https://example.com/cb", CallbackMethod: "PUT"},
	} {
		t.Run(o.Query().Encode(), func(t *testing.T) {
			got, unknown, err := api.ParseReadOptions(o.Query())
			if err != nil || len(unknown) > 0 {
				t.Fatalf("ParseReadOptions: %v, unknown %v", err, unknown)
			}
			if !reflect.DeepEqual(got, o) {
				t.Errorf("round trip\n got %+v\nwant %+v", got, o)
			}
		})
	}
	if q := (&api.ReadOptions{Language: "en"}).Query(); len(q) != 1 {
		t.Errorf("unset options are sent: %v", q)
	}
}

func TestReadRequestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		req      api.ReadRequest
		param    string // "" when accepted
		bodyRule bool   // matches ErrReadBody
	}{
		{"text", api.ReadRequest{Text: "Hello."}, "", false},
		{"url", api.ReadRequest{URL: "https://example.com/a.txt"}, "", false},
		{"both", api.ReadRequest{Text: "Hello.", URL: "https://example.com/a.txt"}, "body", true},
		{"neither", api.ReadRequest{}, "body", true},
		{"url not http", api.ReadRequest{URL: "file:///etc/passwd"}, "url", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Check()
			if tt.param == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != tt.param || oe.Code != api.CodePayloadError || oe.Status != http.StatusBadRequest {
				t.Fatalf("err %v (%+v), want PAYLOAD_ERROR on %s", err, oe, tt.param)
			}
			if !errors.Is(err, api.ErrInvalidOptions) {
				t.Errorf("%v does not match ErrInvalidOptions", err)
			}
			if errors.Is(err, api.ErrReadBody) != tt.bodyRule {
				t.Errorf("errors.Is(ErrReadBody) = %v, want %v", !tt.bodyRule, tt.bodyRule)
			}
		})
	}
}

// readSentimentDoc is the documented sentiment answer of /v1/read.
const readSentimentDoc = `{"metadata":{"request_id":"7dcd719f-344b-4c72-a194-6bd1019d855c","created":"2023-12-01T15:54:39.681Z","language":"en",
  "sentiment_info":{"model_uuid":"80ab3179-d113-4254-bd6b-4a2f96498695","input_tokens":22,"output_tokens":22}},
 "results":{"sentiments":{"segments":[{"text":"Hi. Thank you for calling from premier phone services.","start_word":0,"end_word":8,"sentiment":"positive","sentiment_score":0.7380304336547852},
   {"text":"This call may be recorded for quality and training purposes.","start_word":9,"end_word":18,"sentiment":"neutral","sentiment_score":0.057771213352680206}],
   "average":{"sentiment":"positive","sentiment_score":0.39790084145285864}},
  "topics":{"segments":[{"text":"t","start_word":0,"end_word":26,"topics":[{"topic":"Refund","confidence_score":0.91318}]}]},
  "intents":{"segments":[{"text":"Can I upgrade my phone?","start_word":12,"end_word":16,"intents":[{"intent":"Upgrade phone","confidence_score":0.9750028}]}]},
  "future_feature":{"x":1}}}`

func TestDecodeReadResponse(t *testing.T) {
	t.Parallel()
	t.Run("documented", func(t *testing.T) {
		r, err := api.DecodeReadResponse([]byte(readSentimentDoc))
		if err != nil {
			t.Fatal(err)
		}
		if r.Metadata.Language != "en" || r.Metadata.SentimentInfo == nil || r.Metadata.SentimentInfo.InputTokens != 22 || r.Metadata.SummaryInfo != nil {
			t.Errorf("metadata %+v", r.Metadata)
		}
		s := r.Results.Sentiments
		if s == nil || len(s.Segments) != 2 || s.Segments[1].StartWord != 9 || s.Segments[1].EndWord != 18 || s.Segments[1].Sentiment != "neutral" ||
			s.Average.Sentiment != "positive" || s.Average.SentimentScore != 0.39790084145285864 {
			t.Errorf("sentiments %+v", s)
		}
		if tp := r.Results.Topics; tp == nil || tp.Segments[0].Topics[0].Topic != "Refund" || tp.Segments[0].Topics[0].ConfidenceScore != 0.91318 {
			t.Errorf("topics %+v", tp)
		}
		if in := r.Results.Intents; in == nil || in.Segments[0].Intents[0].Intent != "Upgrade phone" || in.Segments[0].StartWord != 12 {
			t.Errorf("intents %+v", in)
		}
		if r.Results.Summary != nil {
			t.Errorf("summary %+v not asked for", r.Results.Summary)
		}
	})
	t.Run("recorded", func(t *testing.T) {
		for _, f := range recorded(t, "read", "*-response.json") {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r, err := api.DecodeReadResponse(b)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if r.Metadata.RequestID == "" || r.Metadata.Language != "en" || r.Metadata.Created == "" {
				t.Errorf("%s: metadata %+v", f, r.Metadata)
			}
			if r.Results.Summary == nil || !strings.HasPrefix(r.Results.Summary.Text, "The potential for voice-based interfaces") {
				t.Errorf("%s: summary %+v", f, r.Results.Summary)
			}
			if si := r.Metadata.SummaryInfo; si == nil || si.ModelUUID == "" || si.InputTokens == 0 || si.OutputTokens == 0 {
				t.Errorf("%s: summary_info %+v", f, si)
			}
			// What the client decodes encodes to the same JSON, field for field.
			again, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var orig, back any
			if err := json.Unmarshal(b, &orig); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(again, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(orig, back) {
				t.Errorf("%s: re-encoded differs\n got %s\nwant %s", f, again, b)
			}
		}
	})
	for _, bad := range []string{``, `[]`, `"x"`, `{"metadata":[]}`, `{"results":{"summary":{"text":1}}}`} {
		t.Run("bad "+bad, func(t *testing.T) {
			if r, err := api.DecodeReadResponse([]byte(bad)); err == nil {
				t.Errorf("decoded %+v", r)
			}
		})
	}
}

// TestListenIntelligenceShapes checks the batch /v1/listen intelligence
// results: the flat form of wire-reference 10.1 both ways, and the summary
// of the recorded summarize=v2 response.
func TestListenIntelligenceShapes(t *testing.T) {
	t.Parallel()
	r := api.ListenResponse{Results: api.ListenResults{
		Channels: []api.ResultChannel{},
		Summary:  &api.SummaryResult{Result: "success", Short: "A summary."},
		Sentiments: &api.Sentiments{Segments: []api.SentimentSegment{{Text: "I love it.", StartWord: 0, EndWord: 2, Sentiment: "positive", SentimentScore: 0.6}},
			Average: api.SentimentAverage{Sentiment: "positive", SentimentScore: 0.6}},
		Topics:  &api.Topics{Segments: []api.TopicSegment{{Text: "I love it.", EndWord: 2, Topics: []api.Topic{{Topic: "Love", ConfidenceScore: 0.5}}}}},
		Intents: &api.Intents{Segments: []api.IntentSegment{{Text: "I love it.", EndWord: 2, Intents: []api.Intent{{Intent: "Express love", ConfidenceScore: 0.5}}}}},
	}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Results map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"topics", "intents", "sentiments"} {
		var feature map[string]json.RawMessage
		if err := json.Unmarshal(m.Results[k], &feature); err != nil {
			t.Fatalf("results.%s: %v", k, err)
		}
		if _, ok := feature["segments"]; !ok {
			t.Errorf("results.%s has no segments: %s", k, b)
		}
		if _, ok := feature["results"]; ok {
			t.Errorf("results.%s is nested: %s", k, b)
		}
	}
	for _, want := range []string{`"summary":{"result":"success","short":"A summary."}`, `"start_word":0,"end_word":2`,
		`"topics":[{"topic":"Love","confidence_score":0.5}]`, `"intents":[{"intent":"Express love","confidence_score":0.5}]`,
		`"average":{"sentiment":"positive","sentiment_score":0.6}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	t.Run("recorded summarize=v2", func(t *testing.T) {
		for _, f := range recorded(t, "listen-rest", "f3b6208a-*-response.json") {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var r api.ListenResponse
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if s := r.Results.Summary; s == nil || s.Result != "success" || s.Short == "" {
				t.Errorf("%s: summary %+v", f, s)
			}
			if r.Metadata.SummaryInfo == nil || r.Metadata.SummaryInfo.ModelUUID == "" {
				t.Errorf("%s: summary_info %+v", f, r.Metadata.SummaryInfo)
			}
		}
	})
}

func TestClientRead(t *testing.T) {
	t.Parallel()
	srv := newRESTServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.URL.Query().Get("callback") != "":
			writeJSON(w, http.StatusOK, map[string]string{"request_id": "cb-1"})
		case strings.Contains(string(body), "too long"):
			writeJSON(w, http.StatusBadRequest, api.LegacyErrorBody{ErrCode: api.CodeTokenLimitExceeded, ErrMsg: "too many tokens", RequestID: "r-2"})
		case strings.Contains(string(body), "bad key"):
			writeJSON(w, http.StatusUnauthorized, api.LegacyErrorBody{ErrCode: api.CodeInvalidAuth, ErrMsg: "Invalid credentials."})
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(readSentimentDoc))
		}
	})
	c := srv.client(t, api.Config{APIKey: "secret-key"})
	ctx := testContext(t)
	opts := api.ReadOptions{Language: "en-US", Sentiment: true, Topics: true}

	r, err := c.Read(ctx, api.ReadRequest{Text: "Hi. Thank you for calling."}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Results.Sentiments == nil || len(r.Results.Sentiments.Segments) != 2 {
		t.Errorf("results %+v", r.Results)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != api.PathRead || got.ContentType != "application/json" || got.Auth != "Token secret-key" {
		t.Errorf("request %s %s %q %q", got.Method, got.Path, got.ContentType, got.Auth)
	}
	if !reflect.DeepEqual(got.Query, opts.Query()) {
		t.Errorf("query %v, want %v", got.Query, opts.Query())
	}
	if string(got.Body) != `{"text":"Hi. Thank you for calling."}` {
		t.Errorf("body %s", got.Body)
	}

	if _, err := c.Read(ctx, api.ReadRequest{URL: "https://example.com/doc.txt"}, opts); err != nil {
		t.Fatal(err)
	}
	if b := srv.requests()[1].Body; string(b) != `{"url":"https://example.com/doc.txt"}` {
		t.Errorf("url body %s", b)
	}

	cb := opts
	cb.Callback = "https://example.com/cb"
	r, err = c.Read(ctx, api.ReadRequest{Text: "x"}, cb)
	if err != nil || r.Metadata.RequestID != "cb-1" {
		t.Errorf("callback answer %+v, %v", r, err)
	}

	var ae *api.Error
	_, err = c.Read(ctx, api.ReadRequest{Text: "too long"}, opts)
	if !errors.As(err, &ae) || ae.Code != api.CodeTokenLimitExceeded || ae.Status != http.StatusBadRequest || ae.RequestID != "r-2" {
		t.Errorf("token limit: %v", err)
	}
	_, err = c.Read(ctx, api.ReadRequest{Text: "bad key"}, opts)
	if !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("401: %v does not match ErrUnauthorized", err)
	}

	sent := len(srv.requests())
	for _, tc := range []struct {
		name string
		in   api.ReadRequest
		opts api.ReadOptions
		is   error
	}{
		{"no language", api.ReadRequest{Text: "x"}, api.ReadOptions{Sentiment: true}, api.ErrInvalidOptions},
		{"multi", api.ReadRequest{Text: "x"}, api.ReadOptions{Language: "multi", Sentiment: true}, api.ErrInvalidOptions},
		{"both", api.ReadRequest{Text: "x", URL: "https://example.com/a"}, opts, api.ErrReadBody},
		{"neither", api.ReadRequest{}, opts, api.ErrReadBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Read(ctx, tc.in, tc.opts); !errors.Is(err, tc.is) {
				t.Errorf("err %v, want %v", err, tc.is)
			}
		})
	}
	if n := len(srv.requests()); n != sent {
		t.Errorf("%d refused requests were sent", n-sent)
	}
}
