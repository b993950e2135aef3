// Command earshot is a desktop app for a speech and text intelligence
// service, with an offline engine of the same interface built in. Without
// arguments it opens the app; with a command (earshot help) it runs
// headless.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"fyne.io/fyne/v2/app"
	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/cli"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
	"github.com/earshot-app/earshot/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		env := cli.Env{
			Stdout:        os.Stdout,
			Stderr:        os.Stderr,
			Stdin:         os.Stdin,
			Getenv:        os.Getenv,
			NewEngine:     newEngine,
			OpenWorkspace: openWorkspace,
		}
		return cli.Run(ctx, env, args)
	}
	if err := runApp(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "earshot:", err)
		return 1
	}
	return 0
}

// newEngine builds the local engine for `earshot serve`.
func newEngine(c cli.ServeConfig) (cli.Server, error) {
	return engine.New(engine.Config{
		Key:            c.Key,
		Region:         c.Region,
		MaxConnections: c.MaxConnections,
		LoopbackOnly:   c.LoopbackOnly,
		Logger:         c.Logger,
	})
}

// runApp opens the window. With EARSHOT_SCREENSHOT=NAME
// (scripts/screenshots) it shows the tab NAME on the local engine, with no
// key at all.
func runApp(ctx context.Context) error {
	log := newLogger()
	data, err := openAppData(ctx, log)
	if err != nil {
		return err
	}
	defer data.close()
	cfg := data.cfg
	opts := ui.Options{Logger: log}
	shot := os.Getenv("EARSHOT_SCREENSHOT")
	if shot != "" {
		if err := screenshotSetup(ctx, shot, &cfg, &opts); err != nil {
			return err
		}
	}
	ws, err := sessions.NewWorkspace(cfg)
	if err != nil {
		return err
	}
	w := ui.New(app.NewWithID(ui.AppID), ws, opts)
	if shot != "" && !w.SelectTab(shot) {
		return fmt.Errorf("no view named %q to capture", shot)
	}
	shown := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			w.Quit()
		case <-shown:
		}
	}()
	w.ShowAndRun()
	close(shown)
	return nil
}

func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// appData is what the app and `earshot transcribe` share: the history in
// EARSHOT_DATA_DIR when it is set, else where store.DefaultPath says; the
// key in the keyring or DEEPGRAM_API_KEY; the local engine, started on a
// loopback port the first time it is needed.
type appData struct {
	cfg   sessions.WorkspaceConfig
	db    *store.DB
	local *localEngine
}

func openAppData(ctx context.Context, log *slog.Logger) (*appData, error) {
	path, err := store.DefaultPath()
	if dir := os.Getenv("EARSHOT_DATA_DIR"); dir != "" {
		path, err = filepath.Join(dir, "history.db"), nil
	}
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	local := &localEngine{cfg: engine.Config{Logger: log}}
	return &appData{
		cfg: sessions.WorkspaceConfig{
			History:     db,
			Keys:        sessions.NewKeys(store.NewFallback(store.Keyring{}), os.Getenv),
			Local:       local.start,
			Microphones: sessions.DeviceMicrophones{},
			Speakers:    sessions.DeviceSpeakers{},
			Logger:      log,
		},
		db:    db,
		local: local,
	}, nil
}

// close stops the local engine if it was started, then closes the
// history.
func (d *appData) close() error {
	d.local.close()
	return d.db.Close()
}

// openWorkspace gives `earshot transcribe` the app's own workspace.
func openWorkspace(ctx context.Context) (*cli.Workspace, error) {
	data, err := openAppData(ctx, newLogger())
	if err != nil {
		return nil, err
	}
	ws, err := sessions.NewWorkspace(data.cfg)
	if err != nil {
		data.close()
		return nil, err
	}
	return &cli.Workspace{Workspace: ws, History: data.db, Close: data.close}, nil
}

// localEngine starts the built-in engine the first time it is asked for,
// and closes it at exit. It is safe for concurrent use.
type localEngine struct {
	cfg  engine.Config
	once sync.Once
	l    *engine.Local
	err  error
}

// start implements sessions.LocalEngine.
func (e *localEngine) start() (api.Endpoint, api.Secret, error) {
	e.once.Do(func() { e.l, e.err = engine.StartLocal(e.cfg) })
	if e.err != nil {
		return api.Endpoint{}, "", e.err
	}
	return e.l.Endpoint(), e.l.Key, nil
}

// close stops the engine if it was started; it is not started after.
func (e *localEngine) close() {
	e.once.Do(func() { e.err = fmt.Errorf("the app is closing") })
	if e.l != nil {
		e.l.Close()
	}
}

