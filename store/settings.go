package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/earshot-app/earshot/api"
)

// Backends a user can choose.
const (
	BackendAuto   = ""       // the hosted service when a key is set, else the local engine
	BackendLocal  = "local"  // the offline engine on this computer
	BackendHosted = "hosted" // the hosted service
	BackendCustom = "custom" // a server at CustomURL that speaks the service's interface
)

// Settings are the user's choices. They hold no credential: the API key
// lives in a SecretStore, never here.
type Settings struct {
	Backend     string // BackendAuto, BackendLocal, BackendHosted or BackendCustom
	CustomURL   string // base URL of a custom backend, without credentials
	Region      string // "" (global), "eu", "au" or "in"
	InputDevice string // microphone; "" for the system's default
	// CaptureSource is what live captions hear: CaptureMicrophone,
	// CaptureSystem (the sound the computer plays) or CaptureBoth.
	CaptureSource string
	// SystemDevice is the source of the computer's sound; "" for the
	// output in use.
	SystemDevice     string
	ShortLivedTokens bool // authenticate streams with a short-lived token minted from the key
	Model            string
	Language         string
	Diarize          bool
	SmartFormat      bool
	InterimResults   bool
	ExportFormat     string // file extension of exported transcripts: srt, vtt, txt, json

	// Voices (text to speech).
	OutputDevice string  // speaker; "" for the system's default
	Voice        string  // voice of general synthesis (/v1/speak)
	TurnVoice    string  // voice of turn-based synthesis (/v2/speak)
	SpeakSpeed   float64 // 1 is the voice's own pace; 0.5 to 1.5
	Expressivity int     // -2 to 2, turn-based voices only
	SaveEncoding string  // encoding of saved syntheses: mp3, linear16, opus, flac, aac, mulaw, alaw

	// Text analysis (/v1/read) and audio intelligence on file
	// transcription (batch /v1/listen).
	AnalyzeSummary   bool
	AnalyzeSentiment bool
	AnalyzeTopics    bool
	AnalyzeIntents   bool
	FileSummary      bool
	FileSentiment    bool
	FileTopics       bool
	FileIntents      bool
	// NotesOnStop writes a meeting's notes (summary, topics, action
	// items) as soon as its live captions stop.
	NotesOnStop bool

	// AgentLLM is an OpenAI-compatible chat server (a local Ollama,
	// llama.cpp's server, LM Studio), its address up to /v1, that the
	// local engine's voice agent can think with; "" for none.
	AgentLLM string

	// KeepAudio keeps the audio of transcriptions (live captions,
	// conversations, files) with their text, as Ogg Opus, so they can be
	// played back and run again.
	KeepAudio bool

	// RetentionDays is how many days of history are kept: sessions that
	// started longer ago are deleted. 0 keeps everything.
	RetentionDays int
}

// DefaultSettings returns the settings of a new installation: the hosted
// service when a key is set, else the local engine, which works offline
// and without a key.
func DefaultSettings() Settings {
	return Settings{
		Backend:        BackendAuto,
		CaptureSource:  CaptureMicrophone,
		Model:          "nova-3",
		Language:       "en",
		SmartFormat:    true,
		InterimResults: true,
		ExportFormat:   "srt",

		Voice:        "aura-asteria-en",
		TurnVoice:    "flux-kit-en",
		SpeakSpeed:   1,
		SaveEncoding: "mp3",

		AnalyzeSummary:   true,
		AnalyzeSentiment: true,
		AnalyzeTopics:    true,
		AnalyzeIntents:   true,

		KeepAudio: true,
	}
}

// What live captions hear.
const (
	CaptureMicrophone = "mic"
	CaptureSystem     = "system"
	CaptureBoth       = "both"
)

