package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
)

// wavSeconds reads the length of a 16-bit PCM WAV file from its header.
func wavSeconds(t *testing.T, b []byte) float64 {
	t.Helper()
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatal("not a WAV file")
	}
	var rate, channels, bits int
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			channels = int(binary.LittleEndian.Uint16(body[2:4]))
			rate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits = int(binary.LittleEndian.Uint16(body[14:16]))
		case "data":
			size = min(size, len(body))
			return float64(size) / float64(rate*channels*bits/8)
		}
		p += 8 + size + size%2
	}
	t.Fatal("no data chunk")
	return 0
}

// waitRequests waits until the engine's request log holds n requests: a
// request is recorded once its handler returns, which may be a moment
// after the client has read the answer.
func waitRequests(t *testing.T, c *api.Client, n int) *api.RequestList {
	t.Helper()
	ctx := testContext(t, time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := c.ProjectRequests(ctx, localProjectID, api.RequestsQuery{Limit: 100})
		if err != nil {
			t.Fatalf("ProjectRequests: %v", err)
		}
		if len(list.Requests) >= n || time.Now().After(deadline) {
			return list
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func speakAll(t *testing.T, c *api.Client, text string) *api.SpeakResponse {
	t.Helper()
	r, err := c.Speak(testContext(t, time.Minute), text, api.SpeakOptions{})
	if err != nil {
		t.Fatalf("Speak: %v", err)
	}
	defer r.Body.Close()
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		t.Fatalf("reading the speech: %v", err)
	}
	return r
}

// TestProjectUsageEndToEnd makes real requests of an engine of its own
// and checks that the management API reports exactly them: the request
// log, one request, the usage summary and breakdown, and their time
// windows.
func TestProjectUsageEndToEnd(t *testing.T) {
	l := startEngine(t, Config{})
	c := newClient(t, l)
	ctx := testContext(t, 2*time.Minute)

	projects, err := c.Projects(ctx)
	if err != nil {
		t.Fatalf("Projects: %v", err)
	}
	if len(projects.Projects) != 1 || projects.Projects[0].ProjectID != localProjectID || projects.Projects[0].Name != localProjectName {
		t.Fatalf("projects %+v, want the one local project", projects.Projects)
	}
	p, err := c.Project(ctx, localProjectID)
	if err != nil {
		t.Fatalf("Project: %v", err)
	}
	if p.ProjectID != localProjectID || p.Name != localProjectName || p.MIPOptOut == nil || !*p.MIPOptOut {
		t.Errorf("project %+v", p)
	}
	if u, err := c.ProjectUsage(ctx, localProjectID, api.UsageQuery{}); err != nil || u.Totals().Requests != 0 {
		t.Fatalf("usage before any request: %+v, %v", u, err)
	}

	// Phase 1: a synthesis, a transcription and a stream.
	firstDay := time.Now().UTC().Format(api.ManagementDate)
	text1 := "Hello from the project log, café."
	sp1 := speakAll(t, c, text1)
	clip := readFile(t, clipPath("0870"))
	wantSeconds := wavSeconds(t, clip)
	tr, err := c.Transcribe(ctx, bytes.NewReader(clip), "audio/wav", api.ListenOptions{Model: "nova-2"})
	if err != nil {
		t.Fatalf("Transcribe: %v", err)
	}
	if math.Abs(tr.Metadata.Duration-wantSeconds) > 0.05 {
		t.Fatalf("transcribed %.3f s of a %.3f s clip", tr.Metadata.Duration, wantSeconds)
	}
	// A stream of another clip.
	pcm := clipSamples(t, "0880")
	streamSeconds := float64(len(pcm)) / 16000
	ls, err := c.Listen(ctx, linear16(api.ListenOptions{}))
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	var streamMeta *api.Metadata
	for _, m := range sendAndClose(t, ctx, ls, pcm) {
		if md, ok := m.(*api.Metadata); ok {
			streamMeta = md
		}
	}
	ls.Close()
	if streamMeta == nil || math.Abs(streamMeta.Duration-streamSeconds) > 0.05 {
		t.Fatalf("stream metadata %+v, want %.3f s", streamMeta, streamSeconds)
	}
	// Phase 2 starts on a whole second of its own.
	mid := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(mid) + 100*time.Millisecond)
	text2 := "A second sentence."
	sp2 := speakAll(t, c, text2)

	list := waitRequests(t, c, 4)
	if len(list.Requests) != 4 {
		t.Fatalf("%d requests logged, want 4: %+v", len(list.Requests), list.Requests)
	}
	// Newest first.
	wantIDs := []string{sp2.RequestID, streamMeta.RequestID, tr.Metadata.RequestID, sp1.RequestID}
	for i, r := range list.Requests {
		if r.RequestID != wantIDs[i] {
			t.Errorf("request %d is %s, want %s", i, r.RequestID, wantIDs[i])
		}
		wantCode := 200
		if r.RequestID == streamMeta.RequestID {
			wantCode = http.StatusSwitchingProtocols
		}
		if r.ProjectUUID != localProjectID || r.Code != wantCode || r.Deployment != "self-hosted" || r.Response == nil || r.Response.Details == nil {
			t.Fatalf("request %d: %+v", i, r)
		}
		if r.Response.Details.USD != nil {
			t.Errorf("request %d names a price", i)
		}
		if _, err := time.Parse(time.RFC3339, r.Created); err != nil {
			t.Errorf("created %q: %v", r.Created, err)
		}
	}

	one, err := c.ProjectRequest(ctx, localProjectID, tr.Metadata.RequestID)
	if err != nil {
		t.Fatalf("ProjectRequest: %v", err)
	}
	d := one.Response.Details
	if one.Path != api.PathListen || one.Response.Code != 200 || d.Method != "sync" || !reflect.DeepEqual(d.Models, []string{"nova-2"}) ||
		math.Abs(d.Duration-wantSeconds) > 0.05 || d.Channels != 1 {
		t.Errorf("the transcription's record: %+v, details %+v", one, d)
	}
	one, err = c.ProjectRequest(ctx, localProjectID, sp1.RequestID)
	if err != nil {
		t.Fatalf("ProjectRequest: %v", err)
	}
	if one.Path != api.PathSpeak || one.Response.Details.TTSCharacters != utf8.RuneCountInString(text1) ||
		!reflect.DeepEqual(one.Response.Details.Models, []string{sp1.ModelName}) {
		t.Errorf("the synthesis's record: %+v, details %+v", one, one.Response.Details)
	}

	one, err = c.ProjectRequest(ctx, localProjectID, streamMeta.RequestID)
	if err != nil {
		t.Fatalf("ProjectRequest: %v", err)
	}
	if d := one.Response.Details; one.Path != api.PathListen || d.Method != "streaming" || d.Streams != 1 ||
		math.Abs(d.Duration-streamSeconds) > 0.05 || !reflect.DeepEqual(d.Models, []string{"nova-3"}) {
		t.Errorf("the stream's record: %+v, details %+v", one, d)
	}

	chars1, chars2 := utf8.RuneCountInString(text1), utf8.RuneCountInString(text2)
	checkUsage := func(name string, q api.UsageQuery, requests, chars, speaks int, seconds float64) {
		t.Helper()
		u, err := c.ProjectUsage(ctx, localProjectID, q)
		if err != nil {
			t.Fatalf("%s: ProjectUsage: %v", name, err)
		}
		tot := u.Totals()
		if tot.Requests != requests || tot.TTS.Characters != chars || tot.TTS.Requests != speaks ||
			math.Abs(tot.Hours*3600-seconds) > 0.05 || math.Abs(tot.TotalHours*3600-seconds) > 0.05 {
			t.Errorf("%s: usage %+v (%.3f s), want %d requests, %d characters, %d syntheses, %.3f s", name, tot, tot.Hours*3600, requests, chars, speaks, seconds)
		}
		if u.Resolution != (api.UsageResolution{Units: "day", Amount: 1}) || u.Start == "" || u.End == "" {
			t.Errorf("%s: window %q..%q, resolution %+v", name, u.Start, u.End, u.Resolution)
		}
	}
	checkUsage("everything", api.UsageQuery{}, 4, chars1+chars2, 2, wantSeconds+streamSeconds)
	checkUsage("streaming", api.UsageQuery{Method: "streaming"}, 1, 0, 0, streamSeconds)
	checkUsage("phase 2", api.UsageQuery{Start: api.FormatManagementTime(mid)}, 1, chars2, 1, 0)
	checkUsage("phase 1", api.UsageQuery{End: api.FormatManagementTime(mid.Add(-time.Second))}, 3, chars1, 1, wantSeconds+streamSeconds)
	checkUsage("speak only", api.UsageQuery{Endpoint: "speak"}, 2, chars1+chars2, 2, 0)
	checkUsage("by model", api.UsageQuery{Model: "nova-2"}, 1, 0, 0, wantSeconds)
	if today := time.Now().UTC().Format(api.ManagementDate); today == firstDay { // not across midnight
		checkUsage("today", api.UsageQuery{Start: today, End: today}, 4, chars1+chars2, 2, wantSeconds+streamSeconds)
	}
	checkUsage("last year", api.UsageQuery{Start: "2000-01-01", End: "2000-12-31"}, 0, 0, 0, 0)

	w1, err := c.ProjectRequests(ctx, localProjectID, api.RequestsQuery{End: api.FormatManagementTime(mid.Add(-time.Second))})
	if err != nil || len(w1.Requests) != 3 || w1.Requests[0].RequestID != streamMeta.RequestID {
		t.Errorf("requests before %v: %+v, %v", mid, w1, err)
	}
	w2, err := c.ProjectRequests(ctx, localProjectID, api.RequestsQuery{Start: mid.UTC().Format(api.ManagementDateTime)})
	if err != nil || len(w2.Requests) != 1 || w2.Requests[0].RequestID != sp2.RequestID {
		t.Errorf("requests from %v: %+v, %v", mid, w2, err)
	}
	page, err := c.ProjectRequests(ctx, localProjectID, api.RequestsQuery{Endpoint: "speak", Limit: 1, Page: 1})
	if err != nil || page.Limit != 1 || page.Page != 1 || len(page.Requests) != 1 || page.Requests[0].RequestID != sp1.RequestID {
		t.Errorf("second page of one synthesis: %+v, %v", page, err)
	}
	failed, err := c.ProjectRequests(ctx, localProjectID, api.RequestsQuery{Status: "failed"})
	if err != nil || len(failed.Requests) != 0 {
		t.Errorf("failed requests: %+v, %v", failed, err)
	}

	b, err := c.ProjectUsageBreakdown(ctx, localProjectID, api.UsageQuery{Grouping: []string{"endpoint"}})
	if err != nil {
		t.Fatalf("ProjectUsageBreakdown: %v", err)
	}
	got := map[string]api.UsageBreakdownResult{}
	for _, r := range b.Results {
		if r.Grouping.Start == "" {
			t.Errorf("result without its day: %+v", r)
		}
		g := got[r.Grouping.Endpoint]
		g.Requests += r.Requests
		g.Hours += r.Hours
		g.TTSCharacters += r.TTSCharacters
		got[r.Grouping.Endpoint] = g
	}
	if len(got) != 2 || got["speak"].Requests != 2 || got["speak"].TTSCharacters != chars1+chars2 || got["speak"].Hours != 0 ||
		got["listen"].Requests != 2 || math.Abs(got["listen"].Hours*3600-wantSeconds-streamSeconds) > 0.05 || got["listen"].TTSCharacters != 0 {
		t.Errorf("breakdown by endpoint: %+v", b.Results)
	}

	bal, err := c.ProjectBalances(ctx, localProjectID)
	if err != nil || bal.Balances == nil || len(bal.Balances) != 0 {
		t.Errorf("balances %+v, %v: want an empty list", bal, err)
	}
	models, err := c.ProjectModels(ctx, localProjectID)
	if err != nil {
		t.Fatalf("ProjectModels: %v", err)
	}
	all, err := c.Models(ctx, false)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if !reflect.DeepEqual(models, all) {
		t.Errorf("project models differ from /v1/models")
	}

	// The management calls themselves are not usage.
	if list := waitRequests(t, c, 4); len(list.Requests) != 4 {
		t.Errorf("%d requests after the management calls, want 4", len(list.Requests))
	}
}

// TestProjectErrors checks the error answers of the management paths.
func TestProjectErrors(t *testing.T) {
	l := shared
	c := newClient(t, l)
	ctx := testContext(t, time.Minute)

	var ae *api.Error
	_, err := c.Project(ctx, "no-such-project")
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != "PROJECT_NOT_FOUND" || ae.Message != "Project not found." || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("unknown project: %v", err)
	}
	_, err = c.ProjectUsage(ctx, "no-such-project", api.UsageQuery{})
	if !errors.As(err, &ae) || ae.Code != "PROJECT_NOT_FOUND" {
		t.Errorf("usage of an unknown project: %v", err)
	}
	_, err = c.ProjectRequest(ctx, localProjectID, "00000000-0000-0000-0000-000000000000")
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != api.CodeNotFound || !errors.Is(err, api.ErrNotFound) {
		t.Errorf("unknown request: %v", err)
	}

	// What the client checks, the engine checks too.
	for _, q := range []string{"start=yesterday", "end=2024-13-01", "limit=0", "limit=1001", "limit=x", "page=-1",
		"status=maybe", "endpoint=think", "start=2024-02-02&end=2024-02-01"} {
		a := do(t, l, http.MethodGet, "/v1/projects/"+localProjectID+"/requests?"+q, tokenAuth(l), nil, nil)
		a.wantError(t, http.StatusBadRequest, api.CodeInvalidQueryParameter, "")
	}
	do(t, l, http.MethodGet, "/v1/projects/"+localProjectID+"/usage/breakdown?grouping=colour", tokenAuth(l), nil, nil).
		wantError(t, http.StatusBadRequest, api.CodeInvalidQueryParameter, "")
	do(t, l, http.MethodGet, "/v1/projects/"+localProjectID+"/keys", tokenAuth(l), nil, nil).
		wantError(t, http.StatusNotFound, api.CodeNotFound, "")
	do(t, l, http.MethodGet, "/v1/projects", "", nil, nil).wantError(t, http.StatusUnauthorized, api.CodeInvalidAuth, "")
	do(t, l, http.MethodDelete, "/v1/projects/"+localProjectID, tokenAuth(l), nil, nil).
		wantError(t, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "")

	// A JWT is for the voice APIs, not management.
	g, err := c.Grant(ctx, 0)
	if err != nil {
		t.Fatalf("Grant: %v", err)
	}
	do(t, l, http.MethodGet, "/v1/projects", "Bearer "+g.AccessToken.Reveal(), nil, nil).
		wantError(t, http.StatusForbidden, "INSUFFICIENT_PERMISSIONS", "")

	// A regional engine does not serve management.
	regional := startEngine(t, Config{Region: api.RegionEU})
	do(t, regional, http.MethodGet, "/v1/projects/"+localProjectID+"/usage", tokenAuth(regional), nil, nil).
		wantError(t, http.StatusNotFound, api.CodeNotFound, "Project management is not served on regional hosts; use the global host.")
}

