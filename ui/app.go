// Package ui is Earshot's desktop interface, built with Fyne.
//
// It is the only package of Earshot that imports Fyne. The window has one
// tab per part of the app, each in its own file: Captions (live captions,
// file transcription, history and export), Conversation (turn-aware
// transcription, conversation.go), Settings and Service. The tabs
// drive a sessions.Workspace and never learn how it reaches the service,
// the keyring or the history database.
//
// Threading: widget callbacks run on Fyne's UI goroutine. Anything slow
// (a query to the service, the keyring, the database, a live session's
// events) runs on a goroutine the App owns, with a context the App
// cancels when its window closes, and its result comes back to the
// widgets through App.onUI, the one bridge to the UI goroutine. A
// session's event channel is read by the one pump (pump.go), which hands
// every tab its events in order, in batches, at most once per frame.
//
// No tab reaches into another: a tab that saved, renamed or deleted
// something in history says so with App.historyChanged, and each history
// list, subscribed with App.watchHistory, reads the history again.
package ui

import (
	"context"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/audio/device"
	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// AppID is Earshot's application id, the same in FyneApp.toml, the desktop
// entry and the AppStream metainfo. Create the fyne.App with
// app.NewWithID(AppID): Fyne keys preferences and storage by it.
const AppID = "app.earshot.Earshot"

// DefaultQueryTimeout bounds one query to the service when
// Options.QueryTimeout is zero: long enough for a hosted service on a slow
// network, short enough that a hung one is reported rather than waited on.
const DefaultQueryTimeout = 10 * time.Second

// searchDelay is how long the history search waits for the typing to
// pause before it asks the database.
const searchDelay = 250 * time.Millisecond

// Keyboard shortcuts. KeyModifierShortcutDefault is Ctrl, or Cmd on macOS.
var (
	startShortcut   = ctrl(fyne.KeyL)
	muteShortcut    = ctrl(fyne.KeyM)
	openShortcut    = ctrl(fyne.KeyO)
	exportShortcut  = ctrl(fyne.KeyE)
	searchShortcut  = ctrl(fyne.KeyF)
	saveShortcut    = ctrl(fyne.KeyS)
	refreshShortcut = ctrl(fyne.KeyR)
	quitShortcut    = ctrl(fyne.KeyQ)
	historyShortcut = ctrl(fyne.KeyH)
	overlayShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}

	converseShortcut       = ctrl(fyne.KeyT)
	endTurnShortcut        = ctrl(fyne.KeyD)
	lowerThresholdShortcut = ctrl(fyne.KeyLeftBracket)
	raiseThresholdShortcut = ctrl(fyne.KeyRightBracket)
)

func ctrl(k fyne.KeyName) *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault}
}

// Service describes the speech service the app talks to. The Workspace
// implements it; tests give fakes.
type Service interface {
	// Info describes the service: who serves it, where, and its models.
	// It must return when ctx is done.
	Info(ctx context.Context) (ServiceInfo, error)
}

// ServiceInfo describes the service the app is connected to.
type ServiceInfo = sessions.ServiceInfo

// ModelInfo describes one model the service offers.
type ModelInfo = sessions.ModelInfo

