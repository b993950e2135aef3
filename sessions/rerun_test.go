package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/internal/worddiff"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// rerunWorkspace is a workspace on the shared local engine, transcribing
// with model, without a key.
func rerunWorkspace(t *testing.T, db *store.DB, model string) *sessions.Workspace {
	t.Helper()
	eng := localEngine(t)
	var calls atomic.Int32
	ws := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), localOf(eng, &calls), nil)
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	s.Model = model
	if err := ws.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestRerunTwoModels (must show): a real recording transcribed with
// nova-3 of the local engine, its file then gone so that only the audio
// kept in history is left, is run again with base (the engine's fast
// search): the two transcripts differ, the word error rate reported is
// that of the new transcript against the original, counted
// independently, the new run is saved as an entry naming the one it
// re-ran, and both times are there.
func TestRerunTwoModels(t *testing.T) {
	t.Parallel()
	// Four transcriptions of a 26 s reading: under a minute each on an
	// idle machine, 51-66 s each seen at a load average of 10 on two
	// cores, where 3 minutes ran out. The bound is for a hang.
	ctx := testContext(t, 8*time.Minute)
	db := openDB(t)
	ws := rerunWorkspace(t, db, "nova-3")

	// Two lines of the reading, as one file.
	path, pcm, wav := readingFile(t, 0, "0870", "0920")
	first, err := ws.TranscribeFile(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the audio as the entry's if transcription did not already.
	if _, err := db.Audio(ctx, first.SessionID); errors.Is(err, store.ErrNotFound) {
		if err := db.SaveAudio(ctx, first.SessionID, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}

	// The entry's audio on both models. Kept audio may be Opus, which
	// is not the WAV the entry was transcribed from: each model is run
	// on the same kept audio, so that the models are what differs.
	var reports atomic.Int32
	rerun := func(id int64, model string) *sessions.RerunResult {
		t.Helper()
		res, err := ws.Rerun(ctx, id, sessions.RerunOptions{Model: model, Backend: sessions.BackendLocal}, func(sessions.Progress) { reports.Add(1) })
		if err != nil {
			t.Fatalf("re-run on %s: %v", model, err)
		}
		return res
	}
	nova, base := rerun(first.SessionID, "nova-3"), rerun(first.SessionID, "base")
	t.Logf("entry (%v): %s\nnova-3 (%v): %s\nbase (%v): %s\nbase against the entry: WER %.3f: %s",
		base.Original.Took, base.Original.Transcript, nova.New.Took, nova.New.Transcript, base.New.Took, base.New.Transcript, base.WER, base.Diff.Inline())
	if want := first.Response.Transcript(); base.Original.Transcript != want {
		t.Errorf("original transcript %q, want the entry's %q", base.Original.Transcript, want)
	}
	if base.Original.ModelName != "pocketsphinx-en-us" || nova.New.ModelName != "pocketsphinx-en-us" || base.New.ModelName != "pocketsphinx-en-us-fast" {
		t.Errorf("models %q, %q and %q, want pocketsphinx-en-us twice and its fast search", base.Original.ModelName, nova.New.ModelName, base.New.ModelName)
	}
	if base.New.Transcript == nova.New.Transcript || len(strings.Fields(base.New.Transcript)) < 15 {
		t.Errorf("base heard %q, nova-3 %q: want two different, full transcripts", base.New.Transcript, nova.New.Transcript)
	}
	for _, res := range []*sessions.RerunResult{nova, base} {
		if want := worddiff.Compare(res.Original.Transcript, res.New.Transcript).WER(); res.WER != want || res.Diff.WER() != want {
			t.Errorf("%s: WER %g (diff's %g), want %g", res.New.Model, res.WER, res.Diff.WER(), want)
		}
		// An independent count, by the tests' own edit distance.
		if want := testkit.WordErrorRate(res.Original.Transcript, res.New.Transcript); res.WER != want {
			t.Errorf("%s: WER %g, the tests' own count says %g", res.New.Model, res.WER, want)
		}
		if res.Original.Took <= 0 || res.New.Took <= 0 || res.Original.Live || res.New.Live {
			t.Errorf("%s: times %v and %v (live %v, %v)", res.New.Model, res.Original.Took, res.New.Took, res.Original.Live, res.New.Live)
		}
		if got := float64(len(pcm)) / 16000; res.New.Audio < got-0.1 || res.New.Audio > got+0.1 {
			t.Errorf("%s: audio %.2f s, want %.2f s", res.New.Model, res.New.Audio, got)
		}
	}
	if base.WER == 0 {
		t.Error("base heard the entry word for word")
	}
	if reports.Load() == 0 {
		t.Error("no progress reported")
	}

	saved, err := db.Session(ctx, base.New.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Kind != store.KindFile || saved.Status != store.StatusDone || saved.Model != "base" ||
		saved.Details != `{"rerun_of":`+strconv.FormatInt(first.SessionID, 10)+`}` || saved.Backend != "Local engine" {
		t.Errorf("re-run saved as %+v", saved)
	}
	if text, err := db.ResponseText(ctx, base.New.SessionID); err != nil || text != base.New.Transcript {
		t.Errorf("re-run's saved text %q (%v), want %q", text, err, base.New.Transcript)
	}

	// The re-run has no audio of its own: it runs again from the entry
	// it re-ran, here with nova-3, which hears what nova-3 heard.
	again, err := ws.Rerun(ctx, base.New.SessionID, sessions.RerunOptions{Model: "nova-3", Backend: sessions.BackendLocal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.New.Transcript != nova.New.Transcript || again.Original.Transcript != base.New.Transcript {
		t.Errorf("the re-run run again with nova-3: %q, want %q", again.New.Transcript, nova.New.Transcript)
	}
}

// TestRerunRefused checks the refusals that come before anything is
// sent: an entry without audio, the hosted service without a key, an
// unknown backend. None of them adds to history.
func TestRerunRefused(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	db := openDB(t)
	ws := rerunWorkspace(t, db, "")
	noAudio, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "no audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := db.CreateSession(ctx, store.Session{Kind: store.KindFile, Title: "gone.wav", Source: filepath.Join(t.TempDir(), "gone.wav"), Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	withAudio, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "with audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	_, _, wav := readingFile(t, 0, "0880")
	if err := db.SaveAudio(ctx, withAudio, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   int64
		opts sessions.RerunOptions
		want error
	}{
		{"no audio", noAudio, sessions.RerunOptions{}, sessions.ErrNoAudio},
		{"file gone", gone, sessions.RerunOptions{}, sessions.ErrNoAudio},
		{"no such entry", 999999, sessions.RerunOptions{}, store.ErrNotFound},
		{"hosted without a key", withAudio, sessions.RerunOptions{Backend: sessions.BackendHosted}, sessions.ErrNoKey},
		{"hosted in a region without a key", withAudio, sessions.RerunOptions{Backend: sessions.BackendHosted, Region: "eu"}, sessions.ErrNoKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ws.Rerun(ctx, tc.id, tc.opts, nil)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := ws.Rerun(ctx, withAudio, sessions.RerunOptions{Backend: "cloud"}, nil); err == nil || !strings.Contains(err.Error(), "local or hosted") {
		t.Errorf("unknown backend: %v", err)
	}
	// A region on the local engine, asked or as the settings resolve
	// (no key: the local engine), is refused, not ignored.
	for _, backend := range []string{sessions.BackendLocal, ""} {
		if _, err := ws.Rerun(ctx, withAudio, sessions.RerunOptions{Backend: backend, Region: "eu"}, nil); err == nil || !strings.Contains(err.Error(), "is the hosted service's") {
			t.Errorf("a region on the local engine (backend %q): %v, want a refusal", backend, err)
		}
	}
	var apiErr *api.Error
	if _, err := ws.Rerun(ctx, withAudio, sessions.RerunOptions{Model: "nova-99"}, nil); !errors.As(err, &apiErr) || apiErr.Status != 400 {
		t.Errorf("a model the engine lacks: %v, want the engine's 400", err)
	}
	list, err := db.Sessions(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// The unknown model reached the engine, which refused it: its entry
	// is kept as failed. Nothing else was added.
	if len(list) != 4 {
		for _, s := range list {
			t.Logf("%+v", s)
		}
		t.Errorf("%d entries, want the 3 made here and the failed run", len(list))
	}
}

func TestRerunDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    store.Session
		want sessions.RerunOptions
	}{
		{"captions", store.Session{Kind: store.KindCaptions, Model: "nova-3",
			Options: `{"diarize_model":["latest"],"language":["en-GB"],"model":["nova-3"],"smart_format":["true"]}`},
			sessions.RerunOptions{Model: "nova-3", Language: "en-GB", SmartFormat: true, Diarize: true}},
		{"file without formatting", store.Session{Kind: store.KindFile, Model: "base", Options: `{"model":["base"],"punctuate":["true"]}`},
			sessions.RerunOptions{Model: "base"}},
		{"conversation: its model is not for files", store.Session{Kind: store.KindConversation, Model: "flux-general-en", Options: `{"model":["flux-general-en"]}`},
			sessions.RerunOptions{}},
		{"synthesis: its model is a voice", store.Session{Kind: store.KindSynthesis, Model: "aura-2-thalia-en"}, sessions.RerunOptions{}},
		{"damaged options", store.Session{Kind: store.KindFile, Model: "nova-2", Options: `{"smart_format":`}, sessions.RerunOptions{Model: "nova-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sessions.RerunDefaults(tc.s); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
