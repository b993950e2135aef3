package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The app measurement: how long Earshot takes from the exec of its binary
// to a mapped window, and what it costs once idle, beside a bare Fyne
// window measured the same way in the same run.
const (
	appSettle     = 5 * time.Second       // after the window is mapped, before RSS is read
	appIdleWindow = 10 * time.Second      // CPU time is counted over this much
	appMapTimeout = 60 * time.Second      // for the window to appear
	appPoll       = 10 * time.Millisecond // between looks for the window
	appQuitGrace  = 10 * time.Second      // for the app and its X server to end after SIGTERM
	appScreen     = "-screen 0 1280x800x24 -noreset"
	appPath       = "/usr/local/bin:/usr/bin:/bin"
	appRSSUnit    = 1024.0 // kB per MB
	appLogTail    = 2000   // bytes of the run's output quoted on failure

	// What the app may cost beyond the bare window (issue 10).
	appRSSTarget   = 1.3                    // times the bare window's idle RSS
	appStartTarget = 150 * time.Millisecond // after the bare window's
)

// appTrampoline runs inside xvfb-run. It keeps the pointer off the window
// (Xvfb puts it in the middle of the screen, where a hovered widget could
// redraw), reports its pid, the display and the time on fd 3, and becomes
// the app (same pid) with an empty environment and a fresh HOME, as
// scripts/screenshots runs it: no key, setting or history of the person
// running the benchmark reaches the app. Arguments: HOME,
// XDG_RUNTIME_DIR, the binary, PATH.
const appTrampoline = `xdotool mousemove 1279 799 >/dev/null 2>&1 || true
printf '%s\n%s\n%s\n%s\n' "$$" "$DISPLAY" "${XAUTHORITY:-}" "$(date +%s%N)" >&3
exec 3>&-
exec env -i PATH="$4" HOME="$1" XDG_RUNTIME_DIR="$2" LANG=C.UTF-8 \
	DISPLAY="$DISPLAY" XAUTHORITY="${XAUTHORITY:-}" DBUS_SESSION_BUS_ADDRESS="${DBUS_SESSION_BUS_ADDRESS:-}" "$3"`

// appTools are the programs that run the app in a virtual display.
var appTools = []string{"xvfb-run", "Xvfb", "xauth", "dbus-run-session", "xdotool"}

// appTarget is a program measured: its binary and its window's title.
type appTarget struct {
	name, title, bin string
}

// appSample is one run's figures.
type appSample struct {
	mapped time.Duration // from exec to the window mapped
	rssMB  float64       // resident memory once settled
	cpu    float64       // % of one core while idle
}

