package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Shortcuts of the Voices tab. Ctrl+S saves the audio while the tab is
// open (elsewhere it saves the settings).
var (
	playShortcut = ctrl(fyne.KeyReturn)
	stopShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyEscape}
)

// Words of the Voices tab.
const (
	anyLanguage = "All languages"
	anyAccent   = "All accents"
	noVoiceB    = "Voice B…"
	voicesHint  = "Type or paste text, pick a voice and press Play (Ctrl+Enter). Esc stops."
	// voicesHistoryLen is how many past syntheses the list shows.
	voicesHistoryLen = 50
)

// voicesTab is the Voices tab: the voice playground. Its fields are
// touched only on the UI goroutine.
type voicesTab struct {
	app *App

	language   *widget.Select
	accent     *widget.Select
	voice      *widget.Select
	text       *widget.Entry
	speed      *widget.Slider
	speedV     *widget.Label
	speedWhy   *widget.Label
	expr       *widget.Slider
	exprV      *widget.Label
	turns      *widget.Check
	play       *widget.Button
	stop       *widget.Button
	voiceB     *widget.Select
	compare    *widget.Button
	format     *widget.Select
	saveAs     *widget.Button
	wave       *waveform
	metrics    *widget.Label
	turnBox    *fyne.Container
	results    *fyne.Container
	historyW   *widget.List
	status     *widget.Label
	historyBox *fyne.Container

	all      []sessions.Voice
	shown    []sessions.Voice // the voices the picker offers, filtered
	settings store.Settings
	filling  bool
	voices   *sessions.Voices

	syn        *sessions.Synthesis
	cmp        *sessions.Comparison
	playing    *sessions.Playing
	side       string
	kept       []keptAudio // the last synthesis, or both sides of a comparison
	turnLabels map[int]*widget.Label
	history    []store.Session
	autoSpoken bool // Options.AutoSpeak was started
	autoing    bool // the AutoSpeak synthesis is under way
}

// keptAudio is a synthesis kept for playing again and saving.
type keptAudio struct {
	label string
	pcm   []int16
	rate  int
	ttfa  time.Duration
}

func newVoicesTab(a *App) *voicesTab {
	return &voicesTab{app: a, settings: store.DefaultSettings(), turnLabels: map[int]*widget.Label{}}
}

