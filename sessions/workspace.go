package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/store"
)

// BackendAuto chooses the hosted service when a key is set, else the
// local engine.
const BackendAuto = store.BackendAuto

// Microphones lists and opens input devices; main gives the real ones
// (audio/device), tests give fakes.
type Microphones interface {
	Devices(ctx context.Context) ([]device.Device, error)
	Open(ctx context.Context, deviceID string) (audio.Source, error)
}

// WorkspaceConfig is what a Workspace is built from.
type WorkspaceConfig struct {
	// History holds sessions and settings.
	History *store.DB
	// Keys finds the API key.
	Keys *Keys
	// Local starts the built-in engine on demand; nil in builds without one.
	Local LocalEngine
	// LocalLLM names to the built-in engine the language model server its
	// voice agent thinks with (the settings' AgentLLM, "" for none); nil
	// leaves the engine as it was started.
	LocalLLM func(url string)
	// Recognizer is the local engine's recogniser, loaded by the first
	// session that needs it; nil when there is nothing to load.
	Recognizer Recognizer
	// Microphones, when nil, means no live capture is possible.
	Microphones Microphones
	// Speakers, when nil, means syntheses are kept but not played.
	Speakers Speakers
	Logger   *slog.Logger
	// UserAgent names Earshot and its version to the service, as
	// "earshot/0.2.0"; "" is "earshot".
	UserAgent string
	// HTTPClient, when not nil, makes the service's requests and
	// handshakes (api.Config.HTTPClient): a test's way to a stand-in
	// for the hosted service.
	HTTPClient *http.Client
}

// Workspace is what the app's views drive: the service chosen in the
// settings, the key, history, and the sessions built on them. It is safe
// for concurrent use.
type Workspace struct {
	cfg WorkspaceConfig
	log *slog.Logger
	// inspector sees every request and message of every connection.
	inspector *Inspector

	mu   sync.Mutex  // guards conn, gen
	conn *Connection // built on first use, dropped when settings or key change
	// gen counts the drops, so that a connection built from settings
	// that changed while it was being built is not kept.
	gen uint64

	// words, once set, words why a session failed, in history.
	words atomic.Pointer[func(error) string]
}

// dialer is how the workspace's connections reach the service.
func (w *Workspace) dialer() dialer {
	return dialer{log: w.log, wire: w.inspector, userAgent: w.cfg.UserAgent, client: w.cfg.HTTPClient}
}

