package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestMain closes the local engine the tests shared, if one started.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEngine != nil {
		if err := sharedEngine.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the local engine:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	engineOnce   sync.Once
	sharedEngine *engine.Local
	engineErr    error
)

// localEngine returns the local engine the tests share, started on first
// use on 127.0.0.1.
func localEngine(t *testing.T) sessions.LocalEngine {
	t.Helper()
	engineOnce.Do(func() { sharedEngine, engineErr = engine.StartLocal(engine.Config{MaxConnections: 16}) })
	if engineErr != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", engineErr)
	}
	return func() (api.Endpoint, api.Secret, error) {
		return sharedEngine.Endpoint(), sharedEngine.Key, nil
	}
}

// speechData holds real recordings of human speech (pocketsphinx-testdata).
const speechData = "/usr/share/pocketsphinx/test/data/"

// Clips of that data: a LibriVox reader, and another speaker calling cards.
const (
	reader1 = "librivox/sense_and_sensibility_01_austen_64kb-0870.wav"
	reader2 = "librivox/sense_and_sensibility_01_austen_64kb-0880.wav"
	cards1  = "cards/005.wav"
	cards2  = "cards/002.wav"
)

// twoSpeakers is a conversation of the reader and the card player, which
// the local engine labels as two speakers.
var twoSpeakers = []string{reader1, cards1, reader2, cards2}

// recording joins clips with 0.6 s pauses, at 16 kHz.
func recording(t *testing.T, clips ...string) []int16 {
	t.Helper()
	pause := make([]float32, 9600)
	var all []float32
	for _, c := range clips {
		f, err := os.Open(speechData + c)
		if err != nil {
			t.Fatalf("test speech (pocketsphinx-testdata): %v", err)
		}
		b, err := audio.Decode(t.Context(), f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b.SampleRate != 16000 || b.Channels != 1 {
			t.Fatalf("%s: %d Hz %d channels", c, b.SampleRate, b.Channels)
		}
		all = append(append(all, b.Samples...), pause...)
	}
	return audio.Float32ToInt16(nil, all)
}

// writeWAV writes samples to a WAV file in a temporary directory.
func writeWAV(t *testing.T, name string, samples []int16) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := audio.EncodeWAV(f, samples, 16000, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeMics is a microphone that replays a recording, paced at speed times
// real time (0 for as fast as it is read), looping or not. Opening it
// again starts the recording over.
type fakeMics struct {
	samples []int16
	speed   float64
	loop    bool
	failing error // Open fails with it, when set
	// holds stop the recording at their sample until the test releases
	// them, in order: what the test does there happens while the speech
	// still flows, however slow the machine.
	holds []hold
}

// hold stops a recording at sample at until release is closed.
type hold struct {
	at      int
	release chan struct{}
}

// heldSource is a source with holds.
type heldSource struct {
	audio.Source
	holds []hold
	read  int // only Read touches it: a session reads from one goroutine
}

func (s *heldSource) Read(ctx context.Context) ([]int16, error) {
	for len(s.holds) > 0 && s.read >= s.holds[0].at {
		select {
		case <-s.holds[0].release:
			s.holds = s.holds[1:]
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f, err := s.Source.Read(ctx)
	s.read += len(f)
	return f, err
}

const fakeMicID = "test-mic"

func (m *fakeMics) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: fakeMicID, Name: "Test recording"}}, nil
}

func (m *fakeMics) Open(context.Context, string) (audio.Source, error) {
	if m.failing != nil {
		return nil, m.failing
	}
	cfg := audio.ReplayConfig{Loop: m.loop}
	if m.speed > 0 {
		cfg.Paced = true
		cfg.Clock = testkit.FastClock{Origin: time.Now(), Factor: m.speed}
	}
	src, err := audio.NewReplay(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}, m.samples, cfg)
	if err != nil || len(m.holds) == 0 {
		return src, err
	}
	return &heldSource{Source: src, holds: m.holds}, nil
}

// failingSecrets is a keyring without a Secret Service.
type failingSecrets struct{}

func (failingSecrets) Get() (api.Secret, error) { return "", unavailable() }
func (failingSecrets) Set(api.Secret) error     { return unavailable() }
func (failingSecrets) Delete() error            { return unavailable() }

