package ui

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Words of the Captions tab.
const (
	captionsHint   = "Press Start (Ctrl+L) for live captions of your microphone, or Open file (Ctrl+O) to transcribe a recording. Past sessions are listed on the right."
	defaultMic     = "System default microphone"
	defaultSpeaker = "System default speaker"
)

// captionsTab is the Captions tab: live captions from a microphone, the
// transcription of an audio file, the history of both, and export.
//
// Its fields are touched only on the UI goroutine: widget callbacks run
// there, and background results arrive through App.onUI.
type captionsTab struct {
	app     *App
	view    *captionView
	history *historyPanel
	// opens counts the sessions asked to be opened: only the latest
	// one asked for is shown, however their reads finish.
	opens int

	mic        *widget.Select
	micRefresh *widget.Button
	start      *widget.Button
	mute       *widget.Button
	level      *levelMeter
	openFile   *widget.Button
	export     *widget.Button
	title      *widget.Label
	info       *widget.Label
	entities   *widget.Label
	status     *widget.Label

	fileRow    *fyne.Container // progress of a file transcription; hidden when none runs
	fileLabel  *widget.Label
	fileBar    *widget.ProgressBar
	fileBusy   *widget.ProgressBarInfinite
	cancelFile *widget.Button

	micIDs   []string // device ids of the picker's options, "" for the default
	micKinds []string // what each option hears: store.CaptureMicrophone, CaptureSystem, CaptureBoth
	// autoStart starts live captions once the settings are read
	// (Options.AutoStart).
	autoStart bool
	settings  store.Settings
	starting  bool         // a live session is being started
	live      *liveSession // the live session, nil when none runs
	file      *fileJob     // the file transcription, nil when none runs
	shown     shownSession // what the caption view shows
	player    *transcriptPlayer
}

// shownSession is the session in the caption view, the one Export saves.
type shownSession struct {
	id    int64 // in history; 0 when nothing saved is shown
	title string
	empty bool // a saved session with no captions: nothing to export
	// unsaved is the transcript on screen when history does not hold
	// all of it (a full disk): Export writes it from here.
	unsaved *sessions.Transcript
}

// liveSession is a running live captions session as the tab sees it.
type liveSession struct {
	c        *sessions.Captions
	id       int64
	mute     chan bool // the muting asked for, latest only, read by the pump
	muted    bool      // as last asked for
	stopping bool
	finals   int
	history  *sessions.HistoryEvent // what history holds of it, as last reported
	level    *sessions.LevelEvent   // the latest the session reported; the meter shows it unless muted
	source   string
	started  time.Time
}

// requestMute asks the pump to mute or unmute, replacing a request it has
// not taken yet. It never blocks; only the UI goroutine sends.
func (l *liveSession) requestMute(m bool) {
	for {
		select {
		case l.mute <- m:
			return
		default:
			select {
			case <-l.mute:
			default:
			}
		}
	}
}

func newCaptionsTab(a *App) *captionsTab {
	c := &captionsTab{app: a, view: newCaptionView(), settings: store.DefaultSettings()}
	c.history = newHistoryPanel(c)
	c.player = newTranscriptPlayer(a, c.view, c.setStatus)
	return c
}

