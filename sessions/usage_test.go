package sessions_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// usageWorkspace is a workspace whose settings are s and whose key is key.
func usageWorkspace(t *testing.T, s store.Settings, key api.Secret, local sessions.LocalEngine) *sessions.Workspace {
	t.Helper()
	db := openDB(t)
	if err := db.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	keys := sessions.NewKeys(&store.Memory{}, nil)
	if key != "" {
		if _, err := keys.Save(key); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: keys, Local: local})
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestUsageEndToEnd makes requests through the app against an engine of
// its own and finds exactly them in the usage the engine reports.
func TestUsageEndToEnd(t *testing.T) {
	l := startEngine(t, engine.Config{})
	ws := usageWorkspace(t, store.DefaultSettings(), "", func() (api.Endpoint, api.Secret, error) { return l.Endpoint(), l.Key, nil })
	ctx := testContext(t, 2*time.Minute)

	r, err := ws.Usage(ctx, "", 0)
	if err != nil {
		t.Fatalf("Usage before any request: %v", err)
	}
	if r.Project.Name != "Earshot local engine" || len(r.Projects) != 1 || r.Total.Requests != 0 || len(r.Balances) != 0 {
		t.Fatalf("usage before any request: %+v", r)
	}
	if r.Backend != "Local engine" {
		t.Errorf("backend %q", r.Backend)
	}

	path := librivoxPath("0870")
	res, err := ws.TranscribeFile(ctx, path, nil)
	if err != nil {
		t.Fatalf("TranscribeFile: %v", err)
	}
	seconds := res.Response.Metadata.Duration
	text := "The usage counts this analysis as one request."
	if _, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: text}, sessions.AllFeatures(), nil); err != nil {
		t.Fatalf("Analyze: %v", err)
	}

	// A request is recorded once its handler has returned, a moment after
	// the answer reached the app: ask until both are there.
	deadline := time.Now().Add(10 * time.Second)
	for r.Total.Requests < 2 && time.Now().Before(deadline) {
		if r, err = ws.Usage(ctx, "", 7); err != nil {
			t.Fatalf("Usage: %v", err)
		}
	}
	today := time.Now().UTC().Format(api.ManagementDate)
	if r.Total.Requests != 2 || math.Abs(r.Total.AudioHours*3600-seconds) > 0.05 || r.Total.Characters != 0 {
		t.Fatalf("usage total %+v, want 2 requests and %.3f s of audio", r.Total, seconds)
	}
	if len(r.Days) != 1 || r.Days[0].Day != today || r.Days[0] != (sessions.UsageDay{Day: today, Requests: 2, AudioHours: r.Total.AudioHours}) {
		t.Errorf("days %+v, want today's two requests", r.Days)
	}
	if r.End != today || r.Start != time.Now().UTC().AddDate(0, 0, -6).Format(api.ManagementDate) {
		t.Errorf("window %s to %s, want the last 7 days to %s", r.Start, r.End, today)
	}
	if _, err := ws.Usage(ctx, "no-such-project", 0); err == nil || !strings.Contains(err.Error(), "no-such-project") {
		t.Errorf("usage of another project: %v", err)
	}
}

// TestUsageRefusedInRegion: on a regional backend the management paths
// are refused before any request leaves.
func TestUsageRefusedInRegion(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "should not be asked", http.StatusTeapot)
	}))
	defer srv.Close()
	s := store.DefaultSettings()
	s.Backend = sessions.BackendCustom
	s.CustomURL = srv.URL
	s.Region = "eu"
	ws := usageWorkspace(t, s, "usage-test-key-0123456789", nil)
	ctx := testContext(t, 30*time.Second)
	if _, err := ws.Connection(ctx); err != nil {
		t.Fatalf("a custom host in a region: %v", err)
	}
	_, err := ws.Usage(ctx, "", 0)
	if !errors.Is(err, sessions.ErrUsageUnavailable) || !strings.Contains(err.Error(), "regional") {
		t.Fatalf("Usage in a region: %v, want the plain regional message", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

// TestUsageScopeRefused: a key without the scope gets a plain message.
func TestUsageScopeRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"err_code":"INSUFFICIENT_PERMISSIONS","err_msg":"User does not have sufficient permissions.","request_id":"5c2b0a4e-0000-4000-8000-000000000001"}`))
	}))
	defer srv.Close()
	s := store.DefaultSettings()
	s.Backend = sessions.BackendCustom
	s.CustomURL = srv.URL
	ws := usageWorkspace(t, s, "usage-test-key-0123456789", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := ws.Usage(ctx, "", 0)
	if !errors.Is(err, sessions.ErrUsageUnavailable) || !strings.Contains(err.Error(), "scope") {
		t.Fatalf("Usage with a key without the scope: %v, want the plain scope message", err)
	}
}
