package ui

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// defaultModel is offered when the service lists no speech-to-text model.
const defaultModel = "nova-3"

// backendChoices are the backends offered, with their names and what
// they mean.
var backendChoices = []struct {
	value, name, hint string
}{
	{store.BackendAuto, "Automatic", "The hosted service when a key is set, otherwise the local engine."},
	{store.BackendLocal, "Local engine (offline)", "Runs on this computer: no key and no network needed."},
	{store.BackendHosted, "Hosted service", "The service in the cloud, with your API key."},
	{store.BackendCustom, "Custom server", "A server at the address below that speaks the service's interface, with your API key."},
}

// settingsTab is the Settings tab: the API key, which service to use and
// how, how to transcribe, the microphone and the export format.
//
// The key is saved (or forgotten) by its own buttons, at once; the other
// settings by Save. Every call to the keyring runs off the UI goroutine:
// it may wait for the user to unlock the keyring.
//
// Its fields are touched only on the UI goroutine.
type settingsTab struct {
	app *App
	ui  lazyTab // its widgets, built when the tab is first shown

	keyEntry  *boundedEntry
	saveKey   *widget.Button
	forgetKey *widget.Button
	keyInUse  *widget.Label
	backend   *widget.Select
	region    *widget.Select
	customURL *boundedEntry
	tokens    *widget.Check
	model     *widget.Select
	language  *widget.SelectEntry
	smart     *widget.Check
	diarize   *widget.Check
	interim   *widget.Check
	fileIntel *intelChecks
	notes     *widget.Check
	keepAudio *widget.Check // keep the audio of transcriptions (transcriptplayer.go plays it)
	input     *widget.Select
	output    *widget.Select
	export    *widget.Select
	llm       *boundedEntry
	llmItem   *widget.FormItem // llm's, whose hint says what trying it found (settings_llm.go)
	llmForm   *widget.Form
	llmTry    llmTry
	save      *widget.Button
	revert    *widget.Button
	status    *widget.Label
	forms     []*widget.Form
	kept      *historySettings // how long history is kept (historytab_settings.go)

	current store.Settings // as saved
	loaded  bool           // current has been read
	filling bool           // the fields are being set in code
	saving  bool
	keyBusy bool
	models  []ModelInfo // the service's speech-to-text models
	micIDs  []string    // device ids of the input options, "" for the default
	outIDs  []string    // device ids of the output options, "" for the default
}

func newSettingsTab(a *App) *settingsTab {
	return &settingsTab{app: a, current: store.DefaultSettings()}
}