// buildUI creates the tab's widgets and lays them out.
func (c *captionsTab) buildUI() fyne.CanvasObject {
	c.mic = widget.NewSelect([]string{defaultMic}, c.onMicChanged)
	c.mic.Selected = defaultMic
	c.micIDs = []string{""}
	c.micRefresh = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), c.app.loadMicrophones)
	c.start = widget.NewButtonWithIcon("Start", theme.MediaRecordIcon(), c.onStartStop)
	c.mute = widget.NewButtonWithIcon("Mute", theme.VolumeMuteIcon(), c.onMute)
	c.level = newLevelMeter()
	c.openFile = widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), c.onOpenFile)
	c.export = widget.NewButtonWithIcon("Export…", theme.DownloadIcon(), c.onExport)

	c.title = widget.NewLabelWithStyle("Captions", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.title.SizeName = theme.SizeNameSubHeadingText
	c.title.Truncation = fyne.TextTruncateEllipsis
	c.info = widget.NewLabel("")
	c.info.Wrapping = fyne.TextWrapWord
	c.info.Hide()
	c.entities = widget.NewLabel("")
	c.entities.Wrapping = fyne.TextWrapWord
	c.entities.Hide()
	c.status = widget.NewLabel(captionsReady)
	c.status.Wrapping = fyne.TextWrapWord

	c.fileLabel = widget.NewLabel("")
	c.fileLabel.Truncation = fyne.TextTruncateEllipsis
	c.fileBar = widget.NewProgressBar()
	c.fileBusy = widget.NewProgressBarInfinite()
	c.fileBusy.Hide()
	c.cancelFile = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), c.onCancelFile)
	bars := container.New(widthLayout{width: 220}, container.NewStack(c.fileBar, c.fileBusy))
	// The label gets a width of its own: in a box its least width would
	// be the ellipsis alone, all it ever showed.
	label := container.New(widthLayout{width: fileLabelWidth}, c.fileLabel)
	c.fileRow = container.NewHBox(label, bars, c.cancelFile)
	c.fileRow.Hide()

	toolbar := container.NewBorder(nil, nil,
		container.NewHBox(
			widget.NewIcon(micIcon),
			container.New(widthLayout{width: 200}, c.mic),
			c.micRefresh,
			widget.NewSeparator(),
			c.start, c.mute,
			container.NewPadded(c.level),
		),
		container.NewHBox(c.openFile, c.export),
	)
	heading := container.NewVBox(container.NewBorder(nil, nil, nil, c.app.overlay.button, c.title), c.info, c.entities)
	transcript := container.NewBorder(heading, c.player.buildUI(), nil, nil, c.view.buildUI(captionsHint))
	// The intelligence of a file transcribed shows under its transcript,
	// so the history beside keeps its height.
	split := container.NewHSplit(c.app.withFileIntel(container.NewPadded(transcript)), c.history.buildUI())
	split.Offset = 0.68
	statusBar := container.NewBorder(nil, nil, nil, c.fileRow, c.status)
	c.updateControls()
	return container.NewBorder(
		container.NewVBox(container.NewPadded(toolbar), widget.NewSeparator()),
		container.NewVBox(widget.NewSeparator(), statusBar),
		nil, nil, split)
}

// captionsReady is what the status bar says when nothing has happened.
const captionsReady = "Ready."

// setStatus shows a line in the status bar.
func (c *captionsTab) setStatus(text string, imp widget.Importance) {
	c.status.Importance = imp
	c.status.SetText(text)
}

// showError shows err in plain words in the status bar, and logs it.
func (c *captionsTab) showError(what string, err error) {
	c.app.log.Warn(what, "err", err)
	c.setStatus(plainError(err), widget.DangerImportance)
	c.app.noteStatus(c.status, err, captionsReady)
}

// updateControls enables what can be done now and labels Start and Mute.
func (c *captionsTab) updateControls() {
	busy := c.starting || c.file != nil
	live := c.live != nil
	switch {
	case live:
		c.start.SetText("Stop")
		c.start.SetIcon(theme.MediaStopIcon())
		c.start.Importance = widget.DangerImportance
	default:
		c.start.SetText("Start")
		c.start.SetIcon(theme.MediaRecordIcon())
		c.start.Importance = widget.HighImportance
	}
	enable(c.start, !busy && !(live && c.live.stopping))
	c.start.Refresh()
	if live && c.live.muted {
		c.mute.SetText("Unmute")
		c.mute.SetIcon(theme.VolumeUpIcon())
	} else {
		c.mute.SetText("Mute")
		c.mute.SetIcon(theme.VolumeMuteIcon())
	}
	enable(c.mute, live && !c.live.stopping)
	enable(c.mic, !busy && !live)
	enable(c.micRefresh, !busy && !live)
	enable(c.openFile, !busy && !live)
	enable(c.export, (c.shown.id != 0 || c.shown.unsaved != nil) && !c.shown.empty && !c.starting)
	c.history.updateControls()
}

