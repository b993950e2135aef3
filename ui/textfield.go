package ui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/textseg"
)

// Limits of the text fields, in bytes. Fyne's Entry lays its whole text
// out again on each change, in time that grows faster than the text: a
// word-wrapped 64 kB text took 0.9 s to paste and 0.3 s for each key
// typed, 256 kB took 9 s and 5 s, and 1 MB froze the window for minutes.
// So no field takes, by a paste, more than it edits within a frame or
// two; each tab says what it does with a longer one.
const (
	// editorLimit bounds a multi-line, word-wrapped field.
	editorLimit = 16 << 10
	// lineLimit bounds a single-line field of free text (key terms).
	lineLimit = 8 << 10
	// shortLimit bounds a search, a title, an address or a key.
	shortLimit = 2 << 10
)

// boundedEntry is an Entry that a paste never fills beyond limit bytes:
// a paste that would is handed to refused, on the UI goroutine, and the
// field is left as it was. Ctrl+V and the field's own menu both paste
// through TypedShortcut.
type boundedEntry struct {
	widget.Entry
	limit   int
	refused func(pasted string)
}

// newBoundedEntry returns a single-line field.
func newBoundedEntry(limit int, refused func(pasted string)) *boundedEntry {
	e := &boundedEntry{limit: limit, refused: refused}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	return e
}

// newBoundedEditor returns a multi-line field that wraps at words.
func newBoundedEditor(limit int, refused func(pasted string)) *boundedEntry {
	e := &boundedEntry{limit: limit, refused: refused}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// newBoundedPassword returns a single-line field that hides its text.
func newBoundedPassword(limit int, refused func(pasted string)) *boundedEntry {
	e := newBoundedEntry(limit, refused)
	e.Password = true
	return e
}

// AcceptsTab reports false, for a multi-line field too: Tab moves the
// keyboard to the next control, Shift+Tab to the one before, as in every
// other field. Fyne's multi-line entry takes Tab as text, which left the
// keyboard stuck in the field; a text to speak or analyse, or a prompt,
// has no use for a tab character, and a pasted one is kept.
func (e *boundedEntry) AcceptsTab() bool { return false }

// TypedShortcut pastes only what fits.
func (e *boundedEntry) TypedShortcut(s fyne.Shortcut) {
	if p, ok := s.(*fyne.ShortcutPaste); ok {
		if p.Clipboard == nil || e.Disabled() {
			return // Fyne's entry pastes into a disabled field
		}
		pasted := p.Clipboard.Content()
		if len(e.Text)-len(e.SelectedText())+len(pasted) > e.limit {
			if e.refused != nil {
				e.refused(pasted)
			}
			return
		}
	}
	e.Entry.TypedShortcut(s)
}

// fits reports whether text can be set in the field.
func (e *boundedEntry) fits(text string) bool { return len(text) <= e.limit }

// tooLongWords says that a paste of n bytes was not taken by a field
// that holds at most limit.
func tooLongWords(field string, n, limit int) string {
	return fmt.Sprintf("Not pasted: the text is %s, and %s takes at most %s.", megabytes(int64(n)), field, megabytes(int64(limit)))
}

// withPaste returns the field's text with pasted in place of the
// selection, else at the cursor, as a paste would leave it.
func (e *boundedEntry) withPaste(pasted string) string {
	runes := []rune(e.Text)
	pos := min(max(e.CursorTextOffset(), 0), len(runes))
	if sel := []rune(e.SelectedText()); len(sel) > 0 {
		switch {
		case pos >= len(sel) && string(runes[pos-len(sel):pos]) == string(sel):
			pos -= len(sel)
			runes = append(runes[:pos:pos], runes[pos+len(sel):]...)
		case pos+len(sel) <= len(runes) && string(runes[pos:pos+len(sel)]) == string(sel):
			runes = append(runes[:pos:pos], runes[pos+len(sel):]...)
		}
	}
	return string(runes[:pos]) + pasted + string(runes[pos:])
}

// firstSentences returns the longest start of text of at most n bytes
// that ends a sentence, else a word; "" when not even a word fits.
func firstSentences(text string, n int) string {
	if len(text) <= n {
		return text
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	head := text[:n]
	if end := textseg.Complete(head); end > 0 {
		return strings.TrimRightFunc(head[:end], unicode.IsSpace)
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
		return strings.TrimRightFunc(head[:i], unicode.IsSpace)
	}
	return ""
}

// docField is a multi-line field for a document. Text up to editorLimit
// is edited in its entry; a longer text, pasted or set, is kept aside as
// the document, shown by its size and its start, with Clear to put it
// away and give the entry back. The longest document it keeps is most
// bytes: overMost decides what becomes of a longer one, returning the
// part to keep ("" for none) and the words to say; with no overMost it
// is refused. Touched only on the UI goroutine.
type docField struct {
	entry    *boundedEntry
	box      *fyne.Container // entry or the held document
	heldView *fyne.Container
	info     *widget.Label
	start    *widget.Label
	clear    *widget.Button

	held     string
	most     int
	what     string // the document's name in the held view: "Pasted text"
	overMost func(text string) (keep, words string)
	// changed is called when the text changes, by typing or otherwise.
	changed func()
	// told shows what the field did with a long paste.
	told func(words string, imp widget.Importance)
}

// newDocField returns a field for documents of at most most bytes, which
// shows what it did with a long paste through told.
func newDocField(most int, what string, told func(string, widget.Importance)) *docField {
	f := &docField{most: most, what: what, told: told}
	f.entry = newBoundedEditor(editorLimit, f.onLongPaste)
	f.entry.OnChanged = func(string) { f.notify() }
	f.info = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	f.info.Truncation = fyne.TextTruncateEllipsis
	f.start = widget.NewLabel("")
	f.start.Wrapping = fyne.TextWrapWord
	f.start.TextStyle = fyne.TextStyle{Italic: true}
	f.clear = widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), func() {
		f.SetText("")
		f.told("Cleared the "+strings.ToLower(f.what)+".", widget.MediumImportance)
	})
	note := widget.NewLabel(fmt.Sprintf("Too long to edit here (the box edits up to %s), so Earshot keeps it as it is. Clear puts it away. It starts:", megabytes(editorLimit)))
	note.Wrapping = fyne.TextWrapWord
	start := container.NewVScroll(f.start)
	start.SetMinSize(fyne.NewSize(0, 80))
	f.heldView = container.NewBorder(
		container.NewVBox(container.NewBorder(nil, nil, nil, f.clear, f.info), note), nil, nil, nil, start)
	f.heldView.Hide()
	f.box = container.NewStack(f.entry, f.heldView)
	return f
}