// buildUI creates the tab's widgets and lays them out.
func (t *settingsTab) buildUI() fyne.CanvasObject {
	t.keyEntry = newBoundedPassword(shortLimit, func(p string) {
		t.setStatus(tooLongWords("The key field", len(p), shortLimit), widget.WarningImportance)
	})
	t.keyEntry.SetPlaceHolder("Paste a new key here")
	t.keyEntry.OnSubmitted = func(string) { t.onSaveKey() }
	t.saveKey = widget.NewButtonWithIcon("Save key", theme.DocumentSaveIcon(), t.onSaveKey)
	t.forgetKey = widget.NewButtonWithIcon("Forget", theme.DeleteIcon(), t.onForgetKey)
	t.keyInUse = widget.NewLabel("Checking…")
	t.keyInUse.Wrapping = fyne.TextWrapWord

	names := make([]string, len(backendChoices))
	for i, b := range backendChoices {
		names[i] = b.name
	}
	t.backend = widget.NewSelect(names, func(string) { t.onFieldChanged() })
	regions := make([]string, len(api.Regions))
	for i, r := range api.Regions {
		regions[i] = r.String()
	}
	t.region = widget.NewSelect(regions, func(string) { t.onFieldChanged() })
	t.customURL = newBoundedEntry(shortLimit, func(p string) {
		t.setStatus(tooLongWords("The address field", len(p), shortLimit), widget.WarningImportance)
	})
	t.customURL.SetPlaceHolder("https://speech.example.com")
	t.customURL.Validator = t.checkCustomURL
	// Fyne keeps an entry's last verdict while it has the focus, so an
	// address made invalid by typing kept its green tick until Save: the
	// verdict follows every change instead.
	t.customURL.AlwaysShowValidationError = true
	t.customURL.OnChanged = func(string) { t.onFieldChanged() }
	t.llm = newBoundedEntry(shortLimit, func(p string) {
		t.setStatus(tooLongWords("The language model field", len(p), shortLimit), widget.WarningImportance)
	})
	t.llm.SetPlaceHolder("http://127.0.0.1:11434/v1")
	t.llm.Validator = t.checkLLM
	t.llm.AlwaysShowValidationError = true
	t.llm.OnChanged = func(s string) {
		t.llmEdited(s)
		t.onFieldChanged()
	}
	t.tokens = widget.NewCheck("Authenticate streams with short-lived tokens", func(bool) { t.onFieldChanged() })

	t.model = widget.NewSelect([]string{defaultModel}, func(string) {
		t.updateLanguages()
		t.onFieldChanged()
	})
	t.language = widget.NewSelectEntry([]string{"en"})
	t.language.OnChanged = func(string) { t.onFieldChanged() }
	t.smart = widget.NewCheck("Smart formatting (punctuation, numbers, dates)", func(bool) { t.onFieldChanged() })
	t.diarize = widget.NewCheck("Label speakers (diarization)", func(bool) { t.onFieldChanged() })
	t.fileIntel = newIntelChecks(t.onFieldChanged)
	t.notes = widget.NewCheck("Write meeting notes when a meeting stops", func(bool) { t.onFieldChanged() })
	t.interim = widget.NewCheck("Show words while they are spoken (interim results)", func(bool) { t.onFieldChanged() })
	t.keepAudio = widget.NewCheck("Keep the audio of transcriptions", func(bool) { t.onFieldChanged() })

	t.input = widget.NewSelect([]string{defaultMic}, func(string) { t.onFieldChanged() })
	t.micIDs = []string{""}
	t.output = widget.NewSelect([]string{defaultSpeaker}, func(string) { t.onFieldChanged() })
	t.outIDs = []string{""}
	formats := make([]string, len(exportFormatNames))
	for i, x := range exportFormatNames {
		formats[i] = x.name
	}
	t.export = widget.NewSelect(formats, func(string) { t.onFieldChanged() })

	t.save = widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), t.onSave)
	t.save.Importance = widget.HighImportance
	t.revert = widget.NewButtonWithIcon("Revert", theme.ContentUndoIcon(), t.onRevert)
	t.status = widget.NewLabel("Loading the settings…")
	t.status.Wrapping = fyne.TextWrapWord

	keyRow := container.NewBorder(nil, nil, nil, container.NewHBox(t.saveKey, t.forgetKey), t.keyEntry)
	service := widget.NewForm(
		widget.NewFormItem("API key", keyRow),
		widget.NewFormItem("Key in use", t.keyInUse),
		&widget.FormItem{Text: "Backend", Widget: t.backend, HintText: backendChoices[0].hint},
		widget.NewFormItem("Region", t.region),
		&widget.FormItem{Text: "Address", Widget: t.customURL, HintText: "Only for a custom server."},
		widget.NewFormItem("Tokens", t.tokens),
	)
	transcription := widget.NewForm(
		widget.NewFormItem("Model", t.model),
		widget.NewFormItem("Language", t.language),
		widget.NewFormItem("Formatting", t.smart),
		widget.NewFormItem("Speakers", t.diarize),
		widget.NewFormItem("Interim", t.interim),
		&widget.FormItem{Text: "On files", Widget: t.fileIntel.box, HintText: "Audio intelligence when a file is transcribed."},
		&widget.FormItem{Text: "Notes", Widget: t.notes, HintText: "A summary, topics and action items of live captions, kept with them in History."},
	)
	audio := widget.NewForm(
		widget.NewFormItem("Microphone", t.input),
		&widget.FormItem{Text: "Speaker", Widget: t.output, HintText: "Where the Voices tab plays."},
		widget.NewFormItem("Export as", t.export),
		&widget.FormItem{Text: "Keep audio", Widget: t.keepAudio, HintText: "To play it back with the words, or run it again."},
	)
	t.llmItem = &widget.FormItem{Text: "Language model", Widget: t.llm, HintText: llmHint}
	agent := widget.NewForm(t.llmItem)
	t.llmForm = agent
	t.kept = newHistorySettings(t)
	t.forms = []*widget.Form{service, transcription, audio, agent, t.kept.form}

	left := container.NewVBox(widget.NewCard("Service", "", service), widget.NewCard("Voice agent", "", agent))
	right := container.NewVBox(widget.NewCard("Transcription", "", transcription), widget.NewCard("Audio and export", "", audio), widget.NewCard("History", "", t.kept.form))
	// Two columns when the window is wide enough for both, else one: in
	// two, an 800-pixel window cut the right one off.
	cols := &columnsOrRows{}
	body := container.NewVScroll(container.NewPadded(container.New(cols, left, right)))
	cols.changed = body.Refresh
	bar := container.NewBorder(nil, nil, nil, container.NewHBox(t.revert, t.save), t.status)
	t.fill(t.current)
	t.updateControls()
	return container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), container.NewPadded(bar)), nil, nil, body)
}