func unavailable() error {
	return fmt.Errorf("keyring: %w: no D-Bus session", store.ErrSecretServiceUnavailable)
}

// harnessConfig is what a test App is built on. The zero value is a
// workspace over a fresh database, an empty in-memory keyring, no local
// engine and no microphone.
type harnessConfig struct {
	svc      Service           // answers the Service tab instead of the workspace
	secrets  store.SecretStore // nil means an empty store.Memory
	getenv   func(string) string
	engine   bool                 // start the local engine
	local    sessions.LocalEngine // the local engine, instead of the shared one
	localLLM func(url string)     // names the language model server to local's agent
	mics     sessions.Microphones
	speakers sessions.Speakers
	settings *store.Settings // saved before the App starts
	// dbPath is the history database, opened as main opens it (a damaged
	// one moved aside, history in memory where it cannot be written); ""
	// for a fresh one.
	dbPath string
	// lazyTabs leaves the tabs unbuilt until they are shown, as the
	// window does; by default every tab is built with the window, so
	// that tests may reach into any tab's widgets.
	lazyTabs bool
}

// harness is an App under Fyne's test driver, with channels that receive
// once per answer from the service put on screen and when the App is
// ready. mu plays the UI goroutine: everything that touches widgets, in
// the App's goroutines (through Options.do) and in the test's, holds it.
type harness struct {
	*App
	fyneApp *recordingApp
	shown   chan struct{}
	readies chan error
	db      *store.DB
	ws      *sessions.Workspace

	mu        sync.Mutex
	closeOnce sync.Once
	// observe, if not nil, runs as the UI goroutine after everything
	// done there, by the App's goroutines or the test: a test sees every
	// state the window passes through. Set it with h.ui.
	observe func()
}

func newHarness(t *testing.T, svc Service, opts Options) *harness {
	t.Helper()
	return newHarnessWith(t, harnessConfig{svc: svc}, opts)
}

