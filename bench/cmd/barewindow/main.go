// Command barewindow opens an empty Fyne window titled "Bare": the
// baseline the app benchmark (benchtables -only app) measures beside
// Earshot, so the table shows what Earshot adds to what the toolkit costs
// by itself. The window has the size of Earshot's, since software
// rendering under Xvfb costs in proportion to the pixels drawn.
package main

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
)

func main() {
	w := app.NewWithID("app.earshot.BareWindow").NewWindow("Bare")
	w.Resize(fyne.NewSize(1100, 720))
	w.ShowAndRun()
}
