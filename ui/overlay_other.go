//go:build !linux || !cgo || wayland

package ui

// keepAbove says whether the overlay is kept above other windows. Off
// X11, or in a build without cgo, Earshot has no way to ask again at
// each showing: Fyne's RequestAlwaysOnTop, asked before the window first
// appeared, is all there is. Windows and macOS honour it; Wayland lets
// only the desktop do it.
func (o *overlay) keepAbove() {
	o.aboveResult(o.gen, aboveProblemOf(o.nativeContext()))
}
