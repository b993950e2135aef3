package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/store"
)

// meetingNotes is a made-up team meeting, with good news, a worry and
// requests.
const meetingNotes = `The launch went very well and the team is proud of the new dashboard. Customers love the faster reports.

However, the support queue is growing and response times are terrible this week. People are frustrated.

Please hire two more support engineers before the end of the month. We also need to update the onboarding guide.`

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "meeting.md")
	if err := os.WriteFile(doc, []byte(meetingNotes), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, out string)
	}{
		{"markdown with every feature", []string{"read", doc}, func(t *testing.T, out string) {
			for _, want := range []string{"# Analysis: meeting.md", "## Summary", "## Sentiment", "| # | Passage | Sentiment | Score |", "## Topics", "## Intents"} {
				if !strings.Contains(out, want) {
					t.Errorf("the report lacks %q:\n%s", want, out)
				}
			}
		}},
		{"json with sentiment only", []string{"read", doc, "--sentiment", "--format", "json"}, func(t *testing.T, out string) {
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			var resp api.ReadResponse
			if err := dec.Decode(&resp); err != nil {
				t.Fatalf("not a read response: %v\n%s", err, out)
			}
			r := resp.Results
			if r.Sentiments == nil || len(r.Sentiments.Segments) < 3 || r.Summary != nil || r.Topics != nil || r.Intents != nil {
				t.Errorf("results %+v, want sentiment only", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), tt.args...); code != 0 {
				t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
			}
			tt.check(t, h.stdout.String())
			list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindAnalysis})
			if err != nil || len(list) != 1 || list[0].Status != store.StatusDone || list[0].Title != "meeting.md" {
				t.Errorf("history %+v, %v; want the analysis saved", list, err)
			}
		})
	}

	t.Run("to a file", func(t *testing.T) {
		h := newHarness(t, nil)
		out := filepath.Join(dir, "report.json")
		if code := h.run(t, t.Context(), "read", "--topics", doc, "-o", out); code != 0 {
			t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var resp api.ReadResponse
		if err := json.Unmarshal(b, &resp); err != nil || resp.Results.Topics == nil {
			t.Errorf("report.json: %v\n%s", err, b)
		}
		if h.stdout.String() != "" {
			t.Errorf("standard output %q, want nothing", h.stdout.String())
		}
	})
}

func TestReadMistakes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no document", []string{"read"}, 2, "which document?"},
		{"two documents", []string{"read", "a.txt", "b.txt"}, 2, "one document at a time"},
		{"bad format", []string{"read", "a.txt", "--format", "pdf"}, 2, "unknown analysis format"},
		{"missing file", []string{"read", filepath.Join(t.TempDir(), "gone.txt")}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if code := h.run(t, t.Context(), tt.args...); code != tt.code {
				t.Errorf("exit status %d, want %d", code, tt.code)
			}
			if !strings.Contains(h.stderr.String(), tt.says) {
				t.Errorf("stderr %q lacks %q", h.stderr.String(), tt.says)
			}
		})
	}
}
