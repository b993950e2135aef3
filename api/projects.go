package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The management API (/v1/projects/*) is served only on the global host
// (service-interface.md section 1, rule 4): in a region every call below is
// refused before any request leaves, as Endpoint.CheckPath says. It takes
// an API key (Authorization: Token), never a JWT (wire-reference.md
// section 8): a client configured with an access token only is refused
// before sending too.

// Project is a project as GET /v1/projects and /v1/projects/{id} describe it.
type Project struct {
	ProjectID string `json:"project_id"`
	Name      string `json:"name"`
	// MIPOptOut is sent by GET /v1/projects/{id} only.
	MIPOptOut *bool `json:"mip_opt_out,omitempty"`
}

// ProjectList is the answer of GET /v1/projects.
type ProjectList struct {
	Projects []Project `json:"projects"`
}

// ProjectRequest is one request a project made, as
// GET /v1/projects/{id}/requests lists it.
type ProjectRequest struct {
	RequestID   string           `json:"request_id"`
	ProjectUUID string           `json:"project_uuid,omitempty"`
	Created     string           `json:"created"`
	Path        string           `json:"path"`
	APIKeyID    string           `json:"api_key_id,omitempty"`
	Response    *RequestResponse `json:"response,omitempty"`
	Code        int              `json:"code,omitempty"`
	Deployment  string           `json:"deployment,omitempty"`
	Callback    *RequestCallback `json:"callback,omitempty"`
}

// RequestResponse is what a logged request answered.
type RequestResponse struct {
	Details      *RequestDetails   `json:"details,omitempty"`
	TokenDetails []json.RawMessage `json:"token_details,omitempty"`
	Code         int               `json:"code,omitempty"`
	Completed    string            `json:"completed,omitempty"`
	Deployment   string            `json:"deployment,omitempty"`
}

// RequestDetails are the billing details of a logged request. USD is nil
// when the service names no price (the local engine never does).
type RequestDetails struct {
	USD        *float64       `json:"usd,omitempty"`
	Duration   float64        `json:"duration,omitempty"`
	TotalAudio float64        `json:"total_audio,omitempty"`
	Channels   int            `json:"channels,omitempty"`
	Streams    int            `json:"streams,omitempty"`
	Tier       string         `json:"tier,omitempty"`
	Models     []string       `json:"models,omitempty"`
	Method     string         `json:"method,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Features   []string       `json:"features,omitempty"`
	Config     map[string]any `json:"config,omitempty"`
	// TTSCharacters is the characters synthesised. The hosted service's
	// request log does not document it; the local engine sends it under
	// the name the usage breakdown uses.
	TTSCharacters int `json:"tts_characters,omitempty"`
}

// RequestCallback is the outcome of a request's callback.
type RequestCallback struct {
	Attempts  int    `json:"attempts,omitempty"`
	Code      int    `json:"code,omitempty"`
	Completed string `json:"completed,omitempty"`
}

// RequestList is the answer of GET /v1/projects/{id}/requests.
type RequestList struct {
	Page     int              `json:"page"`
	Limit    int              `json:"limit"`
	Requests []ProjectRequest `json:"requests"`
}

// requestEnvelope is the answer of GET /v1/projects/{id}/requests/{rid}.
type requestEnvelope struct {
	Request *ProjectRequest `json:"request"`
}

// UsageResolution is the time bucket of usage figures.
type UsageResolution struct {
	Units  string `json:"units"`
	Amount int    `json:"amount"`
}

// UsageTokens counts language-model tokens.
type UsageTokens struct {
	In  int `json:"in"`
	Out int `json:"out"`
}

// UsageTTS counts speech synthesis.
type UsageTTS struct {
	Characters int `json:"characters"`
	Requests   int `json:"requests"`
}

// UsageResult is one time bucket of GET /v1/projects/{id}/usage, in the
// older shape the Go SDK reads (wire-reference.md section 8).
type UsageResult struct {
	Start      string      `json:"start"`
	End        string      `json:"end"`
	Hours      float64     `json:"hours"`
	TotalHours float64     `json:"total_hours"`
	Requests   int         `json:"requests"`
	Tokens     UsageTokens `json:"tokens"`
	TTS        UsageTTS    `json:"tts"`
}

// Usage is the answer of GET /v1/projects/{id}/usage. Results is sent by
// servers that satisfy the older shape too (the local engine does).
type Usage struct {
	Start      string          `json:"start"`
	End        string          `json:"end"`
	Resolution UsageResolution `json:"resolution"`
	Results    []UsageResult   `json:"results,omitempty"`
}

// Totals sums the results.
func (u *Usage) Totals() UsageResult {
	t := UsageResult{Start: u.Start, End: u.End}
	for _, r := range u.Results {
		t.Hours += r.Hours
		t.TotalHours += r.TotalHours
		t.Requests += r.Requests
		t.Tokens.In += r.Tokens.In
		t.Tokens.Out += r.Tokens.Out
		t.TTS.Characters += r.TTS.Characters
		t.TTS.Requests += r.TTS.Requests
	}
	return t
}

// UsageGrouping says what a breakdown result covers.
type UsageGrouping struct {
	Start      string   `json:"start,omitempty"`
	End        string   `json:"end,omitempty"`
	Accessor   string   `json:"accessor,omitempty"`
	Endpoint   string   `json:"endpoint,omitempty"`
	FeatureSet string   `json:"feature_set,omitempty"`
	Models     string   `json:"models,omitempty"`
	Method     string   `json:"method,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Deployment string   `json:"deployment,omitempty"`
}

// UsageBreakdownResult is one group of GET /v1/projects/{id}/usage/breakdown.
type UsageBreakdownResult struct {
	Hours         float64       `json:"hours"`
	TotalHours    float64       `json:"total_hours"`
	AgentHours    float64       `json:"agent_hours"`
	TokensIn      int           `json:"tokens_in"`
	TokensOut     int           `json:"tokens_out"`
	TTSCharacters int           `json:"tts_characters"`
	Requests      int           `json:"requests"`
	Grouping      UsageGrouping `json:"grouping"`
}

// UsageBreakdown is the answer of GET /v1/projects/{id}/usage/breakdown.
type UsageBreakdown struct {
	Start      string                 `json:"start"`
	End        string                 `json:"end"`
	Resolution UsageResolution        `json:"resolution"`
	Results    []UsageBreakdownResult `json:"results"`
}

// Balance is a prepaid balance of a project.
type Balance struct {
	BalanceID       string  `json:"balance_id"`
	Amount          float64 `json:"amount"`
	Units           string  `json:"units"`
	PurchaseOrderID string  `json:"purchase_order_id,omitempty"`
}

// BalanceList is the answer of GET /v1/projects/{id}/balances. The local
// engine, which bills nothing, answers an empty list.
type BalanceList struct {
	Balances []Balance `json:"balances"`
}

// Values of the request-log filters and usage groupings (the service's
// documented values).
var (
	RequestDeployments = []string{"hosted", "beta", "self-hosted"}
	RequestEndpoints   = []string{"listen", "read", "speak", "agent"}
	RequestMethods     = []string{"sync", "async", "streaming"}
	RequestStatuses    = []string{"succeeded", "failed"}
	UsageGroupings     = []string{"accessor", "deployment", "endpoint", "feature_set", "models", "method", "tags"}
)

// Bounds of the request-log page size.
const (
	MinRequestsLimit     = 1
	MaxRequestsLimit     = 1000
	DefaultRequestsLimit = 10
)

// Management date formats: a day (taken as UTC), a UTC time, or a time
// with an offset.
const (
	ManagementDate         = "2006-01-02"
	ManagementDateTime     = "2006-01-02T15:04:05"
	ManagementDateTimeZone = "2006-01-02T15:04:05-07:00"
)

// FormatManagementTime writes t in the management API's YYYY-MM-DDTHH:MM:SS+HH:MM
// form, to the second.
func FormatManagementTime(t time.Time) string {
	return t.Format(ManagementDateTimeZone)
}

// ParseManagementTime reads a start or end parameter. dateOnly reports
// the YYYY-MM-DD form, which names a whole UTC day.
func ParseManagementTime(s string) (t time.Time, dateOnly bool, err error) {
	if t, err := time.Parse(ManagementDate, s); err == nil {
		return t, true, nil
	}
	if t, err := time.Parse(ManagementDateTime, s); err == nil {
		return t, false, nil
	}
	if t, err := time.Parse(ManagementDateTimeZone, s); err == nil {
		return t, false, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date of the form YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS or YYYY-MM-DDTHH:MM:SS+HH:MM", s)
}

// RequestsQuery filters GET /v1/projects/{id}/requests. Empty fields are
// not sent.
type RequestsQuery struct {
	// Start and End bound the window: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS or
	// YYYY-MM-DDTHH:MM:SS+HH:MM (see FormatManagementTime).
	Start, End string
	// Limit is the page size, 1 to 1000; 0 leaves the service's default (10).
	Limit int
	// Page is the page to return, from 0.
	Page       int
	Accessor   string
	RequestID  string
	Deployment string // hosted, beta or self-hosted
	Endpoint   string // listen, read, speak or agent
	Method     string // sync, async or streaming
	Status     string // succeeded or failed
}

// Values checks q and returns its query parameters.
func (q RequestsQuery) Values() (url.Values, error) {
	v := url.Values{}
	if err := window(v, q.Start, q.End); err != nil {
		return nil, err
	}
	if q.Limit != 0 {
		if q.Limit < MinRequestsLimit || q.Limit > MaxRequestsLimit {
			return nil, badParam("limit", fmt.Sprintf("must be between %d and %d, not %d", MinRequestsLimit, MaxRequestsLimit, q.Limit))
		}
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Page < 0 {
		return nil, badParam("page", fmt.Sprintf("must not be negative (%d)", q.Page))
	}
	if q.Page > 0 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	for _, f := range []struct {
		name, value string
		allowed     []string
	}{
		{"accessor", q.Accessor, nil},
		{"request_id", q.RequestID, nil},
		{"deployment", q.Deployment, RequestDeployments},
		{"endpoint", q.Endpoint, RequestEndpoints},
		{"method", q.Method, RequestMethods},
		{"status", q.Status, RequestStatuses},
	} {
		if err := oneOf(v, f.name, f.value, f.allowed); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// UsageQuery filters GET /v1/projects/{id}/usage and /usage/breakdown.
type UsageQuery struct {
	// Start and End bound the window, in the forms RequestsQuery takes.
	Start, End string
	Accessor   string
	Deployment string // hosted, beta or self-hosted
	Endpoint   string // listen, read, speak or agent
	Method     string // sync, async or streaming
	Model      string
	Tag        string
	// Grouping (breakdown only) names what results are grouped by: any of
	// UsageGroupings.
	Grouping []string
}

// Values checks q and returns its query parameters. breakdown allows Grouping.
func (q UsageQuery) Values(breakdown bool) (url.Values, error) {
	v := url.Values{}
	if err := window(v, q.Start, q.End); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name, value string
		allowed     []string
	}{
		{"accessor", q.Accessor, nil},
		{"deployment", q.Deployment, RequestDeployments},
		{"endpoint", q.Endpoint, RequestEndpoints},
		{"method", q.Method, RequestMethods},
		{"model", q.Model, nil},
		{"tag", q.Tag, nil},
	} {
		if err := oneOf(v, f.name, f.value, f.allowed); err != nil {
			return nil, err
		}
	}
	if len(q.Grouping) > 0 && !breakdown {
		return nil, badParam("grouping", "grouping applies to the usage breakdown only")
	}
	for _, g := range q.Grouping {
		if !slices.Contains(UsageGroupings, g) {
			return nil, badParam("grouping", fmt.Sprintf("%q is not one of %s", g, strings.Join(UsageGroupings, ", ")))
		}
		v.Add("grouping", g)
	}
	return v, nil
}

func window(v url.Values, start, end string) error {
	var ts, te time.Time
	var endDay bool
	if start != "" {
		t, _, err := ParseManagementTime(start)
		if err != nil {
			return badParam("start", err.Error())
		}
		ts = t
		v.Set("start", start)
	}
	if end != "" {
		t, day, err := ParseManagementTime(end)
		if err != nil {
			return badParam("end", err.Error())
		}
		te, endDay = t, day
		v.Set("end", end)
	}
	if start != "" && end != "" {
		if endDay {
			te = te.Add(24*time.Hour - time.Nanosecond)
		}
		if te.Before(ts) {
			return badParam("end", fmt.Sprintf("%s is before the start %s", end, start))
		}
	}
	return nil
}

func oneOf(v url.Values, name, value string, allowed []string) error {
	if value == "" {
		return nil
	}
	if allowed != nil && !slices.Contains(allowed, value) {
		return badParam(name, fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", ")))
	}
	if !utf8Printable(value) {
		return badParam(name, "must not contain control characters")
	}
	v.Set(name, value)
	return nil
}

func utf8Printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}

// CheckManagementID reports whether id can name a project, request or
// model in a management path: not empty, no more than 200 bytes, and only
// letters, digits and . _ - : (never "." or "..").
func CheckManagementID(param, id string) error {
	if id == "" {
		return badParam(param, "is empty")
	}
	if len(id) > 200 {
		return badParam(param, "is longer than 200 bytes")
	}
	if id == "." || id == ".." {
		return badParam(param, fmt.Sprintf("%q cannot name anything in a path", id))
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return badParam(param, fmt.Sprintf("%q contains %q; only letters, digits and . _ - : are allowed", id, r))
		}
	}
	return nil
}

// managementPath checks the endpoint, the credentials and the ids, and
// joins the path /v1/projects[/{project_id}[/more...]]. seg[0], when
// there, is the project id; a segment after "requests" is a request id.
func (c *Client) managementPath(seg ...string) (string, error) {
	if err := c.endpoint.CheckPath(PathProjects); err != nil {
		return "", err
	}
	if c.key == "" {
		return "", &OptionError{Param: "key", Reason: "project management needs an API key; an access token (JWT) is not accepted there",
			Status: http.StatusForbidden, Code: "INSUFFICIENT_PERMISSIONS"}
	}
	p := PathProjects
	for i, s := range seg {
		switch {
		case i == 0:
			if err := CheckManagementID("project_id", s); err != nil {
				return "", err
			}
		case seg[i-1] == "requests":
			if err := CheckManagementID("request_id", s); err != nil {
				return "", err
			}
		}
		p += "/" + s
	}
	return p, nil
}

// manage GETs the management path of seg into out.
func (c *Client) manage(ctx context.Context, what string, q url.Values, out any, seg ...string) error {
	p, err := c.managementPath(seg...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := c.doJSON(ctx, http.MethodGet, p, q, nil, out, authKey); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Projects lists the projects the key can see (GET /v1/projects).
func (c *Client) Projects(ctx context.Context) (*ProjectList, error) {
	var out ProjectList
	if err := c.manage(ctx, "list projects", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Project describes one project (GET /v1/projects/{id}).
func (c *Client) Project(ctx context.Context, projectID string) (*Project, error) {
	var out Project
	if err := c.manage(ctx, "get project", nil, &out, projectID); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectRequests lists a project's requests (GET /v1/projects/{id}/requests).
func (c *Client) ProjectRequests(ctx context.Context, projectID string, q RequestsQuery) (*RequestList, error) {
	v, err := q.Values()
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	var out RequestList
	if err := c.manage(ctx, "list requests", v, &out, projectID, "requests"); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectRequest returns one request (GET /v1/projects/{id}/requests/{rid}).
func (c *Client) ProjectRequest(ctx context.Context, projectID, requestID string) (*ProjectRequest, error) {
	var out requestEnvelope
	if err := c.manage(ctx, "get request", nil, &out, projectID, "requests", requestID); err != nil {
		return nil, err
	}
	if out.Request == nil {
		return nil, fmt.Errorf("get request: the answer carries no request")
	}
	return out.Request, nil
}

// ProjectUsage summarises a project's usage (GET /v1/projects/{id}/usage).
func (c *Client) ProjectUsage(ctx context.Context, projectID string, q UsageQuery) (*Usage, error) {
	v, err := q.Values(false)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	var out Usage
	if err := c.manage(ctx, "usage", v, &out, projectID, "usage"); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectUsageBreakdown groups a project's usage
// (GET /v1/projects/{id}/usage/breakdown).
func (c *Client) ProjectUsageBreakdown(ctx context.Context, projectID string, q UsageQuery) (*UsageBreakdown, error) {
	v, err := q.Values(true)
	if err != nil {
		return nil, fmt.Errorf("usage breakdown: %w", err)
	}
	var out UsageBreakdown
	if err := c.manage(ctx, "usage breakdown", v, &out, projectID, "usage", "breakdown"); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectBalances lists a project's balances (GET /v1/projects/{id}/balances).
func (c *Client) ProjectBalances(ctx context.Context, projectID string) (*BalanceList, error) {
	var out BalanceList
	if err := c.manage(ctx, "balances", nil, &out, projectID, "balances"); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectModels lists the models a project may use
// (GET /v1/projects/{id}/models), in the shape of GET /v1/models.
func (c *Client) ProjectModels(ctx context.Context, projectID string) (*ModelList, error) {
	var out ModelList
	if err := c.manage(ctx, "project models", nil, &out, projectID, "models"); err != nil {
		return nil, err
	}
	return &out, nil
}