// TestProjectRecordsBounded checks that the record keeps the newest
// maxServedRecords records when written from many goroutines.
func TestProjectRecordsBounded(t *testing.T) {
	var l servedLog
	const writers, each = 8, maxServedRecords/8 + 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				l.add(servedRecord{id: fmt.Sprintf("%d-%d", w, i), code: 200})
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			_ = l.snapshot(func(*servedRecord) bool { return true })
		}
	})
	wg.Wait()
	all := l.snapshot(func(*servedRecord) bool { return true })
	if len(all) != maxServedRecords {
		t.Fatalf("%d records kept, want %d", len(all), maxServedRecords)
	}
	l.add(servedRecord{id: "last"})
	all = l.snapshot(func(*servedRecord) bool { return true })
	if len(all) != maxServedRecords || all[len(all)-1].id != "last" {
		t.Fatalf("the newest record is %q, want last", all[len(all)-1].id)
	}
	// Each writer's records stay in order, its oldest dropped first.
	lastSeen := map[byte]string{}
	for _, r := range all[:len(all)-1] {
		lastSeen[r.id[0]] = r.id
	}
	for w := range writers {
		if got, want := lastSeen[byte('0'+w)], fmt.Sprintf("%d-%d", w, each-1); got != want {
			t.Errorf("writer %d: newest kept %q, want %q", w, got, want)
		}
	}
}

