package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// supportCall is a made-up customer call: glad, then angry about a double
// charge, then relieved; with requests to refund a charge, to cancel a
// subscription and to update an address.
const supportCall = `Thanks for calling Brightline Internet, my name is Dana. How can I help you today?

Hi Dana, I have been a customer for six years and I have always loved the service. The connection is fast and the support team has been wonderful.

But this month I was charged twice for my subscription, and I am really upset about it. This is the second billing error this year, it is frustrating and honestly unacceptable.

I want to refund the duplicate charge right away. If this keeps happening I will cancel my subscription and switch to another provider.

I completely understand, and I am sorry for the trouble. I can see the duplicate payment on your account, and I have issued the refund, so it will reach your card within three days.

Oh, that is great news, thank you so much. While I have you, could you update my billing address? I moved to a new apartment last week.

Of course. Your new address is saved and the next invoice will go there. Is there anything else I can do for you?

No, that is everything. You have been very helpful, thanks again and have a lovely evening.`

// analysisWorkspace is a workspace on the shared local engine over a fresh
// history, with settings s (nil for the defaults).
func analysisWorkspace(t *testing.T, s *store.Settings) (*sessions.Workspace, *store.DB) {
	t.Helper()
	return analysisWorkspaceAt(t, s, localEngine(t).Endpoint())
}

// analysisWorkspaceAt is analysisWorkspace with the shared engine's key
// at ep: the engine itself, or a proxy to it.
func analysisWorkspaceAt(t *testing.T, s *store.Settings, ep api.Endpoint) (*sessions.Workspace, *store.DB) {
	t.Helper()
	l := localEngine(t)
	db := openDB(t)
	if s != nil {
		if err := db.SaveSettings(t.Context(), *s); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db,
		Keys:    sessions.NewKeys(&store.Memory{}, func(string) string { return "" }),
		Local:   func() (api.Endpoint, api.Secret, error) { return ep, l.Key, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return ws, db
}

func TestAnalyzeText(t *testing.T) {
	ws, db := analysisWorkspace(t, nil)
	ctx := testContext(t, 30*time.Second)
	var phases []sessions.AnalysisPhase
	res, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: supportCall}, sessions.AllFeatures(), func(p *sessions.AnalysisProgressEvent) { phases = append(phases, p.Phase) })
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	if want := []sessions.AnalysisPhase{sessions.AnalysisAnalysing, sessions.AnalysisDone}; !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	r := res.Response.Results
	if r.Summary == nil || len(strings.Fields(r.Summary.Text)) < 5 {
		t.Fatalf("no summary: %+v", r.Summary)
	}
	if r.Sentiments == nil || len(r.Sentiments.Segments) < 3 {
		t.Fatalf("sentiment: %+v", r.Sentiments)
	}
	labels := map[string]bool{}
	for _, s := range r.Sentiments.Segments {
		labels[s.Sentiment] = true
		// Every passage the service names is found in the document.
		if p := res.Passage(s.StartWord, s.EndWord, ""); p == "" || strings.Join(strings.Fields(p), " ") != strings.Join(strings.Fields(s.Text), " ") {
			t.Errorf("segment %d-%d %q maps to %q", s.StartWord, s.EndWord, s.Text, p)
		}
	}
	if !labels["positive"] || !labels["negative"] {
		t.Errorf("the call turns from glad to upset and back, but the sentiments are %v", labels)
	}
	if r.Topics == nil || len(r.Topics.Segments) == 0 || r.Intents == nil || len(r.Intents.Segments) == 0 {
		t.Fatalf("topics %+v, intents %+v", r.Topics, r.Intents)
	}

	// Saved to history: the session, its details, the answer and the
	// document, searchable.
	sess, err := db.Session(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Kind != store.KindAnalysis || sess.Status != store.StatusDone || sess.Source != "Pasted text" || sess.Backend != "Local engine" {
		t.Errorf("saved session %+v", sess)
	}
	if !strings.HasPrefix(sess.Title, "Thanks for calling Brightline") {
		t.Errorf("title %q", sess.Title)
	}
	var details map[string]any
	if err := json.Unmarshal([]byte(sess.Details), &details); err != nil {
		t.Fatal(err)
	}
	if details["source"] != "Pasted text" || details["source_kind"] != "text" || details["language"] != "en" {
		t.Errorf("details %s", sess.Details)
	}
	if f, _ := json.Marshal(details["features"]); string(f) != `["summarize","sentiment","topics","intents"]` {
		t.Errorf("features %s", f)
	}
	hits, err := ws.Search(ctx, "apartment", 10)
	if err != nil || len(hits) != 1 || hits[0].SessionID != res.SessionID {
		t.Errorf("search for a word of the document: %+v, %v", hits, err)
	}

	// Reopened, it is the same analysis of the same document.
	back, err := ws.Analysis(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if back.Text != supportCall || back.Features != sessions.AllFeatures() || back.SourceKind != sessions.SourceText || back.Title != res.Title {
		t.Errorf("reopened: %+v", back)
	}
	a, _ := json.Marshal(res.Response)
	b, _ := json.Marshal(back.Response)
	if !bytes.Equal(a, b) {
		t.Errorf("the reopened response differs:\n%s\n%s", a, b)
	}

	// Exports: Markdown for people, JSON as the service answered.
	var md, js bytes.Buffer
	if err := ws.ExportAnalysis(ctx, res.SessionID, sessions.AnalysisMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	checkMarkdown(t, md.String(), res)
	if err := ws.ExportAnalysis(ctx, res.SessionID, sessions.AnalysisJSON, &js); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&js)
	dec.DisallowUnknownFields()
	var got api.ReadResponse
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("the JSON export is not a read response: %v", err)
	}
	if g, _ := json.Marshal(got); !bytes.Equal(g, a) {
		t.Errorf("the JSON export differs from the answer:\n%s\n%s", g, a)
	}
}

// checkMarkdown checks the Markdown export of res: each section, a table
// row per sentiment passage, every topic and intent with its passage.
func checkMarkdown(t *testing.T, md string, res *sessions.AnalysisResult) {
	t.Helper()
	r := res.Response.Results
	for _, want := range []string{"# Analysis: ", "## Summary\n\n" + strings.TrimSpace(r.Summary.Text), "## Sentiment", "Average: **" + r.Sentiments.Average.Sentiment + "**", "## Topics", "## Intents"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| # ") {
			rows++
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 5 {
				t.Errorf("table row with %d cells: %q", n-1, line)
			}
		}
	}
	if rows != len(r.Sentiments.Segments) {
		t.Errorf("%d table rows for %d sentiment passages", rows, len(r.Sentiments.Segments))
	}
	for _, seg := range sessions.TopicSegments(r.Topics) {
		for _, l := range seg.Labels {
			if !strings.Contains(md, "- **"+l.Name+"** ("+sessions.Percent(l.Confidence)+")\n  > ") {
				t.Errorf("the Markdown lacks topic %q", l.Name)
			}
		}
	}
	for _, seg := range sessions.IntentSegments(r.Intents) {
		for _, l := range seg.Labels {
			if !strings.Contains(md, "- **"+l.Name+"** ("+sessions.Percent(l.Confidence)+")\n  > ") {
				t.Errorf("the Markdown lacks intent %q", l.Name)
			}
		}
	}
}

