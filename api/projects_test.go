package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// projectCalls makes every management call of the client on project id.
func projectCalls(c *api.Client, id string) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		"Projects": func(ctx context.Context) error { _, err := c.Projects(ctx); return err },
		"Project":  func(ctx context.Context) error { _, err := c.Project(ctx, id); return err },
		"ProjectRequests": func(ctx context.Context) error {
			_, err := c.ProjectRequests(ctx, id, api.RequestsQuery{})
			return err
		},
		"ProjectRequest": func(ctx context.Context) error { _, err := c.ProjectRequest(ctx, id, "r1"); return err },
		"ProjectUsage": func(ctx context.Context) error {
			_, err := c.ProjectUsage(ctx, id, api.UsageQuery{})
			return err
		},
		"ProjectUsageBreakdown": func(ctx context.Context) error {
			_, err := c.ProjectUsageBreakdown(ctx, id, api.UsageQuery{Grouping: []string{"endpoint"}})
			return err
		},
		"ProjectBalances": func(ctx context.Context) error { _, err := c.ProjectBalances(ctx, id); return err },
		"ProjectModels":   func(ctx context.Context) error { _, err := c.ProjectModels(ctx, id); return err },
	}
}

// countingServer counts the requests that reach it and answers 500.
func countingServer(t *testing.T) (*url.URL, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u, &hits
}