// screenshotSetup prepares a screenshot of the tab shot: the local
// engine, no key, speaker labels on, and for "captions" a real recording
// replayed in real time as the microphone, captioned at once; for
// "conversation" LibriVox lines with pauses between them, replayed in
// real time as the microphone, in a conversation started at once; for
// "analyze" a made-up support call pasted and analysed by the local
// engine; "ready" is printed once the tab (for these three, the whole
// recording or the analysis) is on screen.
func screenshotSetup(ctx context.Context, shot string, cfg *sessions.WorkspaceConfig, opts *ui.Options) error {
	cfg.Keys = sessions.NewKeys(&store.Memory{}, nil)
	s := store.DefaultSettings()
	s.Backend, s.Diarize = store.BackendLocal, true
	switch shot {
	case "captions":
		rec, err := loadRecording(ctx, recordingClips, 0.6, "Recording: a reader and a card player")
		if err != nil {
			return err
		}
		cfg.Microphones = rec
		s.InputDevice = recordingID
		opts.AutoStart = true
	case "conversation":
		rec, err := loadRecording(ctx, conversationClips, 1.6, "Recording: a reader, pausing between lines")
		if err != nil {
			return err
		}
		cfg.Microphones = rec
		s.InputDevice = recordingID
		opts.AutoConverse = true
	case "analyze":
		opts.AutoAnalyze = analyzeDocument
	case "voices":
		// No sound card under the virtual display: the null backend
		// plays in real time into nothing, so the playhead moves.
		cfg.Speakers = sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}
		s.Voice = "aura-2-thalia-en"
		opts.AutoSpeak = voicesText
	}
	if err := cfg.History.SaveSettings(ctx, s); err != nil {
		return err
	}
	opts.OnReady = func(err error) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println("ready")
	}
	return nil
}

// analyzeDocument is the analyze screenshot's document: a made-up call
// to a support line, written for Earshot, that turns from content to
// upset and back, with requests along the way.
const analyzeDocument = `Thanks for calling Brightline Internet, my name is Dana. How can I help you today?

Hi Dana, I have been a customer for six years and I have always loved the service. The connection is fast and the support team has been wonderful.

But this month I was charged twice for my subscription, and I am really upset about it. This is the second billing error this year, it is frustrating and honestly unacceptable.

I want to refund the duplicate charge right away. If this keeps happening I will cancel my subscription and switch to another provider.

I completely understand, and I am sorry for the trouble. I can see the duplicate payment on your account, and I have issued the refund, so it will reach your card within three days.

Oh, that is great news, thank you so much. While I have you, could you update my billing address? I moved to a new apartment last week.

Of course. Your new address is saved and the next invoice will go there. Is there anything else I can do for you?

No, that is everything. You have been very helpful, thanks again and have a lovely evening.`

// voicesText is what the voices screenshot speaks, with the settings'
// voice, through the null backend.
const voicesText = "Welcome to the voice playground. Pick a voice, type some text, and hear it at once: " +
	"playback starts as soon as the first audio arrives."

// The screenshot's recording: real human speech from pocketsphinx's test
// data, a LibriVox reader (Sense and Sensibility) answered by a second
// speaker calling playing cards, so that the captions show two speakers.
const (
	speechData  = "/usr/share/pocketsphinx/test/data/"
	recordingID = "recording"
)

var recordingClips = []string{
	"librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
	"cards/005.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
	"cards/002.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0890.wav",
	"cards/001.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0930.wav",
}

// conversationClips are the conversation screenshot's recording: lines of
// the LibriVox reading, each followed by a pause long enough to end a
// turn.
var conversationClips = []string{
	"librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0890.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0930.wav",
}

// recording is a Microphones with one device: the clips, joined by
// pauses and replayed in real time.
type recording struct {
	samples []int16
	name    string
}

// loadRecording joins clips with pause seconds of silence before the
// first and after each, as a microphone named name.
func loadRecording(ctx context.Context, clips []string, pause float64, name string) (recording, error) {
	const rate = 16000
	gap := make([]float32, int(pause*rate))
	all := gap
	for _, clip := range clips {
		f, err := os.Open(speechData + clip)
		if err != nil {
			return recording{}, fmt.Errorf("the screenshot's recording (pocketsphinx-testdata): %w", err)
		}
		b, err := audio.Decode(ctx, f)
		f.Close()
		if err != nil {
			return recording{}, fmt.Errorf("%s: %w", clip, err)
		}
		if b.SampleRate != rate || b.Channels != 1 {
			return recording{}, fmt.Errorf("%s: %d Hz, %d channels; want 16 kHz mono", clip, b.SampleRate, b.Channels)
		}
		all = append(append(all, b.Samples...), gap...)
	}
	return recording{samples: audio.Float32ToInt16(nil, all), name: name}, nil
}

func (r recording) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: recordingID, Name: r.name}}, nil
}

func (r recording) Open(context.Context, string) (audio.Source, error) {
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
	return audio.NewReplay(f, r.samples, audio.ReplayConfig{Paced: true})
}
