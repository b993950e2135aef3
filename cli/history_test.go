package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/historytest"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// saveKind saves a finished session of kind, started at, with captions
// of words one every ten seconds.
func saveKind(t *testing.T, db *store.DB, kind, title string, at time.Time, words ...string) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := db.CreateSession(ctx, store.Session{Kind: kind, Title: title, Started: at})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range words {
		if _, err := db.AddSegment(ctx, store.Segment{SessionID: id, Seq: i, Start: float64(i * 10), End: float64(i*10 + 5), Text: w}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishSession(ctx, id, at.Add(time.Minute), float64(10*len(words)), store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

// runFresh runs a command with fresh standard output and error.
func (h *harness) runFresh(t *testing.T, args ...string) int {
	t.Helper()
	h.stdout, h.stderr = testkit.Buffer{}, testkit.Buffer{}
	return h.run(t, t.Context(), args...)
}

func TestHistoryCommand(t *testing.T) {
	h := newHarness(t, nil)
	now := time.Now()
	old := saveKind(t, h.db, store.KindCaptions, "Old lecture", now.AddDate(0, 0, -20), "the lecture on tides")
	conv := saveKind(t, h.db, store.KindConversation, "Support call", now.AddDate(0, 0, -2), "hello", "my invoice is wrong", "thank you")
	capt := saveKind(t, h.db, store.KindCaptions, "Standup\nMonday", now.Add(-time.Hour), "we ship the invoice screen today")

	if code := h.runFresh(t, "history"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(h.stdout.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("listed:\n%s", h.stdout.String())
	}
	for i, id := range []int64{capt, conv, old} { // newest first
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), strconv.FormatInt(id, 10)+" ") {
			t.Errorf("line %d is %q, want session %d", i, lines[i], id)
		}
	}
	if !strings.Contains(lines[0], "captions") || !strings.HasSuffix(lines[0], "0:10  Standup Monday") {
		t.Errorf("first line %q", lines[0])
	}

	if code := h.runFresh(t, "history", "--kind", "Conversation"); code != 0 || !strings.Contains(h.stdout.String(), "Support call") || strings.Contains(h.stdout.String(), "Standup") {
		t.Errorf("--kind conversation: exit %d\n%s", code, h.stdout.String())
	}
	if code := h.runFresh(t, "history", "--since", "7d", "--json"); code != 0 {
		t.Fatalf("--since 7d --json: exit %d: %s", code, h.stderr.String())
	}
	var got []sessionJSON
	for _, l := range strings.Split(strings.TrimSpace(h.stdout.String()), "\n") {
		var s sessionJSON
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, s)
	}
	if len(got) != 2 || got[0].ID != capt || got[1].ID != conv || got[1].Kind != store.KindConversation || got[1].Duration != 30 {
		t.Errorf("--since 7d --json: %+v", got)
	}
	if code := h.runFresh(t, "history", "--limit", "1"); code != 0 || strings.Count(h.stdout.String(), "\n") != 1 || !strings.Contains(h.stderr.String(), "--limit shows more") {
		t.Errorf("--limit 1: exit %d\n%s%s", code, h.stdout.String(), h.stderr.String())
	}

	// Search: both sessions that say "invoice", with the time of the caption.
	if code := h.runFresh(t, "history", "search", "invoice"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, h.stderr.String())
	}
	out := h.stdout.String()
	for _, want := range []string{"Support call at 0:10\n", "my *invoice* is wrong", "we ship the *invoice* screen today"} {
		if !strings.Contains(out, want) {
			t.Errorf("search output lacks %q:\n%s", want, out)
		}
	}
	if code := h.runFresh(t, "history", "search", "invoice", "--kind", "conversation", "--json"); code != 0 {
		t.Fatalf("search --json: exit %d: %s", code, h.stderr.String())
	}
	var hit hitJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(h.stdout.String())), &hit); err != nil {
		t.Fatalf("%v: %s", err, h.stdout.String())
	}
	if hit.SessionID != conv || hit.At == nil || *hit.At != 10 || hit.Snippet != "my invoice is wrong" || len(hit.Matches) != 1 || hit.Matches[0] != "invoice" {
		t.Errorf("search --json: %+v", hit)
	}
	week := time.Now().AddDate(0, 0, -7).Format(time.DateOnly)
	if code := h.runFresh(t, "history", "search", "tides", "--since", "7d"); code != 0 || h.stdout.String() != "" || h.stderr.String() != "No sessions since "+week+" match “tides”.\n" {
		t.Errorf("search older than --since: exit %d, %q %q", code, h.stdout.String(), h.stderr.String())
	}

	// Export, as srt to a file and as txt by default.
	file := filepath.Join(t.TempDir(), "call.srt")
	if code := h.runFresh(t, "history", "export", strconv.FormatInt(conv, 10), "--format", "srt", "-o", file); code != 0 {
		t.Fatalf("export: exit %d: %s", code, h.stderr.String())
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), "00:00:10,000 --> 00:00:15,000") || !strings.Contains(string(b), "my invoice is wrong") {
		t.Errorf("call.srt: %v\n%s", err, b)
	}
	if want := "Wrote " + file + " (srt, " + strconv.Itoa(len(b)) + " bytes).\n"; h.stderr.String() != want || h.stdout.String() != "" {
		t.Errorf("export -o says %q on standard error and %q on standard output, want %q", h.stderr.String(), h.stdout.String(), want)
	}
	// Without --format, the file's extension chooses.
	file = filepath.Join(t.TempDir(), "call.vtt")
	if code := h.runFresh(t, "history", "export", strconv.FormatInt(conv, 10), "-o", file); code != 0 {
		t.Fatalf("export -o call.vtt: exit %d: %s", code, h.stderr.String())
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(b), "WEBVTT") || !strings.HasPrefix(h.stderr.String(), "Wrote "+file+" (vtt, ") {
		t.Errorf("call.vtt: %v\n%s\n%s", err, b, h.stderr.String())
	}
	if code := h.runFresh(t, "history", "export", strconv.FormatInt(old, 10)); code != 0 || !strings.Contains(h.stdout.String(), "the lecture on tides") {
		t.Errorf("export txt: exit %d\n%s%s", code, h.stdout.String(), h.stderr.String())
	}
}