func (v *voicesTab) buildUI() fyne.CanvasObject {
	v.language = widget.NewSelect([]string{anyLanguage}, func(string) { v.applyFilters() })
	v.language.Selected = anyLanguage
	v.accent = widget.NewSelect([]string{anyAccent}, func(string) { v.applyFilters() })
	v.accent.Selected = anyAccent
	v.voice = widget.NewSelect(nil, func(string) { v.onVoiceChanged() })
	v.voice.PlaceHolder = "Loading voices…"
	v.text = widget.NewMultiLineEntry()
	v.text.SetPlaceHolder("Text to speak")
	v.text.Wrapping = fyne.TextWrapWord
	v.text.SetMinRowsVisible(5)
	v.speed = widget.NewSlider(0.5, 1.5)
	v.speed.Step = 0.05
	v.speed.Value = 1
	v.speed.OnChanged = func(float64) { v.showValues() }
	v.speedV = widget.NewLabel("")
	v.speedWhy = widget.NewLabel("")
	v.speedWhy.Wrapping = fyne.TextWrapWord
	v.speedWhy.SizeName = theme.SizeNameCaptionText
	v.expr = widget.NewSlider(api.MinExpressivity, api.MaxExpressivity)
	v.expr.Step = 1
	v.expr.OnChanged = func(float64) { v.showValues() }
	v.exprV = widget.NewLabel("")
	v.turns = widget.NewCheck("Speak turn by turn", nil)
	v.play = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), v.onPlay)
	v.play.Importance = widget.HighImportance
	v.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.onStop)
	v.voiceB = widget.NewSelect(nil, nil)
	v.voiceB.PlaceHolder = noVoiceB
	v.compare = widget.NewButtonWithIcon("Compare A/B", theme.ViewRefreshIcon(), v.onCompare)
	v.format = widget.NewSelect(sessions.SaveEncodings, func(string) { v.onFormatChanged() })
	v.format.Selected = v.settings.SaveEncoding
	v.saveAs = widget.NewButtonWithIcon("Save as…", theme.DocumentSaveIcon(), func() { v.onSaveAs(0) })
	v.wave = newWaveform()
	v.metrics = widget.NewLabel("Time to first audio: –")
	v.turnBox = container.NewVBox()
	v.results = container.NewVBox()
	v.status = widget.NewLabel(voicesHint)
	v.status.Wrapping = fyne.TextWrapWord
	v.historyW = widget.NewList(
		func() int { return len(v.history) },
		func() fyne.CanvasObject {
			return container.NewBorder(nil, nil, nil,
				container.NewHBox(
					widget.NewButtonWithIcon("", theme.MediaPlayIcon(), nil),
					widget.NewButtonWithIcon("", theme.DocumentSaveIcon(), nil),
					widget.NewButtonWithIcon("", theme.DeleteIcon(), nil)),
				widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{}))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(v.history) {
				return
			}
			s := v.history[i]
			c := o.(*fyne.Container)
			l := c.Objects[0].(*widget.Label)
			l.Truncation = fyne.TextTruncateEllipsis
			l.SetText(historyLine(s))
			btns := c.Objects[1].(*fyne.Container).Objects
			btns[0].(*widget.Button).OnTapped = func() { v.onReplayHistory(s.ID) }
			btns[1].(*widget.Button).OnTapped = func() { v.onSaveAs(s.ID) }
			btns[2].(*widget.Button).OnTapped = func() { v.onDeleteHistory(s.ID) }
		})

	filters := container.NewGridWithColumns(3, v.language, v.accent, v.voice)
	sliders := container.New(&formColumns{},
		widget.NewLabel("Speed"), container.NewBorder(nil, nil, nil, v.speedV, v.speed),
		widget.NewLabel(""), v.speedWhy,
		widget.NewLabel("Expressivity"), container.NewBorder(nil, nil, nil, v.exprV, v.expr),
	)
	actions := container.NewHBox(v.play, v.stop, v.turns, widget.NewSeparator(),
		container.New(widthLayout{width: 220}, v.voiceB), v.compare, widget.NewSeparator(),
		container.New(widthLayout{width: 110}, v.format), v.saveAs)
	left := container.NewVBox(filters, v.text, sliders, actions, v.wave, v.metrics, v.results, v.turnBox)
	v.historyBox = container.NewBorder(widget.NewLabelWithStyle("History", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, v.historyW)
	split := container.NewHSplit(container.NewPadded(container.NewVScroll(left)), container.NewPadded(v.historyBox))
	split.Offset = 0.64
	v.showValues()
	v.updateControls()
	return container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), v.status), nil, nil, split)
}

// historyLine describes a past synthesis on one line.
func historyLine(s store.Session) string {
	return fmt.Sprintf("%s · %s · %.1f s", s.Title, s.Model, s.Duration)
}

func (v *voicesTab) setStatus(text string, imp widget.Importance) {
	v.status.Importance = imp
	v.status.SetText(text)
}

func (v *voicesTab) showError(what string, err error) {
	v.app.log.Warn(what, "err", err)
	v.setStatus(plainError(err), widget.DangerImportance)
}

// busy reports whether something is speaking.
func (v *voicesTab) busy() bool { return v.syn != nil || v.cmp != nil || v.playing != nil }

