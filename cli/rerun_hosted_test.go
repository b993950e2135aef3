package cli

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/hostedtest"
	"github.com/earshot-app/earshot/sessions"
)

// TestRerunHostedCommand runs 'earshot rerun ID --backend hosted', with
// and without --region, on an entry whose audio is kept, against a
// stand-in for the hosted service on 127.0.0.1 that relays to the local
// engine: each goes to its region's host with the key as "Token KEY" and
// the model, and the output names the service and region used, with the
// transcript and the time.
func TestRerunHostedCommand(t *testing.T) {
	needClip(t)
	if _, _, err := startLocal(); err != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", err)
	}
	standIn := hostedtest.Start(t, local.l.URL, local.l.Key)
	h := newHarness(t, nil, func(cfg *sessions.WorkspaceConfig) { cfg.HTTPClient = standIn.Client() })
	if _, err := h.ws.SaveKey(local.l.Key); err != nil {
		t.Fatal(err)
	}
	id := h.savedWithAudio(t, "kept audio")
	sid := strconv.FormatInt(id, 10)

	check := func(host, model string) {
		t.Helper()
		seen, dials := standIn.Requests()
		want := hostedtest.Request{Host: host, SNI: host, Authorization: "Token KEY", Method: http.MethodPost, Path: "/v1/listen", Model: model}
		if len(seen) != 1 || seen[0] != want {
			t.Errorf("the stand-in saw %+v, want %+v", seen, want)
		}
		if len(dials) > 1 || len(dials) == 1 && dials[0] != host+":443" {
			t.Errorf("dialed %q, want only %s:443", dials, host)
		}
	}

	if code := h.runFresh(t, "rerun", sid, "--backend", "hosted", "--model", "base"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	out := h.stdout.String()
	t.Logf("\n%s", out)
	check("api.deepgram.com", "base")
	for _, want := range []string{"Hosted service", "base (pocketsphinx-en-us-fast)", "Re-run:   He was not"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "Hosted service (") {
		t.Error("the global host named with a region")
	}

	// In the EU, with the settings' model (the entry names none).
	if code := h.runFresh(t, "rerun", "--json", sid, "--backend", "hosted", "--region", "eu"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	check("api.eu.deepgram.com", "nova-3")
	var got struct {
		Rerun struct {
			ID         int64   `json:"id"`
			Backend    string  `json:"backend"`
			Model      string  `json:"model"`
			ModelName  string  `json:"model_name"`
			Transcript string  `json:"transcript"`
			Took       float64 `json:"took_seconds"`
		} `json:"rerun"`
	}
	if err := json.Unmarshal([]byte(h.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, h.stdout.String())
	}
	r := got.Rerun
	if r.Backend != "Hosted service (European Union)" || r.Model != "nova-3" || r.ModelName != "pocketsphinx-en-us" ||
		!strings.Contains(strings.ToLower(r.Transcript), "young man") || r.Took <= 0 {
		t.Errorf("json %+v", r)
	}
	if s, err := h.db.Session(t.Context(), r.ID); err != nil || s.Backend != r.Backend || s.Details != `{"rerun_of":`+sid+`}` {
		t.Errorf("the re-run's entry: %+v, %v", s, err)
	}
}
