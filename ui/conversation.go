package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Words and limits of the Conversation tab.
const (
	conversationHint = "Press Start (Ctrl+T) and speak: each turn appears as a card that updates as you talk and closes when the turn ends. " +
		"Tune the end-of-turn threshold and timeout while you talk; End turn (Ctrl+D) closes a turn by hand."
	// maxCards bounds the turn cards kept on screen; older ones are in
	// history.
	maxCards = 200
	// timelineLen is how many events the timeline shows, newest first.
	timelineLen = 30
	// fileChoicePrefix marks the source picker's entry of a recording.
	fileChoicePrefix = "Recording: "
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

// conversationTab is the Conversation tab: a turn-aware view of
// /v2/listen. Its fields are touched only on the UI goroutine.
type conversationTab struct {
	app *App

	source     *widget.Select
	openFile   *widget.Button
	start      *widget.Button
	endTurn    *widget.Button
	level      *levelMeter
	threshold  *widget.Slider
	thresholdV *widget.Label
	timeout    *widget.Slider
	timeoutV   *widget.Label
	keyterms   *widget.Entry
	applyTerms *widget.Button
	confirm    *widget.Label
	cardBox    *fyne.Container
	cardScroll *container.Scroll
	hint       *widget.Label
	timeline   *widget.Label
	status     *widget.Label

	sourceIDs []string // device ids of the picker's options; "" default, fileChoice for the recording
	file      string   // the recording chosen, "" for none
	settings  store.Settings
	syncing   bool // the sliders are being set from the service's answer

	starting bool
	live     *convSession
	cards    []*turnCard
	events   []timelineEntry // the timeline, newest first
}

// timelineEntry is a line of the timeline. Updates of a turn in a row
// share one line, counted, so that they do not push everything else out.
type timelineEntry struct {
	line    string
	updates int // Updates folded into the line; 0 for other events
	turn    int
}

// fileChoice is the source id of the recording in the picker.
const fileChoice = "\x00file"

// convSession is a running conversation as the tab sees it.
type convSession struct {
	c        *sessions.Conversation
	t0       time.Time // when it started, for the timeline's times
	stopping bool
	ended    int // turns ended
	source   string
	byIndex  map[int]*turnCard
}

// turnCard shows one turn.
type turnCard struct {
	index  int
	turn   sessions.Turn
	card   *widget.Card
	title  *widget.Label
	badge  *widget.Label
	detail *widget.Label
	text   *widget.Label
}

func newConversationTab(a *App) *conversationTab {
	return &conversationTab{app: a, settings: store.DefaultSettings()}
}

func (c *conversationTab) buildUI() fyne.CanvasObject {
	c.source = widget.NewSelect([]string{defaultMic}, nil)
	c.source.Selected = defaultMic
	c.sourceIDs = []string{""}
	c.openFile = widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), c.onOpenFile)
	c.start = widget.NewButtonWithIcon("Start", theme.MediaRecordIcon(), c.onStartStop)
	c.endTurn = widget.NewButtonWithIcon("End turn", theme.MediaSkipNextIcon(), c.onEndTurn)
	c.level = newLevelMeter()

	c.threshold = widget.NewSlider(api.MinEOTThreshold, api.MaxEOTThreshold)
	c.threshold.Step = 0.01
	c.threshold.Value = api.DefaultEOTThreshold
	c.thresholdV = widget.NewLabel("")
	c.threshold.OnChanged = func(float64) { c.showSliderValues() }
	c.threshold.OnChangeEnded = func(float64) { c.onSettingChanged(true, false) }
	c.timeout = widget.NewSlider(0, 1)
	c.timeout.Step = 0.001
	c.timeout.Value = sliderFromTimeout(api.DefaultEOTTimeoutMS)
	c.timeoutV = widget.NewLabel("")
	c.timeout.OnChanged = func(float64) { c.showSliderValues() }
	c.timeout.OnChangeEnded = func(float64) { c.onSettingChanged(false, true) }
	c.keyterms = widget.NewEntry()
	c.keyterms.SetPlaceHolder("Key terms, separated by commas")
	c.keyterms.OnSubmitted = func(string) { c.onApplyKeyterms() }
	c.applyTerms = widget.NewButtonWithIcon("Apply", theme.ConfirmIcon(), c.onApplyKeyterms)
	c.confirm = widget.NewLabel("End-of-turn settings: the service's defaults.")
	c.confirm.Wrapping = fyne.TextWrapWord
	c.showSliderValues()

	c.hint = widget.NewLabel(conversationHint)
	c.hint.Wrapping = fyne.TextWrapWord
	c.cardBox = container.NewVBox()
	c.cardScroll = container.NewVScroll(container.NewVBox(c.hint, c.cardBox))
	c.timeline = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	c.timeline.SizeName = theme.SizeNameCaptionText
	c.status = widget.NewLabel("Ready.")
	c.status.Wrapping = fyne.TextWrapWord

	toolbar := container.NewBorder(nil, nil,
		container.NewHBox(
			widget.NewIcon(micIcon),
			container.New(widthLayout{width: 300}, c.source),
			c.openFile,
			widget.NewSeparator(),
			c.start, c.endTurn,
			container.NewPadded(c.level),
		), nil)
	tuning := container.New(&formColumns{},
		widget.NewLabel("End-of-turn threshold"), container.NewBorder(nil, nil, nil, c.thresholdV, c.threshold),
		widget.NewLabel("End-of-turn timeout"), container.NewBorder(nil, nil, nil, c.timeoutV, c.timeout),
		widget.NewLabel("Key terms"), container.NewBorder(nil, nil, nil, c.applyTerms, c.keyterms),
	)
	turns := container.NewBorder(
		widget.NewLabelWithStyle("Turns", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil, c.cardScroll)
	events := container.NewBorder(
		widget.NewLabelWithStyle("Events", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), nil, nil, nil,
		container.NewVScroll(c.timeline))
	split := container.NewHSplit(container.NewPadded(turns), container.NewPadded(events))
	split.Offset = 0.66
	c.updateControls()
	return container.NewBorder(
		container.NewVBox(container.NewPadded(toolbar), container.NewPadded(container.NewVBox(tuning, c.confirm)), widget.NewSeparator()),
		container.NewVBox(widget.NewSeparator(), c.status),
		nil, nil, split)
}