// settingFields maps each field to its key in the settings table and its
// check. Values are stored as JSON. Renaming a key loses the user's
// choice: add a migration instead.
var settingFields = []struct {
	key   string
	field func(*Settings) any // a pointer to the field
	check func(Settings) error
}{
	{"backend", func(s *Settings) any { return &s.Backend }, func(s Settings) error {
		if !slices.Contains([]string{BackendAuto, BackendLocal, BackendHosted, BackendCustom}, s.Backend) {
			return fmt.Errorf("unknown backend %q", s.Backend)
		}
		return nil
	}},
	{"custom_url", func(s *Settings) any { return &s.CustomURL }, func(s Settings) error { return checkCustomURL(s.CustomURL) }},
	{"region", func(s *Settings) any { return &s.Region }, func(s Settings) error {
		if !slices.Contains(api.Regions, api.Region(s.Region)) {
			return fmt.Errorf("unknown region %q", s.Region)
		}
		return nil
	}},
	{"input_device", func(s *Settings) any { return &s.InputDevice }, nil},
	{"short_lived_tokens", func(s *Settings) any { return &s.ShortLivedTokens }, nil},
	{"model", func(s *Settings) any { return &s.Model }, func(s Settings) error { return checkName("model", s.Model) }},
	{"language", func(s *Settings) any { return &s.Language }, func(s Settings) error { return checkName("language", s.Language) }},
	{"diarize", func(s *Settings) any { return &s.Diarize }, nil},
	{"smart_format", func(s *Settings) any { return &s.SmartFormat }, nil},
	{"interim_results", func(s *Settings) any { return &s.InterimResults }, nil},
	{"export_format", func(s *Settings) any { return &s.ExportFormat }, func(s Settings) error {
		if !isWord(s.ExportFormat) {
			return fmt.Errorf("export format %q is not a lower-case word", s.ExportFormat)
		}
		return nil
	}},
	{"output_device", func(s *Settings) any { return &s.OutputDevice }, nil},
	{"voice", func(s *Settings) any { return &s.Voice }, func(s Settings) error { return checkName("voice", s.Voice) }},
	{"turn_voice", func(s *Settings) any { return &s.TurnVoice }, func(s Settings) error { return checkName("turn voice", s.TurnVoice) }},
	{"speak_speed", func(s *Settings) any { return &s.SpeakSpeed }, func(s Settings) error {
		if s.SpeakSpeed < 0.5 || s.SpeakSpeed > 1.5 {
			return fmt.Errorf("speed %g is outside 0.5 to 1.5", s.SpeakSpeed)
		}
		return nil
	}},
	{"expressivity", func(s *Settings) any { return &s.Expressivity }, func(s Settings) error {
		if s.Expressivity < -2 || s.Expressivity > 2 {
			return fmt.Errorf("expressivity %d is outside -2 to 2", s.Expressivity)
		}
		return nil
	}},
	{"save_encoding", func(s *Settings) any { return &s.SaveEncoding }, func(s Settings) error {
		if !isWord(s.SaveEncoding) {
			return fmt.Errorf("encoding %q is not a lower-case word", s.SaveEncoding)
		}
		return nil
	}},
	{"analyze_summary", func(s *Settings) any { return &s.AnalyzeSummary }, nil},
	{"analyze_sentiment", func(s *Settings) any { return &s.AnalyzeSentiment }, nil},
	{"analyze_topics", func(s *Settings) any { return &s.AnalyzeTopics }, nil},
	{"analyze_intents", func(s *Settings) any { return &s.AnalyzeIntents }, nil},
	{"file_summary", func(s *Settings) any { return &s.FileSummary }, nil},
	{"file_sentiment", func(s *Settings) any { return &s.FileSentiment }, nil},
	{"file_topics", func(s *Settings) any { return &s.FileTopics }, nil},
	{"file_intents", func(s *Settings) any { return &s.FileIntents }, nil},
	{"notes_on_stop", func(s *Settings) any { return &s.NotesOnStop }, nil},
	{"capture_source", func(s *Settings) any { return &s.CaptureSource }, func(s Settings) error {
		if !slices.Contains([]string{CaptureMicrophone, CaptureSystem, CaptureBoth}, s.CaptureSource) {
			return fmt.Errorf("unknown capture source %q", s.CaptureSource)
		}
		return nil
	}},
	{"system_device", func(s *Settings) any { return &s.SystemDevice }, nil},
	{"agent_llm", func(s *Settings) any { return &s.AgentLLM }, func(s Settings) error { return CheckLLMURL(s.AgentLLM) }},
	{"retention_days", func(s *Settings) any { return &s.RetentionDays }, func(s Settings) error {
		if s.RetentionDays < 0 || s.RetentionDays > MaxRetentionDays {
			return fmt.Errorf("keeping history %d days is outside 0 to %d", s.RetentionDays, MaxRetentionDays)
		}
		return nil
	}},
	{"keep_audio", func(s *Settings) any { return &s.KeepAudio }, nil},
}

