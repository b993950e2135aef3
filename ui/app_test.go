package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/store"
)

// fakeService answers Info with whatever its answer function says, and
// counts the calls. It is safe for concurrent use.
type fakeService struct {
	answer func(ctx context.Context, call int) (ServiceInfo, error)

	mu    sync.Mutex
	calls int
}

func (f *fakeService) Info(ctx context.Context) (ServiceInfo, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	return f.answer(ctx, n)
}

func (f *fakeService) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// answers returns an answer function that gives the n-th answer to the
// n-th call and the last one to every call after.
func answers(infos ...result) func(context.Context, int) (ServiceInfo, error) {
	return func(_ context.Context, call int) (ServiceInfo, error) {
		r := infos[min(call, len(infos))-1]
		return r.info, r.err
	}
}

type result struct {
	info ServiceInfo
	err  error
}

// recordingApp is a test app that remembers what the UI asked of it.
type recordingApp struct {
	fyne.App

	mu    sync.Mutex
	icon  fyne.Resource
	quits int
}

func (r *recordingApp) SetIcon(res fyne.Resource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.icon = res
}

func (r *recordingApp) Quit() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quits++
}

var localInfo = ServiceInfo{
	Local:   true,
	Backend: "Local engine",
	URL:     "http://127.0.0.1:40123",
	Models: []ModelInfo{
		{Name: "nova-3", Kind: "speech-to-text", Engine: "pocketsphinx 5prealpha (en-us)", Languages: []string{"en-US", "en"}, Batch: true, Streaming: true},
		{Name: "aura-2-thalia-en", Kind: "text-to-speech", Engine: "flite 2.2 (kal16)", Languages: []string{"en"}, Batch: true},
	},
}

var clockTime = time.Date(2026, 3, 4, 15, 4, 5, 0, time.Local)

func TestWindow(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	h.waitShown(t)

	h.ui(func() {
		if got := h.window.Title(); got != "Earshot" {
			t.Errorf("title = %q, want Earshot", got)
		}
		if got := h.window.Canvas().Size(); got.Width < 800 || got.Height < 600 {
			t.Errorf("window size = %v, want at least 800x600", got)
		}
		var tabs []string
		for _, it := range h.tabs.Items {
			tabs = append(tabs, it.Text)
		}
		if got := strings.Join(tabs, ","); got != "Captions,Conversation,Voices,Agent,Analyze,History,Settings,Service" {
			t.Errorf("tabs = %s, want Captions,Conversation,Voices,Agent,Analyze,History,Settings,Service", got)
		}
		if got := h.tabs.Selected().Text; got != "Captions" {
			t.Errorf("the window opens on %s, want Captions", got)
		}
	})
	h.fyneApp.mu.Lock()
	icon := h.fyneApp.icon
	h.fyneApp.mu.Unlock()
	if icon == nil || icon.Name() != "earshot.png" || len(icon.Content()) == 0 {
		t.Errorf("app icon = %v, want the earshot.png resource", icon)
	}
	h.assertShows(t, "Earshot", "Captions", "Settings", "Service")
}

// showService opens the Service tab.
func (h *harness) showService() { h.ui(func() { h.SelectTab("Service") }) }

func TestShowsServiceAndModels(t *testing.T) {
	svc := &fakeService{answer: answers(result{info: localInfo})}
	h := newHarness(t, svc, Options{})
	h.waitShown(t)
	h.showService()

	h.assertShows(t,
		"Connected to Local engine",
		"Local engine",
		"http://127.0.0.1:40123",
		"Models (2)",
		"Name", "Kind", "Engine", "Languages", "Batch", "Streaming",
		"nova-3", "speech-to-text", "pocketsphinx 5prealpha (en-us)", "en-US, en",
		"aura-2-thalia-en", "text-to-speech", "flite 2.2 (kal16)",
		"Up to date as of 15:04:05.",
	)
	h.ui(func() {
		if got := h.service.rowText(1); got != "aura-2-thalia-en|text-to-speech|flite 2.2 (kal16)|en|Yes|No" {
			t.Errorf("second row = %q", got)
		}
	})
	if err := h.waitReady(t); err != nil {
		t.Errorf("OnReady(%v), want nil", err)
	}
	if svc.callCount() != 1 {
		t.Errorf("Info called %d times, want 1", svc.callCount())
	}
}

// rowText reads back, through the table's own callbacks, what the cells
// of one row show.
func (s *serviceTab) rowText(row int) string {
	var cells []string
	for col := range modelColumns {
		cell := s.table.CreateCell()
		s.table.UpdateCell(widget.TableCellID{Row: row, Col: col}, cell)
		cells = append(cells, cell.(*widget.Label).Text)
	}
	return strings.Join(cells, "|")
}

func TestEmptyModelList(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: ServiceInfo{Backend: "Hosted service", URL: "https://example.invalid"}})}, Options{})
	h.waitShown(t)
	h.showService()
	h.assertShows(t, "Models (0)", "The service lists no models.", "Connected to Hosted service")
}

