package ui

import (
	"context"
	"image/color"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	esclock "github.com/earshot-app/earshot/internal/clock"
)

// Words, limits and preference keys of the caption overlay.
const (
	overlayTitle = "Earshot captions"
	overlayHint  = "Captions will appear here."
	// overlayLines is how many captions the overlay shows: the last
	// finals, and the interim when there is one.
	overlayLines = 3

	overlayTextDefault   = 28
	overlayTextMin       = 16
	overlayTextMax       = 72
	overlayTextStep      = 4
	overlayWidthDefault  = 760
	overlayHeightDefault = 200
	overlayWidthMin      = 320
	overlayWidthMax      = 3840
	overlayWidthStep     = 80
	overlayHeightMin     = 100

	// overlaySaveDelay is how long the overlay's size and place must stay
	// still, while a person drags it, before they are saved.
	overlaySaveDelay = 300 * time.Millisecond
	// overlayAboveTimeout bounds the wait for the window manager to put
	// the overlay above other windows before the status says it did not.
	overlayAboveTimeout = 10 * time.Second

	prefOverlayText   = "overlay.textSize"
	prefOverlayWidth  = "overlay.width"
	prefOverlayHeight = "overlay.height"
	prefOverlayPlaced = "overlay.placed"
	prefOverlayX      = "overlay.x"
	prefOverlayY      = "overlay.y"
)

// Why the overlay is not kept above other windows, in plain words, to
// follow overlayNotAbove; "" means it is.
const (
	overlayNotAbove  = "The caption overlay is shown, but not kept above other windows: "
	aboveUnsupported = "this desktop gives apps no way to ask for it."
	aboveWayland     = "on Wayland only the desktop can do that; use the overlay's window menu (Always on top), if your desktop has one."
	aboveNoWM        = "no window manager is running to do it."
	aboveWMCannot    = "the window manager cannot do it."
	aboveWMIgnored   = "the window manager did not do it."
	aboveNoX         = "Earshot could not reach the X server to ask for it."
)

// Shortcuts of the overlay window itself, besides overlayShortcut,
// which hides it.
var (
	overlaySmallerShortcut  = ctrl(fyne.KeyMinus)
	overlayLargerShortcut   = ctrl(fyne.KeyEqual)
	overlayNarrowerShortcut = ctrl(fyne.KeyLeftBracket)
	overlayWiderShortcut    = ctrl(fyne.KeyRightBracket)
)

// overlayLine is one caption of the overlay.
type overlayLine struct {
	speaker string              // as the caption view labels it ("Speaker 1", "You"); "" for none
	color   fyne.ThemeColorName // the speaker's colour in the caption view
	text    string
}

// overlay is the caption overlay: a second, compact window that shows the
// last lines of the live captions in large text, kept above other windows
// where the desktop allows it (overlay_x11.go), so that a person can
// follow a call in another app. Its text size, size and place are kept in
// Fyne's preferences and restored when it is shown again, in this run or
// the next. Closing its window only hides it.
//
// Its fields are touched only on the UI goroutine. The window is made the
// first time the overlay is shown.
type overlay struct {
	app    *App
	button *widget.Button // the Captions tab's toggle

	window   fyne.Window
	text     *widget.RichText
	area     *fyne.Container          // holds text at its bottom
	themed   *container.ThemeOverride // sizes the captions' text
	bar      *fyne.Container
	smaller  *widget.Button
	larger   *widget.Button
	narrower *widget.Button
	wider    *widget.Button

	finals  []overlayLine // the last finals, oldest first
	interim overlayLine   // text "" when there is none

	shown    bool
	textSize float32
	size     fyne.Size // the window's, as last laid out or asked for
	placed   bool      // x, y hold where the window was last seen
	x, y     int       // in the desktop's coordinates
	// gen counts the showings: what the watcher of an earlier showing
	// reports arrives too late and is dropped.
	gen int
	// stopKeeping ends the watcher of this showing (overlay_x11.go).
	stopKeeping context.CancelFunc
	saveTimer   esclock.Timer
	// aboveProblem is why this showing is not above other windows, ""
	// when it is; aboveKnown is set once that is known.
	aboveProblem string
	aboveKnown   bool
}