// Validate reports the first setting that is not acceptable, wrapped in
// ErrInvalid.
func (s Settings) Validate() error {
	for _, f := range settingFields {
		if f.check == nil {
			continue
		}
		if err := f.check(s); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, f.key, err)
		}
	}
	if s.Backend == BackendCustom && s.CustomURL == "" {
		return fmt.Errorf("%w: the custom backend needs a URL", ErrInvalid)
	}
	return nil
}

// checkCustomURL accepts "" or an absolute http(s) or ws(s) URL that
// carries no credential: neither user information nor a query parameter
// named like a key.
func checkCustomURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("the URL must start with http://, https://, ws:// or wss://")
	}
	if u.Host == "" {
		return fmt.Errorf("the URL has no host")
	}
	if u.User != nil {
		return fmt.Errorf("the URL carries user information; the key belongs in the keyring")
	}
	for name := range u.Query() {
		if credentialNames[strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))] {
			return fmt.Errorf("the URL carries a credential (%q); the key belongs in the keyring", name)
		}
	}
	return nil
}

// CheckLLMURL accepts "" or the address of an OpenAI-compatible server:
// http(s), with a host, carrying no credential.
func CheckLLMURL(s string) error {
	if err := checkCustomURL(s); err != nil {
		return err
	}
	if u, _ := url.Parse(s); s != "" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return fmt.Errorf("the language model's address must start with http:// or https://")
	}
	return nil
}

// checkName accepts a model or language name: printable, no spaces.
func checkName(what, s string) error {
	if len(s) > 128 || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) {
		return fmt.Errorf("%s %q is not a name", what, s)
	}
	return nil
}

// LoadSettings returns the saved settings, each one that was never saved
// at its default. A stored value this version cannot read (edited by hand,
// or written by a newer version in a new form) also falls back to its
// default: settings never stop Earshot from starting.
func (d *DB) LoadSettings(ctx context.Context) (Settings, error) {
	stored, err := d.settingValues(ctx)
	if err != nil {
		return Settings{}, fmt.Errorf("store: load settings: %w", err)
	}
	s := DefaultSettings()
	for _, f := range settingFields {
		raw, ok := stored[f.key]
		if !ok {
			continue
		}
		try := s
		if json.Unmarshal([]byte(raw), f.field(&try)) != nil {
			continue
		}
		if f.check != nil && f.check(try) != nil {
			continue
		}
		s = try
	}
	return s, nil
}

func (d *DB) settingValues(ctx context.Context) (map[string]string, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT key, value FROM settings`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// SaveSettings saves every setting in one transaction. Keys this version
// does not know, saved by a newer one, are left as they are.
func (d *DB) SaveSettings(ctx context.Context, s Settings) (err error) {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("store: save settings: %w", err)
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save settings: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(MarkDiskFull(err), ignoreDone(tx.Rollback()))
		}
	}()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
	if err != nil {
		return fmt.Errorf("store: save settings: %w", err)
	}
	defer stmt.Close()
	for _, f := range settingFields {
		v, err := json.Marshal(f.field(&s))
		if err != nil {
			return fmt.Errorf("store: save settings: %s: %w", f.key, err)
		}
		if _, err := stmt.ExecContext(ctx, f.key, string(v)); err != nil {
			return fmt.Errorf("store: save settings: %s: %w", f.key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save settings: %w", err)
	}
	return nil
}
