package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// bodyTransport answers every request with status and body, without a
// network, so a fuzz target runs the client's real decoding.
type bodyTransport struct {
	status int
	body   []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: b.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b.body))), Request: r}, nil
}

// projectResponseSeeds are the documented answers of the management
// paths, and near-misses.
var projectResponseSeeds = []string{
	`{"projects":[{"project_id":"p1","name":"One"}]}`,
	`{"project_id":"p1","mip_opt_out":true,"name":"One"}`,
	`{"page":0,"limit":10,"requests":[{"request_id":"r","project_uuid":"p","created":"2025-05-09T20:14:06.059Z","path":"/v1/listen","api_key_id":"k","response":{"details":{"usd":0.0075,"duration":30,"total_audio":30,"channels":1,"streams":1,"tier":"base","models":["m"],"method":"sync","tags":[],"features":[],"config":{"a":[1,{"b":null}]}},"token_details":[{"x":1}],"code":200,"completed":"c","deployment":"hosted:us"},"code":200,"deployment":"hosted","callback":{"attempts":1,"code":200,"completed":"c"}}]}`,
	`{"request":{"request_id":"r","response":null}}`,
	`{"request":null}`,
	`{"start":"2024-10-16","end":"2024-10-23","resolution":{"units":"day","amount":1}}`,
	`{"start":"a","end":"b","resolution":{"units":"day","amount":1},"results":[{"start":"s","end":"e","hours":1e308,"total_hours":1e308,"requests":9223372036854775807,"tokens":{"in":1,"out":2},"tts":{"characters":3,"requests":4}},{"hours":1e308,"requests":1}]}`,
	`{"results":[{"hours":1,"total_hours":2,"agent_hours":3,"tokens_in":4,"tokens_out":5,"tts_characters":6,"requests":7,"grouping":{"start":"s","end":"e","accessor":"a","endpoint":"listen","feature_set":"f","models":"m","method":"sync","tags":["t"],"deployment":"hosted"}}]}`,
	`{"balances":[{"balance_id":"b","amount":1.5,"units":"usd","purchase_order_id":"po"}]}`,
	`{"balances":[]}`,
	`{"stt":[{"name":"nova-3"}],"tts":[{"name":"zeus","metadata":{"tags":["x"]}}]}`,
	`{"err_code":"PROJECT_NOT_FOUND","err_msg":"Project not found."}`,
	`{"requests":"none","page":"1"}`,
	`{"results":[{"hours":"1"}]}`,
	`{"request":{"response":{"details":{"usd":"free"}}}}`,
	`[]`, `null`, `""`, ``, `{`, "\xff",
}

// FuzzProjectResponses feeds arbitrary answers to every management call:
// none may panic, and an answer that decodes must encode again.
func FuzzProjectResponses(f *testing.F) {
	for _, s := range projectResponseSeeds {
		f.Add([]byte(s), 200)
	}
	f.Add([]byte(`{"err_code":"X","err_msg":"y"}`), 404)
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		if status < 200 || status > 599 {
			status = 200
		}
		base, _ := url.Parse("http://127.0.0.1:1")
		c, err := api.NewClient(api.Config{Endpoint: api.Endpoint{Base: base}, APIKey: "k",
			HTTPClient: &http.Client{Transport: bodyTransport{status: status, body: body}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var outs []any
		keep := func(v any, err error) {
			if err == nil {
				outs = append(outs, v)
				return
			}
			var oe *api.OptionError
			if errors.As(err, &oe) {
				t.Fatalf("a valid call was refused: %v", err)
			}
		}
		keep(c.Projects(ctx))
		keep(c.Project(ctx, "p1"))
		keep(c.ProjectRequests(ctx, "p1", api.RequestsQuery{Limit: 5}))
		keep(c.ProjectRequest(ctx, "p1", "r1"))
		u, err := c.ProjectUsage(ctx, "p1", api.UsageQuery{})
		if err == nil {
			_ = u.Totals()
		}
		keep(u, err)
		keep(c.ProjectUsageBreakdown(ctx, "p1", api.UsageQuery{Grouping: []string{"models"}}))
		keep(c.ProjectBalances(ctx, "p1"))
		keep(c.ProjectModels(ctx, "p1"))
		for _, v := range outs {
			if _, err := json.Marshal(v); err != nil {
				t.Errorf("%T decoded from %q does not encode: %v", v, body, err)
			}
		}
	})
}

// FuzzProjectIDs checks that an id the client accepts stays one path
// segment, and that the date parser never panics.
func FuzzProjectIDs(f *testing.F) {
	for _, s := range []string{"p1", "", "..", "a/b", "%2F", "6f1c7c2e-5b1e-4a8e-9d33-2f3b8e7c9a10", "2024-10-16", "2024-10-16T12:30:05+02:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = api.ParseManagementTime(s)
		if api.CheckManagementID("id", s) != nil {
			return
		}
		if u, err := url.Parse("http://h/v1/projects/" + s); err != nil || u.Path != "/v1/projects/"+s || u.EscapedPath() != u.Path {
			t.Errorf("accepted id %q does not stay one plain path segment", s)
		}
		if s == "." || s == ".." || strings.ContainsAny(s, "/?#%") {
			t.Errorf("accepted id %q", s)
		}
	})
}