// appTable builds Earshot and the bare window, measures each reps times,
// interleaved, and prints the table. It skips, saying why, when the
// virtual display's tools are missing.
func appTable(ctx context.Context, reps int) error {
	fmt.Println("### App start-up and idle cost under Xvfb")
	fmt.Println()
	if missingTool(appTools...) {
		return nil
	}
	tmp, err := os.MkdirTemp("", "benchtables-app-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	targets, err := buildAppTargets(ctx, tmp)
	if err != nil {
		return err
	}
	ticks := clockTicks(ctx)

	samples := make([][]appSample, len(targets))
	for rep := range reps {
		// ABBA order, so that a drift of the machine during the run
		// weighs on both alike.
		order := []int{0, 1}
		if rep%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			t := targets[i]
			s, err := measureApp(ctx, tmp, t, ticks)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", t.name, rep+1, err)
			}
			fmt.Fprintf(os.Stderr, "app: %s run %d/%d: window after %.0f ms, RSS %.0f MB, idle CPU %.2f%%\n",
				t.name, rep+1, reps, ms(s.mapped), s.rssMB, s.cpu)
			samples[i] = append(samples[i], s)
		}
	}

	fmt.Printf("%d runs of each, interleaved; each run in an X server of its own (Xvfb %s, software OpenGL) and a fresh D-Bus session, "+
		"with an empty environment and a fresh HOME, so Earshot opens on the local engine with no key and no history. "+
		"*Window*: from the exec of the binary to its window being viewable (xdotool, polled every %d ms). "+
		"*Idle RSS*: resident memory of the app's process %d s after its window appeared. "+
		"*Idle CPU*: the process's user and system time over the following %d s, in %% of one core. "+
		"The bare window is an empty Fyne window of Earshot's size (bench/cmd/barewindow): what the toolkit costs by itself.\n\n",
		reps, strings.Fields(appScreen)[2], appPoll.Milliseconds(), int(appSettle.Seconds()), int(appIdleWindow.Seconds()))
	fmt.Printf("| measure | %s median | min | max | %s median | min | max | difference of medians |\n", targets[0].name, targets[1].name)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	rows := []struct {
		name   string
		of     func(appSample) float64
		format string
	}{
		{"start to window mapped", func(s appSample) float64 { return ms(s.mapped) }, "%.0f ms"},
		{"idle RSS", func(s appSample) float64 { return s.rssMB }, "%.0f MB"},
		{"idle CPU", func(s appSample) float64 { return s.cpu }, "%.2f%%"},
	}
	medians := map[string][]float64{}
	for _, r := range rows {
		fmt.Printf("| %s |", r.name)
		var meds []float64
		for i := range targets {
			xs := make([]float64, len(samples[i]))
			for j, s := range samples[i] {
				xs[j] = r.of(s)
			}
			med := median(xs)
			meds = append(meds, med)
			fmt.Printf(" "+r.format+" | "+r.format+" | "+r.format+" |", med, slices.Min(xs), slices.Max(xs))
		}
		fmt.Printf(" %+"+r.format[1:]+" |\n", meds[0]-meds[1])
		medians[r.name] = meds
	}
	fmt.Println()
	// The targets of issue 10 are relative to the bare window.
	start, rss := medians["start to window mapped"], medians["idle RSS"]
	fmt.Printf("%s's idle RSS is %.2fx the bare window's (target: at most %.1fx); its window is mapped %+.0f ms after the bare window's (target: at most %+d ms).\n\n",
		targets[0].name, rss[0]/rss[1], appRSSTarget, start[0]-start[1], appStartTarget.Milliseconds())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// buildAppTargets builds Earshot (see buildEarshot) and the bare window.
func buildAppTargets(ctx context.Context, dir string) ([]appTarget, error) {
	bin, err := buildEarshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	benchRoot, err := goListDir(ctx, "")
	if err != nil {
		return nil, err
	}
	targets := []appTarget{
		{name: "Earshot", title: "Earshot", bin: bin},
		{name: "bare window", title: "Bare", bin: filepath.Join(dir, "barewindow")},
	}
	if err := buildWithTags(ctx, benchRoot, "./cmd/barewindow", targets[1]); err != nil {
		return nil, err
	}
	return targets, nil
}

// buildEarshot builds Earshot (the repository's main package, which the
// bench module replaces its dependency with) into dir, and returns the
// binary. When EARSHOT_BIN names a binary, as for scripts/screenshots,
// that binary is measured instead of a fresh build.
func buildEarshot(ctx context.Context, dir string) (string, error) {
	if bin := os.Getenv("EARSHOT_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return "", err
		}
		if err := syscall.Access(abs, 1); err != nil { // X_OK
			return "", fmt.Errorf("EARSHOT_BIN: %s is not an executable: %w", bin, err)
		}
		return abs, nil
	}
	root, err := goListDir(ctx, "github.com/earshot-app/earshot")
	if err != nil {
		return "", err
	}
	t := appTarget{name: "Earshot", bin: filepath.Join(dir, "earshot")}
	return t.bin, buildWithTags(ctx, root, ".", t)
}

// buildWithTags builds pkg of the module in dir as t's binary, with
// Earshot's build tags: the bare window is the same toolkit, built the
// same way.
func buildWithTags(ctx context.Context, dir, pkg string, t appTarget) error {
	root, err := goListDir(ctx, "github.com/earshot-app/earshot")
	if err != nil {
		return err
	}
	tags, err := buildTags(root)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "app: building %s\n", t.name)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", t.bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", pkg, dir, err, out)
	}
	return nil
}

