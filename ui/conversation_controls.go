package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// The timeout slider is logarithmic: its position p in [0, 1] is
// MinEOTTimeoutMS·(Max/Min)^p, so that the short timeouts people tune
// get most of its travel. Values are rounded to timeoutStepMS.
const timeoutStepMS = 50

func timeoutFromSlider(p float64) int {
	ms := float64(api.MinEOTTimeoutMS) * math.Pow(float64(api.MaxEOTTimeoutMS)/api.MinEOTTimeoutMS, p)
	return min(max(int(math.Round(ms/timeoutStepMS))*timeoutStepMS, api.MinEOTTimeoutMS), api.MaxEOTTimeoutMS)
}

func sliderFromTimeout(ms int) float64 {
	return math.Log(float64(ms)/api.MinEOTTimeoutMS) / math.Log(float64(api.MaxEOTTimeoutMS)/api.MinEOTTimeoutMS)
}

// convTuning is the Conversation tab's end-of-turn controls: the
// threshold and timeout sliders, the key terms, and the line that
// confirms what is in force.
type convTuning struct {
	threshold  *widget.Slider
	thresholdV *widget.Label
	timeout    *widget.Slider
	timeoutV   *widget.Label
	keyterms   *boundedEntry
	applyTerms *widget.Button
	confirm    *widget.Label

	syncing bool // the sliders are being set from the service's answer
}

// buildTuning creates the end-of-turn controls.
func (c *conversationTab) buildTuning() fyne.CanvasObject {
	t := &c.tuning
	t.threshold = widget.NewSlider(api.MinEOTThreshold, api.MaxEOTThreshold)
	t.threshold.Step = 0.01
	t.threshold.Value = api.DefaultEOTThreshold
	t.thresholdV = widget.NewLabel("")
	t.threshold.OnChanged = func(float64) { t.showValues() }
	t.threshold.OnChangeEnded = func(float64) { c.onSettingChanged(true, false) }
	t.timeout = widget.NewSlider(0, 1)
	t.timeout.Step = 0.001
	t.timeout.Value = sliderFromTimeout(api.DefaultEOTTimeoutMS)
	t.timeoutV = widget.NewLabel("")
	t.timeout.OnChanged = func(float64) { t.showValues() }
	t.timeout.OnChangeEnded = func(float64) { c.onSettingChanged(false, true) }
	t.keyterms = newBoundedEntry(lineLimit, func(p string) {
		c.setStatus(tooLongWords("Key terms", len(p), lineLimit), widget.WarningImportance)
	})
	t.keyterms.SetPlaceHolder("Key terms, separated by commas")
	t.keyterms.OnSubmitted = func(string) { c.onApplyKeyterms() }
	t.applyTerms = widget.NewButtonWithIcon("Apply", theme.ConfirmIcon(), c.onApplyKeyterms)
	t.confirm = widget.NewLabel("End-of-turn settings: the service's defaults.")
	t.confirm.Wrapping = fyne.TextWrapWord
	t.showValues()

	form := container.New(&formColumns{},
		widget.NewLabel("End-of-turn threshold"), container.NewBorder(nil, nil, nil, t.thresholdV, t.threshold),
		widget.NewLabel("End-of-turn timeout"), container.NewBorder(nil, nil, nil, t.timeoutV, t.timeout),
		widget.NewLabel("Key terms"), container.NewBorder(nil, nil, nil, t.applyTerms, t.keyterms),
	)
	return container.NewVBox(form, t.confirm)
}

func (t *convTuning) setConfirm(text string, imp widget.Importance) {
	t.confirm.Importance = imp
	t.confirm.SetText(text)
}

// thresholdValue and timeoutValue are the threshold and timeout on the
// sliders.
func (t *convTuning) thresholdValue() float64 { return math.Round(t.threshold.Value*100) / 100 }
func (t *convTuning) timeoutValue() int       { return timeoutFromSlider(t.timeout.Value) }

func (t *convTuning) showValues() {
	t.thresholdV.SetText(fmt.Sprintf("%.2f", t.thresholdValue()))
	t.timeoutV.SetText(msWords(t.timeoutValue()))
}

// sync shows settings in force on the sliders, without applying them
// again.
func (t *convTuning) sync(s sessions.TurnSettings) {
	t.syncing = true
	defer func() { t.syncing = false }()
	t.threshold.SetValue(s.EOTThreshold)
	t.timeout.SetValue(sliderFromTimeout(s.EOTTimeoutMS))
	t.showValues()
}

