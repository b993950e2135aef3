package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// tabKey is the shortcut that opens the tab at index i (from 0) with
// modifier: the tab's number, 1 to 9, as browsers and terminals number
// theirs.
func tabKey(i int, modifier fyne.KeyModifier) *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: fyne.KeyName(fmt.Sprint(i + 1)), Modifier: modifier}
}

// tabsMenu lists every tab, each with the shortcut that opens it:
// Ctrl+number (Cmd on macOS) and, in a submenu, Alt+number. Menu items,
// not the canvas, carry them: Fyne offers a shortcut to the menu before
// the focused widget, so they work while a text field has the keyboard.
// Fyne keeps one shortcut per item, hence the submenu for the second.
func (a *App) tabsMenu() *fyne.Menu {
	var byCtrl, byAlt []*fyne.MenuItem
	for i, tab := range a.tabs.Items {
		if i >= 9 {
			break // no digit left
		}
		open := func() { a.SelectTab(tab.Text) }
		ctrl := fyne.NewMenuItem(tab.Text, open)
		ctrl.Icon, ctrl.Shortcut = tab.Icon, tabKey(i, fyne.KeyModifierShortcutDefault)
		alt := fyne.NewMenuItem(tab.Text, open)
		alt.Icon, alt.Shortcut = tab.Icon, tabKey(i, fyne.KeyModifierAlt)
		byCtrl, byAlt = append(byCtrl, ctrl), append(byAlt, alt)
	}
	withAlt := fyne.NewMenuItem("With Alt and the number", nil)
	withAlt.ChildMenu = fyne.NewMenu("", byAlt...)
	return fyne.NewMenu("Tabs", append(byCtrl, fyne.NewMenuItemSeparator(), withAlt)...)
}