// Options tunes an App. The zero value is ready to use.
type Options struct {
	// QueryTimeout bounds each query to the service; zero means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration

	// OnReady, if not nil, is called once, on the UI goroutine, when every
	// tab has its content on screen: the service's description and models,
	// the settings, the key's status and the history; with AutoStart or
	// AutoConverse, also the whole auto-started session. err is the first
	// failure shown in plain words, or nil. Tools that screenshot the
	// window wait for it; it must not block.
	OnReady func(err error)

	// AutoStart starts live captions from the saved input device as soon
	// as the window is built, as if Start had been pressed. Screenshots
	// and demonstrations use it with a replayed recording for a
	// microphone: such a session ends by itself when the recording does.
	AutoStart bool

	// AutoConverse starts a conversation in the Conversation tab as soon
	// as the window is built, as AutoStart does for captions.
	AutoConverse bool

	// AutoAnalyze, when not empty, is pasted into the Analyze tab and
	// analysed as soon as the window is built, as AutoStart does for
	// captions; OnReady waits for the analysis to be on screen.
	AutoAnalyze string

	// AutoSpeak, when not empty, is put in the Voices tab's text and
	// spoken with the saved voice as soon as the voices are listed;
	// OnReady waits for the synthesis to end.
	AutoSpeak string

	// AutoAgent, when not empty, are typed to the agent one by one, each
	// once the reply to the one before has been spoken, in a typed
	// conversation started as soon as the models are listed; OnReady
	// waits for the last reply.
	AutoAgent []string

	// Logger receives what the UI shows in plain words, with the raw
	// errors behind it. It never receives the API key. Nil discards.
	Logger *slog.Logger

	// onShown, if not nil, is called on the UI goroutine after every
	// answer from the service is on screen. Tests use it to wait.
	onShown func()
	// now tells the time shown; nil means clock's.
	now func() time.Time
	// clock paces what the window does in time: the frames of a tab's
	// events, the inspector's repaints, the overlay's save. nil means
	// the system's.
	clock esclock.Clock
	// service, if not nil, answers the Service tab instead of the
	// workspace. Tests use it to give answers the workspace cannot.
	service Service
	// do runs fn on the UI goroutine; nil means fyne.Do. Fyne's test
	// driver runs fn at once on the caller's goroutine, so tests pass a
	// function that holds the lock their own goroutine takes to touch
	// widgets.
	do func(fn func())
	// searchDelay overrides searchDelay when positive.
	searchDelay time.Duration
}

func (o Options) queryTimeout() time.Duration {
	if o.QueryTimeout > 0 {
		return o.QueryTimeout
	}
	return DefaultQueryTimeout
}

// App is Earshot's main window and the work it runs in the background.
//
// New and ShowAndRun are called from the main goroutine. The fields New
// sets from its arguments (ws, svc, opts, log, now, clock) never change, and ctx
// and wg are safe for concurrent use, so background goroutines may read
// them; every other field is touched only on the UI goroutine.
type App struct {
	app    fyne.App
	window fyne.Window
	ws     *sessions.Workspace
	svc    Service
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	clock  esclock.Clock

	// ctx is cancelled when the window closes or ShowAndRun returns; every
	// background goroutine runs under it and is counted in wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closing is set when the window closes: from then on no work
	// starts and nothing more is shown.
	closing atomic.Bool

	liveMu sync.Mutex             // guards live, conv
	live   *sessions.Captions     // the live session, so that stop can end it well
	conv   *sessions.Conversation // the conversation, likewise

	header   *header
	tabs     *container.AppTabs
	captions *captionsTab
	overlay  *overlay // the caption overlay (overlay.go)
	// wire is the wire inspector's window (inspector.go).
	wire     *inspector
	converse *conversationTab
	voices   *voicesTab
	agent    *agentTab
	analyze  *analyzeTab
	history  *historyTab
	settings *settingsTab
	service  *serviceTab

	// retention prunes history past the settings' retention while the
	// app runs (started by load, stopped by stop).
	retention *sessions.Retention

	// lazyTabs are the tabs built when first shown, by index in tabs;
	// nil for one built with the window.
	lazyTabs []*lazyTab
	// loading is set once load has started what the tabs show.
	loading bool

	// fileIntel shows a file transcription's intelligence (file.go).
	fileIntel *fileIntelView
	// pastWindows are the windows of past sessions opened while live
	// captions run (pastwindow.go), by session id.
	pastWindows map[int64]*pastWindow

	mics         []device.Device // the input devices last listed
	systemSounds []device.Device // the sources of the computer's sound last listed
	micsListed   bool            // the devices have been listed once
	micsLoading  bool

	// historyWatchers are the history lists, told by historyChanged
	// when a tab saved, renamed or deleted a record.
	historyWatchers []func(kind string)
	// stale are the status lines that tell about the service or the
	// devices, cleared when those change (stale.go).
	stale []staleLine

	// waiting names the parts still loading before OnReady; readyErr is
	// the first failure among them.
	waiting  map[string]bool
	readyErr error
	ready    bool // OnReady has been called
}