// configured shows the service's answer to a change of settings.
func (t *convTuning) configured(e *sessions.ConfigureEvent) {
	if e.OK {
		t.setConfirm("Applied: "+settingsWords(e.Applied)+".", widget.SuccessImportance)
	} else {
		t.setConfirm("The service refused the change, so nothing changed: "+settingsWords(e.Applied)+" stay in force.", widget.DangerImportance)
	}
	t.sync(e.Applied)
}

// msWords writes milliseconds for people: 850 ms, 1.5 s, 12 s.
func msWords(ms int) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 10000:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(ms)/1000), "0"), ".0") + " s"
	}
	return fmt.Sprintf("%.0f s", float64(ms)/1000)
}

// termsOf splits the key terms entry.
func termsOf(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// settingsWords describes end-of-turn settings.
func settingsWords(s sessions.TurnSettings) string {
	parts := []string{fmt.Sprintf("threshold %.2f", s.EOTThreshold), "timeout " + msWords(s.EOTTimeoutMS)}
	if s.EagerEOTThreshold != 0 {
		parts = append(parts, fmt.Sprintf("eager threshold %.2f", s.EagerEOTThreshold))
	}
	if len(s.Keyterms) > 0 {
		parts = append(parts, "key terms "+strings.Join(s.Keyterms, ", "))
	} else {
		parts = append(parts, "no key terms")
	}
	return strings.Join(parts, ", ")
}

// startOptions are the options the settings choose, with the tuning
// shown.
func (c *conversationTab) startOptions() api.TurnOptions {
	o := sessions.TurnOptionsFor(c.settings)
	if th := c.tuning.thresholdValue(); th != api.DefaultEOTThreshold {
		o.EOTThreshold = th
	}
	if ms := c.tuning.timeoutValue(); ms != api.DefaultEOTTimeoutMS {
		o.EOTTimeoutMS = ms
	}
	o.Keyterms = termsOf(c.tuning.keyterms.Text)
	return o
}

// onEndTurn ends the turn in progress by hand (Ctrl+D). With no turn in
// progress the service says so, and the status shows it.
func (c *conversationTab) onEndTurn() {
	ls := c.live
	if ls == nil || ls.stopping {
		return
	}
	c.app.goAsync(func(ctx context.Context) {
		err := ls.c.ForceEndTurn(ctx)
		if err != nil {
			c.app.onUI(func() { c.showError("end the turn", err) })
		}
	})
}

// nudgeThreshold moves the threshold slider by d and applies it
// (Ctrl+[ and Ctrl+]).
func (c *conversationTab) nudgeThreshold(d float64) {
	c.tuning.threshold.SetValue(math.Round((c.tuning.threshold.Value+d)*100) / 100)
}

// onSettingChanged applies a slider's new value: live through Configure,
// or for the next start.
func (c *conversationTab) onSettingChanged(threshold, timeout bool) {
	c.tuning.showValues()
	if c.tuning.syncing {
		return
	}
	var cfg api.Configure
	if threshold {
		v := c.tuning.thresholdValue()
		cfg.Thresholds.EOTThreshold = &v
	}
	if timeout {
		v := c.tuning.timeoutValue()
		cfg.Thresholds.EOTTimeoutMS = &v
	}
	c.configure(cfg)
}

// onApplyKeyterms applies the key terms entered.
func (c *conversationTab) onApplyKeyterms() {
	terms := termsOf(c.tuning.keyterms.Text)
	if terms == nil {
		terms = []string{} // sent as [], which clears them
	}
	c.configure(api.Configure{Keyterms: terms})
}

// configure sends cfg to the conversation, or keeps it for the next one.
func (c *conversationTab) configure(cfg api.Configure) {
	t := &c.tuning
	if err := cfg.Validate(); err != nil {
		t.setConfirm(plainError(err), widget.DangerImportance)
		return
	}
	ls := c.live
	if ls == nil || ls.stopping {
		t.setConfirm("These settings apply when the conversation starts.", widget.MediumImportance)
		return
	}
	t.setConfirm("Applying…", widget.MediumImportance)
	c.app.goAsync(func(ctx context.Context) {
		err := ls.c.Configure(ctx, cfg)
		if err != nil {
			c.app.onUI(func() {
				if errors.Is(err, sessions.ErrNotRunning) {
					t.setConfirm("The conversation has ended: these settings apply to the next one.", widget.MediumImportance)
					return
				}
				c.app.log.Warn("configure", "err", err)
				t.setConfirm(plainError(err), widget.DangerImportance)
			})
		}
	})
}