// withMicrophone names a source of the computer's sound heard with the
// microphone. The first letter is lowered as a character, not a byte: a
// name that begins with "É" lost its first byte and drew as "��".
func withMicrophone(name string) string { return "Microphone and " + lowerFirst(name) }

// disabler is a widget that can be turned off.
type disabler interface {
	Enable()
	Disable()
}

func enable(w disabler, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

// setMicrophones fills the picker of what captions hear, keeping the
// saved choice: the microphones, then each source of the computer's sound
// alone and with the microphone (a meeting: You and Others).
func (c *captionsTab) setMicrophones(devs []device.Device, err error) {
	options, ids := micChoices(devs, c.settings.InputDevice)
	kinds := make([]string, len(ids))
	for i := range kinds {
		kinds[i] = store.CaptureMicrophone
	}
	for _, d := range c.app.systemSounds {
		options, ids, kinds = append(options, d.Name), append(ids, d.ID), append(kinds, store.CaptureSystem)
	}
	for _, d := range c.app.systemSounds {
		options, ids, kinds = append(options, withMicrophone(d.Name)), append(ids, d.ID), append(kinds, store.CaptureBoth)
	}
	c.micIDs, c.micKinds = ids, kinds
	c.mic.Options = options
	c.selectMic(c.settings.InputDevice)
	idle := c.live == nil && !c.starting && c.file == nil
	switch {
	case err != nil && idle:
		c.setStatus(plainError(err)+" You can still open a recording.", widget.WarningImportance)
		c.app.noteStatus(c.status, err, captionsReady)
	case len(devs) == 0 && idle:
		c.setStatus(plainError(device.ErrNoDevice), widget.WarningImportance)
		c.app.noteStatus(c.status, device.ErrNoDevice, captionsReady)
	}
}

// micChoices lists the microphone picker's options and the device id of
// each: the system's default first, then devs, then saved (the id in the
// settings) when it is not connected, so that the choice is not lost.
func micChoices(devs []device.Device, saved string) (options, ids []string) {
	return deviceChoices(devs, saved, defaultMic, "Saved microphone (not connected)")
}

// deviceChoices lists a device picker's options and the device id of
// each: def (the system's default) first, then devs, then saved when it is
// not connected, named missing.
func deviceChoices(devs []device.Device, saved, def, missing string) (options, ids []string) {
	options, ids = []string{def}, []string{""}
	for _, d := range devs {
		name := d.Name
		if d.Default {
			name += " (default)"
		}
		options = append(options, name)
		ids = append(ids, d.ID)
	}
	if saved != "" && !slices.Contains(ids, saved) {
		options = append(options, missing)
		ids = append(ids, saved)
	}
	return options, ids
}

// selectMic shows what the settings hear in the picker without saving
// it again: the microphone id (mic), or the computer's sound.
func (c *captionsTab) selectMic(id string) {
	kind := c.settings.CaptureSource
	if kind == store.CaptureSystem || kind == store.CaptureBoth {
		for i := range c.micIDs {
			if i < len(c.micKinds) && c.micKinds[i] == kind && (c.micIDs[i] == c.settings.SystemDevice || c.settings.SystemDevice == "") && i < len(c.mic.Options) {
				setSelected(c.mic, c.mic.Options[i])
				return
			}
		}
	}
	selectDevice(c.mic, c.micIDs, id, defaultMic)
}

// selectedCapture is what the picker chose to hear, and the device id.
func (c *captionsTab) selectedCapture() (kind, id string) {
	if i := c.mic.SelectedIndex(); c.app.micsListed && i >= 0 && i < len(c.micIDs) && i < len(c.micKinds) {
		return c.micKinds[i], c.micIDs[i]
	}
	// The devices are not listed yet: what the settings hear.
	switch kind := c.settings.CaptureSource; kind {
	case store.CaptureSystem, store.CaptureBoth:
		return kind, c.settings.SystemDevice
	}
	return store.CaptureMicrophone, ""
}

// selectDevice shows device id in a picker whose options stand for ids,
// or def (the system's default) when id is not among them. It does not
// call the picker's OnChanged.
func selectDevice(sel *widget.Select, ids []string, id, def string) {
	if i := slices.Index(ids, id); i >= 0 && i < len(sel.Options) {
		setSelected(sel, sel.Options[i])
		return
	}
	setSelected(sel, def)
}

// selectedMic is the microphone chosen in the picker: "" for the
// settings' (or the system's default) when it chose the computer's sound.
func (c *captionsTab) selectedMic() string {
	if kind, id := c.selectedCapture(); kind == store.CaptureMicrophone {
		return id
	}
	return ""
}

// onMicChanged remembers what captions hear, in the settings.
func (c *captionsTab) onMicChanged(string) {
	kind, id := c.selectedCapture()
	s := c.settings
	s.CaptureSource = kind
	if kind == store.CaptureMicrophone {
		s.InputDevice = id
	} else {
		s.SystemDevice = id
	}
	if s == c.settings {
		return
	}
	c.app.goAsync(func(ctx context.Context) {
		err := c.app.ws.SaveSettings(ctx, s)
		c.app.onUI(func() {
			if err != nil {
				c.showError("save the microphone", err)
				return
			}
			c.app.settingsSaved(s, false)
		})
	})
}

// settingsChanged takes saved settings: the microphone and the export
// format they name.
func (c *captionsTab) settingsChanged(s store.Settings) {
	c.settings = s
	if c.autoStart {
		defer func() {
			c.autoStart = false
			c.onStartStop()
		}()
	}
	if len(c.micIDs) > 0 && !slices.Contains(c.micIDs, s.InputDevice) {
		c.setMicrophones(c.app.mics, nil)
		return
	}
	c.selectMic(s.InputDevice)
}

// onStartStop starts live captions, or stops them (Ctrl+L).
func (c *captionsTab) onStartStop() {
	switch {
	case c.live != nil:
		c.stopLive()
	case c.starting:
	case c.file != nil:
		c.setStatus("A file is being transcribed: wait for it, or cancel it, before starting live captions.", widget.WarningImportance)
	default:
		c.startLive()
	}
}

// startLive starts a live session on the chosen microphone. The session
// is started, and its events read, off the UI goroutine; they come back
// in batches, at most one per frame.
func (c *captionsTab) startLive() {
	source := c.mic.Selected
	kind, chosen := c.selectedCapture()
	if kind == store.CaptureMicrophone && chosen == "" && c.settings.InputDevice != "" {
		source = "" // the saved microphone, named once history has it
	}
	c.starting = true
	c.shown = shownSession{title: "Live captions"}
	c.history.follow(0) // until the live session has its entry
	c.view.reset("Listening… captions appear here as you speak.")
	c.app.overlay.follow(c.view)
	c.title.SetText("Live captions")
	c.setInfo(joinDot(source, "connecting"))
	c.entities.Hide()
	c.app.fileIntel.hide()
	c.level.SetLevel(math.Inf(-1))
	c.setStatus("Connecting…", widget.MediumImportance)
	c.updateControls()

	req := sessions.CaptionsRequest{DeviceID: c.selectedMic()}
	switch kind {
	case store.CaptureSystem:
		req.Capture, req.SystemDeviceID = sessions.CaptureSystem, chosen
	case store.CaptureBoth:
		req.Capture, req.SystemDeviceID, req.DeviceID = sessions.CaptureBoth, chosen, c.settings.InputDevice
	}
	mute := make(chan bool, 1)
	started := c.app.goAsync(func(ctx context.Context) {
		capt, err := c.app.ws.StartCaptions(ctx, req)
		if err != nil {
			c.app.onUI(func() { c.liveFailed(err) })
			return
		}
		c.app.setLive(capt)
		defer c.app.setLive(nil)
		if name := capt.SourceName(); name != "" {
			source = name // the microphone actually opened, as history names it
		}
		ls := &liveSession{c: capt, id: capt.SessionID(), mute: mute, source: source, started: c.app.now()}
		c.app.onUI(func() { c.liveStarted(ls) })
		p := c.app.newPump(capt.Events(), func(b []sessions.Event) { c.applyLive(ls, b) })
		p.mute, p.setMuted = mute, capt.SetMuted
		p.run(ctx)
		err = capt.Stop() // the session has ended: this returns why
		c.app.onUI(func() { c.liveEnded(ls, err) })
	})
	if !started {
		c.starting = false
		c.updateControls()
	}
}

func (c *captionsTab) liveFailed(err error) {
	c.starting = false
	c.shown = shownSession{}
	c.history.follow(0)
	c.view.reset(captionsHint)
	c.title.SetText("Captions")
	c.setInfo("")
	c.showError("start live captions", err)
	c.updateControls()
	c.app.loaded(partAuto, err)
}

func (c *captionsTab) liveStarted(ls *liveSession) {
	c.starting = false
	c.live = ls
	c.shown = shownSession{id: ls.id, title: "Live captions"}
	c.history.follow(ls.id)
	c.updateLiveInfo()
	c.updateControls()
	c.app.historyChanged(store.KindCaptions)
}

// applyLive shows a batch of a live session's events, in order. The
// view is committed once per batch: an interim that a later event of the
// batch replaces is never painted, nor is any but the last level, and a
// failure stays in the status bar over a later change of state.
func (c *captionsTab) applyLive(ls *liveSession, batch []sessions.Event) {
	var (
		interim      *sessions.InterimEvent // the latest after the last final
		clearInterim bool                   // a final replaced the interim shown
		level        *sessions.LevelEvent
		state        *sessions.StateEvent
		unsaved      *sessions.SaveFailedEvent
		history      *sessions.HistoryEvent
		finals       int
	)
	for _, ev := range batch {
		switch e := ev.(type) {
		case *sessions.FinalEvent:
			c.view.addFinal(e.Caption)
			finals++
			interim, clearInterim = nil, true
		case *sessions.InterimEvent:
			interim = e
		case *sessions.LevelEvent:
			level = e
		case *sessions.StateEvent:
			if state == nil || state.State != sessions.StateFailed {
				state = e
			}
		case *sessions.UtteranceEndEvent:
			// The speaker paused: the interim shown is as final as it
			// gets until the final itself arrives, so nothing changes.
		case *sessions.SaveFailedEvent:
			unsaved = e
		case *sessions.HistoryEvent:
			history = e
		}
	}
	ls.finals += finals
	switch {
	case interim != nil:
		c.view.setInterim(interim)
	case clearInterim:
		c.view.setInterim(nil)
	}
	c.view.commit()
	c.app.overlay.follow(c.view)
	if level != nil {
		ls.level = level
		if !ls.muted {
			c.level.SetLevel(level.RMS)
		}
	}
	if state != nil {
		c.showState(*state)
	}
	c.liveHistory(ls, history, state)
	if unsaved != nil {
		c.showError("live captions: not saved", unsaved)
	}
	if finals > 0 {
		c.updateLiveInfo()
	}
}

// liveHistory shows what history holds of the live session, from the
// latest HistoryEvent of a batch (h, nil when none came): captions
// waiting for room on a full disk stay in the status bar over a live
// state, until they are written. The entry, made late, becomes the one
// shown.
func (c *captionsTab) liveHistory(ls *liveSession, h *sessions.HistoryEvent, state *sessions.StateEvent) {
	prev := ls.history
	if h == nil {
		h = prev
		if h == nil || state == nil || state.State != sessions.StateLive && state.State != sessions.StateMuted {
			return
		}
		prev = nil // the state just shown hides what waits: say it again
	}
	ls.history = h
	if h.ID != 0 && ls.id == 0 {
		ls.id = h.ID
		if c.live == ls {
			c.shown.id = h.ID
		}
		c.app.historyChanged(store.KindCaptions)
	}
	if h.Final {
		return // liveEnded says it
	}
	if words, imp := historyNotice(prev, h, "captions"); words != "" {
		c.setStatus(words, imp)
	}
}

// historyLoaded takes the sessions just listed: the live one's record
// names its microphone as the workspace resolved it.
func (c *captionsTab) historyLoaded(list []store.Session) {
	ls := c.live
	if ls == nil {
		return
	}
	for _, s := range list {
		if s.ID == ls.id && s.Source != "" && s.Source != ls.source {
			ls.source = s.Source
			c.updateLiveInfo()
		}
	}
}

// updateLiveInfo writes the info line of the live session.
func (c *captionsTab) updateLiveInfo() {
	ls := c.live
	if ls == nil {
		return
	}
	speakers := ""
	if n := c.view.speakerCount(); n > 0 {
		speakers = plural(n, "speaker")
	}
	c.setInfo(joinDot(ls.source, "started "+when(ls.started, c.app.now()), c.settings.Model,
		plural(ls.finals, "caption"), speakers))
}

func (c *captionsTab) setInfo(text string) {
	c.info.SetText(text)
	c.info.Hidden = text == ""
	c.info.Refresh()
}

// showState puts a live session's state in the status bar.
func (c *captionsTab) showState(st sessions.StateEvent) {
	switch st.State {
	case sessions.StateConnecting:
		c.setStatus("Connecting…", widget.MediumImportance)
	case sessions.StateLoading:
		c.setStatus("Loading the recogniser… (the local engine loads it for the first session)", widget.MediumImportance)
	case sessions.StateLive:
		c.setStatus("Live", widget.SuccessImportance)
	case sessions.StateMuted:
		c.setStatus("Muted: no audio is sent, and the connection is kept open.", widget.WarningImportance)
	case sessions.StateReconnecting:
		if st.Err != nil {
			c.app.log.Info("live captions: reconnecting", "err", st.Err, "attempt", st.Attempt)
		}
		c.setStatus(reconnectingWords(st), widget.WarningImportance)
	case sessions.StateStopping:
		c.setStatus("Stopping: waiting for the last words…", widget.MediumImportance)
	case sessions.StateStopped:
		c.setStatus("Stopped.", widget.MediumImportance)
	case sessions.StateFailed:
		c.showError("live captions failed", st.Err)
	}
}

// reconnectingWords says what a reconnecting session is doing, e.g.
// "Reconnecting, 12 s buffered, retry in 3 s".
func reconnectingWords(st sessions.StateEvent) string {
	s := "Reconnecting, " + seconds(st.Buffered) + " buffered"
	if st.RetryIn > 0 {
		s += ", retry in " + seconds(st.RetryIn)
	}
	return s
}

// seconds writes a duration in whole seconds, rounding up what is left to
// wait so that it never reads "0 s" before it is over.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", int64(math.Ceil(d.Seconds())))
}

