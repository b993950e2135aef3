package store

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// childOwner: a child process of TestInterruptedAfterCrash, which opens
// the history at pathEnv, starts sessions and waits to be killed.
const (
	childOwner = "history-owner"
	pathEnv    = "EARSHOT_STORE_TEST_PATH"
)

// TestInterruptedAfterCrash runs two processes on one history, as the
// app and `earshot transcribe` do. While the other process runs, its
// sessions stay running whoever opens the history; once it is killed
// (kill -9: nothing of it runs after), the next Open closes them as
// interrupted, with the length of what they saved, and leaves the
// sessions of a process still running alone. Before, they stayed
// "running" for good.
func TestInterruptedAfterCrash(t *testing.T) {
	switch os.Getenv(childEnv) {
	case childOwner:
		ownerChild(t)
		return
	case "":
	default:
		t.Skip("a child run for another test")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "history.db")
	child := exec.Command(os.Args[0], "-test.run=^TestInterruptedAfterCrash$", "-test.count=1")
	child.Env = append(os.Environ(), childEnv+"="+childOwner, pathEnv+"="+path)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := child.StdinPipe() // the child runs until this closes, or it is killed
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	var captions, agent, file int64
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "ready %d %d %d", &captions, &agent, &file); err != nil || serr != nil {
		t.Fatalf("the child said %q (%v)", line, err)
	}

	d, err := Open(ctx, path) // a second process's open, while the child runs
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mine := newSession(t, d, "this process's")
	for _, id := range []int64{captions, agent, file} {
		if s, err := d.Session(ctx, id); err != nil || s.Status != StatusRunning {
			t.Fatalf("session %d of the running child: %q, %v; want running", id, s.Status, err)
		}
	}

	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = child.Wait()
	_ = in.Close()

	after, err := Open(ctx, path) // the next start
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	for _, c := range []struct {
		id       int64
		duration float64
		segments int
	}{{captions, 7.5, 3}, {agent, 12, 2}, {file, 0, 0}} {
		s, err := after.Session(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != StatusInterrupted || math.Abs(s.Duration-c.duration) > 1e-9 || s.Segments != c.segments {
			t.Errorf("session %d (%s): %s, %.1f s, %d segments; want interrupted, %.1f s, %d segments",
				c.id, s.Kind, s.Status, s.Duration, s.Segments, c.duration, c.segments)
		}
		if want := s.Started.Add(time.Duration(c.duration * float64(time.Second))); !s.Ended.Equal(want) {
			t.Errorf("session %d ended %v, want %v: as long after its start as what it saved", c.id, s.Ended, want)
		}
	}
	if s, err := after.Session(ctx, mine); err != nil || s.Status != StatusRunning {
		t.Fatalf("the session of the process still running: %q, %v; want running", s.Status, err)
	}
	entries, _ := os.ReadDir(ownersDir(path))
	if len(entries) != 2 {
		t.Errorf("the owners' folder holds %d files, want the 2 of the open histories (the killed one's removed)", len(entries))
	}
}

// ownerChild opens the history, starts a caption session with three
// captions, an agent conversation with two lines and a file
// transcription, says "ready" with their ids, and waits.
func ownerChild(t *testing.T) {
	ctx := t.Context()
	d, err := Open(ctx, os.Getenv(pathEnv))
	if err != nil {
		t.Fatal(err)
	}
	captions := newSession(t, d, "captions")
	for i := range 3 {
		if _, err := d.AddSegment(ctx, Segment{SessionID: captions, Seq: i, Start: 2.5 * float64(i), End: 2.5 * float64(i+1), Text: "said"}); err != nil {
			t.Fatal(err)
		}
	}
	agent, err := d.CreateSession(ctx, Session{Kind: KindAgent, Title: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []float64{3, 12} {
		if _, err := d.AddSegment(ctx, Segment{SessionID: agent, Seq: i, Start: at, End: at, Text: "a line"}); err != nil {
			t.Fatal(err)
		}
	}
	file, err := d.CreateSession(ctx, Session{Kind: KindFile, Title: "file", Source: "/tmp/meeting.wav"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ready %d %d %d\n", captions, agent, file)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestInterruptedBeforeOwners: a session left running by a version that
// saved no owner is closed as interrupted too.
func TestInterruptedBeforeOwners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	d, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	id := newSession(t, d, "old")
	if _, err := d.w.ExecContext(t.Context(), `UPDATE sessions SET owner = '' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if s, err := d.Session(t.Context(), id); err != nil || s.Status != StatusInterrupted {
		t.Fatalf("%q, %v; want interrupted", s.Status, err)
	}
}

// TestInterruptedSessionsArePruned: retention deletes an interrupted
// session as any other that ended, and FinishSession accepts the status.
func TestInterruptedSessionsArePruned(t *testing.T) {
	d := openTest(t)
	id := newSession(t, d, "old")
	if err := d.FinishSession(t.Context(), id, time.Time{}, 3, StatusInterrupted, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Prune(t.Context(), time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the interrupted session deleted", n, err)
	}
}
