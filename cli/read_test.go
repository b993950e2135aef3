package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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

// TestReadFormats reads documents of other formats: a PDF made by groff,
// a web page from a file, from an address and from standard input; a file
// it cannot read is refused in words that say why.
func TestReadFormats(t *testing.T) {
	dir := t.TempDir()
	page := `<!doctype html><html><head><title>Launch review</title></head><body><nav>Home | Blog | Contact</nav>
<main><h1>Launch review</h1><p>` + strings.ReplaceAll(meetingNotes, "\n\n", "</p><p>") + `</p></main><footer>Copyright</footer></body></html>`
	html := filepath.Join(dir, "review.html")
	if err := os.WriteFile(html, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	zipFile := filepath.Join(dir, "song.mp3")
	if err := os.WriteFile(zipFile, []byte("ID3\x03\x00\x00\x00\x00\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}

	check := func(t *testing.T, h *harness, args ...string) string {
		t.Helper()
		if code := h.run(t, t.Context(), args...); code != 0 {
			t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
		}
		out := h.stdout.String()
		if !strings.Contains(out, "## Summary") || !strings.Contains(out, "support") || strings.Contains(out, "Contact") {
			t.Errorf("the report:\n%s", out)
		}
		return out
	}
	t.Run("html file", func(t *testing.T) { check(t, newHarness(t, nil), "read", html) })
	t.Run("web page", func(t *testing.T) {
		h := newHarness(t, nil)
		check(t, h, "read", srv.URL+"/review")
		if !strings.Contains(h.stderr.String(), "Analysed Launch review") {
			t.Errorf("stderr %q", h.stderr.String())
		}
	})
	t.Run("standard input", func(t *testing.T) {
		h := newHarness(t, nil)
		h.stdin = strings.NewReader(page)
		check(t, h, "read", "-")
	})
	t.Run("pdf", func(t *testing.T) {
		if _, err := exec.LookPath("groff"); err != nil {
			t.Skip("groff is not installed (scripts/setup installs it)")
		}
		ms := ".LP\n" + strings.ReplaceAll(meetingNotes, "\n\n", "\n.bp\n.LP\n") + "\n"
		cmd := exec.Command("groff", "-k", "-ms", "-Tpdf")
		cmd.Stdin = strings.NewReader(ms)
		pdf, err := cmd.Output()
		if err != nil {
			t.Fatalf("groff: %v", err)
		}
		path := filepath.Join(dir, "meeting.pdf")
		if err := os.WriteFile(path, pdf, 0o600); err != nil {
			t.Fatal(err)
		}
		out := check(t, newHarness(t, nil), "read", path)
		if !strings.Contains(out, "(page 3)") {
			t.Errorf("no passage names its page:\n%s", out)
		}
	})
	t.Run("unsupported", func(t *testing.T) {
		h := newHarness(t, nil)
		if code := h.run(t, t.Context(), "read", zipFile); code != 1 || !strings.Contains(h.stderr.String(), "song.mp3 is audio") {
			t.Errorf("exit status %d; stderr %q", code, h.stderr.String())
		}
	})
}

// TestReadInParts reads a document longer than one request takes: it is
// analysed in parts, and both the report and the command say so.
func TestReadInParts(t *testing.T) {
	if testing.Short() {
		t.Skip("a long document")
	}
	var b strings.Builder
	for i := 0; b.Len() < 700_000; i++ {
		fmt.Fprintf(&b, "Week %d\n\n%s\n\n", i+1, strings.ReplaceAll(meetingNotes, "two more", fmt.Sprintf("%d more", i%7+2)))
	}
	h := newHarness(t, nil)
	h.stdin = strings.NewReader(b.String())
	if code := h.run(t, t.Context(), "read", "-", "--summarize", "--sentiment"); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if !strings.Contains(h.stdout.String(), "Analysed in 2 parts") || !strings.Contains(h.stderr.String(), " in 2 parts (") {
		t.Errorf("stderr %q; report:\n%.600s", h.stderr.String(), h.stdout.String())
	}
}