// Parts of the window that OnReady waits for.
const (
	partService  = "service"
	partSettings = "settings"
	partKey      = "key"
	partHistory  = "history"
	partAuto     = "autostart"
)

// New builds Earshot's main window on a, driving the workspace ws. ws must
// not be nil. The window is shown by ShowAndRun, which then loads what the
// tabs show (load).
func New(a fyne.App, ws *sessions.Workspace, opts Options) *App {
	ctx, cancel := context.WithCancel(context.Background())
	app := &App{
		app:     a,
		ws:      ws,
		svc:     opts.service,
		opts:    opts,
		log:     opts.Logger,
		now:     opts.now,
		clock:   esclock.Or(opts.clock),
		ctx:     ctx,
		cancel:  cancel,
		waiting: map[string]bool{partService: true, partSettings: true, partKey: true, partHistory: true},
	}
	app.header = newHeader(app.useLocalEngine)
	ws.SetErrorWords(plainError) // history keeps why a session failed as the window says it
	if app.svc == nil {
		app.svc = ws
	}
	if app.log == nil {
		app.log = slog.New(slog.DiscardHandler)
	}
	if app.now == nil {
		app.now = app.clock.Now
	}
	if opts.AutoStart || opts.AutoConverse || opts.AutoAnalyze != "" || opts.AutoSpeak != "" || len(opts.AutoAgent) > 0 {
		app.waiting[partAuto] = true
	}

	a.Settings().SetTheme(newAppTheme(a.Settings().Theme()))
	// Parsing the text faces (the theme's and the system's fallback, for
	// regular and bold text) is the longest part of building the window:
	// it runs while the window is created, and nothing measures text until
	// it is done.
	faces := make(chan struct{})
	go func() {
		defer close(faces)
		loadTextFaces()
	}()
	a.SetIcon(icon)
	w := a.NewWindow("Earshot")
	app.window = w
	w.SetIcon(icon)
	w.SetMaster()
	w.SetOnClosed(func() { app.closing.Store(true) })
	w.SetOnDropped(app.dropped) // a file dropped opens in the Analyze tab (analyze_document.go)
	<-faces

	app.captions = newCaptionsTab(app)
	app.overlay = newOverlay(app)
	app.wire = newInspector(app)
	app.converse = newConversationTab(app)
	app.voices = newVoicesTab(app)
	app.agent = newAgentTab(app)
	app.analyze = newAnalyzeTab(app)
	app.history = newHistoryTab(app)
	app.settings = newSettingsTab(app)
	app.service = newServiceTab(app)
	// Captions is what the window opens on; the other tabs are built the
	// first time they are shown (lazytab.go).
	app.lazyTabs = []*lazyTab{nil, &app.converse.ui, &app.voices.ui, &app.agent.ui, &app.analyze.ui, &app.history.ui, &app.settings.ui, &app.service.ui}
	app.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Captions", micIcon, app.captions.buildUI()),
		container.NewTabItemWithIcon("Conversation", theme.AccountIcon(), app.converse.ui.init(app.converse.buildUI)),
		container.NewTabItemWithIcon("Voices", theme.VolumeUpIcon(), app.voices.ui.init(app.voices.buildUI)),
		container.NewTabItemWithIcon("Agent", theme.MediaRecordIcon(), app.agent.ui.init(app.agent.buildUI)),
		container.NewTabItemWithIcon("Analyze", theme.DocumentIcon(), app.analyze.ui.init(app.analyze.buildUI)),
		container.NewTabItemWithIcon("History", theme.HistoryIcon(), app.history.ui.init(app.history.buildUI)),
		container.NewTabItemWithIcon("Settings", theme.SettingsIcon(), app.settings.ui.init(app.settings.buildUI)),
		container.NewTabItemWithIcon("Service", theme.ComputerIcon(), app.service.ui.init(app.service.buildUI)),
	)
	app.tabs.OnSelected = func(*container.TabItem) { app.buildTab(app.tabs.SelectedIndex()) }
	app.watchHistory(func(kind string) {
		if kind == store.KindAnalysis {
			app.analyze.reload()
		}
	})
	inspect := widget.NewButtonWithIcon("Inspector", theme.ListIcon(), app.wire.show)
	inspect.Importance = widget.LowImportance
	top := container.NewBorder(nil, nil, nil, container.NewCenter(inspect), app.header.buildUI())
	w.SetContent(container.NewBorder(top, nil, nil, nil, app.tabs))
	app.showHistoryRecovery()
	w.SetMainMenu(app.buildMenu())
	w.Resize(fyne.NewSize(1100, 720))
	w.CenterOnScreen()

	return app
}