// formColumns lays objects out in two columns, labels then controls, the
// controls taking the width left.
type formColumns struct{}

func (formColumns) MinSize(objects []fyne.CanvasObject) fyne.Size {
	lw, cw, h := float32(0), float32(0), float32(0)
	for i := 0; i+1 < len(objects); i += 2 {
		l, r := objects[i].MinSize(), objects[i+1].MinSize()
		lw, cw = max(lw, l.Width), max(cw, r.Width)
		h += max(l.Height, r.Height)
	}
	return fyne.NewSize(lw+cw+theme.Padding(), h)
}

func (formColumns) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	lw := float32(0)
	for i := 0; i < len(objects); i += 2 {
		lw = max(lw, objects[i].MinSize().Width)
	}
	y := float32(0)
	for i := 0; i+1 < len(objects); i += 2 {
		h := max(objects[i].MinSize().Height, objects[i+1].MinSize().Height)
		objects[i].Move(fyne.NewPos(0, y))
		objects[i].Resize(fyne.NewSize(lw, h))
		objects[i+1].Move(fyne.NewPos(lw+theme.Padding(), y))
		objects[i+1].Resize(fyne.NewSize(size.Width-lw-theme.Padding(), h))
		y += h
	}
}

func (c *conversationTab) setStatus(text string, imp widget.Importance) {
	c.status.Importance = imp
	c.status.SetText(text)
}

