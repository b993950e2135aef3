package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The long-file measurement (issue 25): the resident memory of the real
// app while it transcribes a long recording chosen in its Captions tab
// (Open file…), on the local engine it runs in its own process, with the
// default settings (the audio kept in history, the transcript and its
// audio shown when it is done). Beside it, in the same run, the same
// binary on a short recording of the same kind: what the length costs is
// the difference. The recordings are made here with ffmpeg from the
// LibriVox reading, not committed: its five lines with a pause after
// each (27.7 s), again and again to the length, as an AAC M4A of the kind
// meeting apps record. A previous build (EARSHOT_REF_BIN) is measured on
// a WAV of the long recording, which any build reads, beside this one.
const (
	longShort    = 2 * time.Minute        // the short recording
	longSample   = time.Second            // between looks at the app's children
	longPoll     = 5 * time.Second        // between looks at the history
	longSettle   = 10 * time.Second       // after the entry is done: the transcript and its audio shown
	longRSSLimit = 300                    // MB: what the app may hold (issue 25)
	longStart    = 3 * time.Second        // after the window is mapped, before Ctrl+O
	longKeyDelay = 500 * time.Millisecond // for the dialog to open
)

// longRun is one transcription measured.
type longRun struct {
	binary, file string
	length       time.Duration // of the recording
	took         time.Duration
	idleMB       float64 // the app's RSS before the file was opened
	peakMB       float64 // the app's VmHWM
	endMB        float64 // the app's RSS once the transcript was shown
	childMB      float64 // the most its children (ffmpeg) held at once, sampled
	status       string
	seconds      float64 // of audio, as the entry says
}