// updateControls enables what can be done now.
func (v *voicesTab) updateControls() {
	name := v.selectedVoice()
	busy := v.busy()
	enable(v.play, !busy && name != "")
	enable(v.stop, busy)
	enable(v.compare, !busy && name != "" && v.voiceB.Selected != "")
	enable(v.saveAs, !busy && len(v.kept) > 0)
	enable(v.voice, !busy)
	enable(v.language, !busy)
	enable(v.accent, !busy)
	sr := sessions.SpeedRangeOf(name)
	enable(v.speed, !busy && sr.Adjustable)
	enable(v.expr, !busy && sessions.Expressive(name))
	enable(v.turns, !busy && sessions.Expressive(name))
}

// showValues shows the sliders' values and why speed is fixed.
func (v *voicesTab) showValues() {
	v.speedV.SetText(fmt.Sprintf("%.2f×", v.speedValue()))
	v.exprV.SetText(fmt.Sprintf("%+d", v.exprValue()))
	sr := sessions.SpeedRangeOf(v.selectedVoice())
	switch {
	case !sr.Adjustable:
		v.speedWhy.SetText(sr.Why)
	case sessions.Expressive(v.selectedVoice()):
		v.speedWhy.SetText(fmt.Sprintf("%g to %g in steps of %g; expressivity -2 (flat) to 2 (lively).", sr.Min, sr.Max, sr.Step))
	default:
		v.speedWhy.SetText(fmt.Sprintf("%g to %g. This voice has no expressivity.", sr.Min, sr.Max))
	}
}

// speedValue is the slider's speed, as the voice takes it.
func (v *voicesTab) speedValue() float64 {
	sr := sessions.SpeedRangeOf(v.selectedVoice())
	if !sr.Adjustable {
		return 1
	}
	return math.Round(v.speed.Value*20) / 20
}

func (v *voicesTab) exprValue() int {
	if !sessions.Expressive(v.selectedVoice()) {
		return 0
	}
	return int(math.Round(v.expr.Value))
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

// selectedVoice returns the model name of the chosen voice.
func (v *voicesTab) selectedVoice() string {
	if i := v.voice.SelectedIndex(); i >= 0 && i < len(v.shown) {
		return v.shown[i].Name
	}
	return ""
}

// load lists the service's voices and the history, off the UI goroutine.
func (v *voicesTab) load() {
	v.app.goAsync(func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, v.app.opts.queryTimeout())
		defer cancel()
		voices, err := v.app.ws.Voices(qctx)
		var list []sessions.Voice
		if err == nil {
			list, err = voices.List(qctx)
		}
		v.app.onUI(func() {
			if err != nil {
				v.voice.PlaceHolder = "No voices"
				v.voice.Refresh()
				v.showError("list the voices", err)
				if v.app.opts.AutoSpeak != "" && !v.autoSpoken {
					v.autoSpoken, v.autoing = true, true
				}
				v.autoDone(err)
				return
			}
			v.voices = voices
			v.setVoices(list)
			v.reloadHistory()
			if text := v.app.opts.AutoSpeak; text != "" && !v.autoSpoken {
				v.autoSpoken, v.autoing = true, true
				v.text.SetText(text)
				v.onPlay()
			}
		})
	})
}

// setVoices fills the filters and the pickers.
func (v *voicesTab) setVoices(list []sessions.Voice) {
	v.all = list
	langs, accents := []string{anyLanguage}, []string{anyAccent}
	for _, x := range list {
		if !slices.Contains(langs, x.Language) {
			langs = append(langs, x.Language)
		}
		if x.Accent != "" && !slices.Contains(accents, x.Accent) {
			accents = append(accents, x.Accent)
		}
	}
	slices.Sort(langs[1:])
	slices.Sort(accents[1:])
	v.filling = true
	v.language.SetOptions(langs)
	v.accent.SetOptions(accents)
	v.filling = false
	var names []string
	for _, x := range list {
		names = append(names, voiceLabel(x))
	}
	v.voiceB.SetOptions(names)
	v.voice.PlaceHolder = "Choose a voice"
	v.applyFilters()
}