func TestAnalyzeFileAndURL(t *testing.T) {
	ws, db := analysisWorkspace(t, nil)
	ctx := testContext(t, 30*time.Second)

	t.Run("markdown file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.md")
		if err := os.WriteFile(path, []byte("\uFEFF"+supportCall), 0o600); err != nil {
			t.Fatal(err)
		}
		var phases []sessions.AnalysisPhase
		res, err := ws.Analyze(ctx, sessions.AnalysisInput{Path: path}, sessions.Features{Sentiment: true}, func(p *sessions.AnalysisProgressEvent) { phases = append(phases, p.Phase) })
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != supportCall || res.Source != "notes.md" || res.Title != "notes.md" || res.SourceKind != sessions.SourceFile {
			t.Errorf("result %q %q %q", res.Source, res.Title, res.SourceKind)
		}
		if phases[0] != sessions.AnalysisReading {
			t.Errorf("phases %v", phases)
		}
		r := res.Response.Results
		if r.Sentiments == nil || r.Summary != nil || r.Topics != nil || r.Intents != nil {
			t.Errorf("only sentiment was asked for: %+v", r)
		}
	})

	t.Run("url", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte(supportCall))
		}))
		defer srv.Close()
		u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/calls/42.txt?token=s3cret#top"
		res, err := ws.Analyze(ctx, sessions.AnalysisInput{URL: u}, sessions.Features{Summary: true, Topics: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := srv.URL + "/calls/42.txt"
		if res.Source != want || res.Text != supportCall || res.TextErr != nil {
			t.Errorf("source %q (want %q), text %d bytes, %v", res.Source, want, len(res.Text), res.TextErr)
		}
		if res.Response.Results.Summary == nil || res.Response.Results.Topics == nil {
			t.Errorf("results %+v", res.Response.Results)
		}
		sess, err := db.Session(ctx, res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"hunter2", "s3cret"} {
			if strings.Contains(sess.Source+sess.Details+sess.Title+sess.Options, secret) {
				t.Errorf("history keeps %q: %+v", secret, sess)
			}
		}
	})
}

// errUnsupported stands for a *document.UnsupportedError in
// TestAnalyzeErrors.
var errUnsupported = errors.New("unsupported")