// liveEnded is called once the session has ended and its last batch is
// on screen.
func (c *captionsTab) liveEnded(ls *liveSession, err error) {
	if c.live == ls {
		c.live = nil
	}
	c.view.setInterim(nil)
	c.view.commit()
	c.app.overlay.follow(c.view)
	c.level.SetLevel(math.Inf(-1))
	text, imp, ended := endedWords("Stopped. "+plural(ls.finals, "caption"), ls.history, err)
	if !ended {
		c.showError("live captions ended", err)
	} else {
		c.setStatus(text, imp)
		if h := ls.history; h != nil && !h.Written() && c.live == nil {
			c.shown.unsaved = &sessions.Transcript{Title: c.shown.title, Captions: slices.Clone(c.view.captions), Created: ls.started}
		}
	}
	c.updateControls()
	c.app.historyChanged(store.KindCaptions)
	if ls.id != 0 && c.live == nil {
		// The session just heard plays back at once; the app is ready
		// (for a screenshot) once its player is on screen.
		c.player.load(ls.id, func() { c.app.loaded(partAuto, err) })
	} else {
		c.app.loaded(partAuto, err)
	}
	if ended && ls.finals > 0 && ls.id != 0 {
		c.app.meetingStopped(ls.id) // notes, when the settings ask for them
	}
}

