package ui

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/earshot-app/earshot/internal/historygen"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Shape of the benchmark's history: 1,000,000 captions, ten a session.
const (
	benchCaptions    = 1_000_000
	benchPerSession  = 10
	benchScrollPages = 100 // pages read by scrolling: 10,000 sessions
)

// BenchmarkHistoryTabMillion opens the History tab on a history of
// 1,000,000 captions over 100,000 sessions of every kind and measures,
// under Fyne's test driver: opening (the tab built and its first page on
// screen, then again for every loop: the list read anew to its first
// page), scrolling (each page read as the list is scrolled to the end of
// what it holds), a search from typing to hits on screen, and the longest
// step the UI goroutine took, all in ms. -short skips it.
func BenchmarkHistoryTabMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a history of 1,000,000 captions")
	}
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "history.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	t0 := time.Now()
	nsess, err := historygen.Fill(ctx, path, historygen.Config{Captions: benchCaptions, PerSess: benchPerSession, Words: 8,
		Start: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d captions over %d sessions in %v", benchCaptions, nsess, time.Since(t0).Round(time.Millisecond))

	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, func(string) string { return "" })})
	if err != nil {
		b.Fatal(err)
	}
	// The UI goroutine is played by whoever holds mu; every step it takes
	// is timed.
	var (
		mu       sync.Mutex
		stepMu   sync.Mutex
		longest  time.Duration
		counting bool
	)
	ui := func(fn func()) {
		mu.Lock()
		defer mu.Unlock()
		start := time.Now()
		fn()
		d := time.Since(start)
		stepMu.Lock()
		if counting && d > longest {
			longest = d
		}
		stepMu.Unlock()
	}
	pages := make(chan int, 16)
	var a *App
	ui(func() {
		a = New(test.NewTempApp(b), ws, Options{do: ui, searchDelay: time.Millisecond})
		a.history.pageShown = func(n int) { pages <- n }
		a.load()
	})
	defer func() {
		ui(a.window.Close)
		a.stop()
	}()
	wait := func(more int) int {
		for {
			select {
			case n := <-pages:
				if n >= more {
					return n
				}
			case <-time.After(time.Minute):
				b.Fatal("no page within a minute")
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	stats := func(ds []time.Duration) (median, worst float64) {
		s := slices.Clone(ds)
		slices.Sort(s)
		return ms(s[len(s)/2]), ms(s[len(s)-1])
	}
	stepMu.Lock()
	counting = true
	stepMu.Unlock()

	start := time.Now()
	ui(func() { a.SelectTab("History") })
	wait(1)
	firstOpen := time.Since(start)

	var scrolls []time.Duration
	rows := historyPage
	for range benchScrollPages {
		start := time.Now()
		ui(func() { a.history.list.ScrollToBottom() })
		rows = wait(rows + 1)
		scrolls = append(scrolls, time.Since(start))
	}

	var searches []time.Duration
	for _, q := range []string{"meeting budget", "invoice", "the", "project team week", "zq"} {
		start := time.Now()
		ui(func() { a.history.search.SetText(q) })
		wait(0)
		searches = append(searches, time.Since(start))
		b.Logf("search %q: %.1f ms", q, ms(time.Since(start)))
		ui(func() { a.history.search.SetText("") })
		wait(1)
	}

	var opens []time.Duration
	for b.Loop() {
		start := time.Now()
		ui(func() { a.history.reload() })
		wait(1)
		opens = append(opens, time.Since(start))
	}
	b.StopTimer()

	openMed, openWorst := stats(opens)
	pageMed, pageWorst := stats(scrolls)
	searchMed, searchWorst := stats(searches)
	stepMu.Lock()
	step := ms(longest)
	stepMu.Unlock()
	b.ReportMetric(ms(firstOpen), "first-open-ms")
	b.ReportMetric(openMed, "open-median-ms")
	b.ReportMetric(openWorst, "open-worst-ms")
	b.ReportMetric(pageMed, "page-median-ms")
	b.ReportMetric(pageWorst, "page-worst-ms")
	b.ReportMetric(searchMed, "search-median-ms")
	b.ReportMetric(step, "ui-step-worst-ms")
	b.Logf("first open (tab built, first page shown) %.1f ms; open again: median %.1f ms, worst %.1f ms over %d",
		ms(firstOpen), openMed, openWorst, len(opens))
	b.Logf("scrolling, a page of %d read per scroll to the end: median %.1f ms, worst %.1f ms over %d pages (%d rows)",
		historyPage, pageMed, pageWorst, len(scrolls), rows)
	b.Logf("search, typed to hits shown: median %.1f ms, worst %.1f ms over %d queries", searchMed, searchWorst, len(searches))
	b.Logf("longest UI-goroutine step: %.1f ms", step)
}