// newOverlay makes the overlay of a, hidden, with its settings read from
// the preferences, and the toggle the Captions tab shows.
func newOverlay(a *App) *overlay {
	p := a.app.Preferences()
	o := &overlay{
		app:      a,
		textSize: clamp(float32(p.FloatWithFallback(prefOverlayText, overlayTextDefault)), overlayTextMin, overlayTextMax),
		size: fyne.NewSize(
			clamp(float32(p.FloatWithFallback(prefOverlayWidth, overlayWidthDefault)), overlayWidthMin, overlayWidthMax),
			max(float32(p.FloatWithFallback(prefOverlayHeight, overlayHeightDefault)), overlayHeightMin)),
		placed: p.Bool(prefOverlayPlaced),
		x:      p.Int(prefOverlayX),
		y:      p.Int(prefOverlayY),
	}
	o.button = widget.NewButtonWithIcon("Overlay", theme.VisibilityOffIcon(), o.toggle)
	return o
}

func clamp(v, lo, hi float32) float32 { return min(max(v, lo), hi) }

// ShowOverlay shows the caption overlay, as the Captions tab's Overlay
// button does. It is safe to call from any goroutine, and before
// ShowAndRun: the overlay opens on the UI goroutine, after the main
// window. Tools that screenshot the overlay use it.
func (a *App) ShowOverlay() { a.onUI(a.overlay.open) }

// toggle shows the overlay, or hides it (the Overlay button and
// Ctrl+Shift+O).
func (o *overlay) toggle() {
	if o.shown {
		o.hide()
	} else {
		o.open()
	}
}

// open shows the overlay with its saved text size and size, where it was.
func (o *overlay) open() {
	if o.shown {
		return
	}
	if o.window == nil {
		o.build()
	}
	o.shown = true
	o.gen++
	o.aboveProblem, o.aboveKnown = "", false
	o.window.Resize(o.size)
	o.render()
	o.window.Show()
	o.updateControls()
	o.keepAbove()
}

// hide hides the overlay, and saves its settings.
func (o *overlay) hide() {
	if !o.shown {
		return
	}
	o.shown = false
	o.gen++
	if o.stopKeeping != nil {
		o.stopKeeping()
		o.stopKeeping = nil
	}
	o.window.Hide()
	o.save()
	o.updateControls()
}

// build makes the overlay's window: the captions over a row of small
// controls.
func (o *overlay) build() {
	w := o.app.app.NewWindow(overlayTitle)
	w.SetIcon(icon)
	// Unpadded, so that the content is the whole window and the size
	// laid out is the size to restore.
	w.SetPadded(false)

	o.text = widget.NewRichText()
	o.text.Wrapping = fyne.TextWrapWord
	o.area = container.New(bottomLayout{}, o.text)
	o.themed = container.NewThemeOverride(o.area, overlayTheme{o: o})

	o.smaller = widget.NewButton("A−", func() { o.nudgeText(-overlayTextStep) })
	o.larger = widget.NewButton("A+", func() { o.nudgeText(overlayTextStep) })
	o.narrower = widget.NewButton("Narrower", func() { o.nudgeWidth(-overlayWidthStep) })
	o.wider = widget.NewButton("Wider", func() { o.nudgeWidth(overlayWidthStep) })
	for _, b := range []*widget.Button{o.smaller, o.larger, o.narrower, o.wider} {
		b.Importance = widget.LowImportance
	}
	o.bar = container.NewHBox(layout.NewSpacer(), o.smaller, o.larger, widget.NewSeparator(), o.narrower, o.wider)
	content := container.NewBorder(nil, o.bar, nil, nil, o.themed)
	w.SetContent(container.New(overlayLayout{o: o}, container.NewPadded(content)))

	w.SetCloseIntercept(o.hide)
	for _, sc := range []fyne.Shortcut{overlayShortcut, overlaySmallerShortcut, overlayLargerShortcut, overlayNarrowerShortcut, overlayWiderShortcut} {
		w.Canvas().AddShortcut(sc, o.typedShortcut)
	}
	if dw, ok := w.(desktop.Window); ok {
		// GLFW asks the desktop before the window first appears: on
		// Windows and macOS that is all it takes; on X11 the window
		// manager forgets it when the window is hidden, so keepAbove
		// asks again at every showing.
		dw.RequestAlwaysOnTop()
		if o.placed {
			dw.RequestPosition(o.x, o.y)
		}
	}
	o.window = w
}

