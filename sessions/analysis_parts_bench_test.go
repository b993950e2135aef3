package sessions_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// BenchmarkAnalyzeInParts400k analyses a document of 400,000 words of
// varied prose (about three times the service's limit) end to end
// against the local engine on loopback: split into parts, each part
// sent with every feature, the parts' summaries summarised, the answers
// merged and saved to a history on disk with the whole document.
// s/doc is the time of one whole document.
func BenchmarkAnalyzeInParts400k(b *testing.B) {
	doc := longDocument(400_000, 42)
	l, err := engine.StartLocal(engine.Config{})
	if err != nil {
		b.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", err)
	}
	defer l.Close()
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	c, err := api.NewClient(api.Config{Endpoint: l.Endpoint(), APIKey: l.Key, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a := sessions.Analysis{Client: c, History: db, Backend: "Local engine"}
	var res *sessions.AnalysisResult
	for b.Loop() {
		s := a.Session(sessions.AnalysisInput{Text: doc}, sessions.AllFeatures())
		if err := s.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		if res, err = s.Wait(nil); err != nil {
			b.Fatal(err)
		}
	}
	r := res.Response.Results
	if res.PartCount() < 3 || r.Summary == nil || strings.TrimSpace(r.Summary.Text) == "" ||
		len(r.Sentiments.Segments) == 0 || len(r.Topics.Segments) == 0 || len(r.Intents.Segments) == 0 {
		b.Fatalf("%d parts; results %+v", res.PartCount(), r.Summary)
	}
	b.ReportMetric(float64(res.PartCount()), "parts")
	b.ReportMetric(float64(len(strings.Fields(doc))), "words")
	b.ReportMetric(float64(textseg.Tokens(doc)), "tokens")
	b.ReportMetric(float64(len(strings.Fields(r.Summary.Text))), "summary-words")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/doc")
}