// longFileTable measures the app on a recording of length against one of
// longShort.
func longFileTable(ctx context.Context, length time.Duration) error {
	fmt.Printf("### A long file: the app's memory while it transcribes %s\n\n", clock(length))
	if length <= longShort {
		return fmt.Errorf("the long recording (%v) must be longer than the short one (%v)", length, longShort)
	}
	if missingTool(append(appTools, "ffmpeg")...) {
		return nil
	}
	tmp, err := os.MkdirTemp("", "benchtables-long-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := buildEarshot(ctx, tmp)
	if err != nil {
		return err
	}
	short, err := longRecording(ctx, tmp, longShort, ".m4a")
	if err != nil {
		return err
	}
	long, err := longRecording(ctx, tmp, length, ".m4a")
	if err != nil {
		return err
	}
	type job struct {
		name, bin, file string
		length          time.Duration
	}
	jobs := []job{{"this build", bin, short, longShort}, {"this build", bin, long, length}}
	if ref := os.Getenv("EARSHOT_REF_BIN"); ref != "" {
		wav, err := longRecording(ctx, tmp, length, ".wav")
		if err != nil {
			return err
		}
		jobs = append(jobs, job{"this build", bin, wav, length}, job{"reference (" + filepath.Base(ref) + ")", ref, wav, length})
	}
	var runs []longRun
	for _, j := range jobs {
		fmt.Fprintf(os.Stderr, "long file: %s, %s\n", j.name, filepath.Base(j.file))
		r, err := measureLongFile(ctx, tmp, appTarget{name: j.name, title: "Earshot", bin: j.bin}, j.file)
		if err != nil {
			return fmt.Errorf("%s, %s: %w", j.name, filepath.Base(j.file), err)
		}
		r.length = j.length
		fmt.Fprintf(os.Stderr, "long file: %s, %s: %s in %v, peak RSS %.0f MB\n", j.name, filepath.Base(j.file), r.status, r.took.Round(time.Second), r.peakMB)
		runs = append(runs, r)
	}
	fmt.Printf("Each run: the real binary in an X server of its own (Xvfb, software OpenGL), a fresh HOME and D-Bus session, default settings (local engine, the audio kept); "+
		"Ctrl+O, the file's path typed, Enter; done when `earshot history` lists the entry as ended, then %v for the transcript and its audio to show. "+
		"*Idle*: the app's RSS before Ctrl+O. *Peak*: its VmHWM at the end (its engine included: it runs in the app's process). "+
		"*ffmpeg*: the most the app's children held at once, sampled every %v.\n\n", longSettle, longSample)
	fmt.Println("| binary | file | size | entry | audio | wall time | idle RSS | peak RSS | RSS at the end | ffmpeg |")
	fmt.Println("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for i, r := range runs {
		size := ""
		if info, err := os.Stat(jobs[i].file); err == nil {
			size = fmt.Sprintf("%.1f MB", float64(info.Size())/1e6)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %.0f MB | %.0f MB | %.0f MB | %.0f MB |\n", r.binary, r.file, size, r.status,
			clock(time.Duration(r.seconds*float64(time.Second))), r.took.Round(time.Second), r.idleMB, r.peakMB, r.endMB, r.childMB)
	}
	fmt.Println()
	fmt.Printf("The %s recording's peak is %.2fx the %s one's (%+.0f MB), for %.1fx the audio. ",
		clock(length), runs[1].peakMB/runs[0].peakMB, clock(longShort), runs[1].peakMB-runs[0].peakMB, length.Seconds()/longShort.Seconds())
	if len(runs) == 4 {
		fmt.Printf("On the WAV, this build's peak is %.2fx the reference's (%.0f MB against %.0f MB). ", runs[2].peakMB/runs[3].peakMB, runs[2].peakMB, runs[3].peakMB)
	}
	verdict := "under"
	if runs[1].peakMB >= longRSSLimit {
		verdict = "NOT under"
	}
	fmt.Printf("Target: the app under %d MB: %s.\n\n", longRSSLimit, verdict)
	return nil
}

// clock writes a length of audio as h:mm:ss, or m:ss under an hour.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// longRecording makes a recording of length in dir, of the reading again
// and again, and returns its path: ext .m4a (AAC, 64 kb/s) or .wav.
func longRecording(ctx context.Context, dir string, length time.Duration, ext string) (string, error) {
	ffmpeg := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "ffmpeg", append([]string{"-v", "error", "-y"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ffmpeg %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	reading := filepath.Join(dir, "reading.wav")
	if _, err := os.Stat(reading); err != nil {
		pause := filepath.Join(dir, "pause.wav")
		if err := ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "0.6", "-c:a", "pcm_s16le", pause); err != nil {
			return "", err
		}
		var lines strings.Builder
		for _, id := range []string{"0870", "0880", "0890", "0920", "0930"} {
			fmt.Fprintf(&lines, "file '%s'\nfile '%s'\n", filepath.Join(librivox, "sense_and_sensibility_01_austen_64kb-"+id+".wav"), pause)
		}
		list := filepath.Join(dir, "reading.txt")
		if err := os.WriteFile(list, []byte(lines.String()), 0o644); err != nil {
			return "", err
		}
		if err := ffmpeg("-f", "concat", "-safe", "0", "-i", list, "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", reading); err != nil {
			return "", err
		}
	}
	codec := []string{"-c:a", "aac", "-b:a", "64k"}
	if ext == ".wav" {
		codec = []string{"-c:a", "pcm_s16le"}
	}
	out := filepath.Join(dir, strings.ReplaceAll(clock(length), ":", "-")+ext)
	args := append([]string{"-stream_loop", "-1", "-i", reading, "-t", strconv.FormatFloat(length.Seconds(), 'f', 0, 64)}, codec...)
	return out, ffmpeg(append(args, out)...)
}

// measureLongFile starts t, has it transcribe file from its Captions tab
// and follows its memory until the entry is done and shown, reading the
// run's history with t's own `history` command (a binary of another
// version could migrate the history under the app).
func measureLongFile(ctx context.Context, tmp string, t appTarget, file string) (longRun, error) {
	r := longRun{binary: t.name, file: filepath.Base(file)}
	scratch, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(scratch)
	run, pid, display, xauth, _, err := startApp(ctx, scratch, t)
	if err != nil {
		return r, err
	}
	defer run.stop()
	fail := func(err error) (longRun, error) { return r, fmt.Errorf("%w%s", err, run.tail()) }
	wait := func(d time.Duration) error { return run.sleep(ctx, d) }
	xdo := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "xdotool", args...)
		cmd.Env = []string{"PATH=" + appPath, "DISPLAY=" + display, "XAUTHORITY=" + xauth}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("xdotool %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	win, err := run.window(ctx, display, xauth, t.title)
	if err != nil {
		return fail(err)
	}
	if err := wait(longStart); err != nil {
		return fail(err)
	}
	idle, err := procRSS(pid)
	if err != nil {
		return fail(err)
	}
	r.idleMB = float64(idle) / appRSSUnit
	began := time.Now()
	for _, step := range [][]string{
		{"windowfocus", "--sync", win},
		{"key", "--clearmodifiers", "ctrl+o"},
		{"sleep", strconv.FormatFloat(longKeyDelay.Seconds(), 'f', 1, 64)},
		{"key", "--clearmodifiers", "ctrl+a"},
		{"type", "--delay", "5", file},
		{"key", "Return"},
	} {
		if err := xdo(step...); err != nil {
			return fail(err)
		}
	}
	home := filepath.Join(scratch, "home")
	var (
		seen   bool
		looked time.Time
	)
	for {
		if kids := childrenRSS(pid); kids > r.childMB {
			r.childMB = kids
		}
		if time.Since(looked) >= longPoll {
			looked = time.Now()
			status, secs, ok := lastFileEntry(ctx, t.bin, home)
			seen = seen || ok
			if ok && status != "running" {
				r.status, r.seconds, r.took = status, secs, time.Since(began)
				break
			}
			if !seen && time.Since(began) > appMapTimeout {
				return fail(fmt.Errorf("no file entry in history %v after the file was chosen", appMapTimeout))
			}
		}
		if err := wait(longSample); err != nil {
			return fail(err)
		}
	}
	if err := wait(longSettle); err != nil {
		return fail(err)
	}
	peak, err := procStatusKB(pid, "VmHWM")
	if err != nil {
		return fail(err)
	}
	rss, err := procRSS(pid)
	if err != nil {
		return fail(err)
	}
	r.peakMB, r.endMB = float64(peak)/appRSSUnit, float64(rss)/appRSSUnit
	return r, nil
}

// lastFileEntry reads the newest file entry of the history under home
// with cli's `history` command: its status and length.
func lastFileEntry(ctx context.Context, cli, home string) (status string, seconds float64, ok bool) {
	cmd := exec.CommandContext(ctx, cli, "history", "--kind", "file", "--limit", "1", "--json")
	cmd.Env = []string{"PATH=" + appPath, "HOME=" + home, "LANG=C.UTF-8"}
	out, err := cmd.Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return "", 0, false
	}
	var e struct {
		Status   string  `json:"status"`
		Duration float64 `json:"duration"`
	}
	if json.Unmarshal(bytes.TrimSpace(out), &e) != nil {
		return "", 0, false
	}
	return e.Status, e.Duration, true
}

// childrenRSS is the resident memory of pid's children, in MB: those of
// every thread, as any thread may have started one.
func childrenRSS(pid int) float64 {
	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kb int64
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				if v, err := procRSS(n); err == nil {
					kb += v
				}
			}
		}
	}
	return float64(kb) / appRSSUnit
}
