package ui

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// settingsHarness is an App whose Service tab is answered by a fake, so
// that no setting (a hosted backend, a key) ever reaches the network.
func settingsHarness(t *testing.T, cfg harnessConfig, opts Options) *harness {
	t.Helper()
	if cfg.svc == nil {
		cfg.svc = &fakeService{answer: answers(result{info: localInfo})}
	}
	h := newHarnessWith(t, cfg, opts)
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	h.ui(func() { h.SelectTab("Settings") })
	return h
}

// settingsStatus reads the Settings tab's status line.
func (h *harness) settingsStatus() string {
	var s string
	h.ui(func() { s = h.settings.status.Text })
	return s
}

// typeKey types key into the API key field and presses Save key.
func (h *harness) typeKey(t *testing.T, key string) {
	t.Helper()
	h.ui(func() {
		test.Type(h.settings.keyEntry, key)
		test.Tap(h.settings.saveKey)
	})
	h.waitFor(t, "the key to be saved", func() bool { return !h.settings.keyBusy })
}

func TestSaveAndForgetKey(t *testing.T) {
	const key = "es-test-4f1c9a2b7d"
	secrets := &store.Memory{}
	h := settingsHarness(t, harnessConfig{secrets: secrets}, Options{})
	st := h.settings
	h.assertShows(t, "API key", "Key in use", "none")

	h.ui(func() { test.Tap(st.saveKey) })
	if got := h.settingsStatus(); got != "Paste a key into the API key field first." {
		t.Errorf("Save key with an empty field: status %q", got)
	}

	h.typeKey(t, "  "+key+"\n")
	if got, want := h.settingsStatus(), "The key is saved in the system keyring."; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	if got, err := secrets.Get(); err != nil || got != key {
		t.Errorf("the keyring holds %q (%v), want the key typed, trimmed", got, err)
	}
	h.ui(func() {
		if st.keyEntry.Text != "" {
			t.Error("the key stays in the field after it was saved")
		}
		if !st.keyEntry.Password {
			t.Error("the API key field is not a password field")
		}
	})
	h.assertShows(t, "in the system keyring")
	assertNoKey(t, h, key)

	h.ui(func() { test.Tap(st.forgetKey) })
	h.waitFor(t, "the key to be forgotten", func() bool { return st.status.Text == "The key is forgotten." })
	if _, err := secrets.Get(); !errors.Is(err, store.ErrNoSecret) {
		t.Errorf("the keyring still holds a key after Forget: %v", err)
	}
	h.ui(func() {
		if st.keyInUse.Text != "none" {
			t.Errorf("Key in use = %q after Forget, want none", st.keyInUse.Text)
		}
	})
}

func TestKeyWithoutKeyring(t *testing.T) {
	const key = "es-test-session-only-77e1"
	h := settingsHarness(t, harnessConfig{secrets: failingSecrets{}}, Options{})
	h.typeKey(t, key)
	want := "No Secret Service (keyring) was found: the key is kept for this session only, and forgotten when Earshot closes."
	if got := h.settingsStatus(); got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	h.assertShows(t, "for this session only (no Secret Service found)")
	if ks := h.ws.Key(); ks.Source != sessions.KeySession {
		t.Errorf("the key is kept %v, want for this session only", ks.Source)
	}
	assertNoKey(t, h, key)
}

func TestKeyFromEnvironment(t *testing.T) {
	const env = "es-test-from-env-0a9d"
	getenv := func(name string) string {
		if name == sessions.EnvAPIKey {
			return env
		}
		return ""
	}
	h := settingsHarness(t, harnessConfig{getenv: getenv}, Options{})
	h.assertShows(t, "from "+sessions.EnvAPIKey)
	h.typeKey(t, "es-test-typed-5b2e")
	if got, want := h.settingsStatus(), "The key is saved, but "+sessions.EnvAPIKey+" is set and is used instead."; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	assertNoKey(t, h, env)
	assertNoKey(t, h, "es-test-typed-5b2e")
}

// chooseBackend picks a backend by its value in the Backend picker.
func (h *harness) chooseBackend(value string) {
	h.ui(func() {
		for _, b := range backendChoices {
			if b.value == value {
				h.settings.backend.SetSelected(b.name)
			}
		}
	})
}

