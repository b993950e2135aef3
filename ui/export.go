package ui

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// exportFormatNames name the export formats for people, in the order
// offered.
var exportFormatNames = []struct {
	f    sessions.ExportFormat
	name string
}{
	{sessions.ExportSRT, "SubRip subtitles (.srt)"},
	{sessions.ExportVTT, "WebVTT subtitles (.vtt)"},
	{sessions.ExportText, "Plain text (.txt)"},
	{sessions.ExportJSON, "JSON, the service's format (.json)"},
}

func exportFormatName(f sessions.ExportFormat) string {
	for _, x := range exportFormatNames {
		if x.f == f {
			return x.name
		}
	}
	return string(f)
}

func exportFormatByName(name string) (sessions.ExportFormat, bool) {
	for _, x := range exportFormatNames {
		if x.name == name {
			return x.f, true
		}
	}
	return "", false
}

// defaultExportFormat is the format the settings choose, SRT if they name
// none that is known.
func defaultExportFormat(s string) sessions.ExportFormat {
	if f, err := sessions.ParseExportFormat(s); err == nil {
		return f
	}
	return sessions.ExportSRT
}

// onExport exports the session shown (Ctrl+E).
func (c *captionsTab) onExport() {
	if c.shown.id == 0 {
		c.setStatus("Nothing to export yet: start live captions, open a file, or pick a past session.", widget.WarningImportance)
		return
	}
	c.exportSession(c.shown.id, c.shown.title)
}

// exportSession asks for a format, then for a file, and writes the
// session there.
func (c *captionsTab) exportSession(id int64, title string) {
	names := make([]string, len(exportFormatNames))
	for i, x := range exportFormatNames {
		names[i] = x.name
	}
	formats := widget.NewRadioGroup(names, nil)
	formats.Required = true
	formats.SetSelected(exportFormatName(defaultExportFormat(c.settings.ExportFormat)))
	d := dialog.NewCustomConfirm("Export “"+title+"”", "Choose file…", "Cancel",
		container.NewVBox(widget.NewLabel("Save the transcript as:"), formats),
		func(ok bool) {
			if !ok {
				return
			}
			f, known := exportFormatByName(formats.Selected)
			if !known {
				f = defaultExportFormat(c.settings.ExportFormat)
			}
			c.rememberExportFormat(f)
			c.chooseExportFile(id, title, f)
		}, c.app.window)
	d.Show()
}

// rememberExportFormat makes f the format the next export proposes (and
// the Settings tab shows), in the settings, when it is not already.
func (c *captionsTab) rememberExportFormat(f sessions.ExportFormat) {
	if defaultExportFormat(c.settings.ExportFormat) == f {
		return
	}
	c.app.changeSettings(func(s *store.Settings) { s.ExportFormat = string(f) },
		func(err error) { c.showError("remember the export format", err) })
}

// chooseExportFile asks where to save the export. A file name ending in
// another known format's extension chooses that format.
func (c *captionsTab) chooseExportFile(id int64, title string, f sessions.ExportFormat) {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			c.showError("choose where to export", saveChoiceError{err})
			return
		}
		if w == nil {
			return // dismissed
		}
		format := f
		if g, err := sessions.ParseExportFormat(w.URI().Extension()); err == nil {
			format = g
		}
		c.writeExport(id, format, w, w.URI().Name())
	}, c.app.window)
	d.SetFileName(exportFileName(title, f))
	d.SetFilter(storage.NewExtensionFileFilter([]string{f.Extension()}))
	// No Resize: Fyne's FileDialog.Resize reads a window that only Show
	// builds (and never builds when a desktop portal shows its own), so
	// sizing it panics; it opens at a size that fits its content.
	d.Show()
}

// exportFileName suggests a file name for a session's export: its title
// without characters file systems refuse.
func exportFileName(title string, f sessions.ExportFormat) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || unicode.IsControl(r) {
			return '-'
		}
		return r
	}, strings.TrimSpace(title))
	if ext := filepath.Ext(name); slices.Contains(audioExtensions, strings.ToLower(ext)) {
		name = strings.TrimSuffix(name, ext) // talk.wav becomes talk.srt
	}
	name = strings.Trim(name, ". ")
	if name == "" {
		name = "transcript"
	}
	return name + f.Extension()
}

// writeExport writes session id in format f to w, off the UI goroutine,
// and closes w; name is what the status bar calls the file.
func (c *captionsTab) writeExport(id int64, f sessions.ExportFormat, w io.WriteCloser, name string) {
	c.setStatus("Exporting to "+name+"…", widget.MediumImportance)
	started := c.app.goAsync(func(ctx context.Context) {
		err := c.app.ws.Export(ctx, id, f, w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		c.app.onUI(func() {
			if err != nil {
				c.showError("export "+name, err)
				return
			}
			c.setStatus("Saved "+name+" ("+exportFormatName(f)+").", widget.SuccessImportance)
		})
	})
	if !started {
		_ = w.Close()
	}
}