func TestAnalyzeErrors(t *testing.T) {
	ws, db := analysisWorkspace(t, nil)
	ctx := testContext(t, 30*time.Second)
	dir := t.TempDir()
	binary := filepath.Join(dir, "song.txt")
	if err := os.WriteFile(binary, []byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xfe"), 0o600); err != nil {
		t.Fatal(err)
	}
	audio := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write(readFile(t, librivoxPath("0870")))
	}))
	defer audio.Close()

	tests := []struct {
		name   string
		in     sessions.AnalysisInput
		f      sessions.Features
		is     error
		saved  string // the status saved, "" for nothing saved
		status int    // the service's HTTP status, 0 for none
	}{
		{"no features", sessions.AnalysisInput{Text: "Hello."}, sessions.Features{}, sessions.ErrNoFeatures, "", 0},
		{"no input", sessions.AnalysisInput{Text: " \n "}, sessions.AllFeatures(), sessions.ErrNoInput, "", 0},
		{"two inputs", sessions.AnalysisInput{Text: "Hello.", URL: "https://example.com/a.txt"}, sessions.AllFeatures(), sessions.ErrNoInput, "", 0},
		{"missing file", sessions.AnalysisInput{Path: filepath.Join(dir, "gone.txt")}, sessions.AllFeatures(), fs.ErrNotExist, "", 0},
		{"binary file", sessions.AnalysisInput{Path: binary}, sessions.AllFeatures(), errUnsupported, "", 0},
		{"not a web address", sessions.AnalysisInput{URL: "ftp://example.com/a.txt"}, sessions.AllFeatures(), api.ErrInvalidOptions, "", 0},
		// The app reads what the address holds before sending anything.
		{"audio at the url", sessions.AnalysisInput{URL: audio.URL + "/talk.wav"}, sessions.AllFeatures(), errUnsupported, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := db.Sessions(ctx, store.Filter{Kind: store.KindAnalysis})
			_, err := ws.Analyze(ctx, tt.in, tt.f, nil)
			if err == nil {
				t.Fatal("no error")
			}
			var ue *document.UnsupportedError
			if tt.is == errUnsupported && !errors.As(err, &ue) {
				t.Errorf("error %v: want a document of a kind that cannot be read", err)
			}
			if tt.is != nil && tt.is != errUnsupported && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
			var ae *api.Error
			if tt.status != 0 && (!errors.As(err, &ae) || ae.Status != tt.status) {
				t.Errorf("error %v: want an answer of the service with HTTP %d", err, tt.status)
			}
			after, _ := db.Sessions(ctx, store.Filter{Kind: store.KindAnalysis})
			switch {
			case tt.saved == "" && len(after) != len(before):
				t.Errorf("a refused request was saved: %+v", after[0])
			case tt.saved != "" && (len(after) != len(before)+1 || after[0].Status != tt.saved || after[0].Error == ""):
				t.Errorf("saved %+v, want one more session %s with its error", after, tt.saved)
			}
		})
	}

	t.Run("not english", func(t *testing.T) {
		s := store.DefaultSettings()
		s.Language = "fr"
		ws, _ := analysisWorkspace(t, &s)
		_, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: "Bonjour."}, sessions.AllFeatures(), nil)
		if !errors.Is(err, sessions.ErrEnglishOnly) || !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("error %v, want ErrEnglishOnly", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		// Cancelled while the request is on its way, as Cancel does: the
		// proxy holds the connection, so the answer cannot come first.
		proxy := newFaultProxy(t, localEngine(t).URL.Host)
		proxy.hold()
		ws, db := analysisWorkspaceAt(t, nil, proxy.endpoint())
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s, err := ws.StartAnalysis(cctx, sessions.AnalysisInput{Text: supportCall}, sessions.AllFeatures())
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the request at the proxy", func() bool { return proxy.held() == 1 })
		cancel()
		_, err = s.Wait(nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		list, err := db.Sessions(ctx, store.Filter{Kind: store.KindAnalysis, Limit: 1})
		if err != nil || len(list) != 1 || list[0].Status != store.StatusCancelled {
			t.Errorf("saved %+v, %v; want the analysis saved as cancelled", list, err)
		}
	})
}

func TestListenOptionsFileIntelligence(t *testing.T) {
	s := store.DefaultSettings()
	if o := sessions.ListenOptions(s, api.Batch); o.Summarize != "" || o.Sentiment || o.Topics || o.Intents {
		t.Errorf("intelligence asked by default: %+v", o)
	}
	s.FileSummary, s.FileSentiment, s.FileTopics, s.FileIntents = true, true, true, true
	o := sessions.ListenOptions(s, api.Batch)
	if o.Summarize != "v2" || !o.Sentiment || !o.Topics || !o.Intents {
		t.Errorf("batch options %+v", o)
	}
	if err := o.CheckRequest(api.Batch); err != nil {
		t.Errorf("the batch options are refused: %v", err)
	}
	if o := sessions.ListenOptions(s, api.Streaming); o.Summarize != "" || o.Sentiment || o.Topics || o.Intents {
		t.Errorf("streaming asks for intelligence, which the service refuses: %+v", o)
	}
}