// load starts loading what the tabs show (the service's models, the
// settings, the key's status, the history, the microphones) and what the
// Auto options start. ShowAndRun calls it once the window is on screen, so
// that none of it competes with the window's appearing; tests, which run
// no window, call it after New.
func (a *App) load() {
	if a.loading {
		return
	}
	a.loading = true
	app, opts := a, a.opts
	app.service.onRefresh()
	app.settings.load()
	app.captions.history.reload()
	app.analyze.reload()
	app.loadMicrophones()
	app.retention = app.ws.StartRetention(app.ctx, nil, func(n int, err error) {
		if n > 0 {
			app.onUI(func() { app.historyChanged("") })
		}
	})
	if opts.AutoStart {
		// Once the settings are read: they say what captions hear.
		app.captions.autoStart = true
	} else if opts.AutoConverse {
		app.converse.ui.ensure()
		app.converse.onStartStop()
	} else if opts.AutoAnalyze != "" {
		app.analyze.ui.ensure()
		app.analyze.autoAnalyze(opts.AutoAnalyze)
	} else if opts.AutoSpeak != "" {
		app.voices.ui.ensure()
	} else if len(opts.AutoAgent) > 0 {
		app.agent.ui.ensure()
	}
}

// loadTextFaces makes Fyne load the faces of the text styles the window
// opens with (regular, and bold for headings and tab names), as the first
// measure of each does.
func loadTextFaces() {
	for _, style := range []fyne.TextStyle{{}, {Bold: true}} {
		fyne.MeasureText("Earshot", theme.TextSize(), style)
	}
}

// buildTab builds the widgets of the tab at index i if they are not built
// yet (lazytab.go).
func (a *App) buildTab(i int) {
	if i >= 0 && i < len(a.lazyTabs) && a.lazyTabs[i] != nil {
		a.lazyTabs[i].ensure()
	}
}

// buildAllTabs builds every tab's widgets now. Tests that reach into a
// tab's widgets without opening it first call it.
func (a *App) buildAllTabs() {
	for i := range a.lazyTabs {
		a.buildTab(i)
	}
}

