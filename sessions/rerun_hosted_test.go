package sessions_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/hostedtest"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestRerunHostedAndRegion (must show): an entry's kept audio is run
// again on the hosted service and in its regions, against a stand-in on
// 127.0.0.1 that relays to the local engine. Each re-run goes to the host
// of its region over TLS, carries the key as "Authorization: Token KEY"
// and the model asked for, and its result names the service and region
// used, with the transcript the engine made and the time it took. The
// same audio and model on the local engine hear the same words, and a
// whisper model is refused in a region before anything is sent.
func TestRerunHostedAndRegion(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	eng := keyedEngine(t)
	standIn := hostedtest.Start(t, eng.URL, eng.Key)

	db := openDB(t)
	var localCalls atomic.Int32
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, envWith(eng.Key)),
		Local: localOf(eng, &localCalls), HTTPClient: standIn.Client()})
	if err != nil {
		t.Fatal(err)
	}
	// Automatic: with the key set, the hosted service, global.
	s := store.DefaultSettings()
	s.Model = "nova-3"
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}

	// An entry whose audio is kept, and nothing else of it: no file.
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "kept audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	pcm := loadPCM(t, librivoxPath("0880"))
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, pcm, 16000, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveAudio(ctx, id, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav.Bytes()}); err != nil {
		t.Fatal(err)
	}

	byModel := map[string]string{} // what each model heard on the hosted service
	for _, tc := range []struct {
		name    string
		opts    sessions.RerunOptions
		host    string
		model   string // the model the query must carry
		backend string // the result's Backend
		answer  string // the model that answered, per model_info
	}{
		{"hosted", sessions.RerunOptions{Backend: sessions.BackendHosted, Model: "base"},
			"api.deepgram.com", "base", "Hosted service", "pocketsphinx-en-us-fast"},
		{"hosted in the EU", sessions.RerunOptions{Backend: sessions.BackendHosted, Region: "eu", Model: "nova-3"},
			"api.eu.deepgram.com", "nova-3", "Hosted service (European Union)", "pocketsphinx-en-us"},
		{"the settings' service in Australia, the settings' model", sessions.RerunOptions{Region: "AU"},
			"api.au.deepgram.com", "nova-3", "Hosted service (Australia)", "pocketsphinx-en-us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ws.Rerun(ctx, id, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen, dials := standIn.Requests()
			if len(seen) != 1 {
				t.Fatalf("the stand-in saw %+v, want one request", seen)
			}
			want := hostedtest.Request{Host: tc.host, SNI: tc.host, Authorization: "Token KEY", Method: http.MethodPost, Path: "/v1/listen", Model: tc.model}
			if seen[0] != want {
				t.Errorf("request %+v, want %+v", seen[0], want)
			}
			if len(dials) > 1 || len(dials) == 1 && dials[0] != tc.host+":443" {
				t.Errorf("dialed %q, want only %s:443", dials, tc.host)
			}
			n := res.New
			if n.Backend != tc.backend || n.Model != tc.model || n.ModelName != tc.answer || n.Kind != store.KindFile || n.Live {
				t.Errorf("re-run side %+v, want backend %q, model %q answered by %q", n, tc.backend, tc.model, tc.answer)
			}
			if len(strings.Fields(n.Transcript)) < 3 || n.Took <= 0 {
				t.Errorf("re-run heard %q in %v: want a transcript and a time", n.Transcript, n.Took)
			}
			if got := float64(len(pcm)) / 16000; n.Audio < got-0.1 || n.Audio > got+0.1 {
				t.Errorf("audio %.2f s, want %.2f s", n.Audio, got)
			}
			if prev, ok := byModel[tc.model]; ok && prev != n.Transcript {
				t.Errorf("%s heard %q here and %q in another region", tc.model, n.Transcript, prev)
			}
			byModel[tc.model] = n.Transcript
			saved, err := db.Session(ctx, n.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if saved.Backend != tc.backend || saved.Model != tc.model || saved.Status != store.StatusDone ||
				saved.Details != `{"rerun_of":`+strconv.FormatInt(id, 10)+`}` {
				t.Errorf("re-run saved as %+v", saved)
			}
		})
	}
	if n := localCalls.Load(); n != 0 {
		t.Errorf("the hosted re-runs started the local engine %d times", n)
	}

	// The local engine itself, on the same audio and model, hears what
	// the hosted re-runs relayed: the stand-in sees nothing of it.
	local, err := ws.Rerun(ctx, id, sessions.RerunOptions{Backend: sessions.BackendLocal, Model: "nova-3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if local.New.Backend != "Local engine" || local.New.Transcript != byModel["nova-3"] {
		t.Errorf("local engine: %q heard %q, want what the hosted nova-3 heard, %q", local.New.Backend, local.New.Transcript, byModel["nova-3"])
	}
	if seen, dials := standIn.Requests(); len(seen) != 0 || len(dials) != 0 {
		t.Errorf("the local re-run reached the stand-in: %+v, %q", seen, dials)
	}

	// Whisper is not served in any region: refused before it is sent.
	_, err = ws.Rerun(ctx, id, sessions.RerunOptions{Backend: sessions.BackendHosted, Region: "eu", Model: "whisper-large"}, nil)
	if err == nil || !strings.Contains(err.Error(), "whisper models are not served in the") {
		t.Errorf("whisper in the EU: %v, want a refusal", err)
	}
	if seen, dials := standIn.Requests(); len(seen) != 0 || len(dials) != 0 {
		t.Errorf("whisper in the EU reached the stand-in: %+v, %q", seen, dials)
	}
}
