package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
	"github.com/earshot-app/earshot/ui"
)

// appUnderTest, set in the environment, makes the test binary run the
// app itself (runApp, as main does) on the tab it names, instead of the
// tests: TestLongPasteThenSIGTERM drives it as a person would.
const appUnderTest = "EARSHOT_TEST_APP_TAB"

// commandUnderTest, set in the environment, makes the test binary run
// the command line it was given (run, as main does) instead of the
// tests.
const commandUnderTest = "EARSHOT_TEST_COMMAND"

func TestMain(m *testing.M) {
	if tab := os.Getenv(appUnderTest); tab != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := runApp(ctx, &testSetup{tab: tab})
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "earshot:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if os.Getenv(commandUnderTest) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:])
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testSetup opens the app on the local engine with no key, on tab, and
// once the window has loaded prints what it shows, a line each, then
// "ready": "notice" and the header's notice about the history (quoted,
// when it is on screen), "past" and each row of the Captions tab's
// history list.
type testSetup struct {
	tab string
	w   *ui.App
}

func (s *testSetup) prepare(ctx context.Context, cfg *sessions.WorkspaceConfig, opts *ui.Options) (appShow, error) {
	cfg.Keys = sessions.NewKeys(&store.Memory{}, nil)
	opts.OnReady = func(err error) {
		if text, shown := s.w.Notice(); shown {
			fmt.Printf("notice %q\n", text)
		}
		for _, row := range s.w.PastSessions() {
			fmt.Printf("past %q\n", row)
		}
		fmt.Println("ready", err)
	}
	return s, nil
}

func (s *testSetup) show(w *ui.App) error {
	s.w = w
	if !w.SelectTab(s.tab) {
		return fmt.Errorf("no tab %q", s.tab)
	}
	return nil
}

// TestLongPasteThenSIGTERM runs the real window under a virtual X
// server, pastes 1 MB of text into the Analyze tab's text box with
// Ctrl+V, as a person would, and then asks the app to end with SIGTERM.
// The window must close by itself: a UI goroutine still busy with the
// paste would leave it open, and the process would either hang (as it
// did) or be ended by runApp after quitGrace with status 1.
func TestLongPasteThenSIGTERM(t *testing.T) {
	for _, tool := range []string{"Xvfb", "xdotool", "xclip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: run scripts/setup", tool)
		}
	}
	dir := t.TempDir()
	display := startXvfb(t)

	doc := filepath.Join(dir, "long.txt")
	para := "Earshot keeps a long document aside instead of choking on it. "
	if err := os.WriteFile(doc, []byte(strings.Repeat(para, (1<<20)/len(para)+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DISPLAY=" + display, "HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"EARSHOT_DATA_DIR=" + filepath.Join(dir, "data"), appUnderTest + "=analyze"}

	// The clipboard's owner: xclip keeps serving the text until another
	// program takes the selection or the X server ends.
	// Its output is not read: the copy that stays holds it open.
	clip := exec.Command("xclip", "-selection", "clipboard", "-i", doc)
	clip.Env = env
	if err := clip.Run(); err != nil {
		t.Fatalf("xclip: %v", err)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	app := exec.Command(self)
	app.Env = env
	stdout, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	app.Stderr = &stderr
	// What the app starts may keep its output open after it ends.
	app.WaitDelay = 10 * time.Second
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = app.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = app.Process.Kill()
		<-exited
	})

	// Generous waits: the app is built with the race detector and the
	// whole suite shares two cores.
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready") {
				ready <- sc.Text()
			}
		}
	}()
	select {
	case line := <-ready:
		if line != "ready <nil>" {
			t.Fatalf("the window loaded with %q", line)
		}
	case <-exited:
		t.Fatalf("the app ended before its window loaded: %v\n%s", exitErr, stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the window did not load in 2 minutes\n%s", stderr.String())
	}

	xdo := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "xdotool", args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("xdotool %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	win := strings.Fields(xdo("search", "--sync", "--onlyvisible", "--name", "^Earshot$"))[0]
	// The text box fills the left of the Analyze tab, under its toolbar.
	xdo("windowfocus", "--sync", win)
	xdo("mousemove", "--window", win, "200", "400", "click", "1")
	xdo("key", "--clearmodifiers", "ctrl+v")

	if err := app.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		var ee *exec.ExitError
		if errors.As(exitErr, &ee) {
			t.Fatalf("the app ended with %v after SIGTERM, not by closing its window\n%s", exitErr, stderr.String())
		}
		if exitErr != nil {
			t.Fatal(exitErr)
		}
	case <-time.After(quitGrace + time.Minute):
		t.Fatalf("the app was still running a minute after SIGTERM\n%s", stderr.String())
	}
}

// startXvfb starts a virtual X server of 1280x800 on a free display, for
// the test's time, and returns its name once the server accepts a
// client: Xvfb names its display as soon as it listens, and a client
// started at that moment was seen to be refused on a loaded machine
// (openbox: "Failed to open the display").
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -noreset: the probe below is the server's first client, and an X
	// server resets when its last client leaves; the next client must
	// not arrive in the middle of that.
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset")
	x.ExtraFiles = []*os.File{w}
	var out testkit.Buffer
	x.Stdout, x.Stderr = &out, &out
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan struct{})
	go func() {
		_ = x.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = x.Process.Kill()
		<-exited
	})
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		got <- strings.TrimSpace(line)
	}()
	var display string
	select {
	case n := <-got:
		if n == "" {
			t.Fatalf("Xvfb did not start: %s", out.String())
		}
		display = ":" + n
	case <-time.After(time.Minute):
		t.Fatalf("Xvfb did not start in a minute: %s", out.String())
	}
	// Ask the server for its root window until it answers: the minute
	// is the margin of a machine whose two cores run the whole suite.
	deadline := time.Now().Add(time.Minute)
	for {
		probe := exec.Command("xprop", "-root", "-display", display, "_NET_SUPPORTED")
		if probe.Run() == nil {
			return display
		}
		select {
		case <-exited:
			t.Fatalf("Xvfb on %s ended: %s", display, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Xvfb on %s did not accept a client in a minute: %s", display, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