// stopLive asks the live session to stop. Stopping waits for the
// service's last words, so it runs off the UI goroutine; the session's
// end arrives through liveEnded.
func (c *captionsTab) stopLive() {
	ls := c.live
	if ls == nil || ls.stopping {
		return
	}
	ls.stopping = true
	c.setStatus("Stopping: waiting for the last words…", widget.MediumImportance)
	c.updateControls()
	c.app.goAsync(func(context.Context) {
		// Its error, if any, is reported by the pump with the session's end.
		_ = ls.c.Stop()
	})
}

// onMute mutes or unmutes the live session (Ctrl+M).
func (c *captionsTab) onMute() {
	ls := c.live
	if ls == nil || ls.stopping {
		return
	}
	ls.muted = !ls.muted
	ls.requestMute(ls.muted)
	if ls.muted {
		// Nothing is sent while muted: the meter, which shows what the
		// service hears, goes empty until Unmute.
		c.level.SetLevel(math.Inf(-1))
	}
	c.updateControls()
}

// showTranscript puts a saved transcript in the caption view; status is
// how the session ended (store.StatusDone...), which says why it may have
// no captions.
func (c *captionsTab) showTranscript(id int64, title string, caps []sessions.Caption, info, entities, status string) {
	c.shown = shownSession{id: id, title: title, empty: len(caps) == 0}
	c.title.SetText(title)
	c.setInfo(info)
	c.entities.SetText(entities)
	c.entities.Hidden = entities == ""
	c.entities.Refresh()
	hint := ""
	if len(caps) == 0 {
		hint = noWordsHint(status)
	}
	c.view.show(caps, hint)
	if id != 0 && c.live == nil {
		c.player.load(id)
	}
	c.history.follow(id)
	c.updateControls()
}

// noWordsHint says why a past session with status shows no words.
func noWordsHint(status string) string {
	switch status {
	case store.StatusFailed:
		return "This session failed before any words were saved, so there is nothing to show or export."
	case store.StatusCancelled:
		return "This session was cancelled before any words were saved."
	case store.StatusRunning:
		return "This session is still running in another Earshot, and no words are saved yet."
	case store.StatusInterrupted:
		return "This session was interrupted (Earshot stopped while it ran) before any words were saved."
	}
	return "No words were heard in this session."
}

// shownDeleted clears the view when the session it shows was deleted.
func (c *captionsTab) shownDeleted(id int64) {
	if c.shown.id != id || c.live != nil {
		return
	}
	c.shown = shownSession{}
	c.title.SetText("Captions")
	c.setInfo("")
	c.entities.Hide()
	c.view.reset(captionsHint)
	c.history.follow(0)
	c.updateControls()
}

// shownRenamed updates the title when the session shown was renamed.
func (c *captionsTab) shownRenamed(id int64, title string) {
	if c.shown.id == id {
		c.shown.title = title
		c.title.SetText(title)
	}
}