// TestProjectUsageOfStreams checks that what the streams served is in the
// usage: the characters of a synthesis over the WebSocket and the audio of
// a turn-aware stream.
func TestProjectUsageOfStreams(t *testing.T) {
	l := startEngine(t, Config{})
	c := newClient(t, l)
	ctx := testContext(t, 2*time.Minute)

	st, err := c.SpeakStream(ctx, api.SpeakOptions{Model: "aura-2-thalia-en"})
	if err != nil {
		t.Fatalf("SpeakStream: %v", err)
	}
	texts := []string{"Counting what the stream spoke, ", "word by word."}
	chars := 0
	for _, s := range texts {
		if err := st.Speak(ctx, s); err != nil {
			t.Fatalf("Speak: %v", err)
		}
		chars += utf8.RuneCountInString(s)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	for {
		m, err := st.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if m.MessageType() == api.TypeFlushed {
			break
		}
	}
	if err := st.CloseStream(ctx); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	for {
		if _, err := st.Next(ctx); err != nil {
			break
		}
	}
	st.Close()

	pcm := clipSamples(t, "0880")
	turnSeconds := float64(len(pcm)) / 16000
	tc := openTurns(t, ctx, l, "model=flux-general-en&encoding=linear16&sample_rate=16000")
	tc.sendAudio(t, ctx, pcm)
	tc.sendText(t, ctx, `{"type":"CloseStream"}`)
	if _, err := tc.drain(t, ctx); websocket.CloseStatus(err) != websocket.StatusNoStatusRcvd {
		t.Fatalf("turn stream ended with %v", err)
	}

	list := waitRequests(t, c, 2)
	if len(list.Requests) != 2 {
		t.Fatalf("%d requests recorded, want the 2 streams", len(list.Requests))
	}
	b, err := c.ProjectUsageBreakdown(ctx, localProjectID, api.UsageQuery{Grouping: []string{"endpoint"}})
	if err != nil {
		t.Fatalf("ProjectUsageBreakdown: %v", err)
	}
	got := map[string]api.UsageBreakdownResult{}
	for _, r := range b.Results {
		g := got[r.Grouping.Endpoint]
		g.Requests += r.Requests
		g.Hours += r.Hours
		g.TTSCharacters += r.TTSCharacters
		got[r.Grouping.Endpoint] = g
	}
	if got["speak"].Requests != 1 || got["speak"].TTSCharacters != chars {
		t.Errorf("speak usage %+v, want 1 request of %d characters", got["speak"], chars)
	}
	if got["listen"].Requests != 1 || math.Abs(got["listen"].Hours*3600-turnSeconds) > 0.05 {
		t.Errorf("listen usage %+v, want 1 request of %.3f s", got["listen"], turnSeconds)
	}
}