func TestSettingsPersist(t *testing.T) {
	tests := []struct {
		name string
		edit func(h *harness)
		want func(s *store.Settings)
	}{
		{"local", func(h *harness) {
			h.chooseBackend(store.BackendLocal)
			h.ui(func() {
				if !h.settings.region.Disabled() || !h.settings.tokens.Disabled() || !h.settings.customURL.Disabled() {
					t.Error("region, tokens or address enabled for the local engine")
				}
			})
		}, func(s *store.Settings) { s.Backend = store.BackendLocal }},
		{"hosted in the EU with tokens", func(h *harness) {
			h.chooseBackend(store.BackendHosted)
			h.ui(func() {
				if h.settings.region.Disabled() || h.settings.tokens.Disabled() || !h.settings.customURL.Disabled() {
					t.Error("for the hosted service, region and tokens must be enabled and the address disabled")
				}
				h.settings.region.SetSelected(api.RegionEU.String())
				test.Tap(h.settings.tokens)
			})
		}, func(s *store.Settings) {
			s.Backend, s.Region, s.ShortLivedTokens = store.BackendHosted, string(api.RegionEU), true
		}},
		{"custom", func(h *harness) {
			h.chooseBackend(store.BackendCustom)
			h.ui(func() {
				if h.settings.customURL.Disabled() {
					t.Error("the address is disabled for a custom server")
				}
				test.Type(h.settings.customURL, "https://speech.example.com:8443")
			})
		}, func(s *store.Settings) {
			s.Backend, s.CustomURL = store.BackendCustom, "https://speech.example.com:8443"
		}},
		{"transcription and export", func(h *harness) {
			h.ui(func() {
				test.Tap(h.settings.diarize)
				test.Tap(h.settings.interim)
				h.settings.language.SetText("")
				test.Type(h.settings.language, "en-US")
				h.settings.export.SetSelected(exportFormatName(sessions.ExportVTT))
			})
		}, func(s *store.Settings) {
			s.Diarize, s.InterimResults, s.Language, s.ExportFormat = true, false, "en-US", "vtt"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			h := settingsHarness(t, harnessConfig{dbPath: path}, Options{})
			h.ui(func() {
				if !h.settings.save.Disabled() || !h.settings.revert.Disabled() {
					t.Error("Save or Revert enabled before any edit")
				}
			})
			tt.edit(h)
			h.ui(func() {
				if h.settings.save.Disabled() || h.settings.revert.Disabled() {
					t.Error("Save or Revert disabled after an edit")
				}
			})
			h.press(saveShortcut) // Ctrl+S, as the Save button
			h.waitFor(t, "the settings to be saved", func() bool { return h.settings.status.Text == "Saved." })
			want := store.DefaultSettings()
			tt.want(&want)
			got, err := h.db.LoadSettings(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("saved %+v\nwant  %+v", got, want)
			}
			h.ui(func() {
				if !h.settings.save.Disabled() {
					t.Error("Save stays enabled after saving")
				}
			})
			h.closeWindow()
			h.stop()

			// A new window on the same history shows them.
			h2 := settingsHarness(t, harnessConfig{dbPath: path}, Options{})
			h2.ui(func() {
				if shown := h2.settings.gather(); shown != want {
					t.Errorf("a new window shows %+v\nwant            %+v", shown, want)
				}
				if h2.settings.dirty() || !h2.settings.save.Disabled() {
					t.Error("a new window has unsaved edits")
				}
			})
		})
	}
}

func TestInvalidCustomURL(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"", "Nothing was saved: give the server's address, such as https://speech.example.com."},
		{"ftp://speech.example.com", "Nothing was saved: not an address: use http:// or https://, a host, and no query."},
		{"https://speech.example.com/?token=abc", "Nothing was saved: not an address: use http:// or https://, a host, and no query."},
		{"speech.example.com", "Nothing was saved: not an address: use http:// or https://, a host, and no query."},
		{"speech.example.com:8443", "Nothing was saved: not an address: use http:// or https://, a host, and no query."},
		{"https://me:es-secret-1@speech.example.com", "Nothing was saved: leave the key out of the address: save it as the API key."},
	}
	h := settingsHarness(t, harnessConfig{}, Options{})
	before, err := h.db.LoadSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			h.chooseBackend(store.BackendCustom)
			h.ui(func() {
				h.settings.customURL.SetText("")
				test.Type(h.settings.customURL, tt.url)
				test.Tap(h.settings.save)
			})
			if got := h.settingsStatus(); got != tt.want {
				t.Errorf("status = %q, want %q", got, tt.want)
			}
			if got, _ := h.db.LoadSettings(t.Context()); got != before {
				t.Errorf("an invalid address was saved: %+v", got)
			}
			if strings.Contains(h.settingsStatus(), "es-secret-1") {
				t.Error("the status repeats the secret in the address")
			}
		})
	}
}

