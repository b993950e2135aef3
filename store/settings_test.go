package store

import (
	"errors"
	"reflect"
	"testing"
)

func TestSettingsDefaults(t *testing.T) {
	d := openTest(t)
	got, err := d.LoadSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, DefaultSettings()) {
		t.Errorf("a new database loads %+v, want the defaults %+v", got, DefaultSettings())
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	s := Settings{
		Backend: BackendCustom, CustomURL: "https://speech.example.org:8443/base", Region: "eu",
		InputDevice: "USB Audio Device, analogue stereo", ShortLivedTokens: true, Model: "nova-2",
		Language: "de", Diarize: true, SmartFormat: false, InterimResults: false, ExportFormat: "vtt",
		OutputDevice: "HDMI 2", Voice: "aura-2-julius-de", TurnVoice: "flux-alexis-en", SpeakSpeed: 1.25,
		Expressivity: -2, SaveEncoding: "opus",
		AnalyzeSummary: false, AnalyzeSentiment: true, AnalyzeTopics: false, AnalyzeIntents: true,
		FileSummary: true, FileSentiment: false, FileTopics: true, FileIntents: false,
		AgentLLM: "http://127.0.0.1:11434/v1", CaptureSource: CaptureBoth, SystemDevice: "alsa_output.pci.monitor",
	}
	if err := d.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := d.LoadSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("LoadSettings = %+v\nwant           %+v", got, s)
	}
	// Every field has its own key: false and empty values survive too.
	var n int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM settings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(settingFields) || n != reflect.TypeFor[Settings]().NumField() {
		t.Errorf("%d settings rows for %d fields", n, reflect.TypeFor[Settings]().NumField())
	}
}

// TestSettingsForwardCompatible plays a newer version's settings: keys
// this version does not know stay, values it cannot read fall back to
// their defaults without failing.
func TestSettingsForwardCompatible(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	for _, kv := range [][2]string{
		{"tts_voice", `"aura-2-thalia-en"`},
		{"window", `{"w":1200,"h":800}`},
		{"diarize", `true`},
		{"model", `{"name":"nova-4"}`}, // a newer form this version cannot read
		{"backend", `"quantum"`},       // a backend it does not know
		{"smart_format", `"yes"`},      // the wrong type
	} {
		if _, err := d.w.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)`, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.LoadSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Diarize = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadSettings = %+v\nwant           %+v", got, want)
	}
	got.Language = "fr"
	if err := d.SaveSettings(ctx, got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"tts_voice": `"aura-2-thalia-en"`, "window": `{"w":1200,"h":800}`, "language": `"fr"`} {
		var v string
		if err := d.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if v != want {
			t.Errorf("%s = %s after SaveSettings, want %s", key, v, want)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Settings)
		ok   bool
	}{
		{"defaults", func(*Settings) {}, true},
		{"hosted in India", func(s *Settings) { s.Backend, s.Region = BackendHosted, "in" }, true},
		{"custom over ws", func(s *Settings) { s.Backend, s.CustomURL = BackendCustom, "ws://127.0.0.1:8080" }, true},
		{"unknown backend", func(s *Settings) { s.Backend = "cloud" }, false},
		{"custom without URL", func(s *Settings) { s.Backend = BackendCustom }, false},
		{"unknown region", func(s *Settings) { s.Region = "us" }, false},
		{"region spelled global", func(s *Settings) { s.Region = "global" }, false},
		{"URL with a password", func(s *Settings) { s.CustomURL = "https://user:dg-secret@speech.example.org" }, false},
		{"URL with a key parameter", func(s *Settings) { s.CustomURL = "https://speech.example.org/?api_key=dg" }, false},
		{"URL with a token parameter", func(s *Settings) { s.CustomURL = "https://speech.example.org/?Token=dg" }, false},
		{"URL without host", func(s *Settings) { s.CustomURL = "https:///path" }, false},
		{"URL of another scheme", func(s *Settings) { s.CustomURL = "ftp://speech.example.org" }, false},
		{"not a URL", func(s *Settings) { s.CustomURL = "://" }, false},
		{"model with a space", func(s *Settings) { s.Model = "nova 3" }, false},
		{"empty model is the service's default", func(s *Settings) { s.Model = "" }, true},
		{"export format", func(s *Settings) { s.ExportFormat = "SRT" }, false},
		{"slowest speed", func(s *Settings) { s.SpeakSpeed = 0.5 }, true},
		{"fastest speed", func(s *Settings) { s.SpeakSpeed = 1.5 }, true},
		{"speed too slow", func(s *Settings) { s.SpeakSpeed = 0.45 }, false},
		{"speed too fast", func(s *Settings) { s.SpeakSpeed = 1.55 }, false},
		{"expressivity -2", func(s *Settings) { s.Expressivity = -2 }, true},
		{"expressivity 3", func(s *Settings) { s.Expressivity = 3 }, false},
		{"voice with a space", func(s *Settings) { s.Voice = "aura 2" }, false},
		{"save encoding", func(s *Settings) { s.SaveEncoding = "MP3" }, false},
		{"capture both", func(s *Settings) { s.CaptureSource = CaptureBoth }, true},
		{"unknown capture", func(s *Settings) { s.CaptureSource = "speakers" }, false},
		{"local language model", func(s *Settings) { s.AgentLLM = "http://127.0.0.1:11434/v1" }, true},
		{"language model over ws", func(s *Settings) { s.AgentLLM = "ws://127.0.0.1:11434/v1" }, false},
		{"language model with a password", func(s *Settings) { s.AgentLLM = "https://me:secret@llm.example.org/v1" }, false},
		{"language model without host", func(s *Settings) { s.AgentLLM = "http:///v1" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			tt.edit(&s)
			err := s.Validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Errorf("Validate(%+v) = %v, want ok=%v", s, err, tt.ok)
			}
		})
	}
	d := openTest(t)
	bad := DefaultSettings()
	bad.CustomURL = "https://u:p@example.org"
	if err := d.SaveSettings(t.Context(), bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("SaveSettings of a URL with credentials = %v, want ErrInvalid", err)
	}
	if got, _ := d.LoadSettings(t.Context()); got.CustomURL != "" {
		t.Errorf("the refused settings were saved: %+v", got)
	}
}
