package sessions_test

import (
	"strings"
	"testing"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestExportInterruptedSynthesis: a synthesis whose process ended while
// it ran says so in its Markdown, and its JSON carries the status.
func TestExportInterruptedSynthesis(t *testing.T) {
	s := sessions.SavedSynthesis{Session: store.Session{Kind: store.KindSynthesis, Title: "cut short", Status: store.StatusInterrupted}, Text: "Hello."}
	var md, js strings.Builder
	if err := sessions.ExportSynthesis(&md, sessions.AnalysisMarkdown, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Interrupted: Earshot stopped before it ended") {
		t.Errorf("the Markdown does not say it was interrupted:\n%s", md.String())
	}
	if err := sessions.ExportSynthesis(&js, sessions.AnalysisJSON, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"status": "interrupted"`) && !strings.Contains(js.String(), `"status":"interrupted"`) {
		t.Errorf("the JSON does not carry the status:\n%s", js.String())
	}
}