// TestCustomAddressVerdictWhileTyping: the custom address shows no green
// tick while what is typed is not an address, and the error once the
// field is left.
func TestCustomAddressVerdictWhileTyping(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	h.chooseBackend(store.BackendCustom)
	icon := func() string {
		name := ""
		walk(h.settings.customURL, func(o fyne.CanvasObject) {
			if img, ok := o.(*canvas.Image); ok && img.Visible() && img.Resource != nil {
				name = img.Resource.Name()
			}
		})
		return name
	}
	confirm := theme.ConfirmIcon().Name()
	h.ui(func() {
		e := h.settings.customURL
		h.window.Canvas().Focus(e)
		test.Type(e, "https://speech.example.com")
		if got := icon(); got != confirm {
			t.Errorf("a valid address shows the icon %q, want the tick %q", got, confirm)
		}
		test.Type(e, "/?token=abc") // no longer an address
		if got := icon(); got == confirm {
			t.Error("an invalid address still shows the green tick while typed")
		}
		h.window.Canvas().Unfocus()
		if got := icon(); got == "" || got == confirm {
			t.Errorf("an invalid address left shows %q, want the error icon", got)
		}
	})
}

func TestRevert(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	st := h.settings
	var saved store.Settings
	h.ui(func() { saved = st.gather() })

	h.chooseBackend(store.BackendCustom)
	h.ui(func() {
		test.Type(st.customURL, "https://speech.example.com")
		test.Tap(st.smart)
		test.Tap(st.diarize)
	})
	h.ui(func() {
		if st.gather() == saved {
			t.Fatal("the edits did not change the fields")
		}
		test.Tap(st.revert)
		if got := st.gather(); got != saved {
			t.Errorf("after Revert the fields are %+v, want %+v", got, saved)
		}
		if !st.save.Disabled() || !st.revert.Disabled() {
			t.Error("Save or Revert enabled after Revert")
		}
		if !st.customURL.Disabled() {
			t.Error("the address is enabled after reverting to the automatic backend")
		}
	})
	if got, _ := h.db.LoadSettings(t.Context()); got != store.DefaultSettings() {
		t.Errorf("Revert saved something: %+v", got)
	}
}

func TestKeyNeverOnScreen(t *testing.T) {
	const key = "es-test-NEVER-SHOWN-9c2f71d0"
	logs := &testkit.Buffer{}
	opts := Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	h := settingsHarness(t, harnessConfig{}, opts)
	st := h.settings

	// While typed, the key is in a password field, and drawn masked.
	h.ui(func() { test.Type(st.keyEntry, key) })
	h.ui(func() {
		if !st.keyEntry.Password {
			t.Fatal("the API key field is not a password field")
		}
		drawn := renderedTexts(st.keyEntry)
		masked := false
		for _, s := range drawn {
			if strings.Contains(s, key[:6]) {
				t.Errorf("the API key field draws %q", s)
			}
			if len([]rune(s)) == len(key) && strings.Trim(s, "•*") == "" {
				masked = true
			}
		}
		if !masked {
			t.Errorf("the API key field does not draw the key masked: %q", drawn)
		}
	})
	var tabs []string
	h.ui(func() {
		for _, it := range h.tabs.Items {
			tabs = append(tabs, it.Text)
		}
	})
	for _, tab := range tabs {
		h.ui(func() { h.SelectTab(tab) })
		if s := h.screen(); strings.Contains(s, key[:12]) {
			t.Errorf("the %s tab shows the key while it is typed", tab)
		}
	}

	h.ui(func() { h.SelectTab("Settings") })
	h.ui(func() { test.Tap(st.saveKey) })
	h.waitFor(t, "the key to be saved", func() bool { return st.status.Text == "The key is saved in the system keyring." })
	h.waitShown(t) // the service, asked again with the new key, is on screen
	assertNoKey(t, h, key)
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), key[:12]) {
		t.Error("the log holds the key")
	}
}

