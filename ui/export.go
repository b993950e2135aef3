package ui

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
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

// exportFormatLabel names f without its extension, for the status bar,
// where the file's name shows the extension: "WebVTT subtitles".
func exportFormatLabel(f sessions.ExportFormat) string {
	name := exportFormatName(f)
	if i := strings.LastIndex(name, " ("); i > 0 {
		return name[:i]
	}
	return name
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
	if c.shown.id == 0 && c.shown.unsaved == nil {
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
	req := pathRequest{title: "Export the transcript", confirm: "Save", save: true,
		extensions: []string{f.Extension()}, name: exportFileName(title, f)}
	c.app.askPath(req, func(path string) {
		format := f
		if g, err := sessions.ParseExportFormat(filepath.Ext(path)); err == nil {
			format = g
		}
		c.writeExport(id, format, path)
	})
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

// writeExport writes session id in format f to the file at path, off the
// UI goroutine.
func (c *captionsTab) writeExport(id int64, f sessions.ExportFormat, path string) {
	name := filepath.Base(path)
	c.setStatus("Exporting to "+name+"…", widget.MediumImportance)
	unsaved := c.shown.unsaved // what history does not hold is written from the screen
	if id != c.shown.id {
		unsaved = nil
	}
	c.app.goAsync(func(ctx context.Context) {
		err := sessions.WriteFile(path, func(w io.Writer) error {
			if unsaved != nil {
				return sessions.Export(w, f, *unsaved)
			}
			return c.app.ws.Export(ctx, id, f, w)
		})
		c.app.onUI(func() {
			if err != nil {
				c.showError("export "+name, err)
				return
			}
			c.setStatus("Saved "+name+" ("+exportFormatLabel(f)+").", widget.SuccessImportance)
		})
	})
}