// Text returns the document: the text kept aside, else the entry's.
func (f *docField) Text() string {
	if f.held != "" {
		return f.held
	}
	return f.entry.Text
}

// SetText sets the document, kept aside when the entry would choke on
// it.
func (f *docField) SetText(text string) {
	if f.entry.fits(text) {
		f.held = ""
		f.heldView.Hide()
		f.entry.Show()
		f.entry.SetText(text) // calls notify
		return
	}
	f.hold(text)
}

// Held reports whether the document is kept aside.
func (f *docField) Held() bool { return f.held != "" }

func (f *docField) hold(text string) {
	f.held = text
	f.info.SetText(f.what + " · " + megabytes(int64(len(text))))
	f.start.SetText(preview(text, heldPreviewBytes) + " …")
	f.entry.SetText("")
	f.entry.Hide()
	f.heldView.Show()
	f.notify()
}

func (f *docField) notify() {
	if f.changed != nil {
		f.changed()
	}
}

// onLongPaste takes a paste too long for the entry: the text with the
// paste in it is kept aside, or what overMost keeps of it.
func (f *docField) onLongPaste(pasted string) {
	text := f.entry.withPaste(pasted)
	if len(text) > f.most {
		keep, words := "", tooLongWords("this box", len(text), f.most)
		if f.overMost != nil {
			keep, words = f.overMost(text)
		}
		if keep == "" {
			f.told(words, widget.WarningImportance)
			return
		}
		f.SetText(keep)
		f.told(words, widget.WarningImportance)
		return
	}
	f.hold(text)
	f.told("Pasted "+megabytes(int64(len(text)))+" of text.", widget.MediumImportance)
}

// enable enables or disables the field.
func (f *docField) enable(on bool) {
	enable(f.entry, on)
	enable(f.clear, on)
}