// applyFilters offers the voices of the chosen language and accent,
// keeping the choice if it is among them, else the settings' voice.
func (v *voicesTab) applyFilters() {
	if v.filling {
		return
	}
	keep := v.selectedVoice()
	if keep == "" {
		keep = v.settings.Voice
		if v.settings.TurnVoice != "" && !slices.ContainsFunc(v.all, func(x sessions.Voice) bool { return x.Name == keep }) {
			keep = v.settings.TurnVoice
		}
	}
	lang, accent := v.language.Selected, v.accent.Selected
	if lang == anyLanguage {
		lang = ""
	}
	if accent == anyAccent {
		accent = ""
	}
	v.shown = sessions.Filter(v.all, lang, accent)
	opts := make([]string, len(v.shown))
	sel := -1
	for i, x := range v.shown {
		opts[i] = voiceLabel(x)
		if x.Name == keep {
			sel = i
		}
	}
	v.filling = true
	v.voice.SetOptions(opts)
	if sel < 0 && len(opts) > 0 {
		sel = 0
	}
	if sel >= 0 {
		v.voice.SetSelectedIndex(sel)
	} else {
		v.voice.ClearSelected()
	}
	v.filling = false
	v.onVoiceChanged()
}

// onVoiceChanged fits the sliders to the voice chosen.
func (v *voicesTab) onVoiceChanged() {
	name := v.selectedVoice()
	sr := sessions.SpeedRangeOf(name)
	if sr.Adjustable {
		v.speed.Min, v.speed.Max = sr.Min, sr.Max
		v.speed.Value = min(max(v.speed.Value, sr.Min), sr.Max)
	} else {
		v.speed.Value = 1
	}
	if !sessions.Expressive(name) {
		v.expr.Value = 0
		v.turns.SetChecked(false)
	}
	v.speed.Refresh()
	v.expr.Refresh()
	v.showValues()
	v.updateControls()
}

// settingsChanged takes saved settings: the voice, speed, expressivity
// and save format they hold, and the service (which lists the voices).
func (v *voicesTab) settingsChanged(s store.Settings) {
	old := v.settings
	v.settings = s
	if v.format != nil && slices.Contains(sessions.SaveEncodings, s.SaveEncoding) {
		v.format.Selected = s.SaveEncoding
		v.format.Refresh()
	}
	if v.voices == nil || old.Backend != s.Backend || old.CustomURL != s.CustomURL || old.Region != s.Region || old.OutputDevice != s.OutputDevice {
		if !v.busy() {
			v.speed.Value, v.expr.Value = s.SpeakSpeed, float64(s.Expressivity)
			v.load()
		}
	}
}

// request is what the controls ask for.
func (v *voicesTab) request() sessions.SynthesisRequest {
	return sessions.SynthesisRequest{
		Text:         v.text.Text,
		Voice:        v.selectedVoice(),
		Speed:        v.speedValue(),
		Expressivity: v.exprValue(),
		TurnByTurn:   v.turns.Checked && !v.turns.Disabled(),
	}
}

// persist saves the voice, speed and expressivity chosen, off the UI
// goroutine.
func (v *voicesTab) persist() {
	s := v.settings
	name := v.selectedVoice()
	if f, _ := sessions.FamilyOf(name); f == sessions.FamilyTurn {
		s.TurnVoice = name
		s.Expressivity = v.exprValue()
	} else if name != "" {
		s.Voice = name
	}
	s.SpeakSpeed = v.speedValue()
	if f := v.format.Selected; f != "" {
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

func (v *voicesTab) onFormatChanged() {
	if v.format.Selected != "" && v.format.Selected != v.settings.SaveEncoding && !v.filling {
		v.persist()
	}
}

// onPlay speaks the text with the chosen voice.
func (v *voicesTab) onPlay() {
	if v.busy() || v.voices == nil {
		return
	}
	req := v.request()
	if err := req.Check(); err != nil {
		v.setStatus(err.Error(), widget.WarningImportance)
		v.autoDone(err)
		return
	}
	v.persist()
	v.begin("Speaking with " + req.Voice + "…")
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		s, err := voices.Synthesize(ctx, req)
		if err != nil {
			v.app.onUI(func() { v.end(); v.showError("speak", err); v.autoDone(err) })
			return
		}
		v.app.onUI(func() { v.syn = s; v.side = ""; v.updateControls() })
		v.pump(s.Events())
		err = s.Stop()
		res := s.Result()
		v.app.onUI(func() {
			v.syn = nil
			v.finish(res, err)
		})
	})
}

