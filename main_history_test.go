package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/testkit"
)

// The tests of this file start the app (the test binary, as
// TestLongPasteThenSIGTERM does) and its commands on a home that went
// wrong: a damaged history, a read-only disk, a crash. The app must open
// its window whatever the history holds, and say what it did about it.

// readingClip is 7 s of a LibriVox reading (pocketsphinx's test data).
const readingClip = "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav"

// historyEnv is the environment of the app and its commands: home as
// HOME, so that the history is where a person's is
// (~/.local/share/earshot/history.db), and no session bus, so that
// nothing is started to provide one.
func historyEnv(t *testing.T, home string) []string {
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(t.TempDir(), "no-bus")}
}

// runCommand runs `earshot args...` (the test binary, as main runs a
// command) in env, and returns what it printed and its exit status.
func runCommand(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), overlayPatience)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(env, commandUnderTest+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("earshot %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String(), code
}

// openWindow starts the app on tab under a new virtual X server, waits
// for it to load, and checks that its window is on screen (mapped, and
// viewable).
func openWindow(t *testing.T, env []string, tab string) *overlayApp {
	t.Helper()
	for _, tool := range []string{"Xvfb", "xdotool", "xwininfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: run scripts/setup", tool)
		}
	}
	env = append(env, "DISPLAY="+startXvfb(t), appUnderTest+"="+tab)
	app := startOverlayApp(t, env)
	x := &xTools{t: t, env: env}
	if state := x.mapState(x.window("^Earshot$")); state != "IsViewable" {
		t.Fatalf("the window is %s, want IsViewable", state)
	}
	return app
}

// shown returns what the app printed it shows, once loaded: the lines
// of testSetup that start with what ("notice", "past"), unquoted.
func shown(t *testing.T, app *overlayApp, what string) []string {
	t.Helper()
	var out []string
	for line := range strings.Lines(app.stdout.String()) {
		q, ok := strings.CutPrefix(strings.TrimSpace(line), what+" ")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(q)
		if err != nil {
			t.Fatalf("%s line %q: %v", what, line, err)
		}
		out = append(out, s)
	}
	return out
}

// damage writes 256 kB of garbage where the history is, as a faulty disk
// or program might, and returns it.
func damage(t *testing.T, path string) []byte {
	t.Helper()
	garbage := make([]byte, 256<<10)
	_, _ = rand.Read(garbage)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	return garbage
}

// movedTo finds the path a message says a damaged history was moved to,
// and checks that the file there holds what was damaged.
func movedTo(t *testing.T, msg, dir string, was []byte) {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(dir) + `/history-damaged-\d{8}-\d{6}(-\d+)?\.db`).FindString(msg)
	if m == "" {
		t.Fatalf("%q does not say where the damaged history went (in %s)", msg, dir)
	}
	if b, err := os.ReadFile(m); err != nil || !bytes.Equal(b, was) {
		t.Fatalf("%s does not hold the damaged history as it was: %v", m, err)
	}
}

// TestAppOpensOnDamagedHistory: with history.db overwritten by garbage, a
// command says in one line that the file was moved aside and carries on;
// damaged again, the app opens its window, and the header says what
// happened and where the old file is. Before, both ended with "store:
// open .../history.db: file is not a database (26)", and no window.
func TestAppOpensOnDamagedHistory(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".local", "share", "earshot")
	path := filepath.Join(dir, "history.db")
	env := historyEnv(t, home)

	was := damage(t, path)
	stdout, stderr, code := runCommand(t, env, "history")
	if code != 0 {
		t.Fatalf("earshot history on a damaged history: status %d\n%s", code, stderr)
	}
	first, rest, _ := strings.Cut(stderr, "\n")
	if !strings.HasPrefix(first, "earshot: the history file "+path+" could not be read (it is damaged)") || strings.Contains(rest, "damaged") {
		t.Fatalf("earshot history said on stderr:\n%s\nwant one line first saying the history was damaged and moved", stderr)
	}
	movedTo(t, first, dir, was)
	if !strings.Contains(stdout+rest, "The history is empty") {
		t.Errorf("earshot history printed %q, %q; want the new, empty history", stdout, rest)
	}

	was = damage(t, path)
	app := openWindow(t, env, "captions")
	notice := shown(t, app, "notice")
	if len(notice) != 1 || !strings.Contains(notice[0], "could not read its history file (it is damaged), so it started a new, empty history") {
		t.Fatalf("the window's notice: %q; want it to say the history was damaged and a new one started", notice)
	}
	movedTo(t, notice[0], dir, was)
	app.quit()
}

