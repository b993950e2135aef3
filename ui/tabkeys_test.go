package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// TestEveryTabReachableByKey: Ctrl+number and Alt+number open every tab,
// from any tab and with the keyboard in a text field, and the menu bar
// lists each tab with its shortcut; the shortcuts there before still
// work.
func TestEveryTabReachableByKey(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	var names []string
	h.ui(func() {
		for _, it := range h.tabs.Items {
			names = append(names, it.Text)
		}
	})
	if len(names) < 8 {
		t.Fatalf("tabs %q", names)
	}
	for _, mod := range []fyne.KeyModifier{fyne.KeyModifierShortcutDefault, fyne.KeyModifierAlt} {
		for i, name := range names {
			// From the tab after it, with the keyboard in the Voices text.
			h.ui(func() {
				h.tabs.SelectIndex((i + 1) % len(names))
				h.window.Canvas().Focus(h.voices.controls.text.entry)
			})
			sc := &desktop.CustomShortcut{KeyName: fyne.KeyName(string(rune('1' + i))), Modifier: mod}
			h.press(sc)
			h.ui(func() {
				if got := h.tabs.Selected(); got == nil || got.Text != name {
					t.Errorf("%s opened %v, want %s", sc.ShortcutName(), got, name)
				}
			})
		}
	}
	// The menu bar names every tab with its shortcut.
	listed := map[string]int{}
	h.ui(func() {
		var visit func(m *fyne.Menu)
		visit = func(m *fyne.Menu) {
			for _, it := range m.Items {
				if it.Shortcut != nil {
					listed[it.Label]++
				}
				if it.ChildMenu != nil {
					visit(it.ChildMenu)
				}
			}
		}
		for _, m := range h.window.MainMenu().Items {
			visit(m)
		}
	})
	for _, name := range names {
		if listed[name] < 2 {
			t.Errorf("the menu lists %q with %d shortcuts, want Ctrl and Alt", name, listed[name])
		}
	}
	// Ctrl+H still opens History; Ctrl+Shift+I the inspector.
	h.ui(func() { h.tabs.SelectIndex(0) })
	h.press(historyShortcut)
	h.ui(func() {
		if sel := h.tabs.Selected(); sel == nil || sel.Text != "History" {
			t.Errorf("Ctrl+H opened %v", sel)
		}
	})
	h.press(inspectorShortcut)
	h.ui(func() {
		if !h.wire.visible {
			t.Error("Ctrl+Shift+I did not open the inspector")
		}
	})
}

// TestNoShortcutTakenTwice: Fyne runs one action per shortcut, so two
// menu items with the same one would leave one of them dead.
func TestNoShortcutTakenTwice(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t)
	seen := map[string]string{}
	h.ui(func() {
		var visit func(path string, m *fyne.Menu)
		visit = func(path string, m *fyne.Menu) {
			for _, it := range m.Items {
				if it.Shortcut != nil {
					name := it.Shortcut.ShortcutName()
					if before, ok := seen[name]; ok {
						t.Errorf("%s is taken by %q and %q", name, before, path+it.Label)
					}
					seen[name] = path + it.Label
				}
				if it.ChildMenu != nil {
					visit(path+it.Label+" > ", it.ChildMenu)
				}
			}
		}
		for _, m := range h.window.MainMenu().Items {
			visit(m.Label+" > ", m)
		}
	})
}

// TestTabLeavesEveryTextField: Tab moves the keyboard on from every text
// field of every tab, multi-line ones included (Fyne's multi-line entry
// takes Tab as text, and held the keyboard in the Voices text box).
func TestTabLeavesEveryTextField(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t)
	var stuck []string
	checked := 0
	h.ui(func() {
		for i, item := range h.tabs.Items {
			h.tabs.SelectIndex(i)
			walk(item.Content, func(o fyne.CanvasObject) {
				tb, ok := o.(fyne.Tabbable)
				if !ok {
					return
				}
				checked++
				if tb.AcceptsTab() {
					stuck = append(stuck, item.Text+": "+describeField(o))
				}
			})
		}
	})
	if checked == 0 {
		t.Fatal("no text field found")
	}
	if len(stuck) > 0 {
		t.Errorf("Tab stays in these fields: %s", strings.Join(stuck, "; "))
	}
	// As the desktop driver does: Tab in the Voices text box moves on.
	h.ui(func() {
		c := h.window.Canvas()
		h.tabs.SelectIndex(2)
		box := h.voices.controls.text.entry
		c.Focus(box)
		if tb, ok := c.Focused().(fyne.Tabbable); ok && tb.AcceptsTab() {
			tb.(fyne.Focusable).TypedKey(&fyne.KeyEvent{Name: fyne.KeyTab})
		} else {
			c.FocusNext()
		}
		if c.Focused() == box {
			t.Error("Tab left the keyboard in the Voices text box")
		}
		if strings.Contains(box.Text, "\t") {
			t.Error("Tab was typed into the Voices text box")
		}
	})
}

// describeField names a text field by its placeholder.
func describeField(o fyne.CanvasObject) string {
	if e, ok := o.(*boundedEntry); ok {
		return "“" + e.PlaceHolder + "”"
	}
	return "a field"
}
