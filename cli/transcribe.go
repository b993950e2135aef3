package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

const transcribeSummary = "transcribe an audio file, or the microphone live"

// transcribeFlags are the command line of transcribe.
type transcribeFlags struct {
	format      string
	output      string
	model       string
	language    string
	diarize     bool
	smartFormat bool
	live        bool
	device      string
	listDevices bool
	replay      string
	source      string

	set  map[string]bool // the flags given on the command line
	args []string        // the positional arguments
}

func newTranscribeFlags(env Env) (*flag.FlagSet, *transcribeFlags) {
	f := &transcribeFlags{}
	fs := flag.NewFlagSet("transcribe", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&f.format, "format", "", "`FORMAT` of the transcript: srt, vtt, txt or json (default: from the -o file's extension, else txt)")
	fs.StringVar(&f.output, "o", "", "write the transcript to `FILE` instead of standard output")
	fs.StringVar(&f.model, "model", "", "speech model `M` for this run (default: the one in Settings)")
	fs.StringVar(&f.language, "language", "", "language `L` for this run, e.g. en or fr (default: the one in Settings)")
	fs.BoolVar(&f.diarize, "diarize", false, "tell speakers apart for this run; --diarize=false turns it off (default: as in Settings)")
	fs.BoolVar(&f.smartFormat, "smart-format", false, "format numbers, dates and punctuation for this run; --smart-format=false turns it off (default: as in Settings)")
	fs.BoolVar(&f.live, "live", false, "transcribe the microphone until Ctrl+C instead of a file")
	fs.StringVar(&f.device, "device", "", "with --live: the microphone `ID`, or with --source system the sound source's (see --list-devices; default: the one in Settings, the output in use)")
	fs.StringVar(&f.source, "source", "", "with --live: what to hear, `mic`, system (the sound the computer plays: the others in a meeting) or both (two channels, You and Others) (default: as in Settings)")
	fs.BoolVar(&f.listDevices, "list-devices", false, "list the microphones and the sources of the computer's sound, with their IDs")
	fs.StringVar(&f.replay, "replay", "", "for testing: replay the recording `FILE` at real time instead of the microphone (implies --live)")
	fs.Usage = func() {
		w := env.Stderr
		fmt.Fprint(w, `Usage: earshot transcribe FILE [--format srt|vtt|txt|json] [-o OUT] [--model M] [--language L] [--diarize] [--smart-format]
       earshot transcribe --live [--source mic|system|both] [--device ID] [--format txt|srt|vtt|json] [-o OUT] [--model M] [--language L] [--diarize] [--smart-format]
       earshot transcribe --list-devices

Transcribes an audio file (wav, mp3, flac, ogg, opus, aac, or the sound of
an m4a, mp4, mov, webm or mkv recording: its first audio track) and prints the
transcript, or with --live captures the microphone and prints each final
caption as it arrives until Ctrl+C. It uses the service chosen in the
app's Settings (by default the hosted service when an API key is set, in
the keyring or DEEPGRAM_API_KEY, else the local engine), and every run is
saved to the app's history. The flags override the saved settings for
this run only.

The transcript goes to standard output (or -o); progress and live interim
text go to standard error when it is a terminal.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, f
}

// usageError returns the function a command reports a mistake in its
// arguments with: the mistake, and where its help is, then errUsage.
func usageError(env Env, cmd string) func(format string, a ...any) error {
	return func(format string, a ...any) error {
		fmt.Fprintf(env.Stderr, "earshot "+cmd+": "+format+"\n\nRun 'earshot "+cmd+" -h' for help.\n", a...)
		return errUsage
	}
}

// parseInterleaved parses args with fs, allowing flags after the
// positional arguments (earshot transcribe talk.wav --format srt), and
// returns those. Everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return positional, err
		}
		rest := fs.Args()
		used := len(args) - len(rest)
		if used > 0 && args[used-1] == "--" {
			return append(positional, rest...), nil
		}
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parse reads args, allowing flags after the positional arguments.
func (f *transcribeFlags) parse(fs *flag.FlagSet, args []string) error {
	var err error
	if f.args, err = parseInterleaved(fs, args); err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.replay != "" {
		f.live = true // a replay stands in for the microphone
	}
	return nil
}

// check reports a mistake in the combination of flags and arguments.
func (f *transcribeFlags) check() error {
	switch {
	case f.listDevices && (f.live || len(f.args) > 0):
		return errors.New("--list-devices takes no file and no --live")
	case f.listDevices:
		return nil
	case f.live && len(f.args) > 0:
		return fmt.Errorf("--live transcribes the microphone: it takes no file (got %q)", f.args[0])
	case f.device != "" && !f.live:
		return errors.New("--device needs --live")
	case f.device != "" && f.replay != "":
		return errors.New("--device and --replay both choose the audio: give one")
	case f.source != "" && f.source != "mic" && f.source != "system" && f.source != "both":
		return fmt.Errorf("--source is mic, system or both, not %q", f.source)
	case f.source != "" && !f.live:
		return errors.New("--source needs --live")
	case f.source != "" && f.replay != "":
		return errors.New("--source and --replay both choose the audio: give one")
	case !f.live && len(f.args) == 0:
		return errors.New("which file? give the audio file to transcribe, or --live for the microphone")
	case len(f.args) > 1:
		return fmt.Errorf("one file at a time (got %d: %s)", len(f.args), strings.Join(f.args, ", "))
	}
	return nil
}

// exportFormat is the format asked for: --format, else the extension of
// the -o file when it names one, else plain text.
func (f *transcribeFlags) exportFormat() (sessions.ExportFormat, error) {
	if f.format != "" {
		return sessions.ParseExportFormat(f.format)
	}
	if ext := filepath.Ext(f.output); ext != "" {
		if ef, err := sessions.ParseExportFormat(ext); err == nil {
			return ef, nil
		}
	}
	return sessions.ExportText, nil
}

// settings applies the flags that override s for this run.
func (f *transcribeFlags) settings(s store.Settings) (store.Settings, error) {
	if f.set["model"] {
		s.Model = f.model
	}
	if f.set["language"] {
		s.Language = f.language
	}
	if f.set["diarize"] {
		s.Diarize = f.diarize
	}
	if f.set["smart-format"] {
		s.SmartFormat = f.smartFormat
	}
	return s, s.Validate()
}

func transcribe(ctx context.Context, env Env, args []string) error {
	fs, f := newTranscribeFlags(env)
	if err := f.parse(fs, args); err != nil {
		return errUsage
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(env.Stderr, "earshot transcribe: %v\n\nRun 'earshot transcribe -h' for help.\n", err)
		return errUsage
	}
	format, err := f.exportFormat()
	if err != nil {
		fmt.Fprintf(env.Stderr, "earshot transcribe: %v\n", err)
		return errUsage
	}
	if f.set["model"] && f.model == "" || f.set["language"] && f.language == "" {
		fmt.Fprintln(env.Stderr, "earshot transcribe: --model and --language need a name")
		return errUsage
	}
	// Say plainly what is wrong with the file before anything starts.
	if !f.live && !f.listDevices {
		if err := checkInputFile(f.args[0]); err != nil {
			return err
		}
	}
	if f.replay != "" {
		if err := checkInputFile(f.replay); err != nil {
			return err
		}
	}
	ws, err := env.workspace(ctx, "transcribe")
	if err != nil {
		return err
	}
	defer ws.Close()

	if f.listDevices {
		return listDevices(ctx, env, ws)
	}
	saved, err := ws.Settings(ctx)
	if err != nil {
		return fmt.Errorf("read the settings: %w", err)
	}
	s, err := f.settings(saved)
	if err != nil {
		fmt.Fprintf(env.Stderr, "earshot transcribe: %v\n", err)
		return errUsage
	}
	if f.live {
		return runLive(ctx, env, ws, f, s, format)
	}
	return transcribeFile(ctx, env, ws, f.args[0], f.output, s, format)
}

// checkInputFile says plainly why path cannot be transcribed, if it
// cannot.
func checkInputFile(path string) error { return checkFile(path, "an audio file") }

// checkFile says plainly why path cannot be read as what, if it cannot:
// it is missing, not to be read, or a folder.
func checkFile(path, what string) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	case err != nil:
		return err
	case info.IsDir():
		return fmt.Errorf("%s is a folder, not %s", path, what)
	}
	return nil
}

// transcribeFile transcribes the file at path through the workspace's
// connection and history, with the options s chooses, and writes the
// transcript to out (standard output when "").
func transcribeFile(ctx context.Context, env Env, ws *Workspace, path, out string, s store.Settings, format sessions.ExportFormat) error {
	conn, err := ws.Connection(ctx)
	if err != nil {
		return err
	}
	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	name := filepath.Base(path)
	began := time.Now()

	var (
		mu   sync.Mutex
		last sessions.Progress
	)
	render := func() string {
		mu.Lock()
		p := last
		mu.Unlock()
		elapsed := time.Since(began).Truncate(time.Second)
		switch {
		case p.Phase == sessions.PhaseReading:
			return fmt.Sprintf("Reading %s...", name)
		case p.Phase == sessions.PhaseUploading && p.Total > 0:
			return fmt.Sprintf("Sending %s to %s: %.0f%% of %s", name, conn.Name, 100*p.Fraction(), byteSize(p.Total))
		case p.Phase == sessions.PhaseDecoding && p.Length > 0:
			return fmt.Sprintf("Decoding %s and sending it to %s: %s of %s", name, conn.Name, timecode.Duration(p.Decoded), timecode.Duration(p.Length))
		case p.Phase == sessions.PhaseDecoding:
			return fmt.Sprintf("Decoding %s and sending it to %s: %s", name, conn.Name, timecode.Duration(p.Decoded))
		}
		return fmt.Sprintf("%s is transcribing %s... %s", conn.Name, name, elapsed)
	}
	progress := func(p sessions.Progress) {
		mu.Lock()
		last = p
		mu.Unlock()
		status.set(render())
	}
	progress(sessions.Progress{Phase: sessions.PhaseReading})
	stopTicking := func() {}
	if status.on {
		stopTicking = status.tick(render)
	}
	defer stopTicking()

	ft := sessions.FileTranscription{Client: conn.Client, History: ws.FileHistory(), Backend: conn.Name, KeepAudio: s.KeepAudio}
	sess := ft.Session(path, sessions.ListenOptions(s, api.Batch))
	if err := sess.Start(ctx); err != nil {
		return err
	}
	if note := sess.Audio().TrackNote(); note != "" {
		status.clear()
		fmt.Fprintf(env.Stderr, "Transcribing %s: %s.\n", name, note)
	}
	// A transcript history could not keep is still written out; the
	// failure to keep it is the command's error.
	res, unsaved := sess.Wait(progress)
	if res == nil {
		return unsaved
	}
	t := sessions.Transcript{
		Title:    name,
		Captions: sessions.CaptionsOf(res.Response),
		Response: res.Response,
		Created:  began,
	}
	var buf bytes.Buffer
	if err := sessions.Export(&buf, format, t); err != nil {
		return fmt.Errorf("write the transcript: %w", err)
	}
	stopTicking()
	status.clear()
	if err := writeOutput(env, out, buf.Bytes()); err != nil {
		return err
	}
	saved, _ := keptWords(res.History)
	fmt.Fprintf(env.Stderr, "Transcribed %s (%.1f s of audio) with %s in %.1f s; %s.\n",
		name, res.Response.Metadata.Duration, conn.Name, time.Since(began).Seconds(), saved)
	return unsaved
}

// writeOutput writes b to the file out, or to standard output when out is
// "" or "-". The transcript is complete before the file is touched, so a
// failed run never truncates a file.
func writeOutput(env Env, out string, b []byte) error {
	if out == "" || out == "-" {
		_, err := env.Stdout.Write(b)
		return err
	}
	// Whole or not at all: a full disk leaves no half a file behind.
	if err := sessions.WriteFile(out, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("write the transcript: %w", err)
	}
	return nil
}

// plainError rewords the failures people meet most into what to do about
// them, keeping the service's own explanation. The result still matches
// err with errors.Is and errors.As.
func plainError(err error) error {
	var apiErr *api.Error
	var dns *net.DNSError
	var done *reworded
	var partial *sessions.PartialSynthesisError
	var unsaved *sessions.SaveFailedEvent
	switch {
	case errors.As(err, &done):
		return err // already in plain words
	case errors.As(err, &partial):
		return reword(err, "%s", partial.Error()) // how much was spoken first, then why it stopped
	case errors.Is(err, context.Canceled):
		return reword(err, "cancelled")
	case errors.Is(err, sessions.ErrNoKey):
		return err
	case errors.As(err, &unsaved) && errors.Is(err, store.ErrDiskFull):
		was := "was"
		if unsaved.Plural {
			was = "were"
		}
		return reword(err, "the disk is full: %s %s not saved to history (free some space)", unsaved.What, was)
	case errors.Is(err, store.ErrDiskFull):
		return reword(err, "the disk is full, so nothing was written (free some space): %v", err)
	case errors.Is(err, audio.ErrNoAudioTrack):
		return reword(err, "%v: there is no sound in it to transcribe", err)
	case errors.Is(err, api.ErrUndecodableAudio), errors.Is(err, audio.ErrUndecodable):
		return reword(err, "the audio could not be decoded: is it a wav, mp3, flac, ogg, opus, m4a, mp4, webm, mkv or mov file? (%v)", err)
	case errors.As(err, &apiErr):
		return reword(err, "%s", serviceWords(apiErr))
	case errors.Is(err, api.ErrInvalidOptions):
		return reword(err, "the options were refused before sending: %v", err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return reword(err, "cannot reach the service: nothing is listening at its address (%v)", err)
	case errors.As(err, &dns):
		return reword(err, "cannot find the service's host %q: check the address and the network", dns.Name)
	case errors.Is(err, context.DeadlineExceeded):
		return reword(err, "the service did not answer in time (%v)", err)
	case deviceProblem(err) != "the speaker could not be opened":
		return reword(err, "%s", deviceProblem(err))
	}
	return err
}

// serviceWords says what an answer of the service means, with its own
// explanation and its status for reference.
func serviceWords(e *api.Error) string {
	what := "the service refused the request"
	switch {
	case errors.Is(e, api.ErrUnauthorized):
		what = "the service did not accept the API key"
	case errors.Is(e, api.ErrRateLimited):
		what = "the service is busy; try again in a moment"
	case errors.Is(e, api.ErrNotFound):
		what = "the service does not offer this"
	case e.Status >= 500:
		what = "the service ran into a problem of its own"
	}
	msg := e.Message
	if msg == "" {
		msg = e.Details
	}
	if msg != "" {
		what += ": " + msg
	}
	switch {
	case e.Status != 0:
		what += fmt.Sprintf(" (HTTP %d)", e.Status)
	case e.Code != "":
		what += " (" + e.Code + ")"
	}
	return what
}

// reworded is an error told in other words that still matches the
// original.
type reworded struct {
	msg string
	err error
}

func reword(err error, format string, args ...any) error {
	return &reworded{msg: fmt.Sprintf(format, args...), err: err}
}

func (r *reworded) Error() string { return r.msg }
func (r *reworded) Unwrap() error { return r.err }

// byteSize writes n bytes for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// statusLine is one line of standard error rewritten in place: progress and
// interim text. It shows only on a terminal, so logs and pipes get clean
// lines. It is safe for concurrent use.
type statusLine struct {
	w     io.Writer
	on    bool
	width int

	mu    sync.Mutex // guards shown and writes to w
	shown bool
}

func newStatusLine(env Env, w io.Writer) *statusLine {
	width := 80
	if env.Getenv != nil {
		var n int
		if _, err := fmt.Sscanf(env.Getenv("COLUMNS"), "%d", &n); err == nil && n >= 20 {
			width = n
		}
	}
	return &statusLine{w: w, on: env.isTerminal(w), width: width}
}

// set shows text, its end when it is wider than the terminal (a wrapped
// line could not be rewritten).
func (s *statusLine) set(text string) {
	if !s.on {
		return
	}
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > s.width-1 {
		text = "…" + string(r[len(r)-(s.width-2):])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprint(s.w, "\r\x1b[K"+text)
	s.shown = true
}

// clear removes the line, so what follows starts on a clean one.
func (s *statusLine) clear() {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// tick redraws render() every quarter second until the returned stop is
// called; stop waits for the redrawing to end and may be called again.
func (s *statusLine) tick(render func() string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.set(render())
			case <-done:
				return
			}
		}
	})
	return sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}