// typedShortcut does what a shortcut typed in the overlay's window asks.
func (o *overlay) typedShortcut(sc fyne.Shortcut) {
	switch sc.ShortcutName() {
	case overlayShortcut.ShortcutName():
		o.toggle()
	case overlaySmallerShortcut.ShortcutName():
		o.nudgeText(-overlayTextStep)
	case overlayLargerShortcut.ShortcutName():
		o.nudgeText(overlayTextStep)
	case overlayNarrowerShortcut.ShortcutName():
		o.nudgeWidth(-overlayWidthStep)
	case overlayWiderShortcut.ShortcutName():
		o.nudgeWidth(overlayWidthStep)
	}
}

// updateControls shows on the toggle whether the overlay is shown, and
// enables the overlay's controls that can still change something.
func (o *overlay) updateControls() {
	if o.shown {
		o.button.SetIcon(theme.VisibilityIcon())
		o.button.Importance = widget.HighImportance
	} else {
		o.button.SetIcon(theme.VisibilityOffIcon())
		o.button.Importance = widget.MediumImportance
	}
	o.button.Refresh()
	if o.window == nil {
		return
	}
	enable(o.smaller, o.textSize > overlayTextMin)
	enable(o.larger, o.textSize < overlayTextMax)
	enable(o.narrower, o.size.Width > overlayWidthMin)
	enable(o.wider, o.size.Width < overlayWidthMax)
}

// nudgeText makes the captions' text larger or smaller by step points.
// The window's height follows, so that as many lines fit as before.
func (o *overlay) nudgeText(step float32) {
	size := clamp(o.textSize+step, overlayTextMin, overlayTextMax)
	if size == o.textSize || o.window == nil {
		return
	}
	bar := o.bar.MinSize().Height + 2*theme.Padding()
	captions := max(o.size.Height-bar, 0) * size / o.textSize
	o.textSize = size
	o.size.Height = max(bar+captions, overlayHeightMin)
	o.themed.Refresh()
	o.window.Resize(o.size)
	o.render()
	o.save()
	o.updateControls()
}

// nudgeWidth makes the window wider or narrower by step.
func (o *overlay) nudgeWidth(step float32) {
	width := clamp(o.size.Width+step, overlayWidthMin, overlayWidthMax)
	if width == o.size.Width || o.window == nil {
		return
	}
	o.size.Width = width
	o.window.Resize(o.size)
	o.render()
	o.save()
	o.updateControls()
}

// resized notes the window's size after a person resized it, and saves
// it once they stop.
func (o *overlay) resized() {
	if !o.shown {
		return
	}
	size := o.window.Canvas().Size()
	if size == o.size || size.Width <= 0 || size.Height <= 0 {
		return
	}
	o.size = size
	o.saveSoon()
	o.updateControls()
}

// moved notes where the window of showing gen was seen, and saves it
// once it stops moving.
func (o *overlay) moved(gen, x, y int) {
	if gen != o.gen || (o.placed && x == o.x && y == o.y) {
		return
	}
	o.placed, o.x, o.y = true, x, y
	o.saveSoon()
}