// onCompare speaks the text with voice A, then voice B.
func (v *voicesTab) onCompare() {
	if v.busy() || v.voices == nil {
		return
	}
	i := v.voiceB.SelectedIndex()
	if i < 0 || i >= len(v.all) {
		return
	}
	req := v.request()
	if err := req.Check(); err != nil {
		v.setStatus(err.Error(), widget.WarningImportance)
		return
	}
	voiceB := v.all[i].Name
	v.begin(fmt.Sprintf("Comparing %s with %s…", req.Voice, voiceB))
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		c, err := voices.Compare(ctx, req, voiceB)
		if err != nil {
			v.app.onUI(func() { v.end(); v.showError("compare", err) })
			return
		}
		v.app.onUI(func() { v.cmp = c; v.updateControls() })
		v.pump(c.Events())
		err = c.Stop()
		results := c.Results()
		v.app.onUI(func() {
			v.cmp = nil
			v.end()
			v.kept = nil
			v.results.RemoveAll()
			for i, r := range results {
				v.keep(fmt.Sprintf("%s: %s", string(rune('A'+i)), r.Request.Voice), r)
			}
			v.reloadHistory()
			if err != nil {
				v.showError("compare", err)
				return
			}
			v.setStatus("Compared: play either again, or save it.", widget.SuccessImportance)
		})
	})
}

// begin clears the result view for a new synthesis.
func (v *voicesTab) begin(status string) {
	v.kept = nil
	v.results.RemoveAll()
	v.turnBox.RemoveAll()
	clear(v.turnLabels)
	v.wave.Reset(sessions.SynthesisRate)
	v.metrics.SetText("Time to first audio: …")
	v.setStatus(status, widget.MediumImportance)
	v.play.Disable()
	v.stop.Enable()
}

// end leaves the speaking state.
func (v *voicesTab) end() {
	v.updateControls()
}

// pump shows a synthesis's (or comparison's) events as they come; it
// runs on an App goroutine.
func (v *voicesTab) pump(events <-chan sessions.Event) {
	for ev := range events {
		v.app.onUI(func() { v.show(ev) })
	}
}

// show puts one event on screen.
func (v *voicesTab) show(ev sessions.Event) {
	switch e := ev.(type) {
	case *sessions.CompareSideEvent:
		v.side = e.Side
		v.wave.Reset(sessions.SynthesisRate)
		v.turnBox.RemoveAll()
		clear(v.turnLabels)
		v.setStatus(fmt.Sprintf("Voice %s: %s…", e.Side, e.Synthesis.Request().Voice), widget.MediumImportance)
	case *sessions.FirstAudioEvent:
		v.metrics.SetText(v.sidePrefix() + fmt.Sprintf("Time to first audio: %s", latencyWords(e.TimeToFirstAudio)))
	case *sessions.PlaybackStartedEvent:
		v.metrics.SetText(v.metrics.Text + fmt.Sprintf(" · playback started %s after the first audio", latencyWords(e.Latency)))
	case *sessions.SynthesisProgressEvent:
		v.wave.Append(e.Samples)
		v.wave.SetPlayhead(e.Played)
	case *sessions.SpeechTurnEvent:
		v.showTurn(e.Turn)
	case *sessions.SpeakWarningEvent:
		v.setStatus(fmt.Sprintf("The service warns: %s (%s)", e.Description, e.Code), widget.WarningImportance)
	case *sessions.SynthesisDoneEvent:
		if v.side != "" {
			v.keep(v.side+": "+e.Result.Request.Voice, e.Result)
		}
	}
}

