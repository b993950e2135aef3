package ui

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"
)

// Earshot's file dialog: a field where a path can be typed or pasted
// whole, and Browse…, which opens the toolkit's file chooser and takes
// its choice. Fyne's own open dialog has no path field, and its save
// dialog joins whatever is typed to the folder it shows.

// fileDialogFolderKey is the preference where Fyne's file dialogs keep
// the folder they last showed. Earshot's dialog starts from it too, and
// keeps it up to date, so both always start in the same place.
const fileDialogFolderKey = "fyne:fileDialogLastFolder"

// pathRequest is what a file dialog asks for.
type pathRequest struct {
	title   string // "Open an audio file"
	confirm string // the button that accepts: "Open", "Save"
	// save asks for a file to write: it may not exist yet, and one that
	// does is replaced only once the person agrees.
	save bool
	// extensions are those the chooser lists (with the dot). A file saved
	// without an extension gets the first.
	extensions []string
	name       string // the file name proposed when saving
}

// pathDialog is one file dialog on screen.
type pathDialog struct {
	app    *App
	req    pathRequest
	chosen func(path string)
	d      *dialog.CustomDialog
	path   *boundedEntry
	// problem says why the path typed cannot be used, under the field.
	problem *widget.Label
}

// askPath shows a file dialog for req, and gives the path chosen (absolute
// and checked) to chosen, on the UI goroutine.
func (a *App) askPath(req pathRequest, chosen func(path string)) {
	p := &pathDialog{app: a, req: req, chosen: chosen}
	p.path = newBoundedEntry(lineLimit, func(string) {
		p.tell("This path is too long to be a file's.")
	})
	p.path.SetPlaceHolder("A file's full path, such as " + filepath.Join(homeFolder(), "meeting"+firstOr(req.extensions, ".wav")))
	start := a.startFolder()
	if req.save {
		p.path.SetText(filepath.Join(start, req.name))
	} else {
		p.path.SetText(start + string(filepath.Separator))
	}
	p.path.OnSubmitted = func(string) { p.accept() }
	p.path.OnChanged = func(string) { p.tell("") }
	p.problem = widget.NewLabel("")
	p.problem.Importance = widget.DangerImportance
	p.problem.Wrapping = fyne.TextWrapWord
	p.problem.Hide()

	browse := widget.NewButton("Browse…", p.browse)
	ok := widget.NewButton(req.confirm, p.accept)
	ok.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", func() { p.d.Hide() })
	hint := "Type or paste the file's path, or browse for it."
	if req.save {
		hint = "Type or paste where to save, or browse for a folder."
	}
	content := container.NewVBox(
		widget.NewLabel(hint),
		container.NewBorder(nil, nil, nil, browse, p.path),
		p.problem,
	)
	p.d = dialog.NewCustomWithoutButtons(req.title, content, a.window)
	p.d.SetButtons([]fyne.CanvasObject{cancel, ok})
	p.d.Resize(fyne.NewSize(560, content.MinSize().Height+120))
	p.d.Show()
	a.window.Canvas().Focus(p.path)
	p.path.CursorColumn = len([]rune(p.path.Text))
	p.path.Refresh()
}

// tell shows why the path cannot be used ("" hides it).
func (p *pathDialog) tell(why string) {
	if why == "" {
		p.problem.Hide()
		return
	}
	p.problem.SetText(why)
	p.problem.Show()
}

// accept checks the path typed and, when it can be used, closes the
// dialog and gives it on; when it cannot, the dialog stays, saying why.
func (p *pathDialog) accept() {
	path, why := checkPath(p.path.Text, p.req, p.app.startFolder())
	if why != "" {
		p.tell(why)
		return
	}
	if p.req.save {
		if _, err := os.Stat(path); err == nil {
			dialog.ShowConfirm("Replace the file?", "“"+filepath.Base(path)+"” already exists in "+filepath.Dir(path)+". Replace it?",
				func(yes bool) {
					if yes {
						p.done(path)
					}
				}, p.app.window)
			return
		}
	}
	p.done(path)
}

// done closes the dialog with path chosen, and remembers its folder.
func (p *pathDialog) done(path string) {
	p.d.Hide()
	p.app.rememberFolder(filepath.Dir(path))
	p.chosen(path)
}