func TestLoadingWhileQueryRuns(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{answer: func(ctx context.Context, _ int) (ServiceInfo, error) {
		select {
		case <-release:
			return localInfo, nil
		case <-ctx.Done():
			return ServiceInfo{}, ctx.Err()
		}
	}}
	h := newHarness(t, svc, Options{})
	h.showService()

	// The query is under way: New started it.
	h.ui(func() {
		if !h.service.refresh.Disabled() {
			t.Error("Refresh is enabled while loading")
		}
		if !h.service.activity.Visible() {
			t.Error("no activity indicator while loading")
		}
	})
	h.assertShows(t, "Asking the service for its models…", "Connecting…")
	h.assertHides(t, "nova-3 ")

	close(release)
	h.waitShown(t)
	h.ui(func() {
		if h.service.refresh.Disabled() {
			t.Error("Refresh stays disabled after the answer")
		}
		if h.service.activity.Visible() {
			t.Error("activity indicator stays after the answer")
		}
	})
	h.assertShows(t, "nova-3")
	h.assertHides(t, "Asking the service", "Connecting…")
}

func TestErrorsInPlainWords(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"deadline", fmt.Errorf("list models: %w", context.DeadlineExceeded), "The service did not answer in time."},
		{"status", fmt.Errorf("list models: %w", statusError(401)), "The service did not accept the API key (HTTP 401 Unauthorized)."},
		{"other", errors.New("unexpected end of JSON input"), "Something went wrong: Unexpected end of JSON input."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, &fakeService{answer: answers(result{err: tt.err})}, Options{})
			h.waitShown(t)
			h.showService()
			h.assertShows(t, tt.want, "Not connected")
			h.assertHides(t, "list models:")
			if err := h.waitReady(t); !errors.Is(err, tt.err) {
				t.Errorf("OnReady(%v), want %v", err, tt.err)
			}
			h.ui(func() {
				if h.service.refresh.Disabled() {
					t.Error("Refresh disabled after an error; the user cannot retry")
				}
			})
		})
	}
}

func TestQueryTimeout(t *testing.T) {
	svc := &fakeService{answer: func(ctx context.Context, _ int) (ServiceInfo, error) {
		<-ctx.Done()
		return ServiceInfo{}, ctx.Err()
	}}
	h := newHarness(t, svc, Options{QueryTimeout: 20 * time.Millisecond})
	h.waitShown(t)
	h.showService()
	h.assertShows(t, "The service did not answer in time.")
}

func TestRefreshRequeries(t *testing.T) {
	second := ServiceInfo{Backend: "Local engine", URL: "http://127.0.0.1:40123", Models: []ModelInfo{
		{Name: "flux-general-en", Kind: "speech-to-text", Engine: "pocketsphinx 5prealpha (en-us)", Languages: []string{"en"}, Streaming: true},
	}}
	svc := &fakeService{answer: answers(result{info: localInfo}, result{info: second})}
	h := newHarness(t, svc, Options{})
	h.waitShown(t)
	h.showService()
	h.assertShows(t, "nova-3", "Models (2)")

	h.ui(func() { test.Tap(h.service.refresh) })
	h.waitShown(t)
	if got := svc.callCount(); got != 2 {
		t.Errorf("Info called %d times, want 2", got)
	}
	h.assertShows(t, "flux-general-en", "Models (1)")
	h.assertHides(t, ">nova-3<", "aura-2-thalia-en")
	h.waitReady(t)
	if len(h.readies) != 0 {
		t.Errorf("OnReady called %d times, want once", len(h.readies)+1)
	}
}

// TestUnreachableServiceTellsTheTruth: when the service chosen stops
// answering (here the EU region, its host not found), the header and
// the Service tab say so and name it, show none of the models of the
// backend shown before, and offer the local engine, which one click
// switches to and saves.
func TestUnreachableServiceTellsTheTruth(t *testing.T) {
	eu := ServiceInfo{Backend: "Hosted service (European Union)", URL: "https://api.eu.deepgram.com"}
	dns := &net.DNSError{Err: "no such host", Name: "api.eu.deepgram.com", Server: "10.255.255.53:53", IsNotFound: true}
	svc := &fakeService{answer: answers(result{info: localInfo}, result{info: eu, err: fmt.Errorf("list the service's models: %w", dns)}, result{info: localInfo})}
	h := newHarness(t, svc, Options{})
	h.waitShown(t)
	h.showService()
	h.assertShows(t, "Connected to Local engine", "nova-3")

	h.ui(func() { test.Tap(h.service.refresh) })
	h.waitShown(t)
	h.assertShows(t, "Hosted service (European Union) does not answer", "Use the local engine",
		"Hosted service (European Union) (does not answer)", "Models (unknown)")
	h.assertHides(t, "Connected to Local engine", ">nova-3<", "10.255.255.53")
	h.ui(func() {
		if h.header.connection.Importance != widget.DangerImportance || !h.header.useLocal.Visible() {
			t.Errorf("header importance %v, fallback shown %v", h.header.connection.Importance, h.header.useLocal.Visible())
		}
		test.Tap(h.header.useLocal)
	})
	h.waitShown(t)
	h.assertShows(t, "Connected to Local engine", "nova-3")
	h.ui(func() {
		if h.header.useLocal.Visible() {
			t.Error("the fallback is still offered once the local engine answers")
		}
	})
	if s, err := h.ws.Settings(t.Context()); err != nil || s.Backend != store.BackendLocal {
		t.Errorf("settings %+v, %v; want the local engine saved", s.Backend, err)
	}
}