// buildTags reads the build tags every Earshot build uses
// (scripts/buildtags: one or more per line, # starts a comment) as one
// comma-separated list.
func buildTags(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "scripts", "buildtags"))
	if err != nil {
		return "", fmt.Errorf("the build tags: %w", err)
	}
	var tags []string
	for line := range strings.Lines(string(b)) {
		line, _, _ = strings.Cut(line, "#")
		tags = append(tags, strings.Fields(line)...)
	}
	return strings.Join(tags, ","), nil
}

// goListDir returns the directory of a module of the build (the main
// module for "").
func goListDir(ctx context.Context, module string) (string, error) {
	args := []string{"list", "-m", "-f", "{{.Dir}}"}
	if module != "" {
		args = append(args, module)
	}
	out, err := exec.CommandContext(ctx, "go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// clockTicks is the unit of the CPU times in /proc/PID/stat (USER_HZ),
// 100 on every Linux the app targets unless getconf says otherwise.
func clockTicks(ctx context.Context) float64 {
	out, err := exec.CommandContext(ctx, "getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			return float64(n)
		}
	}
	return 100
}

// appRun is one program running in its own X server and D-Bus session.
// Everything it started is in one process group, which stop ends.
type appRun struct {
	cmd    *exec.Cmd
	app    int           // the app's pid, once the trampoline has reported it
	exited chan struct{} // closed when the process tree's leader has been waited for
	log    string        // where the tree's output goes
}

// start starts t under dbus-run-session and xvfb-run, and reads what the
// trampoline reports: the app's pid, the display and the time of its exec.
func startApp(ctx context.Context, scratch string, t appTarget) (run *appRun, pid int, display, xauth string, began time.Time, err error) {
	home, xdgRun := filepath.Join(scratch, "home"), filepath.Join(scratch, "run")
	for _, d := range []string{home, xdgRun, filepath.Join(home, ".cache"), filepath.Join(home, ".config"), filepath.Join(home, ".local", "share")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, 0, "", "", time.Time{}, err
		}
	}
	logPath := filepath.Join(scratch, "output")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, 0, "", "", time.Time{}, err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, 0, "", "", time.Time{}, err
	}
	defer r.Close()
	cmd := exec.Command("dbus-run-session", "--", "xvfb-run", "-a", "-s", appScreen,
		"sh", "-c", appTrampoline, "sh", home, xdgRun, t.bin, appPath)
	cmd.Env = []string{"PATH=" + appPath, "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + scratch}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, 0, "", "", time.Time{}, fmt.Errorf("start %s: %w", t.name, err)
	}
	run = &appRun{cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() {
		defer close(run.exited)
		cmd.Wait()
	}()

	type report struct {
		lines []string
		err   error
	}
	got := make(chan report, 1)
	go func() { // ends when r is closed or the report is read
		var rep report
		sc := bufio.NewScanner(r)
		for len(rep.lines) < 4 && sc.Scan() {
			rep.lines = append(rep.lines, sc.Text())
		}
		if len(rep.lines) < 4 {
			rep.err = fmt.Errorf("the trampoline reported %q (%v)", rep.lines, sc.Err())
		}
		got <- rep
	}()
	var (
		rep      report
		received bool
	)
	fail := func(err error) (*appRun, int, string, string, time.Time, error) {
		run.stop()
		if !received {
			r.Close() // ends the reader
			<-got
		}
		return nil, 0, "", "", time.Time{}, fmt.Errorf("%w%s", err, run.tail())
	}
	select {
	case rep = <-got:
		received = true
	case <-run.exited:
		select {
		case rep = <-got:
			received = true
		case <-time.After(time.Second):
			return fail(errors.New("the virtual display ended before the app started"))
		}
	case <-time.After(appMapTimeout):
		return fail(errors.New("the virtual display did not start"))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	if rep.err != nil {
		return fail(rep.err)
	}
	pid, err1 := strconv.Atoi(rep.lines[0])
	ns, err2 := strconv.ParseInt(rep.lines[3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return fail(fmt.Errorf("the trampoline reported %q: %w", rep.lines, err))
	}
	run.app = pid
	return run, pid, rep.lines[1], rep.lines[2], time.Unix(0, ns), nil
}

// stop ends the whole process tree. It asks the app to quit (SIGTERM), as
// a desktop session would, and lets xvfb-run and dbus-run-session stop
// their servers; then it ends whatever is left of the group, with SIGTERM
// and at last SIGKILL.
func (a *appRun) stop() {
	pgid := a.cmd.Process.Pid
	if a.app > 0 {
		_ = syscall.Kill(a.app, syscall.SIGTERM)
	} else {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
	select {
	case <-a.exited:
	case <-time.After(appQuitGrace):
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(appQuitGrace / 2):
		}
	}
	// Members that outlived the leader, if any (ESRCH when all are gone).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-a.exited
}

// sleep waits d, failing when the app ends or ctx does.
func (a *appRun) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-a.exited:
		return errors.New("the app exited")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// window waits for the app's window named title to be viewable on
// display, looking every appPoll, and returns its id.
func (a *appRun) window(ctx context.Context, display, xauth, title string) (string, error) {
	deadline := time.Now().Add(appMapTimeout)
	for {
		cmd := exec.CommandContext(ctx, "xdotool", "search", "--onlyvisible", "--name", "^"+title+"$")
		cmd.Env = []string{"PATH=" + appPath, "DISPLAY=" + display, "XAUTHORITY=" + xauth}
		out, _ := cmd.Output() // exit status 1: no window yet
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			return ids[0], nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no window named %q appeared within %v", title, appMapTimeout)
		}
		if err := a.sleep(ctx, appPoll); err != nil {
			return "", fmt.Errorf("before its window appeared: %w", err)
		}
	}
}

// missingTool reports, having said so, whether a tool a measurement
// needs is not installed.
func missingTool(tools ...string) bool {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Printf("Skipped: %s was not found (scripts/setup installs it).\n\n", tool)
			return true
		}
	}
	return false
}

