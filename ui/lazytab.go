package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// lazyTab is a tab whose widgets are built the first time it is shown,
// not when the window is: building every tab's widgets and measuring
// their text before the window could appear cost the app a third of a
// second of its start, for tabs a person may never open this time.
//
// Until it is built, what the rest of the app tells the tab waits in
// order (do) and runs, in that order, right after the widgets exist, so
// that a tab built late shows what one built at once would show. The
// tab's data still loads at start where the window needs it (the
// settings, the service's models); only the widgets wait.
//
// Its fields are touched only on the UI goroutine.
type lazyTab struct {
	build   func() fyne.CanvasObject
	content *fyne.Container // the tab item's content: empty until built
	built   bool
	waiting []func()
}

// init makes the tab's content, which build fills when the tab is first
// shown.
func (l *lazyTab) init(build func() fyne.CanvasObject) *fyne.Container {
	l.build = build
	l.content = container.NewStack()
	return l.content
}

// ensure builds the tab if it has not been built yet, then runs what
// waited for it.
func (l *lazyTab) ensure() {
	if l.built || l.build == nil {
		return
	}
	l.built = true
	l.content.Objects = []fyne.CanvasObject{l.build()}
	for len(l.waiting) > 0 {
		fn := l.waiting[0]
		l.waiting = l.waiting[1:]
		fn()
	}
	l.waiting = nil
	l.content.Refresh()
}

// do runs fn now if the tab is built, else as soon as it is.
func (l *lazyTab) do(fn func()) {
	if l.built {
		fn()
		return
	}
	l.waiting = append(l.waiting, fn)
}