// buildMenu makes the window's menus. Their items carry the app's
// keyboard shortcuts: Fyne offers a shortcut to the menu before the
// focused widget, so they work even while a text field has the focus.
func (a *App) buildMenu() *fyne.MainMenu {
	item := func(label string, sc fyne.Shortcut, icon fyne.Resource, action func()) *fyne.MenuItem {
		it := fyne.NewMenuItem(label, action)
		it.Shortcut = sc
		it.Icon = icon
		return it
	}
	onCaptions := func(action func()) func() {
		return func() {
			a.tabs.SelectIndex(0)
			action()
		}
	}
	quit := item("Quit", quitShortcut, nil, a.app.Quit)
	quit.IsQuit = true
	earshot := fyne.NewMenu("Earshot",
		item("Refresh service", refreshShortcut, theme.ViewRefreshIcon(), func() { a.service.onRefresh() }),
		item("History", historyShortcut, theme.HistoryIcon(), func() { a.SelectTab("History") }),
		item("Wire inspector", inspectorShortcut, theme.ListIcon(), a.wire.toggle),
		item("Save settings", saveShortcut, theme.DocumentSaveIcon(), a.voicesSave(func() {
			a.SelectTab("Settings")
			a.settings.onSave()
		})),
		fyne.NewMenuItemSeparator(),
		quit,
	)
	captions := fyne.NewMenu("Captions",
		item("Start or stop live captions", startShortcut, theme.MediaRecordIcon(), onCaptions(a.captions.onStartStop)),
		item("Mute or unmute", muteShortcut, theme.VolumeMuteIcon(), onCaptions(a.captions.onMute)),
		item("Show or hide the caption overlay", overlayShortcut, theme.VisibilityIcon(), a.overlay.toggle),
		fyne.NewMenuItemSeparator(),
		item("Open audio file…", openShortcut, theme.FolderOpenIcon(), onCaptions(a.captions.onOpenFile)),
		item("Export transcript…", exportShortcut, theme.DownloadIcon(), a.exportShown(onCaptions(a.captions.onExport))),
		item("Search history", searchShortcut, theme.SearchIcon(), onCaptions(a.captions.history.onFocusSearch)),
	)
	onConversation := func(action func()) func() {
		return func() {
			a.SelectTab("Conversation")
			action()
		}
	}
	conversation := fyne.NewMenu("Conversation",
		item("Start or stop a conversation", converseShortcut, theme.MediaRecordIcon(), onConversation(a.converse.onStartStop)),
		item("End turn", endTurnShortcut, theme.MediaSkipNextIcon(), onConversation(a.converse.onEndTurn)),
		fyne.NewMenuItemSeparator(),
		item("Lower the end-of-turn threshold", lowerThresholdShortcut, theme.ContentRemoveIcon(), onConversation(func() { a.converse.nudgeThreshold(-0.05) })),
		item("Raise the end-of-turn threshold", raiseThresholdShortcut, theme.ContentAddIcon(), onConversation(func() { a.converse.nudgeThreshold(0.05) })),
		fyne.NewMenuItemSeparator(),
		item("Open a recording to converse with…", nil, theme.FolderOpenIcon(), onConversation(a.converse.onOpenFile)),
	)
	return a.shareVoiceShortcuts(fyne.NewMainMenu(earshot, a.tabsMenu(), captions, conversation, a.voicesMenu(item), a.analyzeMenu(item)))
}

// SelectTab opens the tab whose title is name, ignoring case, and reports
// whether there is one. Tools that screenshot each view use it. Call it
// before ShowAndRun or on the UI goroutine.
func (a *App) SelectTab(name string) bool {
	for i, item := range a.tabs.Items {
		if strings.EqualFold(item.Text, name) {
			a.tabs.Select(item)
			a.buildTab(i)
			return true
		}
	}
	return false
}

// ShowAndRun shows the window and runs the app until it quits (the window
// closes or Ctrl+Q). Before returning it cancels the App's background work
// (a live session is stopped and saved) and waits for it, so the caller
// may then close the workspace's store and engine.
func (a *App) ShowAndRun() {
	stopped := takeStopHook(a.app)
	a.window.Show()
	a.load()
	a.app.Run()
	a.stop()
	if stopped != nil {
		stopped()
	}
}

// takeStopHook removes the app's stopped hook (Fyne's own saves the
// preferences) and returns it, for ShowAndRun to run once the app's loop
// has ended. Fyne 2.8 queues that hook as the loop ends and sends it to
// the UI goroutine's queue while the loop closes that queue: when the two
// meet, the send races the close, and the hook's sender waits for ever,
// so that Run never returns (seen in CI: the window never closed after
// SIGTERM, with a data race inside Fyne). With no hook nothing is queued.
// It returns nil when the app's lifecycle is not Fyne's own.
func takeStopHook(app fyne.App) func() {
	lc, ok := app.Lifecycle().(interface {
		OnStopped() func()
		SetOnStoppedHookExecuted(func())
	})
	if !ok {
		return nil
	}
	stopped := lc.OnStopped()
	app.Lifecycle().SetOnStopped(nil)
	lc.SetOnStoppedHookExecuted(nil)
	return stopped
}

// Quit asks the app to quit, as Ctrl+Q does. It is safe to call from any
// goroutine (main calls it on an interrupt signal).
func (a *App) Quit() {
	a.closing.Store(true)
	fyne.Do(a.app.Quit)
}