func newHarnessWith(t *testing.T, cfg harnessConfig, opts Options) *harness {
	t.Helper()
	path := cfg.dbPath
	if path == "" {
		path = filepath.Join(t.TempDir(), "history.db")
	}
	db, err := store.OpenOrRecover(t.Context(), path) // as main opens it
	if err != nil {
		t.Fatal(err)
	}
	if cfg.settings != nil {
		if err := db.SaveSettings(t.Context(), *cfg.settings); err != nil {
			t.Fatal(err)
		}
	}
	secrets := cfg.secrets
	if secrets == nil {
		secrets = &store.Memory{}
	}
	wc := sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(secrets, cfg.getenv), Microphones: cfg.mics, Speakers: cfg.speakers}
	if cfg.engine {
		wc.Local = localEngine(t)
	}
	if cfg.local != nil {
		wc.Local, wc.LocalLLM = cfg.local, cfg.localLLM
	}
	ws, err := sessions.NewWorkspace(wc)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		fyneApp: &recordingApp{App: test.NewTempApp(t)},
		shown:   make(chan struct{}, 64),
		readies: make(chan error, 16),
		db:      db,
		ws:      ws,
	}
	opts.onShown = func() { h.shown <- struct{}{} }
	opts.OnReady = func(err error) { h.readies <- err }
	opts.now = func() time.Time { return clockTime }
	opts.service = cfg.svc
	opts.do = h.ui
	if opts.searchDelay == 0 {
		opts.searchDelay = time.Millisecond
	}
	h.ui(func() {
		h.App = New(h.fyneApp, ws, opts)
		if !cfg.lazyTabs {
			h.buildAllTabs()
		}
		h.load()
	})
	t.Cleanup(func() {
		h.closeWindow()
		h.stop()
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// ui runs fn as the UI goroutine would: alone, then h.observe.
func (h *harness) ui(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn()
	if h.observe != nil {
		h.observe()
	}
}

// closeWindow closes the window once; Fyne's test driver cannot close a
// window twice.
func (h *harness) closeWindow() {
	h.closeOnce.Do(func() { h.ui(h.window.Close) })
}

// waitShown waits until the next answer from the service is on screen.
func (h *harness) waitShown(t *testing.T) {
	t.Helper()
	select {
	case <-h.shown:
	case <-time.After(5 * time.Second):
		t.Fatal("no answer was shown within 5s")
	}
}

// waitReady waits until OnReady was called, and returns its error.
func (h *harness) waitReady(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.readies:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("OnReady was not called within 10s")
	}
	return nil
}

// waitFor waits until cond, run as the UI goroutine, holds.
// patience bounds every wait of the ui tests. The local engine's work
// (a file transcribed, a document analysed, a caption) runs on real time:
// seconds alone, several times that on a loaded 2-core machine under
// -race. Two minutes only ends a wait for something that will not come.
const patience = 2 * time.Minute

func (h *harness) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		ok := false
		h.ui(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; window:\n%s", patience, what, h.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// screen renders the window as Fyne's markup: every visible object,
// with the text a person would read.
func (h *harness) screen() string {
	var s string
	h.ui(func() { s = test.RenderToMarkup(h.window.Canvas()) })
	return s
}

// assertShows fails unless every text is visible in the window.
func (h *harness) assertShows(t *testing.T, texts ...string) {
	t.Helper()
	screen := h.screen()
	for _, s := range texts {
		if !strings.Contains(screen, ">"+s+"<") {
			t.Errorf("window does not show %q", s)
		}
	}
	if t.Failed() {
		t.Logf("window:\n%s", screen)
	}
}

// assertHides fails if any text is visible in the window.
func (h *harness) assertHides(t *testing.T, texts ...string) {
	t.Helper()
	screen := h.screen()
	for _, s := range texts {
		if strings.Contains(screen, s) {
			t.Errorf("window shows %q", s)
		}
	}
}

// press types a shortcut into the window the way Fyne's desktop driver
// does: the window's menu gets it first, then the canvas.
func (h *harness) press(sc fyne.Shortcut) {
	h.ui(func() { press(h.window, sc) })
}

func press(w fyne.Window, sc fyne.Shortcut) {
	if menu := w.MainMenu(); menu != nil {
		for _, m := range menu.Items {
			if triggerMenu(m, sc) {
				return
			}
		}
	}
	if c, ok := w.Canvas().(fyne.Shortcutable); ok {
		c.TypedShortcut(sc)
	}
}

func triggerMenu(m *fyne.Menu, sc fyne.Shortcut) bool {
	for _, it := range m.Items {
		if it.Shortcut != nil && it.Shortcut.ShortcutName() == sc.ShortcutName() && it.Action != nil {
			it.Action()
			return true
		}
		if it.ChildMenu != nil && triggerMenu(it.ChildMenu, sc) {
			return true
		}
	}
	return false
}

// statusText reads the Captions tab's status line.
func (h *harness) statusText() string {
	var s string
	h.ui(func() { s = h.captions.status.Text })
	return s
}

// texts returns the text of every widget in the window, shown or not,
// and of every overlay (dialogs): what a screen could ever show.
func (h *harness) texts() []string {
	var out []string
	h.ui(func() {
		objs := []fyne.CanvasObject{h.window.Content()}
		objs = append(objs, h.window.Canvas().Overlays().List()...)
		for _, o := range objs {
			walk(o, func(o fyne.CanvasObject) {
				switch w := o.(type) {
				case *widget.Label:
					out = append(out, w.Text)
				case *widget.Entry:
					out = append(out, w.Text, w.PlaceHolder)
				case *widget.Select:
					out = append(out, w.Selected)
					out = append(out, w.Options...)
				case *widget.Button:
					out = append(out, w.Text)
				case *widget.Check:
					out = append(out, w.Text)
				case *widget.RichText:
					out = append(out, w.String())
				case *widget.Form:
					for _, it := range w.Items {
						out = append(out, it.Text, it.HintText)
					}
				}
			})
		}
	})
	return out
}

// walk visits o and everything inside it: containers' objects and
// widgets' rendered objects.
func walk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	if o == nil {
		return
	}
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			walk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			walk(c, visit)
		}
	}
}

// findButton finds a visible button labelled text among the overlays
// (dialogs), top first.
func (h *harness) findButton(text string) *widget.Button {
	var found *widget.Button
	h.ui(func() {
		overlays := h.window.Canvas().Overlays().List()
		for i := len(overlays) - 1; i >= 0 && found == nil; i-- {
			walk(overlays[i], func(o fyne.CanvasObject) {
				if b, ok := o.(*widget.Button); ok && found == nil && b.Text == text && b.Visible() {
					found = b
				}
			})
		}
	})
	return found
}