func newProjectClient(t *testing.T, cfg api.Config) *api.Client {
	t.Helper()
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProjectCallsRefusedInRegion checks that in a region every
// management call is refused before any request leaves (service
// interface section 1, rule 4), with the service's own answer.
func TestProjectCallsRefusedInRegion(t *testing.T) {
	base, hits := countingServer(t)
	for _, region := range []api.Region{api.RegionEU, api.RegionAU, api.RegionIN} {
		c := newProjectClient(t, api.Config{Endpoint: api.Endpoint{Region: region, Base: base}, APIKey: "k"})
		for name, call := range projectCalls(c, "p1") {
			err := call(context.Background())
			var oe *api.OptionError
			if !errors.As(err, &oe) || oe.Param != "region" || oe.Status != http.StatusNotFound || !errors.Is(err, api.ErrInvalidOptions) {
				t.Errorf("%s in %s: %v, want a region refusal", name, region, err)
			} else if !strings.Contains(err.Error(), "only on the global host") {
				t.Errorf("%s in %s: message %q", name, region, err)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	// Globally the same calls go out (and meet the server's 500).
	c := newProjectClient(t, api.Config{Endpoint: api.Endpoint{Base: base}, APIKey: "k"})
	for name, call := range projectCalls(c, "p1") {
		var ae *api.Error
		if err := call(context.Background()); !errors.As(err, &ae) || ae.Status != 500 {
			t.Errorf("%s globally: %v, want the server's 500", name, err)
		}
	}
	if n := hits.Load(); n != 8 {
		t.Errorf("%d requests reached the server globally, want 8", n)
	}
}

// TestProjectChecksBeforeSending checks the rules a client can check
// itself: ids, the API key, dates, page sizes and filter values.
func TestProjectChecksBeforeSending(t *testing.T) {
	base, hits := countingServer(t)
	c := newProjectClient(t, api.Config{Endpoint: api.Endpoint{Base: base}, APIKey: "k"})
	ctx := context.Background()

	for _, id := range []string{"", "a/b", "..", ".", "a b", "a?b", "a#b", "%2e%2e", "a\x00", "é", strings.Repeat("a", 201)} {
		for name, call := range projectCalls(c, id) {
			if name == "Projects" {
				continue
			}
			var oe *api.OptionError
			if err := call(ctx); !errors.As(err, &oe) || oe.Param != "project_id" {
				t.Errorf("%s(%q): %v, want a project_id refusal", name, id, err)
			}
		}
	}
	for _, rid := range []string{"", "../keys", "a/b", "x y"} {
		var oe *api.OptionError
		if _, err := c.ProjectRequest(ctx, "p1", rid); !errors.As(err, &oe) || oe.Param != "request_id" {
			t.Errorf("ProjectRequest(%q): %v, want a request_id refusal", rid, err)
		}
	}

	tokenOnly := newProjectClient(t, api.Config{Endpoint: api.Endpoint{Base: base}, AccessToken: "jwt"})
	for name, call := range projectCalls(tokenOnly, "p1") {
		var oe *api.OptionError
		if err := call(ctx); !errors.As(err, &oe) || oe.Param != "key" || !strings.Contains(oe.Reason, "API key") {
			t.Errorf("%s with an access token only: %v", name, err)
		}
	}

	for _, tc := range []struct {
		q     api.RequestsQuery
		param string
	}{
		{api.RequestsQuery{Start: "yesterday"}, "start"},
		{api.RequestsQuery{Start: "2024-1-02"}, "start"},
		{api.RequestsQuery{End: "2024-02-30"}, "end"},
		{api.RequestsQuery{End: "2024-02-01T10:00:00Z"}, "end"},
		{api.RequestsQuery{Start: "2024-02-02", End: "2024-02-01"}, "end"},
		{api.RequestsQuery{Limit: -1}, "limit"},
		{api.RequestsQuery{Limit: 1001}, "limit"},
		{api.RequestsQuery{Page: -1}, "page"},
		{api.RequestsQuery{Status: "ok"}, "status"},
		{api.RequestsQuery{Endpoint: "think"}, "endpoint"},
		{api.RequestsQuery{Method: "POST"}, "method"},
		{api.RequestsQuery{Deployment: "cloud"}, "deployment"},
		{api.RequestsQuery{Accessor: "a\nb"}, "accessor"},
	} {
		var oe *api.OptionError
		if _, err := c.ProjectRequests(ctx, "p1", tc.q); !errors.As(err, &oe) || oe.Param != tc.param {
			t.Errorf("%+v: %v, want a %s refusal", tc.q, err, tc.param)
		}
	}
	for _, tc := range []struct {
		q         api.UsageQuery
		breakdown bool
		param     string
	}{
		{api.UsageQuery{Start: "2024/01/01"}, false, "start"},
		{api.UsageQuery{Grouping: []string{"endpoint"}}, false, "grouping"},
		{api.UsageQuery{Grouping: []string{"colour"}}, true, "grouping"},
		{api.UsageQuery{Endpoint: "listen", Method: "sometimes"}, true, "method"},
	} {
		var err error
		if tc.breakdown {
			_, err = c.ProjectUsageBreakdown(ctx, "p1", tc.q)
		} else {
			_, err = c.ProjectUsage(ctx, "p1", tc.q)
		}
		var oe *api.OptionError
		if !errors.As(err, &oe) || oe.Param != tc.param {
			t.Errorf("%+v: %v, want a %s refusal", tc.q, err, tc.param)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
}

// TestProjectWire checks the requests the client sends and that it reads
// the documented answers (with fields it does not know).
func TestProjectWire(t *testing.T) {
	answers := map[string]string{
		"/v1/projects":                       `{"projects":[{"project_id":"p1","name":"One","extra":1}]}`,
		"/v1/projects/p1":                    `{"project_id":"p1","mip_opt_out":false,"name":"One"}`,
		"/v1/projects/p1/requests":           `{"page":2,"limit":5,"requests":[{"request_id":"r1","project_uuid":"p1","created":"2025-05-09T20:14:06.059Z","path":"/v1/listen","api_key_id":"k1","response":{"details":{"usd":0.0075,"duration":30,"total_audio":30,"channels":1,"streams":1,"tier":"base","models":["m"],"method":"sync","tags":[],"features":[],"config":{}},"token_details":[],"code":200,"completed":"2025-05-09T20:14:07.059Z","deployment":"hosted:us"},"code":200,"deployment":"hosted","callback":null,"novel":true}]}`,
		"/v1/projects/p1/requests/r1":        `{"request":{"request_id":"r1","path":"/v1/speak","code":200}}`,
		"/v1/projects/p1/usage":              `{"start":"2024-10-16","end":"2024-10-23","resolution":{"units":"day","amount":1},"results":[{"start":"2024-10-16","end":"2024-10-16","hours":1.5,"total_hours":3,"requests":4,"tokens":{"in":1,"out":2},"tts":{"characters":10,"requests":1}},{"start":"2024-10-17","end":"2024-10-17","hours":0.5,"total_hours":0.5,"requests":1,"tokens":{"in":0,"out":0},"tts":{"characters":5,"requests":1}}]}`,
		"/v1/projects/p1/usage/breakdown":    `{"start":"2024-10-16","end":"2024-10-23","resolution":{"units":"day","amount":1},"results":[{"hours":1,"total_hours":1,"agent_hours":0,"tokens_in":0,"tokens_out":0,"tts_characters":7,"requests":2,"grouping":{"start":"2024-10-16","end":"2024-10-16","endpoint":"speak","models":"aura-2-thalia-en"}}]}`,
		"/v1/projects/p1/balances":           `{"balances":[{"balance_id":"b1","amount":12.5,"units":"usd","purchase_order_id":"po"}]}`,
		"/v1/projects/p1/models":             `{"stt":[{"name":"nova-3","canonical_name":"nova-3","batch":true}],"tts":[]}`,
		"/v1/projects/missing":               `{"err_code":"PROJECT_NOT_FOUND","err_msg":"Project not found."}`,
		"/v1/projects/p1/requests/not-there": `{"err_code":"NOT_FOUND","err_msg":"Request not found.","request_id":"x"}`,
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Token k" {
			t.Errorf("Authorization %q", got)
		}
		body, ok := answers[r.URL.Path]
		switch {
		case !ok:
			w.WriteHeader(http.StatusTeapot)
		case strings.Contains(body, "err_code"):
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	// Even with an access token configured, management uses the key.
	c := newProjectClient(t, api.Config{Endpoint: api.Endpoint{Base: base}, APIKey: "k", AccessToken: "jwt"})
	ctx := context.Background()

	pl, err := c.Projects(ctx)
	if err != nil || !reflect.DeepEqual(pl.Projects, []api.Project{{ProjectID: "p1", Name: "One"}}) {
		t.Errorf("Projects: %+v, %v", pl, err)
	}
	p, err := c.Project(ctx, "p1")
	if err != nil || p.MIPOptOut == nil || *p.MIPOptOut || p.Name != "One" {
		t.Errorf("Project: %+v, %v", p, err)
	}
	start := time.Date(2025, 5, 9, 20, 0, 0, 0, time.FixedZone("", 2*3600))
	rl, err := c.ProjectRequests(ctx, "p1", api.RequestsQuery{Start: api.FormatManagementTime(start), End: "2025-05-10", Limit: 5, Page: 2,
		Status: "succeeded", Endpoint: "listen", Method: "sync", Deployment: "hosted", Accessor: "k1", RequestID: "r1"})
	if err != nil || rl.Page != 2 || rl.Limit != 5 || len(rl.Requests) != 1 {
		t.Fatalf("ProjectRequests: %+v, %v", rl, err)
	}
	r := rl.Requests[0]
	if r.Response == nil || r.Response.Details == nil || *r.Response.Details.USD != 0.0075 || r.Response.Details.Duration != 30 ||
		r.Response.Code != 200 || r.Callback != nil || r.Response.Details.Models[0] != "m" {
		t.Errorf("request %+v", r)
	}
	one, err := c.ProjectRequest(ctx, "p1", "r1")
	if err != nil || one.Path != "/v1/speak" {
		t.Errorf("ProjectRequest: %+v, %v", one, err)
	}
	u, err := c.ProjectUsage(ctx, "p1", api.UsageQuery{Start: "2024-10-16", End: "2024-10-23", Endpoint: "listen", Model: "nova-3"})
	if err != nil {
		t.Fatalf("ProjectUsage: %v", err)
	}
	if tot := u.Totals(); tot.Requests != 5 || tot.Hours != 2 || tot.TotalHours != 3.5 || tot.TTS.Characters != 15 || tot.TTS.Requests != 2 || tot.Tokens.Out != 2 {
		t.Errorf("usage totals %+v", tot)
	}
	b, err := c.ProjectUsageBreakdown(ctx, "p1", api.UsageQuery{Grouping: []string{"endpoint", "models"}})
	if err != nil || len(b.Results) != 1 || b.Results[0].Grouping.Endpoint != "speak" || b.Results[0].TTSCharacters != 7 {
		t.Errorf("ProjectUsageBreakdown: %+v, %v", b, err)
	}
	bal, err := c.ProjectBalances(ctx, "p1")
	if err != nil || len(bal.Balances) != 1 || bal.Balances[0].Amount != 12.5 || bal.Balances[0].Units != "usd" {
		t.Errorf("ProjectBalances: %+v, %v", bal, err)
	}
	m, err := c.ProjectModels(ctx, "p1")
	if err != nil || len(m.STT) != 1 || m.STT[0].Name != "nova-3" {
		t.Errorf("ProjectModels: %+v, %v", m, err)
	}

	var ae *api.Error
	if _, err := c.Project(ctx, "missing"); !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "PROJECT_NOT_FOUND" || ae.Message != "Project not found." || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("unknown project: %v", err)
	}
	if _, err := c.ProjectRequest(ctx, "p1", "not-there"); !errors.As(err, &ae) || ae.Code != "NOT_FOUND" || ae.RequestID != "x" || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("unknown request: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"GET /v1/projects",
		"GET /v1/projects/p1",
		"GET /v1/projects/p1/requests?accessor=k1&deployment=hosted&end=2025-05-10&endpoint=listen&limit=5&method=sync&page=2&request_id=r1&start=2025-05-09T20%3A00%3A00%2B02%3A00&status=succeeded",
		"GET /v1/projects/p1/requests/r1",
		"GET /v1/projects/p1/usage?end=2024-10-23&endpoint=listen&model=nova-3&start=2024-10-16",
		"GET /v1/projects/p1/usage/breakdown?grouping=endpoint&grouping=models",
		"GET /v1/projects/p1/balances",
		"GET /v1/projects/p1/models",
		"GET /v1/projects/missing",
		"GET /v1/projects/p1/requests/not-there",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("requests sent:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestProjectManagementTime checks the date forms.
func TestProjectManagementTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		day  bool
		want time.Time
	}{
		{"2024-10-16", true, time.Date(2024, 10, 16, 0, 0, 0, 0, time.UTC)},
		{"2024-10-16T12:30:05", false, time.Date(2024, 10, 16, 12, 30, 5, 0, time.UTC)},
		{"2024-10-16T12:30:05+02:00", false, time.Date(2024, 10, 16, 10, 30, 5, 0, time.UTC)},
	} {
		got, day, err := api.ParseManagementTime(tc.in)
		if err != nil || day != tc.day || !got.Equal(tc.want) {
			t.Errorf("%q: %v %v %v", tc.in, got, day, err)
		}
	}
	for _, bad := range []string{"", "2024-10-16T12:30", "2024-10-16 12:30:05", "2024-10-16T12:30:05Z", "16/10/2024"} {
		if _, _, err := api.ParseManagementTime(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	tm := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
	if s := api.FormatManagementTime(tm); s != "2024-01-02T03:04:05+00:00" {
		t.Errorf("FormatManagementTime: %q", s)
	}
}
