package ui

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// Words of the Voices tab's pickers.
const (
	anyLanguage = "All languages"
	anyAccent   = "All accents"
	noVoiceB    = "Voice B…"
)

// voiceControls is what the Voices tab asks for: the language and accent
// filters, the voice (and voice B to compare with), the text, the speed
// and expressivity sliders, and turn by turn.
type voiceControls struct {
	language *widget.Select
	accent   *widget.Select
	voice    *widget.Select
	voiceB   *widget.Select
	// langCodes are the language tags of the language filter's options,
	// "" for All languages.
	langCodes []string
	text      *docField
	speed     *widget.Slider
	speedV    *widget.Label
	speedWhy  *widget.Label
	expr      *widget.Slider
	exprV     *widget.Label
	turns     *widget.Check

	all     []sessions.Voice
	shown   []sessions.Voice // the voices the picker offers, filtered
	filling bool             // the pickers are being filled in code
}

// buildControls creates the controls, and returns the filters' row and
// the sliders' form.
func (v *voicesTab) buildControls() (filters, sliders fyne.CanvasObject) {
	c := &v.controls
	c.language = widget.NewSelect([]string{anyLanguage}, func(string) { v.applyFilters() })
	c.language.Selected = anyLanguage
	c.accent = widget.NewSelect([]string{anyAccent}, func(string) { v.applyFilters() })
	c.accent.Selected = anyAccent
	c.voice = widget.NewSelect(nil, func(string) { v.onVoiceChanged() })
	c.voice.PlaceHolder = "Loading voices…"
	c.text = newDocField(sessions.MaxSynthesisChars, "Text to speak", v.setStatus)
	c.text.overMost = v.firstPart
	c.text.entry.SetPlaceHolder("Text to speak")
	c.text.entry.SetMinRowsVisible(5)
	c.speed = widget.NewSlider(0.5, 1.5)
	c.speed.Step = 0.05
	c.speed.Value = 1
	c.speed.OnChanged = func(float64) { v.showValues() }
	c.speedV = widget.NewLabel("")
	c.speedWhy = widget.NewLabel("")
	c.speedWhy.Wrapping = fyne.TextWrapWord
	c.speedWhy.SizeName = theme.SizeNameCaptionText
	c.expr = widget.NewSlider(api.MinExpressivity, api.MaxExpressivity)
	c.expr.Step = 1
	c.expr.OnChanged = func(float64) { v.showValues() }
	c.exprV = widget.NewLabel("")
	c.turns = widget.NewCheck("Speak turn by turn", nil)
	// Picking voice B makes Compare A/B possible at once.
	c.voiceB = widget.NewSelect(nil, func(string) { v.updateControls() })
	c.voiceB.PlaceHolder = noVoiceB

	filters = container.NewGridWithColumns(3, c.language, c.accent, c.voice)
	sliders = container.New(&formColumns{},
		widget.NewLabel("Speed"), container.NewBorder(nil, nil, nil, c.speedV, c.speed),
		widget.NewLabel(""), c.speedWhy,
		widget.NewLabel("Expressivity"), container.NewBorder(nil, nil, nil, c.exprV, c.expr),
	)
	return filters, sliders
}

// selectedVoice returns the model name of the chosen voice.
func (c *voiceControls) selectedVoice() string {
	if i := c.voice.SelectedIndex(); i >= 0 && i < len(c.shown) {
		return c.shown[i].Name
	}
	return ""
}

// speedValue is the slider's speed, as the voice takes it.
func (c *voiceControls) speedValue() float64 {
	sr := sessions.SpeedRangeOf(c.selectedVoice())
	if !sr.Adjustable {
		return 1
	}
	return math.Round(c.speed.Value*20) / 20
}

func (c *voiceControls) exprValue() int {
	if !sessions.Expressive(c.selectedVoice()) {
		return 0
	}
	return int(math.Round(c.expr.Value))
}

// request is what the controls ask for.
func (c *voiceControls) request() sessions.SynthesisRequest {
	return sessions.SynthesisRequest{
		Text:         c.text.Text(),
		Voice:        c.selectedVoice(),
		Speed:        c.speedValue(),
		Expressivity: c.exprValue(),
		TurnByTurn:   c.turns.Checked && !c.turns.Disabled(),
	}
}

// voiceLabel is how the picker names a voice.
func voiceLabel(x sessions.Voice) string {
	kind := "general"
	if x.Family == sessions.FamilyTurn {
		kind = "turn-based"
	}
	accent := x.Accent
	if accent == "" {
		accent = strings.ToUpper(x.Language)
	}
	return fmt.Sprintf("%s (%s, %s) — %s", x.Label, accent, kind, x.Name)
}

// showValues shows the sliders' values and why speed is fixed.
func (v *voicesTab) showValues() {
	c := &v.controls
	c.speedV.SetText(fmt.Sprintf("%.2f×", c.speedValue()))
	c.exprV.SetText(fmt.Sprintf("%+d", c.exprValue()))
	sr := sessions.SpeedRangeOf(c.selectedVoice())
	switch {
	case !sr.Adjustable:
		c.speedWhy.SetText(sr.Why)
	case sessions.Expressive(c.selectedVoice()):
		c.speedWhy.SetText(fmt.Sprintf("%g to %g in steps of %g; expressivity -2 (flat) to 2 (lively).", sr.Min, sr.Max, sr.Step))
	default:
		c.speedWhy.SetText(fmt.Sprintf("%g to %g. This voice has no expressivity.", sr.Min, sr.Max))
	}
}

