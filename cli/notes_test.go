package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// saveMeeting saves a finished captions meeting of lines (a speaker,
// a start and words each) to db.
func saveMeeting(t *testing.T, db *store.DB, title string, lines ...store.Segment) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: title, Backend: "Local engine",
		Started: time.Date(2025, 3, 14, 9, 30, 0, 0, time.Local)})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range lines {
		g.SessionID, g.Seq, g.End = id, i, g.Start+3
		if _, err := db.AddSegment(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishSession(ctx, id, time.Time{}, 70, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

func who(n int) *int { return &n }

func TestNotesCommand(t *testing.T) {
	h := newHarness(t, nil)
	id := saveMeeting(t, h.db, "Standup",
		store.Segment{Start: 0.5, Speaker: who(0), Text: "we shipped the new dashboard release on friday and customers love the faster reports"},
		store.Segment{Start: 5, Speaker: who(1), Text: "the support queue is growing and the dashboard reports need more work"},
		store.Segment{Start: 65, Speaker: who(0), Text: "please schedule a review of the dashboard reports with the support team"})
	arg := strconv.FormatInt(id, 10)

	if code := h.run(t, t.Context(), "notes", arg); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	out := h.stdout.String()
	for _, want := range []string{"# Meeting notes: Standup\n", "Speakers: Speaker 1, Speaker 2", "## Summary\n", "## Topics\n", "## Action items\n",
		"(Speaker 1, 1:05)", "## Transcript\n", "**1:05 Speaker 1:** please schedule"} {
		if !strings.Contains(out, want) {
			t.Errorf("the notes lack %q:\n%s", want, out)
		}
	}
	if !strings.Contains(h.stderr.String(), "; saved to history.") {
		t.Errorf("stderr %q", h.stderr.String())
	}
	saved, err := h.db.Notes(t.Context(), id)
	if err != nil || len(saved) == 0 {
		t.Fatalf("the notes were not saved with the meeting: %v", err)
	}

	// Again: read back from history; to a file; and written anew.
	file := filepath.Join(t.TempDir(), "notes.md")
	if code := h.run(t, t.Context(), "notes", arg, "-o", file); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(out, string(b)) {
		t.Errorf("notes.md: %v\n%s\nwant the notes printed before", err, b)
	}
	if !strings.Contains(h.stderr.String(), "from history; --redo writes them again.") {
		t.Errorf("stderr %q; want the notes read from history", h.stderr.String())
	}
	if code := h.run(t, t.Context(), "notes", "--redo", arg, "-o", file); code != 0 {
		t.Fatalf("exit status %d; stderr %q", code, h.stderr.String())
	}
	if again, _ := h.db.Notes(t.Context(), id); string(again) == string(saved) {
		t.Error("--redo did not write the notes again")
	}

	if code := h.run(t, t.Context(), "notes", "--list"); code != 0 || !strings.Contains(h.stdout.String(), arg+"  2025-03-14 09:30      1:10  Standup\n") {
		t.Errorf("--list: exit status %d, stdout\n%s", code, h.stdout.String())
	}
}

func TestNotesCommandRefuses(t *testing.T) {
	h := newHarness(t, nil)
	empty := saveMeeting(t, h.db, "Silence")
	file, err := h.db.CreateSession(t.Context(), store.Session{Kind: store.KindFile, Title: "talk.wav"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"notes"}, 2, "which meeting? give its session ID"},
		{[]string{"notes", "twelve"}, 2, `"twelve" is not a session ID`},
		{[]string{"notes", "1", "2"}, 2, "one meeting at a time"},
		{[]string{"notes", "--list", "1"}, 2, "--list takes no session ID"},
		{[]string{"notes", strconv.FormatInt(empty, 10)}, 1, "earshot notes: " + sessions.ErrNoWords.Error() + "\n"},
		{[]string{"notes", "999"}, 1, "there is no session 999 in the history"},
		{[]string{"notes", strconv.FormatInt(file, 10)}, 1, "a file transcription"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			before := len(h.stderr.String())
			code := h.run(t, t.Context(), tc.args...)
			if stderr := h.stderr.String()[before:]; code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