func (v *voicesTab) sidePrefix() string {
	if v.side == "" {
		return ""
	}
	return v.side + " · "
}

// showTurn shows a turn's state on its line.
func (v *voicesTab) showTurn(t sessions.SpeechTurn) {
	l := v.turnLabels[t.Index]
	if l == nil {
		l = widget.NewLabel("")
		l.Truncation = fyne.TextTruncateEllipsis
		v.turnLabels[t.Index] = l
		v.turnBox.Add(l)
	}
	line := fmt.Sprintf("Turn %d · %s · %s", t.Index+1, t.State, t.Text)
	switch t.State {
	case sessions.TurnInterrupted:
		how := ""
		if t.Estimated {
			how = " (from the playhead)"
		}
		line = fmt.Sprintf("Turn %d · interrupted%s · spoken: %q · left: %q", t.Index+1, how, strings.TrimSpace(t.Spoken), strings.TrimSpace(t.Remaining))
		l.Importance = widget.WarningImportance
	case sessions.TurnSpeaking:
		l.Importance = widget.HighImportance
	case sessions.TurnSpoken:
		l.Importance = widget.SuccessImportance
	default:
		l.Importance = widget.MediumImportance
	}
	l.SetText(line)
}

// finish shows a synthesis that ended.
func (v *voicesTab) finish(res sessions.SynthesisResult, err error) {
	v.end()
	v.keep(res.Request.Voice, res)
	v.reloadHistory()
	switch {
	case err != nil:
		v.showError("speak", err)
	case res.Stopped:
		v.setStatus(fmt.Sprintf("Stopped after %.1f s of audio.", res.Duration().Seconds()), widget.MediumImportance)
	default:
		v.setStatus(fmt.Sprintf("Spoke %.1f s with %s; saved to history.", res.Duration().Seconds(), res.Request.Voice), widget.SuccessImportance)
	}
	v.autoDone(err)
}

// autoDone tells the App that the AutoSpeak synthesis is on screen.
func (v *voicesTab) autoDone(err error) {
	if v.autoing {
		v.autoing = false
		v.app.loaded(partAuto, err)
	}
}

// keep adds a synthesis to those that can be played again and saved.
func (v *voicesTab) keep(label string, res sessions.SynthesisResult) {
	if len(res.PCM) == 0 {
		return
	}
	k := keptAudio{label: label, pcm: res.PCM, rate: res.SampleRate, ttfa: res.TimeToFirstAudio}
	v.kept = append(v.kept, k)
	n := len(v.kept) - 1
	v.results.Add(container.NewHBox(
		widget.NewButtonWithIcon("Play "+label, theme.MediaPlayIcon(), func() { v.replay(v.kept[n].pcm, v.kept[n].rate) }),
		widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() { v.chooseSaveFile(v.kept[n].pcm, v.kept[n].rate, label) }),
		widget.NewLabel(fmt.Sprintf("%.1f s · time to first audio %s", float64(len(k.pcm))/float64(k.rate), latencyWords(k.ttfa))),
	))
	v.updateControls()
}

// onStop stops what is speaking.
func (v *voicesTab) onStop() {
	syn, cmp, playing := v.syn, v.cmp, v.playing
	if syn == nil && cmp == nil && playing == nil {
		return
	}
	v.setStatus("Stopping…", widget.MediumImportance)
	v.stop.Disable()
	v.app.goAsync(func(context.Context) {
		switch {
		case cmp != nil:
			_ = cmp.Stop()
		case syn != nil:
			_ = syn.Stop()
		case playing != nil:
			_ = playing.Stop()
		}
	})
}