// setVoices fills the filters and the pickers.
func (v *voicesTab) setVoices(list []sessions.Voice) {
	c := &v.controls
	c.all = list
	var codes []string
	accents := []string{anyAccent}
	for _, x := range list {
		if !slices.Contains(codes, x.Language) {
			codes = append(codes, x.Language)
		}
		if x.Accent != "" && !slices.Contains(accents, x.Accent) {
			accents = append(accents, x.Accent)
		}
	}
	// By name ("German (de)"), in the order of the names.
	slices.SortFunc(codes, func(a, b string) int { return strings.Compare(languageLabel(a), languageLabel(b)) })
	slices.Sort(accents[1:])
	c.langCodes = append([]string{""}, codes...)
	langs := []string{anyLanguage}
	for _, code := range codes {
		langs = append(langs, languageLabel(code))
	}
	c.filling = true
	c.language.SetOptions(langs)
	c.accent.SetOptions(accents)
	c.filling = false
	var names []string
	for _, x := range list {
		names = append(names, voiceLabel(x))
	}
	c.voiceB.SetOptions(names)
	c.voice.PlaceHolder = "Choose a voice"
	v.applyFilters()
}

// applyFilters offers the voices of the chosen language and accent,
// keeping the choice if it is among them, else the settings' voice.
func (v *voicesTab) applyFilters() {
	c := &v.controls
	if c.filling {
		return
	}
	keep := c.selectedVoice()
	if keep == "" {
		keep = v.settings.Voice
		if v.settings.TurnVoice != "" && !slices.ContainsFunc(c.all, func(x sessions.Voice) bool { return x.Name == keep }) {
			keep = v.settings.TurnVoice
		}
	}
	lang, accent := "", c.accent.Selected
	if i := c.language.SelectedIndex(); i > 0 && i < len(c.langCodes) {
		lang = c.langCodes[i]
	}
	if accent == anyAccent {
		accent = ""
	}
	c.shown = sessions.Filter(c.all, lang, accent)
	opts := make([]string, len(c.shown))
	sel := -1
	for i, x := range c.shown {
		opts[i] = voiceLabel(x)
		if x.Name == keep {
			sel = i
		}
	}
	c.filling = true
	c.voice.SetOptions(opts)
	if sel < 0 && len(opts) > 0 {
		sel = 0
	}
	if sel >= 0 {
		c.voice.SetSelectedIndex(sel)
	} else {
		c.voice.ClearSelected()
	}
	c.filling = false
	v.onVoiceChanged()
}

// onVoiceChanged fits the sliders to the voice chosen.
func (v *voicesTab) onVoiceChanged() {
	c := &v.controls
	name := c.selectedVoice()
	sr := sessions.SpeedRangeOf(name)
	if sr.Adjustable {
		c.speed.Min, c.speed.Max = sr.Min, sr.Max
		c.speed.Value = min(max(c.speed.Value, sr.Min), sr.Max)
	} else {
		c.speed.Value = 1
	}
	if !sessions.Expressive(name) {
		c.expr.Value = 0
		c.turns.SetChecked(false)
	}
	c.speed.Refresh()
	c.expr.Refresh()
	v.showValues()
	v.updateControls()
}

// persist saves the voice, speed and expressivity chosen, and the save
// format, off the UI goroutine.
func (v *voicesTab) persist() {
	c := &v.controls
	s := v.settings
	name := c.selectedVoice()
	if f, _ := sessions.FamilyOf(name); f == sessions.FamilyTurn {
		s.TurnVoice = name
		s.Expressivity = c.exprValue()
	} else if name != "" {
		s.Voice = name
	}
	s.SpeakSpeed = c.speedValue()
	if f := v.save.format.Selected; f != "" {
		s.SaveEncoding = f
	}
	if s == v.settings {
		return
	}
	v.settings = s
	v.app.goAsync(func(ctx context.Context) {
		if err := v.app.ws.SaveSettings(ctx, s); err != nil {
			v.app.onUI(func() { v.showError("save the voice settings", err) })
			return
		}
		v.app.onUI(func() { v.app.settingsSaved(s, false) })
	})
}

// firstPart keeps the first sentences of a text longer than a synthesis
// takes, as many as fit, and says so.
func (v *voicesTab) firstPart(text string) (keep, words string) {
	keep = firstSentences(text, sessions.MaxSynthesisChars)
	if keep == "" {
		return "", tooLongWords("Voices", len(text), sessions.MaxSynthesisChars)
	}
	return keep, fmt.Sprintf("Kept the first %s characters of %s: Voices speaks at most %s characters at a time.",
		thousands(utf8.RuneCountInString(keep)), thousands(utf8.RuneCountInString(text)), thousands(sessions.MaxSynthesisChars))
}