// load reads the settings and the key's status, off the UI goroutine.
func (t *settingsTab) load() {
	t.app.goAsync(func(ctx context.Context) {
		s, err := t.app.ws.Settings(ctx)
		t.app.onUI(func() {
			if err != nil {
				t.app.log.Warn("load the settings", "err", err)
				t.ui.do(func() { t.setStatus(plainError(err), widget.DangerImportance) })
			} else {
				t.loaded = true
				t.app.settingsSaved(s, false)
				t.ui.do(func() { t.setStatus("", widget.MediumImportance) })
			}
			t.app.loaded(partSettings, err)
		})
	})
	t.refreshKey()
}

// refreshKey asks where the key in use comes from, off the UI goroutine.
func (t *settingsTab) refreshKey() {
	started := t.app.goAsync(func(context.Context) {
		ks := t.app.ws.Key()
		t.app.onUI(func() {
			t.showKey(ks)
			t.app.loaded(partKey, nil)
		})
	})
	if !started {
		t.app.loaded(partKey, nil)
	}
}

// keyWords says where the key in use comes from, never the key.
func keyWords(ks sessions.KeyStatus) string {
	switch ks.Source {
	case sessions.KeyEnvironment:
		return "from " + sessions.EnvAPIKey
	case sessions.KeyKeyring:
		return "in the system keyring"
	case sessions.KeySession:
		return "for this session only (no Secret Service found)"
	}
	if ks.Err != nil {
		return "none: the keyring could not be read. " + plainError(ks.Err)
	}
	return "none"
}

func (t *settingsTab) showKey(ks sessions.KeyStatus) {
	if ks.Err != nil {
		t.app.log.Warn("read the key's status", "err", ks.Err)
	}
	t.ui.do(func() {
		t.keyInUse.SetText(keyWords(ks))
		t.keyInUse.Importance = widget.MediumImportance
		if ks.Source == sessions.KeySession || ks.Err != nil {
			t.keyInUse.Importance = widget.WarningImportance
		}
		t.keyInUse.Refresh()
	})
}

// onSaveKey saves the key typed. The field is emptied at once: the key
// is never shown again, and never logged.
func (t *settingsTab) onSaveKey() {
	if t.keyBusy {
		return
	}
	key := api.Secret(strings.TrimSpace(t.keyEntry.Text))
	t.keyEntry.SetText("")
	if key == "" {
		t.setStatus("Paste a key into the API key field first.", widget.WarningImportance)
		return
	}
	t.keyBusy = true
	t.updateControls()
	t.setStatus("Saving the key…", widget.MediumImportance)
	started := t.app.goAsync(func(context.Context) {
		_, err := t.app.ws.SaveKey(key)
		ks := t.app.ws.Key()
		t.app.onUI(func() { t.keyChanged(ks, err, true) })
	})
	if !started {
		t.keyBusy = false
		t.updateControls()
	}
}

// onForgetKey removes the stored key.
func (t *settingsTab) onForgetKey() {
	if t.keyBusy {
		return
	}
	t.keyBusy = true
	t.updateControls()
	t.setStatus("Forgetting the key…", widget.MediumImportance)
	started := t.app.goAsync(func(context.Context) {
		err := t.app.ws.ForgetKey()
		ks := t.app.ws.Key()
		t.app.onUI(func() { t.keyChanged(ks, err, false) })
	})
	if !started {
		t.keyBusy = false
		t.updateControls()
	}
}