func TestServiceShortcuts(t *testing.T) {
	svc := &fakeService{answer: answers(result{info: localInfo})}
	h := newHarness(t, svc, Options{})
	h.waitShown(t)

	t.Run("Ctrl+R refreshes", func(t *testing.T) {
		h.press(ctrl(fyne.KeyR))
		h.waitShown(t)
		if got := svc.callCount(); got != 2 {
			t.Errorf("Info called %d times after Ctrl+R, want 2", got)
		}
	})
	t.Run("Ctrl+Q quits", func(t *testing.T) {
		h.press(ctrl(fyne.KeyQ))
		h.fyneApp.mu.Lock()
		defer h.fyneApp.mu.Unlock()
		if h.fyneApp.quits != 1 {
			t.Errorf("app quit %d times after Ctrl+Q, want 1", h.fyneApp.quits)
		}
	})
}

func TestRefreshWhileLoadingIsIgnored(t *testing.T) {
	release := make(chan struct{})
	svc := &fakeService{answer: func(ctx context.Context, _ int) (ServiceInfo, error) {
		select {
		case <-release:
			return localInfo, nil
		case <-ctx.Done():
			return ServiceInfo{}, ctx.Err()
		}
	}}
	h := newHarness(t, svc, Options{})
	h.press(refreshShortcut)
	h.ui(h.service.onRefresh)
	close(release)
	h.waitShown(t)
	if got := svc.callCount(); got != 1 {
		t.Errorf("Info called %d times, want 1: a refresh during a query must not start another", got)
	}
}

func TestCloseCancelsQuery(t *testing.T) {
	returned := make(chan error, 1)
	svc := &fakeService{answer: func(ctx context.Context, _ int) (ServiceInfo, error) {
		<-ctx.Done()
		returned <- ctx.Err()
		return ServiceInfo{}, ctx.Err()
	}}
	h := newHarness(t, svc, Options{QueryTimeout: time.Hour})

	h.closeWindow()
	done := make(chan struct{})
	go func() {
		h.stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop did not return after the window closed")
	}
	if err := <-returned; !errors.Is(err, context.Canceled) {
		t.Errorf("query ended with %v, want context.Canceled", err)
	}
	if len(h.shown) != 0 || len(h.readies) != 0 {
		t.Error("an answer was shown after the window closed")
	}
	if h.goAsync(func(context.Context) { t.Error("work ran after stop") }) {
		t.Error("goAsync accepted work after stop")
	}
}

func TestSelectTab(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	h.waitShown(t)
	tests := []struct {
		name string
		want bool
	}{
		{"Captions", true},
		{"settings", true},
		{"Service", true},
		{"service", true},
		{"history", true},
		{"histories", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.ui(func() {
				if got := h.SelectTab(tt.name); got != tt.want {
					t.Errorf("SelectTab(%q) = %v, want %v", tt.name, got, tt.want)
				}
				if tt.want && !strings.EqualFold(h.tabs.Selected().Text, tt.name) {
					t.Errorf("selected tab = %q, want %q", h.tabs.Selected().Text, tt.name)
				}
			})
		})
	}
}

// TestTakeStopHook: the app's stopped hooks (Fyne's own and one set
// through the Lifecycle) leave the lifecycle, so that nothing is queued
// as Fyne's loop ends, and are returned to be run once it has.
func TestTakeStopHook(t *testing.T) {
	app := test.NewApp()
	defer app.Quit()
	var ran []string
	app.Lifecycle().SetOnStopped(func() { ran = append(ran, "app") })
	lc := app.Lifecycle().(interface {
		OnStopped() func()
		SetOnStoppedHookExecuted(func())
	})
	lc.SetOnStoppedHookExecuted(func() { ran = append(ran, "fyne") })

	stopped := takeStopHook(app)
	if lc.OnStopped() != nil {
		t.Fatal("after takeStopHook the lifecycle still has a stopped hook, which Fyne queues as its loop ends")
	}
	if stopped == nil {
		t.Fatal("takeStopHook returned no hook to run")
	}
	stopped()
	if got := strings.Join(ran, ","); got != "app,fyne" {
		t.Errorf("the returned hook ran %q, want the app's then Fyne's (app,fyne)", got)
	}
}
