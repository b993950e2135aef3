package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
)

// The local engine is one project: it keeps, in memory, a record of every
// request and stream it served since it started (the last
// maxServedRecords of them), and answers the management API's read paths
// (/v1/projects/*) from those records. It bills nothing: no record carries
// a price and the project has no balance.

// The local project. Its id is derived from a fixed name, so it is the
// same on every run and every machine.
const localProjectName = "Earshot local engine"

var localProjectID = uuid.NewSHA1(modelNamespace, []byte("earshot-local-project")).String()

// maxServedRecords bounds the record of what the engine served.
const maxServedRecords = 100_000

// localDeployment is what the engine reports as the deployment of its
// requests: the service's name for a deployment outside its cloud.
const localDeployment = "self-hosted"

// Error codes and messages of the management API.
const (
	codeProjectNotFound         = "PROJECT_NOT_FOUND"
	codeInsufficientPermissions = "INSUFFICIENT_PERMISSIONS"
	msgProjectNotFound          = "Project not found."
)

// servedRecord is one request or stream the engine finished.
type servedRecord struct {
	id        string
	created   time.Time // when it arrived
	completed time.Time // when it ended
	path      string
	endpoint  string // listen, speak, read, agent
	method    string // sync, async, streaming
	accessor  string
	code      int
	model     string
	seconds   float64 // audio processed
	channels  int
	chars     int // characters synthesised
}

func (r *servedRecord) succeeded() bool { return r.code > 0 && r.code < 400 }

// servedLog is a bounded ring of records, safe for concurrent use. The
// zero value is ready.
type servedLog struct {
	mu   sync.Mutex
	buf  []servedRecord
	next int // where the next record goes once buf is full
}

func (l *servedLog) add(r servedRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) < maxServedRecords {
		l.buf = append(l.buf, r)
		return
	}
	l.buf[l.next] = r
	l.next = (l.next + 1) % maxServedRecords
}

// snapshot returns the records that match keep, oldest first.
func (l *servedLog) snapshot(keep func(*servedRecord) bool) []servedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []servedRecord
	n := len(l.buf)
	for i := range n {
		r := &l.buf[(l.next+i)%n]
		if keep(r) {
			out = append(out, *r)
		}
	}
	return out
}

// servedNote is what a handler tells the record about what it served.
type servedNote struct {
	mu       sync.Mutex
	model    string
	seconds  float64
	channels int
	chars    int
}

type servedNoteKey struct{}