// keyChanged shows the key's status after it was saved (saved) or
// forgotten, and asks the service again: the connection uses the key.
func (t *settingsTab) keyChanged(ks sessions.KeyStatus, err error, saved bool) {
	t.keyBusy = false
	t.updateControls()
	t.showKey(ks)
	switch {
	case err != nil && errors.Is(err, store.ErrSecretServiceUnavailable):
		t.setStatus("No Secret Service (keyring) was found: the key is kept for this session only, and forgotten when Earshot closes.", widget.WarningImportance)
	case err != nil:
		t.app.log.Warn("save or forget the key", "err", err)
		t.setStatus(plainError(err), widget.DangerImportance)
	case saved && ks.Source == sessions.KeyEnvironment:
		t.setStatus("The key is saved, but "+sessions.EnvAPIKey+" is set and is used instead.", widget.WarningImportance)
	case saved:
		t.setStatus("The key is saved in the system keyring.", widget.SuccessImportance)
	case ks.Source == sessions.KeyEnvironment:
		t.setStatus("The stored key is forgotten; "+sessions.EnvAPIKey+" is still set and used.", widget.MediumImportance)
	default:
		t.setStatus("The key is forgotten.", widget.MediumImportance)
	}
	t.app.keyChanged()
}

// setStatus shows a line in the tab's status bar.
func (t *settingsTab) setStatus(text string, imp widget.Importance) {
	t.status.Importance = imp
	t.status.SetText(text)
}

// fill sets the fields to s, without counting as an edit.
func (t *settingsTab) fill(s store.Settings) {
	t.filling = true
	defer func() { t.filling = false }()
	for _, b := range backendChoices {
		if b.value == s.Backend {
			setSelected(t.backend, b.name)
		}
	}
	if r, err := api.ParseRegion(s.Region); err == nil {
		setSelected(t.region, r.String())
	}
	t.customURL.SetText(s.CustomURL)
	t.llm.SetText(s.AgentLLM)
	setChecked(t.tokens, s.ShortLivedTokens)
	t.setModelOptions(s.Model)
	setSelected(t.model, s.Model)
	t.updateLanguages()
	t.language.SetText(s.Language)
	setChecked(t.smart, s.SmartFormat)
	setChecked(t.diarize, s.Diarize)
	setChecked(t.interim, s.InterimResults)
	t.fileIntel.set(sessions.FileFeatures(s))
	setChecked(t.notes, s.NotesOnStop)
	setChecked(t.keepAudio, s.KeepAudio)
	t.selectInput(s.InputDevice)
	t.selectOutput(s.OutputDevice)
	setSelected(t.export, exportFormatName(defaultExportFormat(s.ExportFormat)))
	t.kept.fill(s)
	t.updateBackendFields()
	for _, f := range t.forms {
		f.Refresh()
	}
}

// setSelected shows an option without calling OnChanged.
func setSelected(s *widget.Select, option string) {
	s.Selected = option
	s.Refresh()
}

// setChecked sets a check without calling OnChanged.
func setChecked(c *widget.Check, on bool) {
	c.Checked = on
	c.Refresh()
}

// gather reads the fields into settings.
func (t *settingsTab) gather() store.Settings {
	s := t.current
	for _, b := range backendChoices {
		if b.name == t.backend.Selected {
			s.Backend = b.value
		}
	}
	for _, r := range api.Regions {
		if r.String() == t.region.Selected {
			s.Region = string(r)
		}
	}
	s.CustomURL = strings.TrimSpace(t.customURL.Text)
	s.AgentLLM = strings.TrimSpace(t.llm.Text)
	s.ShortLivedTokens = t.tokens.Checked
	s.Model = t.model.Selected
	s.Language = strings.TrimSpace(t.language.Text)
	s.SmartFormat = t.smart.Checked
	s.Diarize = t.diarize.Checked
	s.InterimResults = t.interim.Checked
	fi := t.fileIntel.features()
	s.FileSummary, s.FileSentiment, s.FileTopics, s.FileIntents = fi.Summary, fi.Sentiment, fi.Topics, fi.Intents
	s.NotesOnStop = t.notes.Checked
	s.KeepAudio = t.keepAudio.Checked
	if i := t.input.SelectedIndex(); i >= 0 && i < len(t.micIDs) {
		s.InputDevice = t.micIDs[i]
	}
	if i := t.output.SelectedIndex(); i >= 0 && i < len(t.outIDs) {
		s.OutputDevice = t.outIDs[i]
	}
	if f, ok := exportFormatByName(t.export.Selected); ok {
		s.ExportFormat = string(f)
	}
	return s
}