// liveStopGrace is how long stop lets a live session finish well (the
// service's last results saved, the session marked done) before it is
// cut short.
const liveStopGrace = 3 * time.Second

// stop ends a live session, cancels the App's background work and waits
// for it to finish.
func (a *App) stop() {
	a.closing.Store(true)
	a.liveMu.Lock()
	var lives []stopper
	if a.live != nil {
		lives = append(lives, a.live)
	}
	if a.conv != nil {
		lives = append(lives, a.conv)
	}
	a.liveMu.Unlock()
	// The grace is shared: once it is over, nobody is waited for.
	grace, endGrace := context.WithTimeout(context.Background(), liveStopGrace)
	defer endGrace()
	for _, live := range lives {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := live.Stop(); err != nil {
				a.log.Warn("a live session ended with an error", "err", err)
			}
		}()
	}
	for _, live := range lives {
		select {
		case <-live.Done():
		case <-grace.Done():
		}
	}
	a.cancel()
	a.retention.Stop()
	a.wg.Wait()
}

// stopper is a live session that stop ends.
type stopper interface {
	Stop() error
	Done() <-chan struct{}
}

// setConversation records the conversation (nil when it has ended), for
// stop. It is safe to call from any goroutine.
func (a *App) setConversation(c *sessions.Conversation) {
	a.liveMu.Lock()
	a.conv = c
	a.liveMu.Unlock()
}

// setLive records the live session (nil when it has ended), for stop.
// It is safe to call from any goroutine.
func (a *App) setLive(c *sessions.Captions) {
	a.liveMu.Lock()
	a.live = c
	a.liveMu.Unlock()
}

// goAsync runs work on a new goroutine owned by the App, under the App's
// context; stop waits for it. It reports false, and runs nothing, once the
// App is stopping. Call it on the UI goroutine.
func (a *App) goAsync(work func(ctx context.Context)) bool {
	if a.closing.Load() || a.ctx.Err() != nil {
		return false
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		work(a.ctx)
	}()
	return true
}

// onUI runs fn on the UI goroutine without waiting for it. It is the one
// bridge from background goroutines to widgets: everything they show goes
// through here, in the order it was handed over. Once the App is
// stopping, fn is dropped: the window is gone, and while Fyne shuts down
// it would run fn on the caller's goroutine.
func (a *App) onUI(fn func()) {
	do := fyne.Do
	if a.opts.do != nil {
		do = a.opts.do
	}
	if a.closing.Load() || a.ctx.Err() != nil {
		return // not even queued: the queue may be closing
	}
	do(func() {
		if a.closing.Load() || a.ctx.Err() != nil {
			return
		}
		fn()
	})
}

// historyChanged tells every history list that records of kind (one of
// store's Kind constants) were saved, renamed or deleted, so that the
// lists showing that kind read the history again. A tab calls it instead
// of reaching into another tab's list. Call it on the UI goroutine.
func (a *App) historyChanged(kind string) {
	for _, watch := range a.historyWatchers {
		watch(kind)
	}
}

// watchHistory has historyChanged call watch, on the UI goroutine, with
// the kind of record that changed. A history list calls it once, when
// its widgets are built.
func (a *App) watchHistory(watch func(kind string)) {
	a.historyWatchers = append(a.historyWatchers, watch)
}

// loaded records that part of the window has its content on screen, with
// the error it shows, if any; once every part has, OnReady is called.
func (a *App) loaded(part string, err error) {
	if !a.waiting[part] {
		return
	}
	delete(a.waiting, part)
	if err != nil && a.readyErr == nil {
		a.readyErr = err
	}
	if len(a.waiting) == 0 && !a.ready {
		a.ready = true
		// Building the window parsed fonts and laid out six tabs: give
		// that garbage back to the system now rather than keep it
		// resident while the app sits idle.
		a.goAsync(func(context.Context) { debug.FreeOSMemory() })
		if a.opts.OnReady != nil {
			a.opts.OnReady(a.readyErr)
		}
	}
}