// replay plays kept audio again, with its playhead on the waveform.
func (v *voicesTab) replay(pcm []int16, rate int) {
	if v.busy() || v.voices == nil {
		return
	}
	v.wave.Reset(rate)
	v.wave.Append(pcm)
	voices := v.voices
	v.setStatus("Playing…", widget.MediumImportance)
	v.stop.Enable()
	v.play.Disable()
	v.app.goAsync(func(ctx context.Context) {
		p, err := voices.Play(ctx, pcm, rate)
		if err != nil {
			v.app.onUI(func() { v.updateControls(); v.showError("play", err) })
			return
		}
		v.app.onUI(func() { v.playing = p; v.updateControls() })
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
	loop:
		for {
			select {
			case <-p.Done():
				break loop
			case <-tick.C:
				played := p.Played()
				v.app.onUI(func() { v.wave.SetPlayhead(played) })
			}
		}
		err = p.Wait()
		v.app.onUI(func() {
			v.playing = nil
			v.wave.SetPlayhead(p.Duration())
			v.updateControls()
			if err != nil {
				v.showError("play", err)
				return
			}
			v.setStatus("Played.", widget.MediumImportance)
		})
	})
}

// onSaveAs saves a synthesis: the last one (id 0) or one from history.
func (v *voicesTab) onSaveAs(id int64) {
	if id == 0 {
		if len(v.kept) == 0 || v.busy() {
			return
		}
		k := v.kept[len(v.kept)-1]
		v.chooseSaveFile(k.pcm, k.rate, k.label)
		return
	}
	v.withSaved(id, func(s sessions.SavedSynthesis) { v.chooseSaveFile(s.PCM, s.SampleRate, s.Session.Title) })
}

// withSaved reads a past synthesis off the UI goroutine and hands it to
// fn on it.
func (v *voicesTab) withSaved(id int64, fn func(sessions.SavedSynthesis)) {
	if v.voices == nil {
		return
	}
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		s, err := voices.Open(ctx, id)
		v.app.onUI(func() {
			if err != nil {
				v.showError("open the synthesis", err)
				return
			}
			if len(s.PCM) == 0 {
				v.setStatus("This synthesis kept no audio.", widget.WarningImportance)
				return
			}
			fn(s)
		})
	})
}

// chooseSaveFile asks where to save audio in the chosen format; a file
// name with another format's extension chooses that format.
func (v *voicesTab) chooseSaveFile(pcm []int16, rate int, title string) {
	enc := v.format.Selected
	if enc == "" {
		enc = api.EncodingMP3
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			v.showError("choose where to save", err)
			return
		}
		if w == nil {
			return
		}
		format := enc
		if e, ok := sessions.EncodingForPath(w.URI().Name()); ok && sessions.SaveExtension(enc) != w.URI().Extension() {
			format = e
		}
		v.writeAudio(w, pcm, rate, format, w.URI().Name())
	}, v.app.window)
	d.SetFileName(strings.TrimSuffix(exportFileName(title, sessions.ExportFormat("txt")), ".txt") + sessions.SaveExtension(enc))
	d.SetFilter(storage.NewExtensionFileFilter([]string{sessions.SaveExtension(enc)}))
	d.Show()
}

// writeAudio encodes audio to w off the UI goroutine, and closes w.
func (v *voicesTab) writeAudio(w io.WriteCloser, pcm []int16, rate int, enc, name string) {
	v.setStatus("Saving "+name+"…", widget.MediumImportance)
	started := v.app.goAsync(func(ctx context.Context) {
		var buf bytes.Buffer
		err := sessions.EncodeAudio(ctx, &buf, pcm, rate, enc)
		if err == nil {
			_, err = w.Write(buf.Bytes())
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		v.app.onUI(func() {
			if err != nil {
				v.showError("save "+name, err)
				return
			}
			v.setStatus(fmt.Sprintf("Saved %s (%s).", name, enc), widget.SuccessImportance)
		})
	})
	if !started {
		_ = w.Close()
	}
}

// reloadHistory lists past syntheses, off the UI goroutine.
func (v *voicesTab) reloadHistory() {
	if v.voices == nil {
		return
	}
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		list, err := voices.History(ctx, voicesHistoryLen)
		v.app.onUI(func() {
			if err != nil {
				v.showError("list the syntheses", err)
				return
			}
			v.history = list
			v.historyW.Refresh()
		})
	})
}