func (c *conversationTab) showError(what string, err error) {
	c.app.log.Warn(what, "err", err)
	c.setStatus(plainError(err), widget.DangerImportance)
}

func (c *conversationTab) setConfirm(text string, imp widget.Importance) {
	c.confirm.Importance = imp
	c.confirm.SetText(text)
}

// updateControls enables what can be done now.
func (c *conversationTab) updateControls() {
	live := c.live != nil
	if live {
		c.start.SetText("Stop")
		c.start.SetIcon(theme.MediaStopIcon())
		c.start.Importance = widget.DangerImportance
	} else {
		c.start.SetText("Start")
		c.start.SetIcon(theme.MediaRecordIcon())
		c.start.Importance = widget.HighImportance
	}
	enable(c.start, !c.starting && !(live && c.live.stopping))
	c.start.Refresh()
	enable(c.endTurn, live && !c.live.stopping)
	enable(c.source, !c.starting && !live)
	enable(c.openFile, !c.starting && !live)
}

// threshold and timeout in force on the sliders.
func (c *conversationTab) sliderThreshold() float64 { return math.Round(c.threshold.Value*100) / 100 }
func (c *conversationTab) sliderTimeout() int       { return timeoutFromSlider(c.timeout.Value) }

func (c *conversationTab) showSliderValues() {
	c.thresholdV.SetText(fmt.Sprintf("%.2f", c.sliderThreshold()))
	c.timeoutV.SetText(msWords(c.sliderTimeout()))
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

// setMicrophones fills the source picker, keeping the recording chosen.
func (c *conversationTab) setMicrophones(devs []device.Device) {
	selected := c.selectedSource()
	options, ids := micChoices(devs, c.settings.InputDevice)
	if c.file != "" {
		options = append(options, fileChoicePrefix+filepath.Base(c.file))
		ids = append(ids, fileChoice)
	}
	c.source.Options, c.sourceIDs = options, ids
	if selected == "" {
		selected = c.settings.InputDevice
	}
	c.selectSource(selected)
}

// settingsChanged takes saved settings: the microphone they name.
func (c *conversationTab) settingsChanged(s store.Settings) {
	c.settings = s
	if c.selectedSource() != fileChoice && !c.starting && c.live == nil {
		c.setMicrophones(c.app.mics)
	}
}

func (c *conversationTab) selectSource(id string) {
	selectDevice(c.source, c.sourceIDs, id, defaultMic)
}

func (c *conversationTab) selectedSource() string {
	if i := c.source.SelectedIndex(); i >= 0 && i < len(c.sourceIDs) {
		return c.sourceIDs[i]
	}
	return ""
}

// onOpenFile asks for a recording to converse with, played at real time.
func (c *conversationTab) onOpenFile() {
	if c.live != nil || c.starting {
		return
	}
	c.app.openLocalFile(c, audioExtensions, "play", c.chooseFile)
}

// chooseFile makes the recording at path the source.
func (c *conversationTab) chooseFile(path string) {
	c.file = path
	c.setMicrophones(c.app.mics)
	c.selectSource(fileChoice)
	c.setStatus("Press Start to play "+filepath.Base(path)+" at its own pace, as if it were spoken now.", widget.MediumImportance)
}

// onStartStop starts a conversation, or stops it (Ctrl+T).
func (c *conversationTab) onStartStop() {
	switch {
	case c.live != nil:
		c.stopLive()
	case c.starting:
	default:
		c.startLive()
	}
}

// startOptions are the options the settings choose, with the tuning
// shown.
func (c *conversationTab) startOptions() api.TurnOptions {
	o := sessions.TurnOptionsFor(c.settings)
	if th := c.sliderThreshold(); th != api.DefaultEOTThreshold {
		o.EOTThreshold = th
	}
	if ms := c.sliderTimeout(); ms != api.DefaultEOTTimeoutMS {
		o.EOTTimeoutMS = ms
	}
	o.Keyterms = termsOf(c.keyterms.Text)
	return o
}

func (c *conversationTab) startLive() {
	c.starting = true
	c.resetCards()
	c.events = nil
	c.timeline.SetText("")
	c.level.SetLevel(math.Inf(-1))
	c.setStatus("Connecting…", widget.MediumImportance)
	c.updateControls()

	opts := c.startOptions()
	req := sessions.ConversationRequest{Options: &opts}
	sourceID := c.selectedSource()
	path := c.file
	if sourceID == fileChoice {
		req.SourceName = filepath.Base(path)
	} else {
		req.DeviceID = sourceID
	}
	started := c.app.goAsync(func(ctx context.Context) {
		if sourceID == fileChoice {
			src, err := sessions.OpenPacedFile(ctx, path, 1)
			if err != nil {
				c.app.onUI(func() { c.liveFailed(err) })
				return
			}
			req.Source = src
		}
		conv, err := c.app.ws.StartConversation(ctx, req)
		if err != nil {
			if req.Source != nil {
				req.Source.Close()
			}
			c.app.onUI(func() { c.liveFailed(err) })
			return
		}
		c.app.setConversation(conv)
		defer c.app.setConversation(nil)
		ls := &convSession{c: conv, t0: time.Now(), source: conv.SourceName(), byIndex: map[int]*turnCard{}}
		c.app.onUI(func() { c.liveStarted(ls) })
		pumpEvents(ctx, conv.Events(), frameInterval, func(b []sessions.Event, applied func()) {
			c.app.onUI(func() {
				c.apply(ls, b)
				applied()
			})
		})
		err = conv.Stop()
		c.app.onUI(func() { c.liveEnded(ls, err) })
	})
	if !started {
		c.starting = false
		c.updateControls()
	}
}

func (c *conversationTab) liveFailed(err error) {
	c.starting = false
	c.showError("start a conversation", err)
	c.updateControls()
	c.app.loaded(partAuto, err)
}

func (c *conversationTab) liveStarted(ls *convSession) {
	c.starting = false
	c.live = ls
	c.setStatus(joinDot("Listening to "+ls.source, "speak, and pause to end a turn"), widget.SuccessImportance)
	s := ls.c.Settings()
	c.setConfirm("In force: "+settingsWords(s)+".", widget.MediumImportance)
	c.updateControls()
}

// liveEnded is called once the conversation has ended and its last
// events are on screen.
func (c *conversationTab) liveEnded(ls *convSession, err error) {
	if c.live == ls {
		c.live = nil
	}
	for _, card := range ls.byIndex {
		if card.turn.State != sessions.TurnEnded {
			card.badge.Importance = widget.LowImportance
			card.badge.SetText("Not ended")
		}
	}
	c.level.SetLevel(math.Inf(-1))
	if err != nil {
		c.showError("the conversation ended", err)
	} else {
		text := fmt.Sprintf("Stopped. %d %s saved to history.", ls.ended, pluralWord(ls.ended, "turn"))
		if m, ok := medianLatency(ls); ok {
			text += " Median end-of-turn latency " + latencyWords(m) + "."
		}
		c.setStatus(text, widget.MediumImportance)
	}
	c.updateControls()
	c.app.captions.history.reload()
	c.app.loaded(partAuto, err)
}

// medianLatency is the median latency of the turns of ls that ended
// with one measured.
func medianLatency(ls *convSession) (time.Duration, bool) {
	var ds []time.Duration
	for _, card := range ls.byIndex {
		if card.turn.State == sessions.TurnEnded && card.turn.HasLatency {
			ds = append(ds, card.turn.Latency)
		}
	}
	if len(ds) == 0 {
		return 0, false
	}
	slices.Sort(ds)
	if n := len(ds); n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2, true
	}
	return ds[len(ds)/2], true
}

