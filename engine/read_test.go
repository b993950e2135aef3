package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/intel"
	"github.com/earshot-app/earshot/internal/textseg"
)

// postRead sends a /v1/read request with a raw query and body to the
// shared engine.
func postRead(t *testing.T, rawQuery string, body []byte, ctype string) answer {
	t.Helper()
	return postTyped(t, api.PathRead, rawQuery, body, ctype)
}

// readOK decodes a successful /v1/read answer.
func (a answer) readOK(t *testing.T) *api.ReadResponse {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d; body %s", a.status, a.body)
	}
	r, err := api.DecodeReadResponse(a.body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readDoc is a short customer call, with clear sentiment turns, topics and
// requests.
const readDoc = `Hi, thank you for calling Premier Phone Services. This call may be recorded for quality and training purposes. ` +
	`I am really angry: my phone bill is wrong again and I was charged twice for the same month. ` +
	`I want to cancel my subscription and request a refund for the extra charge. ` +
	`I am sorry about the billing error. I can refund the double charge today and your next bill will be correct. ` +
	`Thank you, that is great news, I really appreciate your help.`

// TestReadSpecErrors checks every row of section 7 of the specification
// that concerns /v1/read, and the engine's other refusals, with raw
// requests (the client refuses most of these before they leave).
func TestReadSpecErrors(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, silence(t, 1600), 16000, 1)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/speech.wav":
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(wav)
		case "/unlabelled.wav":
			w.Header()["Content-Type"] = nil // no type: the content is sniffed
			_, _ = w.Write(wav)
		case "/octets.wav":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(wav)
		case "/mislabelled.wav":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(wav)
		case "/page.html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>Hello.</body></html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	text := jsonBody(t, api.ReadRequest{Text: readDoc})
	urlBody := func(path string) []byte { return jsonBody(t, map[string]string{"url": files.URL + path}) }
	for _, tc := range []struct {
		name   string
		query  string
		body   []byte
		ctype  string
		status int
		code   string
		msg    string // exact, or a prefix ending in "..."
	}{
		{"no language", "summarize=true", text, "application/json", 400, api.CodeInvalidQueryParameter, api.MsgReadMissingLanguage},
		{"no language masks the rest", "summarize=v9&sentiment=maybe&custom_topic_mode=loose", []byte(`{"text":"a","url":"b"}`), "audio/wav",
			400, api.CodeInvalidQueryParameter, api.MsgReadMissingLanguage},
		{"multi", "language=multi&sentiment=true", text, "application/json", 400, api.CodeBadRequest, "language=multi is not available for text intelligence..."},
		{"German", "language=de&sentiment=true", text, "application/json", 400, api.CodeBadRequest, "text intelligence analyses English only..."},
		{"both text and url", "language=en&sentiment=true", []byte(`{"text":"Hello.","url":"http://127.0.0.1/a.txt"}`), "application/json",
			400, api.CodePayloadError, "payload: " + api.MsgReadTextOrURL},
		{"neither text nor url", "language=en&sentiment=true", []byte(`{}`), "application/json", 400, api.CodePayloadError, "payload: " + api.MsgReadTextOrURL},
		{"neither, other fields", "language=en&sentiment=true", []byte(`{"document":"Hello."}`), "application/json", 400, api.CodePayloadError, "payload: " + api.MsgReadTextOrURL},
		{"url to audio", "language=en&summarize=true", urlBody("/speech.wav"), "application/json", 400, api.CodeRemoteContentError, "remote content: ..."},
		{"url to unlabelled audio", "language=en&summarize=true", urlBody("/unlabelled.wav"), "application/json", 400, api.CodeRemoteContentError, "remote content: ..."},
		{"url to octet-stream audio", "language=en&summarize=true", urlBody("/octets.wav"), "application/json", 400, api.CodeRemoteContentError, "remote content: ..."},
		{"url to audio labelled text", "language=en&summarize=true", urlBody("/mislabelled.wav"), "application/json", 400, api.CodeRemoteContentError, "remote content: ..."},
		{"url to HTML", "language=en&summarize=true", urlBody("/page.html"), "application/json", 400, api.CodeRemoteContentError, "remote content: ..."},
		{"url not found", "language=en&summarize=true", urlBody("/missing.txt"), "application/json", 400, api.CodeRemoteContentError, "remote content: fetching..."},
		{"url not http", "language=en&summarize=true", []byte(`{"url":"file:///etc/passwd"}`), "application/json", 400, api.CodePayloadError, "payload: ..."},
		{"not JSON", "language=en&summarize=true", []byte(`{"text":`), "application/json", 400, api.CodePayloadError, "payload: the JSON body must be..."},
		{"empty text", "language=en&summarize=true", []byte(`{"text":"  "}`), "application/json", 400, api.CodePayloadError, "payload: text is empty"},
		{"empty text/plain", "language=en&summarize=true", nil, "text/plain", 400, api.CodePayloadError, "payload: the text/plain body is empty"},
		{"text/plain not UTF-8", "language=en&summarize=true", []byte("caf\xe9"), "text/plain; charset=utf-8", 400, api.CodePayloadError, "payload: the text/plain body is not UTF-8 text"},
		{"audio body", "language=en&summarize=true", wav, "audio/wav", 415, api.CodeUnsupportedMediaType, "Unsupported Content-Type audio/wav..."},
		{"custom topics", "language=en&topics=true&custom_topic=billing", text, "application/json", 400, api.CodeBadRequest, "The local engine does not offer custom_topic yet."},
		{"custom intents", "language=en&intents=true&custom_intent=cancel", text, "application/json", 400, api.CodeBadRequest, "The local engine does not offer custom_intent yet."},
		{"callback", "language=en&summarize=true&callback=http://127.0.0.1:1/cb", text, "application/json", 400, api.CodeBadRequest, "The local engine does not offer callback yet."},
		{"bad boolean", "language=en&sentiment=maybe", text, "application/json", 400, api.CodeInvalidQueryParameter, `sentiment must be true or false, not "maybe"`},
		{"summarize v1", "language=en&summarize=v1", text, "application/json", 400, api.CodeBadRequest, `summarize takes true or v2, not "v1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := postRead(t, tc.query, tc.body, tc.ctype)
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
	for _, tc := range []struct {
		name   string
		method string
		header http.Header
		msg    string
	}{
		{"GET", http.MethodGet, nil, "GET is not allowed on /v1/read."},
		{"WebSocket upgrade", http.MethodGet, http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"},
			"Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}, "A WebSocket upgrade is not allowed on /v1/read."},
		{"PUT", http.MethodPut, nil, "PUT is not allowed on /v1/read."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, shared, tc.method, api.PathRead+"?language=en&summarize=true", tokenAuth(shared), nil, tc.header)
			a.wantError(t, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, tc.msg)
			if a.header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q, want POST", a.header.Get("Allow"))
			}
		})
	}
}

// TestReadLimits checks the token limit of the service and the engine's
// limit on the size of a body.
func TestReadLimits(t *testing.T) {
	t.Parallel()
	t.Run("token limit", func(t *testing.T) {
		over := strings.Repeat("word ", api.ReadTokenLimit+1)
		a := postRead(t, "language=en&sentiment=true", []byte(over), "text/plain")
		a.wantError(t, http.StatusBadRequest, api.CodeTokenLimitExceeded,
			"The input is 150001 tokens; at most 150000 are analysed in one request.")
	})
	t.Run("at the token limit", func(t *testing.T) {
		if testing.Short() {
			t.Skip("analyses 150,000 tokens")
		}
		// Punctuation counts: 75,000 words and 75,000 periods.
		at := strings.Repeat("Fine. ", api.ReadTokenLimit/2)
		r := postRead(t, "language=en&sentiment=true", []byte(at), "text/plain").readOK(t)
		if got := r.Metadata.SentimentInfo.InputTokens; got != api.ReadTokenLimit {
			t.Errorf("input_tokens %d, want %d", got, api.ReadTokenLimit)
		}
	})
	t.Run("body too large", func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), maxReadBytes+1)
		a := postRead(t, "language=en&sentiment=true", big, "text/plain")
		a.wantError(t, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, "")
	})
}

// checkSegment checks that a segment's words are those of fields.
func checkSegment(t *testing.T, what string, fields []string, text string, start, end int) {
	t.Helper()
	if start < 0 || end < start || end >= len(fields) {
		t.Errorf("%s: words %d..%d out of %d", what, start, end, len(fields))
		return
	}
	if want := strings.Join(fields[start:end+1], " "); text != want {
		t.Errorf("%s: text %q, words %d..%d are %q", what, text, start, end, want)
	}
}

// TestReadDocument analyses a document end to end through the client and
// the real handler, and checks the answer against package intel and the
// document's words.
func TestReadDocument(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newClient(t, shared)
	opts := api.ReadOptions{Language: "en-US", Summarize: "v2", Sentiment: true, Topics: true, Intents: true}
	r, err := c.Read(ctx, api.ReadRequest{Text: readDoc}, opts)
	if err != nil {
		t.Fatal(err)
	}
	md := r.Metadata
	if md.Language != "en" {
		t.Errorf("language %q: en-US is answered as en", md.Language)
	}
	if _, err := time.Parse(createdLayout, md.Created); err != nil {
		t.Errorf("created %q: %v", md.Created, err)
	}
	if md.RequestID == "" {
		t.Error("no request_id")
	}
	tokens := textseg.Tokens(readDoc)
	for _, f := range []struct {
		name string
		info *api.FeatureInfo
		uuid string
	}{
		{"summary_info", md.SummaryInfo, summaryModelUUID},
		{"sentiment_info", md.SentimentInfo, sentimentModelUUID},
		{"topics_info", md.TopicsInfo, topicModelUUID},
		{"intents_info", md.IntentsInfo, intentModelUUID},
	} {
		if f.info == nil || f.info.ModelUUID != f.uuid || f.info.InputTokens != tokens || f.info.OutputTokens < 0 {
			t.Errorf("%s %+v, want model %s and %d input tokens", f.name, f.info, f.uuid, tokens)
		}
	}

	// The results are package intel's, in the service's shapes.
	want, err := intel.Analyze(ctx, readDoc, intel.Options{Summarize: true, Sentiment: true, Topics: true, Intents: true})
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(readDoc)
	if r.Results.Summary == nil || r.Results.Summary.Text != want.Summary || want.Summary == "" {
		t.Errorf("summary %+v, want %q", r.Results.Summary, want.Summary)
	}
	if md.SummaryInfo != nil && md.SummaryInfo.OutputTokens != textseg.Tokens(want.Summary) {
		t.Errorf("summary output_tokens %d, want %d", md.SummaryInfo.OutputTokens, textseg.Tokens(want.Summary))
	}
	s := r.Results.Sentiments
	if s == nil || len(s.Segments) != len(want.Sentiments) || len(s.Segments) == 0 {
		t.Fatalf("sentiments %+v, want %d segments", s, len(want.Sentiments))
	}
	seen := map[string]bool{}
	for i, seg := range s.Segments {
		checkSegment(t, "sentiment segment "+strconv.Itoa(i), fields, seg.Text, seg.StartWord, seg.EndWord)
		if seg.Sentiment != want.Sentiments[i].Sentiment || seg.SentimentScore != want.Sentiments[i].Score || seg.SentimentScore < -1 || seg.SentimentScore > 1 {
			t.Errorf("segment %d %+v, want %+v", i, seg, want.Sentiments[i])
		}
		seen[seg.Sentiment] = true
	}
	if !seen[intel.Negative] || !seen[intel.Positive] {
		t.Errorf("sentiments %v: the call turns from angry to grateful", seen)
	}
	if s.Average.Sentiment != want.Average.Sentiment || s.Average.SentimentScore != want.Average.Score {
		t.Errorf("average %+v, want %+v", s.Average, want.Average)
	}
	if r.Results.Topics == nil || len(r.Results.Topics.Segments) != len(want.Topics) {
		t.Fatalf("topics %+v, want %d segments", r.Results.Topics, len(want.Topics))
	}
	for i, seg := range r.Results.Topics.Segments {
		checkSegment(t, "topic segment "+strconv.Itoa(i), fields, seg.Text, seg.StartWord, seg.EndWord)
		if len(seg.Topics) == 0 || len(seg.Topics) != len(want.Topics[i].Labels) {
			t.Errorf("topic segment %d: %+v", i, seg)
		}
		for j, tp := range seg.Topics {
			if tp.Topic != want.Topics[i].Labels[j].Name || tp.ConfidenceScore < 0 || tp.ConfidenceScore > 1 {
				t.Errorf("topic %+v, want %+v", tp, want.Topics[i].Labels[j])
			}
		}
	}
	if r.Results.Intents == nil || len(r.Results.Intents.Segments) != len(want.Intents) {
		t.Fatalf("intents %+v, want %d segments", r.Results.Intents, len(want.Intents))
	}
	for i, seg := range r.Results.Intents.Segments {
		checkSegment(t, "intent segment "+strconv.Itoa(i), fields, seg.Text, seg.StartWord, seg.EndWord)
		for j, in := range seg.Intents {
			if in.Intent != want.Intents[i].Labels[j].Name || in.ConfidenceScore < 0 || in.ConfidenceScore > 1 {
				t.Errorf("intent %+v, want %+v", in, want.Intents[i].Labels[j])
			}
		}
	}

	t.Run("only the features asked for", func(t *testing.T) {
		r := postRead(t, "language=en&summarize=true", jsonBody(t, api.ReadRequest{Text: readDoc}), "application/json").readOK(t)
		if r.Results.Summary == nil || r.Results.Sentiments != nil || r.Results.Topics != nil || r.Results.Intents != nil {
			t.Errorf("results %+v: summary only", r.Results)
		}
		if r.Metadata.SummaryInfo == nil || r.Metadata.SentimentInfo != nil || r.Metadata.TopicsInfo != nil || r.Metadata.IntentsInfo != nil {
			t.Errorf("metadata %+v: summary_info only", r.Metadata)
		}
	})
	t.Run("text/plain body", func(t *testing.T) {
		r := postRead(t, "language=en&sentiment=true", []byte(readDoc), "text/plain; charset=utf-8").readOK(t)
		if r.Results.Sentiments == nil || len(r.Results.Sentiments.Segments) != len(want.Sentiments) {
			t.Errorf("sentiments %+v", r.Results.Sentiments)
		}
	})
	t.Run("no Content-Type is JSON", func(t *testing.T) {
		r := postRead(t, "language=en&sentiment=true", jsonBody(t, api.ReadRequest{Text: readDoc}), "").readOK(t)
		if r.Results.Sentiments == nil {
			t.Errorf("results %+v", r.Results)
		}
	})
	t.Run("no feature", func(t *testing.T) {
		r := postRead(t, "language=en", jsonBody(t, api.ReadRequest{Text: readDoc}), "application/json").readOK(t)
		if r.Results != (api.ReadResults{}) || r.Metadata.Language != "en" {
			t.Errorf("answer %+v", r)
		}
	})
	t.Run("the client refuses what the engine refuses", func(t *testing.T) {
		_, err := c.Read(ctx, api.ReadRequest{Text: readDoc}, api.ReadOptions{Sentiment: true})
		var oe *api.OptionError
		if !errors.As(err, &oe) || oe.Reason != api.MsgReadMissingLanguage || oe.Code != api.CodeInvalidQueryParameter {
			t.Errorf("no language: %v", err)
		}
		var ae *api.Error
		_, err = c.Read(ctx, api.ReadRequest{Text: readDoc}, api.ReadOptions{Language: "en", Topics: true, CustomTopic: []string{"billing"}})
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			t.Errorf("custom topics: %v", err)
		}
	})
}

// TestReadURL fetches documents from a loopback server: text in every
// usual labelling, and the engine's bounds on size and time.
func TestReadURL(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc.txt":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte(readDoc))
		case "/doc.md":
			w.Header().Set("Content-Type", "text/markdown")
			_, _ = w.Write([]byte(readDoc))
		case "/unlabelled":
			w.Header()["Content-Type"] = nil
			_, _ = w.Write([]byte(readDoc))
		case "/redirect":
			http.Redirect(w, r, "/doc.txt", http.StatusFound)
		case "/latin1.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("Caf\xe9 au lait is nice."))
		case "/declared-huge.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", strconv.Itoa(maxReadBytes+1))
			_, _ = w.Write([]byte(readDoc)) // the header alone is refused
		case "/huge.txt":
			// No length: the engine stops reading past its limit.
			w.Header().Set("Content-Type", "text/plain")
			line := []byte(strings.Repeat("All work and no play. ", 1000))
			for n := 0; n <= maxReadBytes; n += len(line) {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		case "/slow.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("The first words arrive, "))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(files.Close)
	t.Cleanup(func() { close(hang) }) // runs first: a hanging handler lets go
	read := func(path string) answer {
		return postRead(t, "language=en&sentiment=true", jsonBody(t, map[string]string{"url": files.URL + path}), "application/json")
	}
	want := postRead(t, "language=en&sentiment=true", []byte(readDoc), "text/plain").readOK(t).Results.Sentiments
	for _, path := range []string{"/doc.txt", "/doc.md", "/unlabelled", "/redirect"} {
		t.Run("text "+path, func(t *testing.T) {
			r := read(path).readOK(t)
			if got := r.Results.Sentiments; got == nil || len(got.Segments) != len(want.Segments) || got.Average != want.Average {
				t.Errorf("sentiments of the fetched document %+v, want %+v", got, want)
			}
			if r.Metadata.SentimentInfo.InputTokens != textseg.Tokens(readDoc) {
				t.Errorf("input_tokens %d", r.Metadata.SentimentInfo.InputTokens)
			}
		})
	}
	for _, tc := range []struct{ path, prefix string }{
		{"/latin1.txt", "is not UTF-8 text"},
		{"/declared-huge.txt", "the local engine fetches documents of at most 10 MiB"},
		{"/huge.txt", "is larger than the 10 MiB the local engine fetches"},
		{"/slow.txt", "no complete answer within 10s"},
	} {
		t.Run("refused "+tc.path, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			a := read(tc.path)
			a.wantError(t, http.StatusBadRequest, api.CodeRemoteContentError, "")
			if msg := a.legacy(t).ErrMsg; !strings.HasPrefix(msg, "remote content: ") || !strings.Contains(msg, tc.prefix) {
				t.Errorf("err_msg %q, want it to say %q", msg, tc.prefix)
			}
			if tc.path == "/slow.txt" {
				if d := time.Since(start); d < readFetchTimeout || d > readFetchTimeout+5*time.Second {
					t.Errorf("a hanging server was given %v, want %v", d, readFetchTimeout)
				}
			}
		})
	}
}