// browse opens the toolkit's file chooser in the folder of the path
// typed; its choice closes this dialog too, and dismissing it comes back
// here.
func (p *pathDialog) browse() {
	folder, name := p.app.startFolder(), p.req.name
	if typed := expandHome(strings.TrimSpace(p.path.Text)); filepath.IsAbs(typed) {
		if isFolder(typed) {
			folder = typed
		} else if isFolder(filepath.Dir(typed)) {
			folder, name = filepath.Dir(typed), filepath.Base(typed)
		}
	}
	var loc fyne.ListableURI
	if l, err := storage.ListerForURI(storage.NewFileURI(folder)); err == nil {
		loc = l
	}
	p.d.Hide()
	back := func() { p.d.Show() }
	took := func(uri fyne.URI) {
		if uri.Scheme() != "file" {
			p.d.Show()
			p.tell("Earshot can use files on this computer only.")
			return
		}
		p.app.rememberFolder(filepath.Dir(uri.Path()))
		p.chosen(uri.Path())
	}
	var fd *dialog.FileDialog
	if p.req.save {
		fd = dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
			switch {
			case err != nil:
				back()
				p.tell(plainError(saveChoiceError{err}))
			case w == nil:
				back()
			default:
				uri := w.URI()
				// The caller writes the file itself: the chooser's
				// empty file is only closed here.
				if cerr := w.Close(); cerr != nil {
					p.app.log.Warn("close the chosen file", "err", cerr)
				}
				took(uri)
			}
		}, p.app.window)
		fd.SetFileName(name)
	} else {
		fd = dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			switch {
			case err != nil:
				back()
				p.tell(plainError(err))
			case r == nil:
				back()
			default:
				uri := r.URI()
				if cerr := r.Close(); cerr != nil {
					p.app.log.Warn("close the chosen file", "err", cerr)
				}
				took(uri)
			}
		}, p.app.window)
	}
	if len(p.req.extensions) > 0 {
		fd.SetFilter(storage.NewExtensionFileFilter(p.req.extensions))
	}
	if loc != nil {
		fd.SetLocation(loc)
	}
	fd.SetConfirmText(p.req.confirm)
	// No Resize: Fyne's FileDialog.Resize reads a window that only Show
	// builds (and never builds when a desktop portal shows its own), so
	// sizing it panics; it opens at a size that fits its content.
	fd.Show()
}

// checkPath turns what was typed into an absolute path a request can use,
// or says in words why it cannot. A relative path is taken from folder;
// "~" is the home folder. Saving into a folder uses the proposed name, and
// a name without an extension gets the first of the request's.
func checkPath(typed string, req pathRequest, folder string) (string, string) {
	typed = strings.TrimSpace(typed)
	if typed == "" {
		return "", "Type a file's path, or press Browse…"
	}
	if strings.ContainsRune(typed, 0) {
		return "", "A path cannot contain a NUL character."
	}
	path := expandHome(typed)
	if !filepath.IsAbs(path) {
		path = filepath.Join(folder, path)
	}
	path = filepath.Clean(path)
	trailingSlash := strings.HasSuffix(typed, "/") || strings.HasSuffix(typed, string(filepath.Separator))
	info, err := os.Stat(path)
	if !req.save {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", "There is no file at " + path + "."
		case errors.Is(err, fs.ErrPermission):
			return "", "Earshot is not allowed to look at " + path + "."
		case err != nil:
			return "", "This path cannot be opened: " + lowerFirst(plainError(err))
		case info.IsDir():
			return "", "This is a folder. Add the file's name, or press Browse… to pick one in it."
		}
		return path, ""
	}
	if err == nil && info.IsDir() || trailingSlash {
		path = filepath.Join(path, req.name)
	}
	dir := filepath.Dir(path)
	if d, err := os.Stat(dir); err != nil || !d.IsDir() {
		return "", "There is no folder " + dir + ". Create it first, or pick another."
	}
	if filepath.Ext(path) == "" && len(req.extensions) > 0 {
		path += req.extensions[0]
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return "", "There is a folder named " + filepath.Base(path) + " there. Choose another name."
	}
	return path, ""
}

// expandHome makes a leading "~" the home folder.
func expandHome(path string) string {
	if path == "~" {
		return homeFolder()
	}
	if rest, ok := strings.CutPrefix(path, "~"+string(filepath.Separator)); ok {
		return filepath.Join(homeFolder(), rest)
	}
	return path
}

// homeFolder is the user's home folder, or the working folder when there
// is none.
func homeFolder() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return string(filepath.Separator)
}

func isFolder(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func firstOr(s []string, or string) string {
	if len(s) > 0 {
		return s[0]
	}
	return or
}

// startFolder is the folder file dialogs start from: the one last used,
// when it still exists, else the home folder.
func (a *App) startFolder() string {
	if u, err := storage.ParseURI(a.app.Preferences().String(fileDialogFolderKey)); err == nil && u.Scheme() == "file" && isFolder(u.Path()) {
		return u.Path()
	}
	return homeFolder()
}

// rememberFolder makes dir the folder the next file dialog starts from.
func (a *App) rememberFolder(dir string) {
	a.app.Preferences().SetString(fileDialogFolderKey, storage.NewFileURI(dir).String())
}