// tail is the end of the run's output, for an error message.
func (a *appRun) tail() string {
	b, _ := os.ReadFile(a.log)
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > appLogTail {
		b = b[len(b)-appLogTail:]
	}
	return "; its output ends with:\n" + string(b)
}

// measureApp runs t once: the time to its window, then its idle memory
// and CPU, then ends it and everything it started.
func measureApp(ctx context.Context, tmp string, t appTarget, ticks float64) (appSample, error) {
	scratch, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return appSample{}, err
	}
	defer os.RemoveAll(scratch)
	run, pid, display, xauth, began, err := startApp(ctx, scratch, t)
	if err != nil {
		return appSample{}, err
	}
	defer run.stop()
	fail := func(err error) (appSample, error) { return appSample{}, fmt.Errorf("%w%s", err, run.tail()) }

	wait := func(d time.Duration) error { return run.sleep(ctx, d) }
	var s appSample
	if _, err := run.window(ctx, display, xauth, t.title); err != nil {
		return fail(err)
	}
	s.mapped = time.Since(began)
	// The pid is the app's own, not a wrapper's.
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != filepath.Base(t.bin) {
		return fail(fmt.Errorf("pid %d is %q, not %s (%v)", pid, bytes.TrimSpace(comm), filepath.Base(t.bin), err))
	}

	if err := wait(appSettle); err != nil {
		return fail(fmt.Errorf("while settling: %w", err))
	}
	rss, err := procRSS(pid)
	if err != nil {
		return fail(err)
	}
	s.rssMB = float64(rss) / appRSSUnit
	cpu0, err := procCPU(pid)
	if err != nil {
		return fail(err)
	}
	t0 := time.Now()
	if err := wait(appIdleWindow); err != nil {
		return fail(fmt.Errorf("while idle: %w", err))
	}
	cpu1, err := procCPU(pid)
	if err != nil {
		return fail(err)
	}
	s.cpu = 100 * float64(cpu1-cpu0) / ticks / time.Since(t0).Seconds()
	return s, nil
}

// procRSS reads a process's resident memory in kB.
func procRSS(pid int) (int64, error) { return procStatusKB(pid, "VmRSS") }

// procStatusKB reads a figure in kB of a process's status, such as VmRSS
// or VmHWM (its peak resident memory).
func procStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// procCPU reads a process's user plus system time, all threads, in clock
// ticks.
func procCPU(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count the fields
	// after it. utime and stime are fields 14 and 15 of the line, 12th and
	// 13th after the name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return utime + stime, nil
}
