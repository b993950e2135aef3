// Package ui is Earshot's desktop interface, built with Fyne.
//
// It is the only package of Earshot that imports Fyne. The rest of the app
// reaches the UI through small interfaces declared here (Service), so the
// lower layers never learn about widgets, and the UI can be tested with
// Fyne's test driver and in-memory fakes.
//
// Threading: widget callbacks run on Fyne's UI goroutine. Anything slow
// (a query to the service) runs on a goroutine the App owns, with a context
// the App cancels when its window closes, and its result comes back to the
// widgets through App.onUI, the one bridge to the UI goroutine.
package ui

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
)

// AppID is Earshot's application id, the same in FyneApp.toml, the desktop
// entry and the AppStream metainfo. Create the fyne.App with
// app.NewWithID(AppID): Fyne keys preferences and storage by it.
const AppID = "app.earshot.Earshot"

// DefaultQueryTimeout bounds one query to the service when
// Options.QueryTimeout is zero: long enough for a hosted service on a slow
// network, short enough that a hung one is reported rather than waited on.
const DefaultQueryTimeout = 10 * time.Second

// Keyboard shortcuts. KeyModifierShortcutDefault is Ctrl, or Cmd on macOS.
var (
	refreshShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}
	quitShortcut    = &desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}
)

// Options tunes an App. The zero value is ready to use.
type Options struct {
	// QueryTimeout bounds each query to the service; zero means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration

	// OnReady, if not nil, is called once, on the UI goroutine, right after
	// the first answer from the service is on screen: with a nil error when
	// the service's description and models are shown, or with the error
	// whose plain-words form is shown. Tools that screenshot the window
	// wait for it; it must not block.
	OnReady func(err error)

	// Logger receives what the UI shows in plain words, with the raw
	// errors behind it. Nil discards.
	Logger *slog.Logger

	// onShown, if not nil, is called on the UI goroutine after every
	// answer is on screen. Tests use it to wait for the UI.
	onShown func()
	// now tells the time shown in the status line; nil means time.Now.
	now func() time.Time
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
// sets from its arguments (svc, opts, log, now) never change, and ctx and
// wg are safe for concurrent use, so background goroutines may read them;
// every other field is touched only on the UI goroutine.
type App struct {
	app    fyne.App
	window fyne.Window
	svc    Service
	opts   Options
	log    *slog.Logger
	now    func() time.Time

	// ctx is cancelled when the window closes or ShowAndRun returns; every
	// background goroutine runs under it and is counted in wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	header  *header
	tabs    *container.AppTabs
	service *serviceTab
	ready   bool // OnReady has been called
}

// New builds Earshot's main window on a, showing the service svc, and
// starts the first query to svc at once, so that its answer can be on
// screen by the time the window is. svc must not be nil. The window is
// shown by ShowAndRun.
func New(a fyne.App, svc Service, opts Options) *App {
	ctx, cancel := context.WithCancel(context.Background())
	app := &App{
		app:    a,
		svc:    svc,
		opts:   opts,
		log:    opts.Logger,
		now:    opts.now,
		ctx:    ctx,
		cancel: cancel,
		header: newHeader(),
	}
	if app.log == nil {
		app.log = slog.New(slog.DiscardHandler)
	}
	if app.now == nil {
		app.now = time.Now
	}

	a.SetIcon(icon)
	w := a.NewWindow("Earshot")
	app.window = w
	w.SetIcon(icon)
	w.SetMaster()
	w.SetOnClosed(cancel)

	service, serviceItem := newServiceTab(app)
	app.service = service
	app.tabs = container.NewAppTabs(serviceItem)
	w.SetContent(container.NewBorder(app.header.buildUI(), nil, nil, nil, app.tabs))
	w.SetMainMenu(app.buildMenu())
	w.Resize(fyne.NewSize(1100, 720))
	w.CenterOnScreen()

	app.service.onRefresh()
	return app
}

// buildMenu makes the window's menu. Its items carry the app's keyboard
// shortcuts: Fyne offers a shortcut to the menu before the focused widget,
// so Ctrl+R and Ctrl+Q work even while a text field has the focus.
func (a *App) buildMenu() *fyne.MainMenu {
	refresh := fyne.NewMenuItem("Refresh", func() { a.service.onRefresh() })
	refresh.Icon = theme.ViewRefreshIcon()
	refresh.Shortcut = refreshShortcut
	quit := fyne.NewMenuItem("Quit", a.app.Quit)
	quit.Shortcut = quitShortcut
	quit.IsQuit = true
	return fyne.NewMainMenu(fyne.NewMenu("Earshot", refresh, fyne.NewMenuItemSeparator(), quit))
}

// SelectTab opens the tab whose title is name, ignoring case, and reports
// whether there is one. Tools that screenshot each view use it. Call it
// before ShowAndRun or on the UI goroutine.
func (a *App) SelectTab(name string) bool {
	for _, item := range a.tabs.Items {
		if strings.EqualFold(item.Text, name) {
			a.tabs.Select(item)
			return true
		}
	}
	return false
}

// ShowAndRun shows the window and runs the app until it quits (the window
// closes or Ctrl+Q). Before returning it cancels the App's background work
// and waits for it, so the caller may then stop the service.
func (a *App) ShowAndRun() {
	a.window.ShowAndRun()
	a.stop()
}

// Quit asks the app to quit, as Ctrl+Q does. It is safe to call from any
// goroutine (main calls it on an interrupt signal).
func (a *App) Quit() { fyne.Do(a.app.Quit) }

// stop cancels the App's background work and waits for it to finish.
func (a *App) stop() {
	a.cancel()
	a.wg.Wait()
}

// goAsync runs work on a new goroutine owned by the App, under the App's
// context; stop waits for it. It reports false, and runs nothing, once the
// App is stopping. Call it on the UI goroutine.
func (a *App) goAsync(work func(ctx context.Context)) bool {
	if a.ctx.Err() != nil {
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
// through here. Once the App is stopping, fn is dropped: the window is
// gone, and while Fyne shuts down it would run fn on the caller's goroutine.
func (a *App) onUI(fn func()) {
	fyne.Do(func() {
		if a.ctx.Err() != nil {
			return
		}
		fn()
	})
}

// shown is called on the UI goroutine after an answer from the service is
// on screen. err is the error shown, if any.
func (a *App) shown(err error) {
	if !a.ready {
		a.ready = true
		if a.opts.OnReady != nil {
			a.opts.OnReady(err)
		}
	}
	if a.opts.onShown != nil {
		a.opts.onShown()
	}
}