func TestHistoryCommandErrors(t *testing.T) {
	h := newHarness(t, nil)
	saveKind(t, h.db, store.KindCaptions, "One", time.Now(), "words")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"history", "--kind", "podcast"}, 2, `unknown kind "podcast"`},
		{[]string{"history", "--since", "last tuesday"}, 2, `"last tuesday" is not a date`},
		{[]string{"history", "--since", "2026-13-01"}, 2, "is not a date"},
		{[]string{"history", "--limit", "0"}, 2, "--limit must be a positive number"},
		{[]string{"history", "search"}, 2, "search for what?"},
		{[]string{"history", "export"}, 2, "give its ID"},
		{[]string{"history", "export", "abc"}, 2, `"abc" is not a session ID`},
		{[]string{"history", "export", "1", "--kind", "file"}, 2, "export takes an ID"},
		{[]string{"history", "--format", "srt"}, 2, "--format and -o are for export"},
		{[]string{"history", "delete", "1"}, 2, `unknown history command "delete"`},
		{[]string{"history", "export", "999"}, 1, "no session 999 in the history"},
		{[]string{"history", "export", "1", "--format", "docx"}, 1, `not "docx"`},
	} {
		if code := h.runFresh(t, c.args...); code != c.code || !strings.Contains(h.stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, h.stderr.String(), c.code, c.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-01-31": time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC),
		"today":      time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		"Yesterday":  time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC),
		"7d":         time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC),
		"2w":         time.Date(2026, 2, 24, 0, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-3d", "7", "2026-02-30", "99999999d"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) took it", bad)
		}
	}
}

func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"2026-01-31", "7d", "2w", "today", "", "9999999999w"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err == nil && (got.Hour() != 0 || got.Minute() != 0 || got.Second() != 0) {
			t.Errorf("parseSince(%q) = %v, not the start of a day", s, got)
		}
	})
}

// TestHistoryCommandNothing checks what history says when it lists
// nothing: that the history is empty, or which filters found nothing.
func TestHistoryCommandNothing(t *testing.T) {
	h := newHarness(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history"}, "The history is empty: what Earshot transcribes, speaks and analyses is kept there.\n"},
		{[]string{"history", "--kind", "captions", "--since", "2026-11-01"}, "No captions sessions since 2026-11-01 in the history.\n"},
		{[]string{"history", "--kind", "synthesis"}, "No syntheses in the history.\n"},
		{[]string{"history", "search", "the", "--kind", "captions", "--since", "2026-11-01"}, "No captions sessions since 2026-11-01 match “the”.\n"},
		{[]string{"history", "search", "the"}, "No sessions match “the”.\n"},
	} {
		if code := h.runFresh(t, c.args...); code != 0 || h.stderr.String() != c.want || h.stdout.String() != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want %q", c.args, code, h.stderr.String(), h.stdout.String(), c.want)
		}
	}
}

