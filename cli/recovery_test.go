package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// recoveredHarness is a harness whose history was opened as main opens
// it, at path: a damaged file moved aside, or history in memory.
func recoveredHarness(t *testing.T, path string) *harness {
	t.Helper()
	db, err := store.OpenOrRecover(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := newHarness(t, nil, func(cfg *sessions.WorkspaceConfig) { cfg.History = db })
	h.db, h.ws.History = db, db
	return h
}

// TestCommandsOnDamagedHistory: a command on a damaged history says in
// one line, first, that it was moved aside and a new one started, and
// carries on.
func TestCommandsOnDamagedHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("garbage ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	h := recoveredHarness(t, path)
	if code := h.run(t, t.Context(), "history"); code != 0 {
		t.Fatalf("earshot history: status %d\n%s", code, h.stderr.String())
	}
	want := "earshot: the history file " + path + " could not be read (it is damaged); it was moved to " + h.db.Recovery().MovedTo + ", and a new history was started\n"
	if got := h.stderr.String(); !strings.HasPrefix(got, want) || strings.Count(got, "damaged") != 2 {
		t.Fatalf("stderr:\n%s\nwant first, and once:\n%s", got, want)
	}
}

// TestCommandsWithHistoryOff: with history in memory (nowhere to write),
// a command that needs no history says so in one line and works; one
// that reads the history says why it cannot.
func TestCommandsWithHistoryOff(t *testing.T) {
	ro := testkit.ReadOnlyDir(t)
	h := recoveredHarness(t, filepath.Join(ro, ".local", "share", "earshot", "history.db"))
	out := filepath.Join(t.TempDir(), "hello.wav")
	if code := h.run(t, t.Context(), "speak", "Hello.", "-o", out); code != 0 {
		t.Fatalf("earshot speak -o: status %d\n%s", code, h.stderr.String())
	}
	off := "earshot: history is off: cannot write in " + ro + ": read-only file system; this run is not kept\n"
	if got := h.stderr.String(); !strings.HasPrefix(got, off) {
		t.Fatalf("speak said:\n%s\nwant first %q", got, off)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
		t.Fatalf("speak -o wrote nothing: %v", err)
	}
	for _, args := range [][]string{{"history"}, {"history", "search", "budget"}, {"notes", "--list"}, {"rerun", "1"}} {
		h.stderr = testkit.Buffer{}
		if code := h.run(t, t.Context(), args...); code != 1 {
			t.Errorf("earshot %s: status %d, want 1", strings.Join(args, " "), code)
		}
		if got := h.stderr.String(); !strings.Contains(got, ": history is off (cannot write in "+ro+": read-only file system)") || strings.Count(got, "\n") != 1 {
			t.Errorf("earshot %s said %q, want one line saying history is off", strings.Join(args, " "), got)
		}
	}
}