// onFieldChanged follows an edit: which fields apply, and whether there
// is anything to save.
func (t *settingsTab) onFieldChanged() {
	if t.filling {
		return
	}
	t.updateBackendFields()
	t.updateControls()
}

// updateBackendFields enables the fields the chosen backend uses.
func (t *settingsTab) updateBackendFields() {
	backend := store.BackendAuto
	for _, b := range backendChoices {
		if b.name == t.backend.Selected {
			backend = b.value
			t.forms[0].Items[2].HintText = b.hint
		}
	}
	enable(t.region, backend != store.BackendLocal)
	enable(t.tokens, backend != store.BackendLocal)
	enable(t.customURL, backend == store.BackendCustom)
	// Why a field is off, under it (Fyne has no tooltips).
	local := ""
	if backend == store.BackendLocal {
		local = "Not for the local engine, which runs on this computer."
	}
	t.forms[0].Items[3].HintText, t.forms[0].Items[5].HintText = local, local
	_ = t.customURL.Validate() // its verdict depends on the backend
	t.forms[0].Refresh()
}

// dirty reports whether the fields differ from the saved settings.
func (t *settingsTab) dirty() bool { return t.gather() != t.current }

func (t *settingsTab) updateControls() {
	enable(t.save, t.loaded && !t.saving && t.dirty())
	enable(t.revert, t.loaded && !t.saving && t.dirty())
	enable(t.saveKey, !t.keyBusy)
	enable(t.forgetKey, !t.keyBusy)
}

// checkCustomURL checks the custom server's address, when that backend
// is chosen.
func (t *settingsTab) checkCustomURL(s string) error {
	if t.backend.Selected != backendChoices[3].name {
		return nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("give the server's address, such as https://speech.example.com")
	}
	u, err := url.Parse(s)
	if err == nil && u.User != nil {
		return errors.New("leave the key out of the address: save it as the API key")
	}
	// The scheme is required: the client would take a bare host, but the
	// settings store refuses it, and would say only that a setting is
	// not valid.
	_, perr := api.ParseBaseURL(s)
	if err != nil || perr != nil || !slices.Contains([]string{"http", "https", "ws", "wss"}, strings.ToLower(u.Scheme)) {
		return errors.New("not an address: use http:// or https://, a host, and no query")
	}
	return nil
}

// checkLLMURL checks the language model server's address: empty, or
// http(s) with a host and no credential.
func checkLLMURL(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return errors.New("leave credentials out of the address")
	}
	if err := store.CheckLLMURL(s); err != nil {
		return errors.New("not an address: use http:// or https:// and a host, such as http://127.0.0.1:11434/v1")
	}
	return nil
}

// checkWord checks a name that must be one word, such as a language.
func checkWord(what, s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return fmt.Errorf("choose %s", what)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsGraphic(r) }) {
		return fmt.Errorf("%s is one word, such as en or en-US", what)
	}
	return nil
}