// saveSoon saves the settings once they have not changed for
// overlaySaveDelay.
func (o *overlay) saveSoon() {
	if o.saveTimer != nil {
		o.saveTimer.Reset(overlaySaveDelay)
		return
	}
	o.saveTimer = o.app.clock.AfterFunc(overlaySaveDelay, func() { o.app.onUI(o.save) })
}

// save keeps the overlay's text size, size and place in the
// preferences, writing only what changed.
func (o *overlay) save() {
	p := o.app.app.Preferences()
	setFloat := func(key string, v float32) {
		if p.Float(key) != float64(v) {
			p.SetFloat(key, float64(v))
		}
	}
	setFloat(prefOverlayText, o.textSize)
	setFloat(prefOverlayWidth, o.size.Width)
	setFloat(prefOverlayHeight, o.size.Height)
	if o.placed && (!p.Bool(prefOverlayPlaced) || p.Int(prefOverlayX) != o.x || p.Int(prefOverlayY) != o.y) {
		p.SetInt(prefOverlayX, o.x)
		p.SetInt(prefOverlayY, o.y)
		p.SetBool(prefOverlayPlaced, true)
	}
}

// follow shows the caption view's last lines: its last finals and its
// interim, with the speaker labels it shows. The Captions tab calls it
// wherever it commits the view of a live session.
func (o *overlay) follow(v *captionView) {
	rows := v.list.Objects
	if n := len(rows) - overlayLines; n > 0 {
		rows = rows[n:]
	}
	finals := make([]overlayLine, 0, len(rows))
	for _, r := range rows {
		if row, ok := r.(*fyne.Container); ok {
			finals = append(finals, overlayLineOf(row))
		}
	}
	var interim overlayLine
	if v.interim.Visible() {
		interim = overlayLineOf(v.interim)
	}
	o.setCaptions(finals, interim)
}

// overlayLineOf reads a row of the caption view (newCaptionRow).
func overlayLineOf(row *fyne.Container) overlayLine {
	var l overlayLine
	if len(row.Objects) < 3 {
		return l
	}
	if x, ok := row.Objects[2].(*widget.Label); ok {
		l.text = strings.TrimSpace(x.Text)
	}
	if s, ok := row.Objects[1].(*widget.RichText); ok && s.Visible() {
		l.speaker = strings.TrimSpace(s.String())
		if len(s.Segments) > 0 {
			if seg, ok := s.Segments[0].(*widget.TextSegment); ok {
				l.color = seg.Style.ColorName
			}
		}
	}
	return l
}

// setCaptions shows the last finals, oldest first, and the interim
// (text "" for none): as many of them as fit in overlayLines.
func (o *overlay) setCaptions(finals []overlayLine, interim overlayLine) {
	keep := overlayLines
	if interim.text != "" {
		keep--
	}
	if n := len(finals) - keep; n > 0 {
		finals = finals[n:]
	}
	if interim == o.interim && slices.Equal(finals, o.finals) {
		return // a batch of levels or states: nothing to paint
	}
	o.finals = append(o.finals[:0], finals...)
	o.interim = interim
	if o.shown {
		o.render()
	}
}

// render puts the captions in the window. Their end is at the bottom:
// when they are too long for it, the window's top edge cuts the oldest
// words off.
func (o *overlay) render() {
	if o.window == nil {
		return
	}
	var segs []widget.RichTextSegment
	line := func(l overlayLine, interim bool) {
		if l.speaker != "" {
			color := l.color
			if color == "" {
				color = theme.ColorNameForeground
			}
			segs = append(segs, &widget.TextSegment{Text: l.speaker + ": ", Style: widget.RichTextStyle{
				Inline: true, ColorName: color, SizeName: theme.SizeNameText,
				TextStyle: fyne.TextStyle{Bold: true, Italic: interim},
			}})
		}
		style := widget.RichTextStyleParagraph
		style.TextStyle.Italic = interim
		segs = append(segs, &widget.TextSegment{Text: l.text, Style: style})
	}
	for _, l := range o.finals {
		line(l, false)
	}
	if o.interim.text != "" {
		line(o.interim, true)
	}
	if len(segs) == 0 {
		style := widget.RichTextStyleParagraph
		style.ColorName = theme.ColorNamePlaceHolder
		segs = append(segs, &widget.TextSegment{Text: overlayHint, Style: style})
	}
	o.text.Segments = segs
	o.text.Refresh()
	o.area.Refresh()
}

