package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestExportJSONOfLiveSession: the JSON export of a live captions session
// gives the session's length (its audio, past its last words), and the
// models the service named as it transcribed, not an empty list.
func TestExportJSONOfLiveSession(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	db := openDB(t)
	ws, _ := localWorkspace(t, db, nil)
	pcm := append(loadPCM(t, librivoxPath("0870")), make([]int16, 3*16000)...) // speech, then 3 s of silence
	c := replayCaptions(t, ctx, ws, pcm)
	var lastEnd float64
	for ev := range c.Events() {
		if f, ok := ev.(*sessions.FinalEvent); ok {
			lastEnd = f.Caption.End
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	sess, err := db.Session(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ws.Export(ctx, c.SessionID(), sessions.ExportJSON, &b); err != nil {
		t.Fatal(err)
	}
	var resp api.ListenResponse
	if err := json.Unmarshal(b.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	md := resp.Metadata
	t.Logf("session %.3f s, last words end %.3f s, export says %.3f s, models %v", sess.Duration, lastEnd, md.Duration, md.Models)
	if want := float64(len(pcm)) / 16000; math.Abs(md.Duration-sess.Duration) > 0.001 || math.Abs(md.Duration-want) > 0.1 {
		t.Errorf("the export says %.3f s; the session is %.3f s long (%.3f s sent)", md.Duration, sess.Duration, want)
	}
	if len(md.Models) != 1 || md.ModelInfo[md.Models[0]].Name == "" {
		t.Errorf("models %v, info %+v; want the one the engine named", md.Models, md.ModelInfo)
	}
}

// replayCaptions starts live captions of pcm, replayed as fast as the
// session reads it, as a reading; the session is stopped when the test
// ends.
func replayCaptions(t *testing.T, ctx context.Context, ws *sessions.Workspace, pcm []int16) *sessions.Captions {
	t.Helper()
	src, err := audio.NewReplay(mono16k, pcm, audio.ReplayConfig{FrameDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "reading"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

// TestExportFailedSession: every export of a session that failed says
// so, and why, beside what was kept before it did.
func TestExportFailedSession(t *testing.T) {
	tr := sessions.Transcript{
		Title: "Standup", Status: store.StatusFailed, Error: "Cannot reach the service at http://127.0.0.1:9. Nothing is listening there.",
		Captions: []sessions.Caption{{Seq: 0, Start: 0.5, End: 1.5, Text: "good morning"}},
	}
	for _, f := range []sessions.ExportFormat{sessions.ExportText, sessions.ExportVTT, sessions.ExportJSON} {
		var b bytes.Buffer
		if err := sessions.Export(&b, f, tr); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, tr.Error) || !strings.Contains(out, "good morning") {
			t.Errorf("%s export does not say why the session failed, with its words:\n%s", f, out)
		}
		if f == sessions.ExportVTT && !strings.HasPrefix(out, "WEBVTT\n\nNOTE This session failed") {
			t.Errorf("the WebVTT export does not begin with a NOTE of the failure:\n%s", out)
		}
		if f == sessions.ExportJSON {
			var j struct {
				Status, Error string
				Results       api.ListenResults
			}
			if err := json.Unmarshal(b.Bytes(), &j); err != nil || j.Status != store.StatusFailed || j.Error != tr.Error || len(j.Results.Utterances) != 1 {
				t.Errorf("the JSON export: %+v, %v", j, err)
			}
		}
	}
	// A session that ended well has no such note.
	tr.Status, tr.Error = store.StatusDone, ""
	var b bytes.Buffer
	if err := sessions.Export(&b, sessions.ExportText, tr); err != nil || b.String() != "good morning\n" {
		t.Errorf("the text of a session that ended well: %q, %v", b.String(), err)
	}
}