// TestAppOpensOnReadOnlyHome: with the home folder on a read-only disk,
// the app opens with history off and says so; commands that need no
// history (speak -o to a folder that can be written, transcribe) work,
// saying in one line that history is off; `earshot history` says why it
// cannot. Before, there was no window, and every command failed with
// "open the workspace: ... read-only file system".
func TestAppOpensOnReadOnlyHome(t *testing.T) {
	home := testkit.ReadOnlyDir(t)
	env := historyEnv(t, home)
	off := "earshot: history is off: cannot write in " + home + ": read-only file system; this run is not kept\n"

	wav := filepath.Join(t.TempDir(), "hello.wav")
	_, stderr, code := runCommand(t, env, "speak", "-o", wav, "Hello from a read-only home.")
	if code != 0 || !strings.HasPrefix(stderr, off) {
		t.Fatalf("earshot speak -o: status %d, stderr:\n%s\nwant 0, and first %q", code, stderr, off)
	}
	if fi, err := os.Stat(wav); err != nil || fi.Size() < 1000 {
		t.Fatalf("speak wrote no audio: %v", err)
	}
	stdout, stderr, code := runCommand(t, env, "transcribe", readingClip)
	if code != 0 || !strings.HasPrefix(stderr, off) || strings.TrimSpace(stdout) == "" {
		t.Fatalf("earshot transcribe: status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	_, stderr, code = runCommand(t, env, "history")
	if want := "earshot history: cannot read the history: history is off (cannot write in " + home + ": read-only file system)\n"; code != 1 || stderr != want {
		t.Fatalf("earshot history: status %d, stderr %q; want 1, %q", code, stderr, want)
	}

	app := openWindow(t, env, "captions")
	notice := shown(t, app, "notice")
	if want := "History is off: Earshot cannot write in " + home + " (the disk is read-only)."; len(notice) != 1 || !strings.HasPrefix(notice[0], want) {
		t.Fatalf("the window's notice: %q; want it to start %q", notice, want)
	}
	app.quit()
}

// TestAppAfterCrash runs live captions from a command (`earshot
// transcribe --replay`, a recording played at real time for a
// microphone) and, while it runs, the app on the same history: the app
// shows the session in progress, and leaves it so. Then the command is
// killed (kill -9), and the app started again shows the session
// interrupted, with the captions it saved. Before, it stayed "In
// progress" for good.
func TestAppAfterCrash(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg is missing: run scripts/setup")
	}
	home := t.TempDir()
	env := historyEnv(t, home)
	// A minute of a LibriVox reading: the clip, ten times over.
	long := filepath.Join(t.TempDir(), "reading.wav")
	if out, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-stream_loop", "9", "-i", readingClip, "-c", "copy", long).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	live := exec.Command(self, "transcribe", "--replay", long)
	live.Env = append(env, commandUnderTest+"=1")
	stdout, err := live.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	liveErr := &testkit.Buffer{}
	live.Stderr = liveErr
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = live.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = live.Process.Kill()
		<-exited
	})
	// A caption is printed once it is saved.
	captions := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			captions <- sc.Text()
		}
	}()
	select {
	case <-captions:
	case <-exited:
		t.Fatalf("the live captions ended before their first caption\n%s", liveErr.String())
	case <-time.After(overlayPatience):
		t.Fatalf("no caption in %v\n%s", overlayPatience, liveErr.String())
	}

	app := openWindow(t, env, "captions")
	past := shown(t, app, "past")
	if len(past) != 1 || !strings.Contains(past[0], "In progress") {
		t.Fatalf("while the captions run, the app lists %q; want them in progress", past)
	}
	select {
	case <-exited:
		t.Fatalf("the live captions ended before they could be killed: make the recording longer\n%s", liveErr.String())
	default:
	}
	if err := live.Process.Kill(); err != nil { // SIGKILL: nothing of it runs after
		t.Fatal(err)
	}
	<-exited
	app.quit()

	app = openWindow(t, env, "captions")
	past = shown(t, app, "past")
	if len(past) != 1 || !regexp.MustCompile(`Interrupted: [1-9][0-9]* captions? saved`).MatchString(past[0]) {
		t.Fatalf("after the crash the app lists %q; want the session interrupted, with its captions saved", past)
	}
	app.quit()
}