// onSave checks and saves the settings (Ctrl+S).
func (t *settingsTab) onSave() {
	if !t.loaded || t.saving {
		return
	}
	// The language model's address is checked for its form only: a
	// server that does not answer yet may be saved (its field says so).
	errURL := firstError(t.customURL.Validate(), checkLLMURL(t.llm.Text))
	errLang := checkWord("a language", t.language.Text)
	for _, f := range t.forms {
		f.Refresh()
	}
	if errURL != nil || errLang != nil {
		t.setStatus("Nothing was saved: "+firstError(errURL, errLang).Error()+".", widget.DangerImportance)
		return
	}
	s := t.gather()
	if s == t.current {
		t.setStatus("Nothing has changed.", widget.MediumImportance)
		return
	}
	old := t.current
	t.saving = true
	t.updateControls()
	t.setStatus("Saving…", widget.MediumImportance)
	started := t.app.goAsync(func(ctx context.Context) {
		err := t.app.ws.SaveSettings(ctx, s)
		t.app.onUI(func() {
			t.saving = false
			if err != nil {
				t.app.log.Warn("save the settings", "err", err)
				t.setStatus(plainError(err), widget.DangerImportance)
				t.updateControls()
				return
			}
			t.app.settingsSaved(s, connectionChanged(old, s))
			t.setStatus(t.app.settingsSavedWords())
		})
	})
	if !started {
		t.saving = false
		t.updateControls()
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// connectionChanged reports whether the change of settings changes which
// service the app talks to.
func connectionChanged(a, b store.Settings) bool {
	return a.Backend != b.Backend || a.Region != b.Region || a.CustomURL != b.CustomURL || a.ShortLivedTokens != b.ShortLivedTokens ||
		a.AgentLLM != b.AgentLLM // the agent's models
}

// onRevert puts the saved settings back in the fields.
func (t *settingsTab) onRevert() {
	t.fill(t.current)
	t.updateControls()
	t.setStatus("", widget.MediumImportance)
}

// setCurrent takes saved settings. Fields the user is editing keep their
// edits, except the microphone, which the Captions tab may have changed.
func (t *settingsTab) setCurrent(s store.Settings) {
	t.ui.do(func() {
		edited := t.loaded && t.dirty()
		t.current = s
		t.loaded = true
		if edited {
			t.filling = true
			t.selectInput(s.InputDevice)
			t.filling = false
		} else {
			t.fill(s)
		}
		if s.AgentLLM != t.llmTry.addr {
			t.tryLLM(s.AgentLLM)
		}
		t.updateControls()
	})
}

// setModels takes the service's models: the speech-to-text ones are
// offered.
func (t *settingsTab) setModels(models []ModelInfo) {
	t.ui.do(func() {
		t.models = t.models[:0]
		for _, m := range models {
			if m.Kind == sessions.KindSpeechToText {
				t.models = append(t.models, m)
			}
		}
		t.filling = true
		t.setModelOptions(t.model.Selected)
		t.updateLanguages()
		t.filling = false
	})
}

// setModelOptions offers the service's models, and keep too, so that a
// saved model the service does not list is not lost.
func (t *settingsTab) setModelOptions(keep string) {
	var names []string
	for _, m := range t.models {
		if !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		names = []string{defaultModel}
	}
	if keep != "" && !slices.Contains(names, keep) {
		names = append(names, keep)
	}
	t.model.Options = names
	t.model.Refresh()
}

// updateLanguages offers the languages of the chosen model.
func (t *settingsTab) updateLanguages() {
	for _, m := range t.models {
		if m.Name == t.model.Selected && len(m.Languages) > 0 {
			t.language.SetOptions(m.Languages)
			return
		}
	}
	t.language.SetOptions([]string{"en"})
}

// setMicrophones fills the microphone picker.
func (t *settingsTab) setMicrophones(devs []device.Device) {
	t.ui.do(func() {
		options, ids := micChoices(devs, t.current.InputDevice)
		t.micIDs = ids
		t.input.Options = options
		t.filling = true
		t.selectInput(t.current.InputDevice)
		t.filling = false
	})
}

// selectInput shows a device id in the picker.
func (t *settingsTab) selectInput(id string) { selectDevice(t.input, t.micIDs, id, defaultMic) }

// setSpeakers fills the speaker picker.
func (t *settingsTab) setSpeakers(devs []device.Device) {
	t.ui.do(func() {
		options, ids := deviceChoices(devs, t.current.OutputDevice, defaultSpeaker, "Saved speaker (not connected)")
		t.outIDs = ids
		t.output.Options = options
		t.filling = true
		t.selectOutput(t.current.OutputDevice)
		t.filling = false
	})
}

// selectOutput shows a device id in the speaker picker.
func (t *settingsTab) selectOutput(id string) { selectDevice(t.output, t.outIDs, id, defaultSpeaker) }