// serviceShown is called on the UI goroutine after an answer from the
// service is on screen. err is the error shown, if any.
func (a *App) serviceShown(info ServiceInfo, err error) {
	if err == nil {
		a.settings.setModels(info.Models)
	}
	a.loaded(partService, err)
	if a.opts.onShown != nil {
		a.opts.onShown()
	}
}

// loadMicrophones lists the input and output devices, off the UI
// goroutine, for the microphone pickers of the Captions and Settings tabs
// and the Settings tab's speaker picker.
func (a *App) loadMicrophones() {
	if a.micsLoading {
		return
	}
	a.micsLoading = true
	started := a.goAsync(func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, a.opts.queryTimeout())
		devs, err := a.ws.Microphones(qctx)
		// The computer's sound, where it can be heard: none is no fault.
		sys, sysErr := a.ws.SystemSources(qctx)
		if sysErr != nil {
			a.log.Info("no source of the computer's sound", "err", sysErr)
		}
		cancel()
		a.onUI(func() {
			a.micsLoading = false
			if err != nil {
				a.log.Warn("list microphones", "err", err)
			} else if len(devs) > 0 {
				a.changed(aboutDevices) // what was said of none is old news
			}
			a.mics, a.systemSounds, a.micsListed = devs, sys, true
			a.captions.setMicrophones(devs, err)
			a.converse.setMicrophones(devs)
			a.settings.setMicrophones(devs)
		})
		qctx, cancel = context.WithTimeout(ctx, a.opts.queryTimeout())
		// outErr, not err: the closure above may still be reading err.
		outs, outErr := a.ws.Speakers(qctx)
		cancel()
		a.onUI(func() {
			if outErr != nil {
				a.log.Warn("list speakers", "err", outErr)
			}
			a.settings.setSpeakers(outs)
		})
	})
	if !started {
		a.micsLoading = false
	}
}

// keyChanged is called on the UI goroutine once the key was saved or
// forgotten: the service is asked again, with the key now in force.
func (a *App) keyChanged() {
	a.serviceChanged()
	a.voices.keyChanged()
}

// serviceChanged is called on the UI goroutine when what answers for the
// service changed (its backend, region, address or key): what every tab
// said of the one before is cleared, and the service and its models are
// asked again.
func (a *App) serviceChanged() {
	a.changed(aboutService)
	a.service.onRefresh()
	a.agent.serviceChanged()
}

// changeSettings reads the saved settings, applies change and saves them,
// off the UI goroutine; every tab is then told (settingsSaved), or failed
// is called on the UI goroutine with the error.
func (a *App) changeSettings(change func(*store.Settings), failed func(error)) {
	a.goAsync(func(ctx context.Context) {
		s, err := a.ws.Settings(ctx)
		if err == nil {
			change(&s)
			err = a.ws.SaveSettings(ctx, s)
		}
		a.onUI(func() {
			if err != nil {
				failed(err)
				return
			}
			a.settingsSaved(s, false)
		})
	})
}

// useLocalEngine switches to the local engine, when the service chosen
// does not answer, and asks it for its models.
func (a *App) useLocalEngine() {
	a.header.setSwitching()
	a.goAsync(func(ctx context.Context) {
		s, err := a.ws.Settings(ctx)
		if err == nil {
			s.Backend = store.BackendLocal
			err = a.ws.SaveSettings(ctx, s)
		}
		a.onUI(func() {
			if err != nil {
				a.log.Warn("switch to the local engine", "err", err)
				a.header.setSwitchFailed(plainError(err))
				return
			}
			a.settingsSaved(s, true)
		})
	})
}

// settingsSaved is called on the UI goroutine once settings are saved,
// from whichever tab saved them, so that every tab shows them and the
// service is asked again (the backend may have changed).
func (a *App) settingsSaved(s store.Settings, serviceChanged bool) {
	a.settings.setCurrent(s)
	a.captions.settingsChanged(s)
	a.converse.settingsChanged(s)
	a.voices.settingsChanged(s)
	a.analyze.settingsChanged(s)
	if serviceChanged {
		a.serviceChanged()
	}
}