func pluralWord(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// stopLive asks the conversation to stop; its end arrives through
// liveEnded.
func (c *conversationTab) stopLive() {
	ls := c.live
	if ls == nil || ls.stopping {
		return
	}
	ls.stopping = true
	c.setStatus("Stopping…", widget.MediumImportance)
	c.updateControls()
	c.app.goAsync(func(context.Context) { _ = ls.c.Stop() })
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
	c.threshold.SetValue(math.Round((c.threshold.Value+d)*100) / 100)
}

// onSettingChanged applies a slider's new value: live through Configure,
// or for the next start.
func (c *conversationTab) onSettingChanged(threshold, timeout bool) {
	c.showSliderValues()
	if c.syncing {
		return
	}
	var cfg api.Configure
	if threshold {
		v := c.sliderThreshold()
		cfg.Thresholds.EOTThreshold = &v
	}
	if timeout {
		v := c.sliderTimeout()
		cfg.Thresholds.EOTTimeoutMS = &v
	}
	c.configure(cfg)
}

// onApplyKeyterms applies the key terms entered.
func (c *conversationTab) onApplyKeyterms() {
	terms := termsOf(c.keyterms.Text)
	if terms == nil {
		terms = []string{} // sent as [], which clears them
	}
	c.configure(api.Configure{Keyterms: terms})
}

// configure sends cfg to the conversation, or keeps it for the next one.
func (c *conversationTab) configure(cfg api.Configure) {
	if err := cfg.Validate(); err != nil {
		c.setConfirm(plainError(err), widget.DangerImportance)
		return
	}
	ls := c.live
	if ls == nil || ls.stopping {
		c.setConfirm("These settings apply when the conversation starts.", widget.MediumImportance)
		return
	}
	c.setConfirm("Applying…", widget.MediumImportance)
	c.app.goAsync(func(ctx context.Context) {
		err := ls.c.Configure(ctx, cfg)
		if err != nil {
			c.app.onUI(func() {
				if errors.Is(err, sessions.ErrNotRunning) {
					c.setConfirm("The conversation has ended: these settings apply to the next one.", widget.MediumImportance)
					return
				}
				c.app.log.Warn("configure", "err", err)
				c.setConfirm(plainError(err), widget.DangerImportance)
			})
		}
	})
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

// apply shows a batch of the conversation's events.
func (c *conversationTab) apply(ls *convSession, batch []sessions.Event) {
	for _, ev := range batch {
		switch e := ev.(type) {
		case *sessions.TurnInfoEvent:
			c.showTurn(ls, e.Turn)
			if e.Event == api.EventEndOfTurn {
				ls.ended++
			}
		case *sessions.ConfigureEvent:
			if e.OK {
				c.setConfirm("Applied: "+settingsWords(e.Applied)+".", widget.SuccessImportance)
				c.syncSliders(e.Applied)
			} else {
				c.setConfirm("The service refused the change, so nothing changed: "+settingsWords(e.Applied)+" stay in force.", widget.DangerImportance)
				c.syncSliders(e.Applied)
			}
		case *sessions.TurnWarningEvent:
			c.setStatus(warningWords(e), widget.WarningImportance)
		case *sessions.LevelEvent:
			c.level.SetLevel(e.RMS)
		case *sessions.StateEvent:
			c.showState(e)
		}
		c.addTimeline(ls.t0, ev)
	}
	lines := make([]string, len(c.events))
	for i, e := range c.events {
		lines[i] = e.line
	}
	c.timeline.SetText(strings.Join(lines, "\n"))
}

// addTimeline puts an event at the top of the timeline, folding an Update
// into the line of the Updates of its turn just before it.
func (c *conversationTab) addTimeline(t0 time.Time, ev sessions.Event) {
	line := timelineLine(t0, ev)
	if line == "" {
		return
	}
	entry := timelineEntry{line: line}
	if e, ok := ev.(*sessions.TurnInfoEvent); ok && e.Event == api.EventUpdate {
		entry.updates, entry.turn = 1, e.Turn.Index
		if len(c.events) > 0 && c.events[0].updates > 0 && c.events[0].turn == e.Turn.Index {
			entry.updates = c.events[0].updates + 1
			entry.line = strings.Replace(line, "Update ·", fmt.Sprintf("Update ×%d ·", entry.updates), 1)
			c.events[0] = entry
			return
		}
	}
	c.events = append(c.events, timelineEntry{})
	copy(c.events[1:], c.events)
	c.events[0] = entry
	if len(c.events) > timelineLen {
		c.events = c.events[:timelineLen]
	}
}

// syncSliders shows settings in force on the sliders, without applying
// them again.
func (c *conversationTab) syncSliders(s sessions.TurnSettings) {
	c.syncing = true
	defer func() { c.syncing = false }()
	c.threshold.SetValue(s.EOTThreshold)
	c.timeout.SetValue(sliderFromTimeout(s.EOTTimeoutMS))
	c.showSliderValues()
}

func (c *conversationTab) showState(e *sessions.StateEvent) {
	switch e.State {
	case sessions.StateStopping:
		c.setStatus("Stopping…", widget.MediumImportance)
	case sessions.StateFailed:
		c.showError("the conversation failed", e.Err)
	}
}

// warningWords says what a Warning means.
func warningWords(e *sessions.TurnWarningEvent) string {
	if e.Code == api.CodeForceEndTurnNoActive {
		return "No turn was in progress, so there was no turn to end."
	}
	if e.Description != "" {
		return "The service warns: " + sentence(e.Description)
	}
	return "The service warns: " + e.Code + "."
}

// timelineLine is one line of the event timeline: seconds since the start
// and what happened; "" for what it does not list.
func timelineLine(t0 time.Time, ev sessions.Event) string {
	var at time.Time
	var what string
	switch e := ev.(type) {
	case *sessions.TurnInfoEvent:
		at = e.At
		what = fmt.Sprintf("%s · turn %d", e.Event, e.Turn.Index+1)
		switch {
		case e.Event == api.EventEndOfTurn:
			what += " · " + string(e.Turn.Trigger) + fmt.Sprintf(" · %.2f", e.Turn.EndOfTurnConfidence)
			if e.Turn.HasLatency {
				what += " · " + latencyWords(e.Turn.Latency)
			}
		default:
			what += fmt.Sprintf(" · %.2f", e.Turn.EndOfTurnConfidence)
		}
	case *sessions.SentEvent:
		at, what = e.At, "→ "+e.Type
	case *sessions.ConfigureEvent:
		at, what = e.At, "ConfigureSuccess"
		if !e.OK {
			what = "ConfigureFailure"
		}
	case *sessions.TurnWarningEvent:
		at, what = e.At, "Warning · "+e.Code
	case *sessions.ConnectedEvent:
		at, what = e.At, "Connected"
	case *sessions.UnknownTurnMessageEvent:
		at, what = e.At, "Unknown message · "+e.Type
	default:
		return ""
	}
	return fmt.Sprintf("%7.2f s  %s", at.Sub(t0).Seconds(), what)
}

func latencyWords(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}

func (c *conversationTab) resetCards() {
	c.cards = nil
	c.cardBox.RemoveAll()
	c.hint.SetText("Listening… each turn appears here as it starts.")
	c.hint.Show()
}

// showTurn puts a turn on its card, making the card on its first event.
func (c *conversationTab) showTurn(ls *convSession, t sessions.Turn) {
	card := ls.byIndex[t.Index]
	if card == nil || card.turn.State == sessions.TurnEnded && t.State != sessions.TurnEnded {
		card = newTurnCard(t.Index)
		ls.byIndex[t.Index] = card
		c.cards = append(c.cards, card)
		c.cardBox.Add(card.card)
		if len(c.cards) > maxCards {
			old := c.cards[0]
			c.cards = slices.Delete(c.cards, 0, 1)
			c.cardBox.Remove(old.card)
			if ls.byIndex[old.index] == old {
				delete(ls.byIndex, old.index)
			}
		}
		c.hint.Hide()
		defer c.cardScroll.ScrollToBottom()
	}
	card.show(t)
}

func newTurnCard(index int) *turnCard {
	tc := &turnCard{index: index}
	tc.title = widget.NewLabelWithStyle(fmt.Sprintf("Turn %d", index+1), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	tc.badge = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	tc.detail = widget.NewLabel("")
	tc.detail.SizeName = theme.SizeNameCaptionText
	tc.text = widget.NewLabel("")
	tc.text.Wrapping = fyne.TextWrapWord
	tc.card = widget.NewCard("", "", container.NewVBox(
		container.NewHBox(tc.title, tc.badge, tc.detail),
		tc.text,
	))
	return tc
}

// show puts t on the card.
func (tc *turnCard) show(t sessions.Turn) {
	tc.turn = t
	text, imp := badgeOf(t.State)
	tc.badge.Importance = imp
	tc.badge.SetText(text)
	tc.detail.SetText(turnDetail(t))
	transcript := t.Transcript
	if transcript == "" {
		transcript = "…"
	}
	tc.text.SetText(transcript)
}

// badgeOf names a turn's state, and colours it.
func badgeOf(s sessions.TurnState) (string, widget.Importance) {
	switch s {
	case sessions.TurnOpen:
		return "Speaking", widget.HighImportance
	case sessions.TurnEager:
		return "Eager end", widget.WarningImportance
	case sessions.TurnResumed:
		return "Resumed", widget.HighImportance
	case sessions.TurnEnded:
		return "Ended", widget.SuccessImportance
	}
	return string(s), widget.MediumImportance
}

// triggerWords says what ended a turn; an unknown trigger is shown as it
// came.
func triggerWords(tr api.TurnTrigger) string {
	switch tr {
	case api.TriggerModel:
		return "ended by the model"
	case api.TriggerManual:
		return "ended by hand"
	case api.TriggerTimeout:
		return "ended by the timeout"
	case "":
		return "ended"
	}
	return fmt.Sprintf("ended by %q", string(tr))
}

// turnDetail is the line under a card's title: the turn's times, what
// ended it, the end-of-turn confidence and the latency.
func turnDetail(t sessions.Turn) string {
	parts := []string{clock(t.Start) + "–" + clock(t.End)}
	if t.State == sessions.TurnEnded {
		parts = append(parts, triggerWords(t.Trigger))
	}
	parts = append(parts, fmt.Sprintf("confidence %.2f", t.EndOfTurnConfidence))
	if t.HasLatency {
		parts = append(parts, "latency "+latencyWords(t.Latency))
	}
	return joinDot(parts...)
}

// pumpEvents reads a session's events until the channel is closed, and
// hands them to show in batches, at most one per frame and never while
// the previous batch is still waiting for the UI goroutine; levels are
// coalesced to the latest. show must pass the batch to the UI goroutine
// and call applied once it is on screen. Once ctx is done the rest is
// read unseen, so that the session can finish.
func pumpEvents(ctx context.Context, events <-chan sessions.Event, frame time.Duration, show func(b []sessions.Event, applied func())) {
	pumpBatches(ctx, events, nil, nil, frame, func(b eventList, applied func()) { show(b.all(), applied) })
}

// eventList is a batch of events in order, levels coalesced to the
// latest, which comes last.
type eventList struct {
	events []sessions.Event
	level  *sessions.LevelEvent
}

func (l *eventList) add(ev sessions.Event) {
	if lv, ok := ev.(*sessions.LevelEvent); ok {
		l.level = lv
		return
	}
	l.events = append(l.events, ev)
}

func (l *eventList) empty() bool { return len(l.events) == 0 && l.level == nil }

func (l *eventList) all() []sessions.Event {
	if l.level != nil {
		return append(l.events, l.level)
	}
	return l.events
}