// lines reads back what the overlay shows, one string per caption:
// "Speaker: text", or the text alone, the interim marked with a leading
// "~". Tests use it.
func (o *overlay) lines() []string {
	if o.text == nil {
		return nil
	}
	var out []string
	cur := ""
	for _, s := range o.text.Segments {
		t, ok := s.(*widget.TextSegment)
		if !ok {
			continue
		}
		if cur == "" && t.Style.TextStyle.Italic {
			cur = "~"
		}
		cur += t.Text
		if !t.Style.Inline {
			out = append(out, cur)
			cur = ""
		}
	}
	return out
}

// aboveResult takes what keeping showing gen above other windows came
// to: problem is why it is not, in plain words, or "". A problem is put
// in the Captions tab's status bar.
func (o *overlay) aboveResult(gen int, problem string) {
	if gen != o.gen || !o.shown {
		return
	}
	o.aboveProblem, o.aboveKnown = problem, true
	if problem != "" {
		o.app.log.Info("caption overlay not above other windows", "why", problem)
		o.app.captions.setStatus(overlayNotAbove+problem, widget.WarningImportance)
	}
}

// nativeContext is the overlay window's context of the platform
// (driver.X11WindowContext...), or nil when it has none (Fyne's test
// driver).
func (o *overlay) nativeContext() any {
	nw, ok := o.window.(driver.NativeWindow)
	if !ok {
		return nil
	}
	var ctx any
	nw.RunNative(func(c any) { ctx = c })
	return ctx
}

// aboveProblemOf says whether a window of the platform of ctx is kept
// above others by RequestAlwaysOnTop alone: "" if it is, else why not.
func aboveProblemOf(ctx any) string {
	switch ctx.(type) {
	case driver.WindowsWindowContext, driver.MacWindowContext:
		return ""
	case driver.WaylandWindowContext:
		return aboveWayland
	}
	return aboveUnsupported
}

// overlayTheme is the theme of the overlay's captions: the app's, with
// the text size the person chose.
type overlayTheme struct{ o *overlay }

func (t overlayTheme) base() fyne.Theme { return t.o.app.app.Settings().Theme() }

func (t overlayTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	return t.base().Color(n, v)
}

func (t overlayTheme) Font(s fyne.TextStyle) fyne.Resource     { return t.base().Font(s) }
func (t overlayTheme) Icon(n fyne.ThemeIconName) fyne.Resource { return t.base().Icon(n) }

func (t overlayTheme) Size(n fyne.ThemeSizeName) float32 {
	if n == theme.SizeNameText {
		return t.o.textSize
	}
	return t.base().Size(n)
}

// bottomLayout lays its objects out at the bottom of its space, each as
// high as its wrapped text, so that its end stays in view when it is
// higher than the space. Its minimum size is nothing: the window may be
// as small as a person likes.
type bottomLayout struct{}

func (bottomLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, obj := range objects {
		// Wrap at the width first: the height follows from it.
		obj.Resize(fyne.NewSize(size.Width, obj.Size().Height))
		h := obj.MinSize().Height
		obj.Resize(fyne.NewSize(size.Width, h))
		obj.Move(fyne.NewPos(0, size.Height-h))
	}
}

func (bottomLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.Size{} }

// overlayLayout fills the overlay's window with its content, and tells
// the overlay when a person resized the window.
type overlayLayout struct{ o *overlay }

func (l overlayLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, obj := range objects {
		obj.Move(fyne.NewPos(0, 0))
		obj.Resize(size)
	}
	l.o.resized()
}

func (l overlayLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, obj := range objects {
		m = m.Max(obj.MinSize())
	}
	return m
}