// saveSynthesis saves a finished synthesis of text with voice as
// `earshot speak` does: its details, its request and, with pcm, its
// audio as WAV at 24 kHz.
func saveSynthesis(t *testing.T, db *store.DB, text, voice string, pcm []int16) int64 {
	return historytest.SaveSynthesis(t, db, historytest.Synthesis{
		Session: store.Session{Title: "Greeting", Backend: "Local engine", Started: time.Now().Add(-time.Hour)},
		Voice:   voice, Text: text, PCM: pcm, Ended: time.Now(),
		Details: sessions.SynthesisDetails{Family: string(sessions.FamilyGeneral), Speed: 1, TimeToFirstAudioMS: 212},
		Request: map[string]any{"text": text, "voice": voice, "speed": 1},
	})
}

// TestHistoryExportSynthesis exports a synthesis as Markdown, JSON and
// audio.
func TestHistoryExportSynthesis(t *testing.T) {
	h := newHarness(t, nil)
	pcm := make([]int16, 24000) // a second of a 440 Hz tone
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
	}
	id := strconv.FormatInt(saveSynthesis(t, h.db, "Good morning, and welcome aboard.", "aura-2-thalia-en", pcm), 10)

	// Markdown by default, to standard output.
	if code := h.runFresh(t, "history", "export", id); code != 0 {
		t.Fatalf("export: exit %d: %s", code, h.stderr.String())
	}
	for _, want := range []string{"# Synthesis: Greeting\n", "Good morning, and welcome aboard.\n", "- Voice: aura-2-thalia-en\n", "- Time to first audio: 212 ms\n", "- Audio: 1.0 s at 24000 Hz\n"} {
		if !strings.Contains(h.stdout.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, h.stdout.String())
		}
	}

	// JSON, to a file.
	dir := t.TempDir()
	file := filepath.Join(dir, "greeting.json")
	if code := h.runFresh(t, "history", "export", id, "--format", "json", "-o", file); code != 0 {
		t.Fatalf("export json: exit %d: %s", code, h.stderr.String())
	}
	b, err := os.ReadFile(file)
	var got struct{ Text, Voice string }
	if err == nil {
		err = json.Unmarshal(b, &got)
	}
	if err != nil || got.Text != "Good morning, and welcome aboard." || got.Voice != "aura-2-thalia-en" {
		t.Errorf("greeting.json: %v\n%s", err, b)
	}
	if want := "Wrote " + file + " (json, " + strconv.Itoa(len(b)) + " bytes).\n"; h.stderr.String() != want {
		t.Errorf("export json says %q, want %q", h.stderr.String(), want)
	}

	// The audio: as WAV with --format, as MP3 from the file's extension.
	file = filepath.Join(dir, "greeting.wav")
	if code := h.runFresh(t, "history", "export", id, "--format", "wav", "-o", file); code != 0 {
		t.Fatalf("export wav: exit %d: %s", code, h.stderr.String())
	}
	if b, err := os.ReadFile(file); err != nil || len(b) != 44+2*len(pcm) || string(b[:4]) != "RIFF" {
		t.Errorf("greeting.wav: %d bytes, %v", len(b), err)
	}
	if !strings.HasPrefix(h.stderr.String(), "Wrote "+file+" (linear16, 1.0 s, ") {
		t.Errorf("export wav says %q", h.stderr.String())
	}
	file = filepath.Join(dir, "greeting.mp3")
	if code := h.runFresh(t, "history", "export", id, "-o", file); code != 0 {
		t.Fatalf("export mp3: exit %d: %s", code, h.stderr.String())
	}
	if b, err := os.ReadFile(file); err != nil || len(b) < 1000 || !strings.HasPrefix(h.stderr.String(), "Wrote "+file+" (mp3, 1.0 s, ") {
		t.Errorf("greeting.mp3: %d bytes, %v; %q", len(b), err, h.stderr.String())
	}

	// Refusals: an unknown format, and audio that was not kept.
	silent := strconv.FormatInt(saveSynthesis(t, h.db, "Nothing kept.", "aura-2-thalia-en", nil), 10)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "export", id, "--format", "srt"}, `a synthesis is exported as md or json, or its audio as wav, mp3, ogg, flac or aac, not "srt"`},
		{[]string{"history", "export", silent, "--format", "mp3"}, "kept no audio: export its text with --format md or json"},
	} {
		if code := h.runFresh(t, c.args...); code != 1 || !strings.Contains(h.stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", c.args, code, h.stderr.String(), c.want)
		}
	}
	if code := h.runFresh(t, "history", "export", silent); code != 0 || !strings.Contains(h.stdout.String(), "Nothing kept.") {
		t.Errorf("the text of a synthesis without audio: exit %d\n%s%s", code, h.stdout.String(), h.stderr.String())
	}
}

