package cli

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/store"
)

// TestRerunCommand runs a real recording's entry again with base, the
// local engine's fast search, as text and as JSON, and checks the
// refusals.
func TestRerunCommand(t *testing.T) {
	h := newHarness(t, nil)
	first, err := h.ws.TranscribeFile(t.Context(), librivox+"0920.wav", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(first.SessionID, 10)

	if code := h.runFresh(t, "rerun", id, "--model", "base", "--backend", "local"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	out := h.stdout.String()
	t.Logf("\n%s", out)
	for _, want := range []string{"“sense_and_sensibility_01_austen_64kb-0920.wav” (entry " + id + "), run again as entry ",
		"Model", "nova-3 (pocketsphinx-en-us)", "base (pocketsphinx-en-us-fast)", "Took", "Original: ", "Re-run:   ", "Diff: ",
		"Word error rate of the re-run against the original: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(out, "[-") && !strings.Contains(out, "{+") {
		t.Error("the diff marks no word, though the two models hear differently")
	}

	if code := h.runFresh(t, "rerun", "--json", id, "--model", "base"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	var got struct {
		Original struct {
			ID         int64  `json:"id"`
			Transcript string `json:"transcript"`
			ModelName  string `json:"model_name"`
		} `json:"original"`
		Rerun struct {
			ID         int64   `json:"id"`
			Transcript string  `json:"transcript"`
			ModelName  string  `json:"model_name"`
			Took       float64 `json:"took_seconds"`
		} `json:"rerun"`
		WER  float64 `json:"wer"`
		Diff []struct {
			Op, Original, Rerun string
		} `json:"diff"`
	}
	if err := json.Unmarshal([]byte(h.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, h.stdout.String())
	}
	if got.Original.ID != first.SessionID || got.Original.Transcript != first.Response.Transcript() || got.Rerun.ModelName != "pocketsphinx-en-us-fast" || got.Rerun.Took <= 0 {
		t.Errorf("json %+v", got)
	}
	if want := testkit.WordErrorRate(got.Original.Transcript, got.Rerun.Transcript); got.WER != want || want == 0 {
		t.Errorf("wer %g, the tests' own count %g", got.WER, want)
	}
	changed := 0
	for _, op := range got.Diff {
		if op.Op != "equal" {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("diff %+v: nothing changed", got.Diff)
	}
	if s, err := h.db.Session(t.Context(), got.Rerun.ID); err != nil || s.Details != `{"rerun_of":`+id+`}` {
		t.Errorf("the re-run's entry: %+v, %v", s, err)
	}

	// Refusals.
	noAudio, err := h.db.CreateSession(t.Context(), store.Session{Kind: store.KindCaptions, Title: "no audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rerun"}, 2, "give the ID of one history entry"},
		{[]string{"rerun", "x"}, 2, `"x" is not an entry's ID`},
		{[]string{"rerun", id, "--backend", "cloud"}, 2, "--backend is local or hosted"},
		{[]string{"rerun", id, "--region", "eu", "--backend", "local"}, 2, "--region is for the hosted service"},
		{[]string{"rerun", strconv.FormatInt(noAudio, 10)}, 1, "this entry has no audio to run again"},
		{[]string{"rerun", "987654"}, 1, "there is no history entry 987654"},
		{[]string{"rerun", id, "--backend", "hosted"}, 1, "no API key is set"},
		{[]string{"rerun", id, "--region", "eu"}, 1, "is the hosted service's"}, // the settings' service is the local engine
	} {
		if code := h.runFresh(t, tc.args...); code != tc.code || !strings.Contains(h.stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, h.stderr.String(), tc.code, tc.want)
		}
	}
	// An entry whose audio is kept but whose words are none: no rate.
	silent := h.savedWithAudio(t, "no words")
	if code := h.runFresh(t, "rerun", strconv.FormatInt(silent, 10)); code != 0 || !strings.Contains(h.stdout.String(), "Word error rate: none, as the original has no words (the re-run has ") {
		t.Errorf("an original without words: exit %d, %s%s", code, h.stdout.String(), h.stderr.String())
	}
	if code := h.runFresh(t, "help"); code != 0 || !strings.Contains(h.stdout.String(), "rerun ") {
		t.Errorf("help does not list rerun: %s", h.stdout.String())
	}
}

// TestRerunHelp checks the placeholders of rerun's flags: the flag
// package names one after the backquoted word of its usage.
func TestRerunHelp(t *testing.T) {
	h := newHarness(t, nil)
	h.runFresh(t, "rerun", "-h")
	help := h.stderr.String()
	if !strings.Contains(help, "-backend local|hosted\n") || strings.Contains(help, "-backend local\n") {
		t.Errorf("rerun -h:\n%s", help)
	}
}

// savedWithAudio saves a finished captions entry titled title, with no
// words, whose kept audio is the test clip as WAV, and returns its id.
func (h *harness) savedWithAudio(t *testing.T, title string) int64 {
	t.Helper()
	id, err := h.db.CreateSession(t.Context(), store.Session{Kind: store.KindCaptions, Title: title, Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.db.SaveAudio(t.Context(), id, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav}); err != nil {
		t.Fatal(err)
	}
	return id
}