// NewWorkspace returns a workspace over cfg.
func NewWorkspace(cfg WorkspaceConfig) (*Workspace, error) {
	if cfg.History == nil || cfg.Keys == nil {
		return nil, errors.New("workspace: history and keys are needed")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ins := NewInspector(InspectorConfig{Store: cfg.History, Logger: log})
	return &Workspace{cfg: cfg, log: log, inspector: ins}, nil
}

// SetErrorWords has history keep why a session failed in words: the
// words the person is shown for err (the app's, or the command line's),
// not the error's own text, which names the layers it went through. Call
// it before sessions start.
func (w *Workspace) SetErrorWords(words func(err error) string) { w.words.Store(&words) }

// history is the history the workspace's sessions keep their records
// in: with the words of SetErrorWords.
func (w *Workspace) history() wordedHistory { return wordedHistory{DB: w.cfg.History, w: w} }

// FileHistory is the history a FileTranscription made outside the
// workspace keeps its record in, as the workspace's own do.
func (w *Workspace) FileHistory() FileHistory { return w.history() }

// wordedHistory is history whose records word their failures.
type wordedHistory struct {
	*store.DB
	w *Workspace
}

// errorWords words err as SetErrorWords asked, else as err says.
func (h wordedHistory) errorWords(err error) string {
	if f := h.w.words.Load(); f != nil && *f != nil {
		return (*f)(err)
	}
	return err.Error()
}

// Inspector returns the wire inspector of every connection the workspace
// makes.
func (w *Workspace) Inspector() *Inspector { return w.inspector }

// Close writes the wire events still waiting to history. Call it before
// closing the history.
func (w *Workspace) Close() error { return w.inspector.Close() }

// Settings returns the saved settings.
func (w *Workspace) Settings(ctx context.Context) (store.Settings, error) {
	return w.cfg.History.LoadSettings(ctx)
}

// SaveSettings checks and saves settings; the next request uses them.
func (w *Workspace) SaveSettings(ctx context.Context, s store.Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Backend == BackendCustom {
		if _, err := api.ParseBaseURL(s.CustomURL); err != nil {
			return fmt.Errorf("custom service address: %w", err)
		}
	}
	if err := w.cfg.History.SaveSettings(ctx, s); err != nil {
		return err
	}
	w.dropConnection()
	return nil
}

// KeyStatus says which key is in use and where it lives.
type KeyStatus struct {
	Source KeySource
	// Err explains a keyring that could not be read.
	Err error
}

// Key reports on the key in use, never the key itself.
func (w *Workspace) Key() KeyStatus {
	_, src, err := w.cfg.Keys.Key()
	return KeyStatus{Source: src, Err: err}
}

// SaveKey stores a key. Without a Secret Service it is kept for this
// session only: KeySession, with an error matching
// store.ErrSecretServiceUnavailable that the UI shows in plain words.
func (w *Workspace) SaveKey(key api.Secret) (KeySource, error) {
	src, err := w.cfg.Keys.Save(key)
	w.dropConnection()
	return src, err
}

// ForgetKey removes the stored key.
func (w *Workspace) ForgetKey() error {
	err := w.cfg.Keys.Forget()
	w.dropConnection()
	return err
}

func (w *Workspace) dropConnection() {
	w.mu.Lock()
	w.conn = nil
	w.gen++
	w.mu.Unlock()
}

// Connection returns the connection the settings ask for, building it on
// first use. Settings or a key saved while it is being built make it
// start again from them: what it returns, and keeps, is never older than
// the last save that finished before it returned.
func (w *Workspace) Connection(ctx context.Context) (*Connection, error) {
	for {
		w.mu.Lock()
		conn, gen := w.conn, w.gen
		w.mu.Unlock()
		if conn != nil {
			return conn, nil
		}
		s, err := w.Settings(ctx)
		if err != nil {
			return nil, err
		}
		key, _, err := w.cfg.Keys.Key()
		if err != nil && s.Backend != BackendLocal {
			return nil, fmt.Errorf("read the API key: %w", err)
		}
		conn, err = connect(s, key, w.cfg.Local, w.dialer())
		if err != nil {
			return nil, err
		}
		if conn.Kind == BackendLocal && w.cfg.LocalLLM != nil {
			w.cfg.LocalLLM(s.AgentLLM)
		}
		w.mu.Lock()
		if w.gen == gen {
			w.conn = conn
			w.mu.Unlock()
			return conn, nil
		}
		w.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// settingsAndConnection returns the saved settings and the connection
// they choose.
func (w *Workspace) settingsAndConnection(ctx context.Context) (store.Settings, *Connection, error) {
	s, err := w.Settings(ctx)
	if err != nil {
		return store.Settings{}, nil, err
	}
	conn, err := w.Connection(ctx)
	if err != nil {
		return store.Settings{}, nil, err
	}
	return s, conn, nil
}

// Info describes the service in use and its models.
func (w *Workspace) Info(ctx context.Context) (ServiceInfo, error) {
	conn, err := w.Connection(ctx)
	if err != nil {
		return ServiceInfo{Backend: "Not connected"}, err
	}
	info, err := NewService(conn.Client, conn.Name).Info(ctx)
	info.Local = conn.Kind == BackendLocal
	return info, err
}

// Microphones lists the input devices.
func (w *Workspace) Microphones(ctx context.Context) ([]device.Device, error) {
	if w.cfg.Microphones == nil {
		return nil, errors.New("this build cannot capture audio")
	}
	return w.cfg.Microphones.Devices(ctx)
}

// Speakers lists the output devices.
func (w *Workspace) Speakers(ctx context.Context) ([]device.Device, error) {
	if w.cfg.Speakers == nil {
		return nil, errors.New("this build cannot play audio")
	}
	return w.cfg.Speakers.Devices(ctx)
}

// Voices returns the voice playground on the connection the settings
// choose, playing on the speaker they name and saving to history.
func (w *Workspace) Voices(ctx context.Context) (*Voices, error) {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil {
		return nil, err
	}
	return NewVoices(VoicesConfig{
		Inspector:    w.inspector,
		Streamer:     ClientStreamer{Client: conn.Client},
		Models:       func(ctx context.Context) (*api.ModelList, error) { return conn.Client.Models(ctx, false) },
		Speakers:     w.cfg.Speakers,
		OutputDevice: s.OutputDevice,
		History:      w.history(),
		Backend:      conn.Name,
		Logger:       w.log,
	}), nil
}

// ListenOptions are the request options the settings choose for mode: the
// options the app sends, and those `earshot transcribe` sends, so that a
// command-line run matches the app's.
func ListenOptions(s store.Settings, mode api.Mode) api.ListenOptions {
	o := api.ListenOptions{
		Model:       s.Model,
		Language:    s.Language,
		SmartFormat: s.SmartFormat,
		Punctuate:   true,
	}
	if s.Diarize {
		o.DiarizeModel = "latest"
	}
	if mode == api.Streaming {
		o.InterimResults = s.InterimResults
	} else {
		o.Utterances = true
		o.Paragraphs = true
		o.DetectEntities = true // the file's result view lists them
		// Audio intelligence, as the settings' File* toggles ask.
		f := FileFeatures(s)
		if f.Summary {
			o.Summarize = "v2"
		}
		o.Sentiment, o.Topics, o.Intents = f.Sentiment, f.Topics, f.Intents
	}
	return o
}

// CaptionsRequest starts live captions.
type CaptionsRequest struct {
	// DeviceID names the microphone; "" is the settings' choice, or the
	// system's default.
	DeviceID string
	// Source, when set, replaces the microphone (a recording replayed).
	Source audio.Source
	// SourceName describes the source in history.
	SourceName string
	// Options, when not nil, replaces the options the settings choose.
	Options *api.ListenOptions
	// Capture is what is heard: the microphone, the computer's sound (the
	// other people of a meeting), or both as two channels, "You" and
	// "Others".
	Capture CaptureKind
	// SystemDeviceID names the computer's sound to hear (see
	// Workspace.SystemSources); "" is the output in use.
	SystemDeviceID string
	// Sides name the channels of a Source that has several (see
	// CaptionsConfig.Sides).
	Sides []string
}

// CaptureKind is what a captions session hears.
type CaptureKind int

const (
	// CaptureMicrophone hears the microphone.
	CaptureMicrophone CaptureKind = iota
	// CaptureSystem hears the sound the computer plays.
	CaptureSystem
	// CaptureBoth hears both, the microphone on channel 0 (SideYou) and
	// the computer's sound on channel 1 (SideOthers); the echo of the
	// computer's sound in the microphone is cancelled.
	CaptureBoth
)

// The sides of a meeting heard both ways.
const (
	SideYou    = "You"
	SideOthers = "Others"
)

// SystemSounds lists the sources of the sound the computer plays;
// DeviceMicrophones implements it.
type SystemSounds interface {
	SystemDevices(ctx context.Context) ([]device.Device, error)
}

// SystemSources lists the sources of the sound the computer plays ("Sound
// from Built-in Audio"), or says in plain words why there is none.
func (w *Workspace) SystemSources(ctx context.Context) ([]device.Device, error) {
	ss, ok := w.cfg.Microphones.(SystemSounds)
	if !ok {
		return nil, fmt.Errorf("%w: this build cannot record it", device.ErrNoSystemAudio)
	}
	return ss.SystemDevices(ctx)
}

// openSystem opens the computer's sound named id, or the output in use.
func (w *Workspace) openSystem(ctx context.Context, id string) (audio.Source, string, error) {
	devs, err := w.SystemSources(ctx)
	if err != nil {
		return nil, "", err
	}
	var dev *device.Device
	for i := range devs {
		if id == "" && (devs[i].Default || dev == nil) || devs[i].ID == id {
			dev = &devs[i]
		}
	}
	if dev == nil {
		return nil, "", fmt.Errorf("%w: the sound source %q is not there any more", device.ErrNoSystemAudio, id)
	}
	src, err := w.cfg.Microphones.Open(ctx, dev.ID)
	if err != nil {
		return nil, "", err
	}
	return src, dev.Name, nil
}

// openCapture opens what req asks to hear, and names it.
func (w *Workspace) openCapture(ctx context.Context, s store.Settings, req CaptionsRequest) (audio.Source, string, []string, error) {
	if req.Source != nil {
		return req.Source, req.SourceName, req.Sides, nil
	}
	switch req.Capture {
	case CaptureSystem:
		src, name, err := w.openSystem(ctx, req.SystemDeviceID)
		return src, name, nil, err
	case CaptureBoth:
		mic, micName, err := w.openSource(ctx, s, nil, "", req.DeviceID)
		if err != nil {
			return nil, "", nil, err
		}
		sys, sysName, err := w.openSystem(ctx, req.SystemDeviceID)
		if err != nil {
			mic.Close()
			return nil, "", nil, err
		}
		pair, err := audio.NewPair(mic, sys, audio.PairConfig{EchoCancel: audio.EchoCancellation})
		if err != nil {
			mic.Close()
			sys.Close()
			return nil, "", nil, err
		}
		return pair, micName + " and " + sysName, []string{SideYou, SideOthers}, nil
	}
	src, name, err := w.openSource(ctx, s, nil, req.SourceName, req.DeviceID)
	return src, name, nil, err
}

// StartCaptions opens the source and starts a captions session saved to
// history. The caller stops it and reads its events.
func (w *Workspace) StartCaptions(ctx context.Context, req CaptionsRequest) (*Captions, error) {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil {
		return nil, err
	}
	src, name, sides, err := w.openCapture(ctx, s, req)
	if err != nil {
		return nil, err
	}
	opts := ListenOptions(s, api.Streaming)
	if req.Options != nil {
		opts = *req.Options
	}
	c := NewCaptions(CaptionsConfig{
		Streamer:   ClientStreamer{Client: conn.Client},
		Options:    opts,
		Source:     src,
		History:    w.history(),
		Title:      "Live captions",
		SourceName: name,
		Backend:    conn.Name,
		OwnsSource: true,
		Logger:     w.log,
		Recognizer: w.recognizer(conn),
		Sides:      sides,
		KeepAudio:  s.KeepAudio,
	})
	if err := c.Start(ctx); err != nil {
		src.Close()
		return nil, err
	}
	return c, nil
}

// recognizer is the recogniser to load before a session on conn: the
// local engine's, or none.
func (w *Workspace) recognizer(conn *Connection) Recognizer {
	if conn.Kind != BackendLocal {
		return nil
	}
	return w.cfg.Recognizer
}

// TurnOptionsFor are the /v2/listen options the settings choose: the
// turn-aware model for the settings' language (flux-general-en for
// English or none, else flux-general-multi with the language as a hint)
// and the service's end-of-turn defaults.
func TurnOptionsFor(s store.Settings) api.TurnOptions {
	model, err := api.ResolveFlux("flux", api.Transcribe, "", s.Language)
	if err != nil {
		model = api.ModelFluxGeneralEN
	}
	o := api.TurnOptions{Model: model}
	if model == api.ModelFluxGeneralMulti {
		base, _, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(s.Language), "_", "-"), "-")
		if base != "" && base != "multi" {
			o.LanguageHints = []string{base}
		}
	}
	return o
}

// ConversationRequest starts a conversation.
type ConversationRequest struct {
	// DeviceID names the microphone; "" is the settings' choice, or the
	// system's default.
	DeviceID string
	// Source, when set, replaces the microphone (a recording paced at
	// real time).
	Source audio.Source
	// SourceName describes the source in history.
	SourceName string
	// Options, when not nil, replaces the options the settings choose.
	Options *api.TurnOptions
	// Tail is ConversationConfig.Tail.
	Tail time.Duration
}

// StartConversation opens the source and starts a turn-aware conversation
// on the connection the settings choose, saved to history. The caller
// stops it and reads its events.
func (w *Workspace) StartConversation(ctx context.Context, req ConversationRequest) (*Conversation, error) {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil {
		return nil, err
	}
	src, name, err := w.openSource(ctx, s, req.Source, req.SourceName, req.DeviceID)
	if err != nil {
		return nil, err
	}
	opts := TurnOptionsFor(s)
	if req.Options != nil {
		opts = *req.Options
	}
	c := NewConversation(ConversationConfig{
		Inspector:  w.inspector,
		Streamer:   ClientStreamer{Client: conn.Client},
		Options:    opts,
		Source:     src,
		History:    w.history(),
		Title:      "Conversation",
		SourceName: name,
		Backend:    conn.Name,
		Tail:       req.Tail,
		OwnsSource: true,
		Logger:     w.log,
		Recognizer: w.recognizer(conn),
		KeepAudio:  s.KeepAudio,
	})
	if err := c.Start(ctx); err != nil {
		src.Close()
		return nil, err
	}
	return c, nil
}

// openSource returns src named name when it is given, else opens the
// microphone deviceID ("" for the one in the settings, or the system's
// default) and names it as its device list does.
func (w *Workspace) openSource(ctx context.Context, s store.Settings, src audio.Source, name, deviceID string) (audio.Source, string, error) {
	if src != nil {
		return src, name, nil
	}
	if w.cfg.Microphones == nil {
		return nil, "", errors.New("this build cannot capture audio")
	}
	id := deviceID
	if id == "" {
		id = s.InputDevice
	}
	src, err := w.cfg.Microphones.Open(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		name = micName(ctx, w.cfg.Microphones, id)
	}
	return src, name, nil
}

func micName(ctx context.Context, m Microphones, id string) string {
	devs, err := m.Devices(ctx)
	if err != nil {
		return "Microphone"
	}
	for _, d := range devs {
		if d.ID == id || id == "" && d.Default {
			return d.Name
		}
	}
	return "Microphone"
}

// StartFileTranscription starts transcribing an audio file with the
// settings' options (plus utterances and paragraphs), saved to history.
// The caller reads its events (or stops it).
func (w *Workspace) StartFileTranscription(ctx context.Context, path string) (*FileTranscriptionSession, error) {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil {
		return nil, err
	}
	f := FileTranscription{Client: conn.Client, History: w.history(), Backend: conn.Name, Logger: w.log, KeepAudio: s.KeepAudio}
	fs := f.Session(path, ListenOptions(s, api.Batch))
	if err := fs.Start(ctx); err != nil {
		return nil, err
	}
	return fs, nil
}

// TranscribeFile transcribes an audio file as StartFileTranscription
// does and waits for the result, reporting progress (which may be nil;
// it is called on the calling goroutine and must not block). See
// FileTranscriptionSession.Wait.
func (w *Workspace) TranscribeFile(ctx context.Context, path string, progress func(Progress)) (*FileResult, error) {
	fs, err := w.StartFileTranscription(ctx, path)
	if err != nil {
		return nil, err
	}
	return fs.Wait(progress)
}

// Sessions lists the past sessions f keeps, newest first.
func (w *Workspace) Sessions(ctx context.Context, f store.Filter) ([]store.Session, error) {
	return w.cfg.History.Sessions(ctx, f)
}

// Transcript reads a past session back.
func (w *Workspace) Transcript(ctx context.Context, id int64) (Transcript, error) {
	sess, err := w.cfg.History.Session(ctx, id)
	if err != nil {
		return Transcript{}, err
	}
	t := Transcript{Title: sess.Title, Created: sess.Started, Duration: sess.Duration, Status: sess.Status, Error: sess.Error}
	if sess.Kind == store.KindFile {
		body, err := w.cfg.History.Response(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return t, err
		}
		if len(body) > 0 {
			var resp api.ListenResponse
			if err := json.Unmarshal(body, &resp); err != nil {
				return t, fmt.Errorf("the saved transcript is damaged: %w", err)
			}
			t.Response = &resp
			t.Captions = CaptionsOf(&resp)
		}
		return t, nil
	}
	segs, err := w.cfg.History.Segments(ctx, id)
	if err != nil {
		return t, err
	}
	for _, s := range segs {
		if strings.TrimSpace(s.Text) == "" {
			continue // not words: a conversation's timing, say
		}
		c := Caption{Seq: s.Seq, Start: s.Start, End: s.End, Speaker: s.Speaker, Text: s.Text, Confidence: s.Confidence, Channel: s.Channel}
		if sess.Kind == store.KindCaptions && s.Details != "" {
			var d captionDetails
			if err := json.Unmarshal([]byte(s.Details), &d); err == nil {
				c.Side = d.Side
				if d.Model != nil {
					t.Models = append(t.Models, *d.Model)
				}
			}
		}
		if s.Words != "" {
			if err := json.Unmarshal([]byte(s.Words), &c.Words); err != nil {
				w.log.Warn("a saved caption's words are damaged", "session", id, "seq", s.Seq, "err", err)
			}
		}
		t.Captions = append(t.Captions, c)
	}
	return t, nil
}

// Export writes a past session in format f.
func (w *Workspace) Export(ctx context.Context, id int64, f ExportFormat, out io.Writer) error {
	t, err := w.Transcript(ctx, id)
	if err != nil {
		return err
	}
	return Export(out, f, t)
}

// RenameSession renames a past session.
func (w *Workspace) RenameSession(ctx context.Context, id int64, title string) error {
	return w.cfg.History.RenameSession(ctx, id, title)
}

// DeleteSession removes a past session and everything saved with it.
func (w *Workspace) DeleteSession(ctx context.Context, id int64) error {
	return w.cfg.History.DeleteSession(ctx, id)
}

// Search finds past sessions by their words; with kinds, sessions of those kinds only.
func (w *Workspace) Search(ctx context.Context, query string, limit int, kinds ...string) ([]store.Hit, error) {
	return w.cfg.History.Search(ctx, query, limit, kinds...)
}

// SearchWithin is Search among the sessions f keeps: its kinds and dates.
func (w *Workspace) SearchWithin(ctx context.Context, query string, limit int, f store.Filter) ([]store.Hit, error) {
	return w.cfg.History.SearchWithin(ctx, query, limit, f)
}