// onReplayHistory plays a past synthesis again and puts its text back.
func (v *voicesTab) onReplayHistory(id int64) {
	if v.busy() {
		return
	}
	v.withSaved(id, func(s sessions.SavedSynthesis) {
		v.text.SetText(s.Text)
		v.metrics.SetText(fmt.Sprintf("Time to first audio: %.0f ms (%s)", s.Details.TimeToFirstAudioMS, s.Details.Voice))
		v.kept = []keptAudio{{label: s.Details.Voice, pcm: s.PCM, rate: s.SampleRate}}
		v.replay(s.PCM, s.SampleRate)
	})
}

// onDeleteHistory deletes a past synthesis, once confirmed.
func (v *voicesTab) onDeleteHistory(id int64) {
	if v.voices == nil {
		return
	}
	voices := v.voices
	dialog.ShowConfirm("Delete this synthesis?", "Its text and audio are removed from history.", func(ok bool) {
		if !ok {
			return
		}
		v.app.goAsync(func(ctx context.Context) {
			err := voices.Delete(ctx, id)
			v.app.onUI(func() {
				if err != nil {
					v.showError("delete the synthesis", err)
					return
				}
				v.reloadHistory()
			})
		})
	}, v.app.window)
}

// voicesMenu is the Voices menu, with the tab's shortcuts.
func (a *App) voicesMenu(item func(string, fyne.Shortcut, fyne.Resource, func()) *fyne.MenuItem) *fyne.Menu {
	on := func(action func()) func() {
		return func() {
			a.SelectTab("Voices")
			action()
		}
	}
	return fyne.NewMenu("Voices",
		item(voicesPlayItem, playShortcut, theme.MediaPlayIcon(), on(a.voices.onPlay)),
		item("Stop", stopShortcut, theme.MediaStopIcon(), on(a.voices.onStop)),
		item("Save audio as…", nil, theme.DocumentSaveIcon(), on(func() { a.voices.onSaveAs(0) })),
	)
}

// voicesPlayItem labels the Voices menu's Play.
const voicesPlayItem = "Play"

// shareVoiceShortcuts lets the Voices tab share Ctrl+Enter with another
// menu item that takes it (Analyze): the one item left with the shortcut
// plays while the Voices tab is open, and does its own work elsewhere.
// Fyne keeps one action per shortcut, so two items must not both carry
// it.
func (a *App) shareVoiceShortcuts(m *fyne.MainMenu) *fyne.MainMenu {
	var mine *fyne.MenuItem
	var others []*fyne.MenuItem
	for _, menu := range m.Items {
		for _, it := range menu.Items {
			if it.Shortcut == nil || it.Shortcut.ShortcutName() != playShortcut.ShortcutName() {
				continue
			}
			if menu.Label == "Voices" && it.Label == voicesPlayItem {
				mine = it
			} else {
				others = append(others, it)
			}
		}
	}
	if mine == nil || len(others) == 0 {
		return m
	}
	mine.Shortcut = nil
	for _, it := range others {
		own := it.Action
		it.Action = func() {
			if a.tabs.Selected() != nil && a.tabs.Selected().Text == "Voices" {
				a.voices.onPlay()
				return
			}
			own()
		}
	}
	return m
}

// voicesSave is Ctrl+S: the audio's Save as while the Voices tab is
// open, else save, as before.
func (a *App) voicesSave(other func()) func() {
	return func() {
		if a.tabs.Selected() != nil && a.tabs.Selected().Text == "Voices" {
			a.voices.onSaveAs(0)
			return
		}
		other()
	}
}
