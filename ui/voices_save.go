package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// voicesSaving is how the Voices tab saves audio: the format chosen and
// Save as (Ctrl+S while the tab is open).
type voicesSaving struct {
	format *widget.Select
	saveAs *widget.Button
}

// buildSave creates the format picker and Save as.
func (v *voicesTab) buildSave() {
	s := &v.save
	s.format = widget.NewSelect(sessions.SaveEncodings, func(string) { v.onFormatChanged() })
	s.format.Selected = v.settings.SaveEncoding
	s.saveAs = widget.NewButtonWithIcon("Save as…", theme.DocumentSaveIcon(), func() { v.onSaveAs(0) })
}

// onFormatChanged keeps the format chosen in the settings.
func (v *voicesTab) onFormatChanged() {
	if f := v.save.format.Selected; f != "" && f != v.settings.SaveEncoding && !v.controls.filling {
		v.persist()
	}
}

// onSaveAs saves a synthesis: the last one (id 0) or one from history.
func (v *voicesTab) onSaveAs(id int64) {
	if id == 0 {
		if len(v.run.kept) == 0 || v.busy() {
			return
		}
		k := v.run.kept[len(v.run.kept)-1]
		v.chooseSaveFile(k.pcm, k.rate, k.label)
		return
	}
	v.withSaved(id, func(s sessions.SavedSynthesis) { v.chooseSaveFile(s.PCM, s.SampleRate, s.Session.Title) })
}

// chooseSaveFile asks where to save audio in the chosen format; a file
// name with another format's extension chooses that format.
func (v *voicesTab) chooseSaveFile(pcm []int16, rate int, title string) {
	enc := v.save.format.Selected
	if enc == "" {
		enc = api.EncodingMP3
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			v.showError("choose where to save", saveChoiceError{err})
			return
		}
		if w == nil {
			return
		}
		format := enc
		if e, ok := sessions.EncodingForPath(w.URI().Name()); ok && sessions.SaveExtension(enc) != w.URI().Extension() {
			format = e
		}
		v.writeAudio(w, pcm, rate, format, w.URI().Name())
	}, v.app.window)
	d.SetFileName(strings.TrimSuffix(exportFileName(title, sessions.ExportFormat("txt")), ".txt") + sessions.SaveExtension(enc))
	d.SetFilter(storage.NewExtensionFileFilter([]string{sessions.SaveExtension(enc)}))
	d.Show()
}

// writeAudio encodes audio to w off the UI goroutine, and closes w.
func (v *voicesTab) writeAudio(w io.WriteCloser, pcm []int16, rate int, enc, name string) {
	v.setStatus("Saving "+name+"…", widget.MediumImportance)
	started := v.app.goAsync(func(ctx context.Context) {
		var buf bytes.Buffer
		err := sessions.EncodeAudio(ctx, &buf, pcm, rate, enc)
		if err == nil {
			_, err = w.Write(buf.Bytes())
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		v.app.onUI(func() {
			if err != nil {
				v.showError("save "+name, err)
				return
			}
			v.setStatus(fmt.Sprintf("Saved %s (%s).", name, enc), widget.SuccessImportance)
		})
	})
	if !started {
		_ = w.Close()
	}
}