// noteAudio records the audio a request or stream processed, for the
// project's usage. It does nothing outside a recorded request.
func noteAudio(ctx context.Context, seconds float64, channels int, model string) {
	n, _ := ctx.Value(servedNoteKey{}).(*servedNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seconds += seconds
	n.channels = max(n.channels, channels)
	if model != "" {
		n.model = model
	}
}

// noteChars records the characters a stream accepted for synthesis, for
// the project's usage. It does nothing outside a recorded request.
func noteChars(ctx context.Context, chars int, model string) {
	n, _ := ctx.Value(servedNoteKey{}).(*servedNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.chars += chars
	if model != "" {
		n.model = model
	}
}

// servedEndpoints are the paths whose requests are recorded, with the
// endpoint name the usage figures group them under.
var servedEndpoints = map[string]string{
	api.PathListen:   "listen",
	api.PathListenV2: "listen",
	api.PathSpeak:    "speak",
	api.PathSpeakV2:  "speak",
	api.PathRead:     "read",
	api.PathAgent:    "agent",
}

// projectRoute is the route of a management path on the global main
// host. In a region management is not served (notFound says so).
func (e *Engine) projectRoute(path string) (route, bool) {
	if e.cfg.Region.Regional() || (path != api.PathProjects && !strings.HasPrefix(path, api.PathProjects+"/")) {
		return route{}, false
	}
	return route{methods: map[string]http.HandlerFunc{http.MethodGet: e.handleProjects}}, true
}

// handleProjects serves GET /v1/projects and the read paths of the local
// project.
func (e *Engine) handleProjects(w http.ResponseWriter, r *http.Request) {
	if credentialFrom(r.Context()).scheme != api.SchemeToken {
		writeError(w, r, http.StatusForbidden, codeInsufficientPermissions, "User does not have sufficient permissions.")
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	rest := strings.TrimPrefix(strings.TrimPrefix(path, api.PathProjects), "/")
	if rest == "" {
		writeJSON(w, http.StatusOK, api.ProjectList{Projects: []api.Project{{ProjectID: localProjectID, Name: localProjectName}}})
		return
	}
	seg := strings.Split(rest, "/")
	if seg[0] != localProjectID {
		writeError(w, r, http.StatusNotFound, codeProjectNotFound, msgProjectNotFound)
		return
	}
	q := r.URL.Query()
	switch strings.Join(seg[1:], "/") {
	case "":
		optOut := true // the engine sends nothing anywhere
		writeJSON(w, http.StatusOK, api.Project{ProjectID: localProjectID, Name: localProjectName, MIPOptOut: &optOut})
	case "requests":
		e.handleProjectRequests(w, r, q)
	case "usage":
		e.handleUsage(w, r, q, false)
	case "usage/breakdown":
		e.handleUsage(w, r, q, true)
	case "balances":
		writeJSON(w, http.StatusOK, api.BalanceList{Balances: []api.Balance{}})
	case "models":
		writeJSON(w, http.StatusOK, e.catalogue())
	default:
		if len(seg) == 3 && seg[1] == "requests" {
			e.handleProjectRequest(w, r, seg[2])
			return
		}
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "The local engine does not offer "+path+".")
	}
}

// badQuery answers a query parameter the engine cannot read, as the
// service does.
func badQuery(w http.ResponseWriter, r *http.Request, err error) {
	msg := err.Error()
	var oe *api.OptionError
	if errors.As(err, &oe) {
		msg = oe.Param + ": " + oe.Reason
	}
	writeError(w, r, http.StatusBadRequest, api.CodeInvalidQueryParameter, "Failed to deserialize query parameters: "+msg)
}

// timeWindow is the [from, to) window of start and end. A day start is
// its midnight (UTC); a day end includes the whole day; a time end
// includes its whole second.
type timeWindow struct {
	from, to       time.Time
	hasFrom, hasTo bool
}

func parseWindow(q map[string][]string) (timeWindow, error) {
	var tw timeWindow
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if s := get("start"); s != "" {
		t, _, err := api.ParseManagementTime(s)
		if err != nil {
			return tw, fmt.Errorf("start: %w", err)
		}
		tw.from, tw.hasFrom = t, true
	}
	if s := get("end"); s != "" {
		t, day, err := api.ParseManagementTime(s)
		if err != nil {
			return tw, fmt.Errorf("end: %w", err)
		}
		if day {
			t = t.Add(24 * time.Hour)
		} else {
			t = t.Add(time.Second)
		}
		tw.to, tw.hasTo = t, true
	}
	if tw.hasFrom && tw.hasTo && !tw.to.After(tw.from) {
		return tw, errors.New("end: the end is before the start")
	}
	return tw, nil
}

func (tw timeWindow) contains(t time.Time) bool {
	return (!tw.hasFrom || !t.Before(tw.from)) && (!tw.hasTo || t.Before(tw.to))
}

// filter is a record filter of the requests and usage paths.
type filter struct {
	window                                                    timeWindow
	accessor, requestID, deployment, endpoint, method, status string
	model, tag                                                string
}

func (f *filter) keep(r *servedRecord) bool {
	switch {
	case !f.window.contains(r.created):
	case f.accessor != "" && f.accessor != r.accessor:
	case f.requestID != "" && f.requestID != r.id:
	case f.deployment != "" && f.deployment != localDeployment:
	case f.endpoint != "" && f.endpoint != r.endpoint:
	case f.method != "" && f.method != r.method:
	case f.status == "succeeded" && !r.succeeded(), f.status == "failed" && r.succeeded():
	case f.model != "" && f.model != r.model:
	case f.tag != "": // the engine keeps no tags: nothing carries one
	default:
		return true
	}
	return false
}

func (e *Engine) handleProjectRequests(w http.ResponseWriter, r *http.Request, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	rq := api.RequestsQuery{Start: get("start"), End: get("end"), Accessor: get("accessor"), RequestID: get("request_id"),
		Deployment: get("deployment"), Endpoint: get("endpoint"), Method: get("method"), Status: get("status")}
	limit, page := api.DefaultRequestsLimit, 0
	if s := get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			badQuery(w, r, fmt.Errorf("limit: %q is not a whole number", s))
			return
		}
		if n < api.MinRequestsLimit {
			badQuery(w, r, fmt.Errorf("limit: must be between %d and %d, not %d", api.MinRequestsLimit, api.MaxRequestsLimit, n))
			return
		}
		rq.Limit, limit = n, n
	}
	if s := get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			badQuery(w, r, fmt.Errorf("page: %q is not a whole number", s))
			return
		}
		rq.Page, page = n, n
	}
	if _, err := rq.Values(); err != nil {
		badQuery(w, r, err)
		return
	}
	tw, err := parseWindow(q)
	if err != nil {
		badQuery(w, r, err)
		return
	}
	f := filter{window: tw, accessor: rq.Accessor, requestID: rq.RequestID, deployment: rq.Deployment,
		endpoint: rq.Endpoint, method: rq.Method, status: rq.Status}
	recs := e.served.snapshot(f.keep)
	slices.Reverse(recs) // newest first
	out := api.RequestList{Page: page, Limit: limit, Requests: []api.ProjectRequest{}}
	if from := page * limit; from < len(recs) {
		for _, rec := range recs[from:min(from+limit, len(recs))] {
			out.Requests = append(out.Requests, rec.wire())
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (e *Engine) handleProjectRequest(w http.ResponseWriter, r *http.Request, id string) {
	recs := e.served.snapshot(func(rec *servedRecord) bool { return rec.id == id })
	if len(recs) == 0 {
		writeError(w, r, http.StatusNotFound, api.CodeNotFound, "Request not found.")
		return
	}
	req := recs[0].wire()
	writeJSON(w, http.StatusOK, struct {
		Request *api.ProjectRequest `json:"request"`
	}{&req})
}

// wire is the request-log form of a record. It names no price.
func (r *servedRecord) wire() api.ProjectRequest {
	d := &api.RequestDetails{
		Duration:      round6(r.seconds),
		TotalAudio:    round6(r.seconds * float64(max(r.channels, 1))),
		Channels:      r.channels,
		Method:        r.method,
		TTSCharacters: r.chars,
	}
	if r.method == "streaming" {
		d.Streams = 1
	}
	if r.model != "" {
		d.Models = []string{r.model}
	}
	return api.ProjectRequest{
		RequestID:   r.id,
		ProjectUUID: localProjectID,
		Created:     r.created.UTC().Format(createdLayout),
		Path:        r.path,
		APIKeyID:    r.accessor,
		Code:        r.code,
		Deployment:  localDeployment,
		Response: &api.RequestResponse{
			Details:    d,
			Code:       r.code,
			Completed:  r.completed.UTC().Format(createdLayout),
			Deployment: localDeployment,
		},
	}
}

// usageKey is one group of the usage figures: a UTC day and the grouped
// fields.
type usageKey struct {
	day                                         string
	accessor, endpoint, models, method, deploym string
}

func (e *Engine) handleUsage(w http.ResponseWriter, r *http.Request, q map[string][]string, breakdown bool) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	uq := api.UsageQuery{Start: get("start"), End: get("end"), Accessor: get("accessor"), Deployment: get("deployment"),
		Endpoint: get("endpoint"), Method: get("method"), Model: get("model"), Tag: get("tag")}
	for _, g := range q["grouping"] {
		uq.Grouping = append(uq.Grouping, strings.Split(g, ",")...)
	}
	if _, err := uq.Values(breakdown); err != nil {
		badQuery(w, r, err)
		return
	}
	tw, err := parseWindow(q)
	if err != nil {
		badQuery(w, r, err)
		return
	}
	f := filter{window: tw, accessor: uq.Accessor, deployment: uq.Deployment, endpoint: uq.Endpoint,
		method: uq.Method, model: uq.Model, tag: uq.Tag, status: "succeeded"}
	recs := e.served.snapshot(f.keep)

	// The window as answered: the asked bounds, else the first record
	// (or now) and now.
	now := e.clock.Now().UTC()
	from, to := now, now
	if tw.hasFrom {
		from = tw.from.UTC()
	} else if len(recs) > 0 {
		from = recs[0].created.UTC()
	}
	if tw.hasTo {
		to = tw.to.Add(-time.Nanosecond).UTC()
	}
	start, end := from.Format(api.ManagementDate), to.Format(api.ManagementDate)
	res := api.UsageResolution{Units: "day", Amount: 1}

	group := func(g string) bool { return slices.Contains(uq.Grouping, g) }
	sums := map[usageKey]*api.UsageBreakdownResult{}
	var keys []usageKey
	for i := range recs {
		rec := &recs[i]
		k := usageKey{day: rec.created.UTC().Format(api.ManagementDate)}
		if breakdown {
			if group("accessor") {
				k.accessor = rec.accessor
			}
			if group("endpoint") {
				k.endpoint = rec.endpoint
			}
			if group("models") {
				k.models = rec.model
			}
			if group("method") {
				k.method = rec.method
			}
			if group("deployment") {
				k.deploym = localDeployment
			}
		}
		s := sums[k]
		if s == nil {
			s = &api.UsageBreakdownResult{Grouping: api.UsageGrouping{Start: k.day, End: k.day, Accessor: k.accessor,
				Endpoint: k.endpoint, Models: k.models, Method: k.method, Deployment: k.deploym}}
			sums[k] = s
			keys = append(keys, k)
		}
		s.Requests++
		hours := rec.seconds / 3600
		if rec.endpoint == "agent" {
			s.AgentHours += hours
		} else {
			s.Hours += hours
			s.TotalHours += hours * float64(max(rec.channels, 1))
		}
		s.TTSCharacters += rec.chars
	}
	slices.SortStableFunc(keys, func(a, b usageKey) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.accessor, b.accessor), cmp.Compare(a.endpoint, b.endpoint),
			cmp.Compare(a.models, b.models), cmp.Compare(a.method, b.method))
	})
	if breakdown {
		out := api.UsageBreakdown{Start: start, End: end, Resolution: res, Results: []api.UsageBreakdownResult{}}
		for _, k := range keys {
			s := *sums[k]
			s.Hours, s.TotalHours, s.AgentHours = round6(s.Hours), round6(s.TotalHours), round6(s.AgentHours)
			out.Results = append(out.Results, s)
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	// The summary counts speech requests per day as well, in the older
	// shape the Go SDK reads.
	out := api.Usage{Start: start, End: end, Resolution: res}
	for _, k := range keys {
		s := sums[k]
		out.Results = append(out.Results, api.UsageResult{Start: k.day, End: k.day,
			Hours: round6(s.Hours), TotalHours: round6(s.TotalHours), Requests: s.Requests,
			TTS: api.UsageTTS{Characters: s.TTSCharacters, Requests: speakRequests(recs, k.day)}})
	}
	writeJSON(w, http.StatusOK, out)
}

// speakRequests counts the synthesis requests of a day.
func speakRequests(recs []servedRecord, day string) int {
	n := 0
	for i := range recs {
		if recs[i].endpoint == "speak" && recs[i].created.UTC().Format(api.ManagementDate) == day {
			n++
		}
	}
	return n
}