// assertNoKey fails if any tab, drawn or not, or any dialog holds key:
// in a widget's text, or in the text its renderer draws.
func assertNoKey(t *testing.T, h *harness, key string) {
	t.Helper()
	for _, s := range h.texts() {
		if strings.Contains(s, key) {
			t.Errorf("a widget holds the key: %q", s)
		}
	}
	var drawn []string
	h.ui(func() {
		objs := []fyne.CanvasObject{h.window.Content()}
		for _, it := range h.tabs.Items {
			objs = append(objs, it.Content) // the tabs not open too
		}
		objs = append(objs, h.window.Canvas().Overlays().List()...)
		for _, o := range objs {
			drawn = append(drawn, renderedTexts(o)...)
		}
	})
	if len(drawn) < 50 {
		t.Fatalf("only %d texts drawn: the walk missed the window", len(drawn))
	}
	for _, s := range drawn {
		if strings.Contains(s, key) {
			t.Errorf("the window draws the key: %q", s)
		}
	}
	for _, tab := range []string{"Captions", "Settings", "Service"} {
		var prev string
		h.ui(func() {
			prev = h.tabs.Selected().Text
			h.SelectTab(tab)
		})
		if strings.Contains(h.screen(), key) {
			t.Errorf("the %s tab's screen shows the key", tab)
		}
		h.ui(func() { h.SelectTab(prev) })
	}
}

// renderedTexts lists the text every canvas.Text under o draws.
func renderedTexts(o fyne.CanvasObject) []string {
	var out []string
	walk(o, func(o fyne.CanvasObject) {
		if t, ok := o.(*canvas.Text); ok {
			out = append(out, t.Text)
		}
	})
	return out
}

// TestSettingsCleanAfterLaunch: right after launch, on a fresh history
// and with the local engine's models and the devices listed, nothing is
// "unsaved": Save and Revert stay disabled until a field is changed.
func TestSettingsCleanAfterLaunch(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{engine: true, mics: noMics{}, speakers: noSpeakers{}}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the devices listed", func() bool { return !h.micsLoading })
	h.ui(func() {
		h.SelectTab("Settings")
		if h.settings.dirty() || !h.settings.save.Disabled() || !h.settings.revert.Disabled() {
			t.Errorf("unsaved right after launch: fields %+v, saved %+v", h.settings.gather(), h.settings.current)
		}
	})
}

// TestLanguageModelAddress: the voice agent's language model server is
// saved when it is an address, refused in words when it is not, and kept
// out of the saved settings when it carries a credential.
func TestLanguageModelAddress(t *testing.T) {
	h := settingsHarness(t, harnessConfig{}, Options{})
	for _, tt := range []struct{ url, want string }{
		{"ollama.local:11434", "Nothing was saved: not an address: use http:// or https:// and a host, such as http://127.0.0.1:11434/v1."},
		{"ws://127.0.0.1:11434/v1", "Nothing was saved: not an address: use http:// or https:// and a host, such as http://127.0.0.1:11434/v1."},
		{"https://me:llm-secret-2@llm.example.org/v1", "Nothing was saved: leave credentials out of the address."},
	} {
		before, err := h.db.LoadSettings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		h.ui(func() {
			h.settings.llm.SetText("")
			test.Type(h.settings.llm, tt.url)
			test.Tap(h.settings.save)
		})
		if got := h.settingsStatus(); got != tt.want {
			t.Errorf("%s: status = %q, want %q", tt.url, got, tt.want)
		}
		if got, _ := h.db.LoadSettings(t.Context()); got != before {
			t.Errorf("%s was saved: %+v", tt.url, got)
		}
	}
	h.ui(func() {
		h.settings.llm.SetText("")
		test.Type(h.settings.llm, " http://127.0.0.1:11434/v1 ")
		test.Tap(h.settings.save)
	})
	// Saved, and tried: "Saved, but ..." when nothing answers there.
	h.waitFor(t, "the save", func() bool { return strings.HasPrefix(h.settings.status.Text, "Saved") })
	if got, err := h.db.LoadSettings(t.Context()); err != nil || got.AgentLLM != "http://127.0.0.1:11434/v1" {
		t.Errorf("saved %q, %v", got.AgentLLM, err)
	}
}