// TestHistorySearchLocatesFiles: a search hit in a file transcription
// says where in the recording it was said, as a caption's does.
func TestHistorySearchLocatesFiles(t *testing.T) {
	needClip(t)
	h := newHarness(t, nil)
	if code := h.runFresh(t, "transcribe", clip); code != 0 {
		t.Fatalf("transcribe: exit %d: %s", code, h.stderr.String())
	}
	words := strings.Fields(strings.ToLower(h.stdout.String()))
	if len(words) < 3 {
		t.Fatalf("transcribed %q", h.stdout.String())
	}
	word := strings.Trim(words[len(words)-1], ".,?!;:")
	if code := h.runFresh(t, "history", "search", word, "--json"); code != 0 {
		t.Fatalf("history search: exit %d: %s", code, h.stderr.String())
	}
	var hit struct {
		Kind string   `json:"kind"`
		At   *float64 `json:"at"`
	}
	if err := json.Unmarshal([]byte(strings.Split(h.stdout.String(), "\n")[0]), &hit); err != nil {
		t.Fatalf("%v: %s", err, h.stdout.String())
	}
	if hit.Kind != store.KindFile || hit.At == nil || *hit.At < 0 {
		t.Errorf("the file's hit for %q: %s, want its time in the recording", word, h.stdout.String())
	}
}

// TestFailedRunKeepsItsReason: a transcription that fails is kept in
// history with why, in the words the command printed.
func TestFailedRunKeepsItsReason(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *sessions.WorkspaceConfig) {
		c.Keys = sessions.NewKeys(&store.Memory{}, func(k string) string {
			if k == sessions.EnvAPIKey {
				return "a-key-for-a-server-that-is-not-there"
			}
			return ""
		})
	})
	s := store.DefaultSettings()
	s.Backend, s.CustomURL = store.BackendCustom, "http://127.0.0.1:9" // the discard port: nothing listens
	if err := h.db.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if code := h.run(t, t.Context(), "transcribe", librivox+"0870.wav"); code != 1 {
		t.Fatalf("exit status %d, want 1; stderr %q", code, h.stderr.String())
	}
	list, err := h.db.Sessions(t.Context(), store.Filter{Kind: store.KindFile})
	if err != nil || len(list) != 1 || list[0].Status != store.StatusFailed {
		t.Fatalf("history %+v, %v; want the failed run", list, err)
	}
	said := strings.TrimSpace(h.stderr.String())
	why := list[0].Error
	if !strings.HasPrefix(why, "cannot reach the service") || !strings.HasSuffix(said, why) {
		t.Errorf("history keeps %q; the command said %q", why, said)
	}
	// earshot history says it, and its JSON.
	if code := h.run(t, t.Context(), "history"); code != 0 || !strings.Contains(h.stdout.String(), "(failed: "+why+")") {
		t.Errorf("earshot history: exit %d, %q; want why it failed", code, h.stdout.String())
	}
	if code := h.run(t, t.Context(), "history", "--json"); code != 0 || !strings.Contains(h.stdout.String(), `"error":"cannot reach the service`) {
		t.Errorf("earshot history --json: exit %d, %q; want the error", code, h.stdout.String())
	}
}

// TestHistorySearchTimeIsWhenItWasSaid: a hit is listed at the second it
// was said in, as the app's player shows it, not rounded up past it
// (the command rounded 3659.6 s to 1:01:00, after the words were said).
func TestHistorySearchTimeIsWhenItWasSaid(t *testing.T) {
	h := newHarness(t, nil)
	ctx := t.Context()
	id, err := h.db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "Long lecture", Started: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.AddSegment(ctx, store.Segment{SessionID: id, Start: 3659.6, End: 3662, Text: "the lighthouse keeper"}); err != nil {
		t.Fatal(err)
	}
	if err := h.db.FinishSession(ctx, id, time.Now().Add(-time.Hour), 3662, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if code := h.runFresh(t, "history", "search", "lighthouse"); code != 0 {
		t.Fatalf("search: exit %d: %s", code, h.stderr.String())
	}
	if out := h.stdout.String(); !strings.Contains(out, "Long lecture at 1:00:59\n") {
		t.Errorf("search output:\n%s\nwant the hit at 1:00:59", out)
	}
}
