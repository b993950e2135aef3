package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	ext := sessions.SaveExtension(enc)
	req := pathRequest{title: "Save the audio", confirm: "Save", save: true, extensions: []string{ext},
		name: strings.TrimSuffix(exportFileName(title, sessions.ExportFormat("txt")), ".txt") + ext}
	v.app.askPath(req, func(path string) {
		format := enc
		if e, ok := sessions.EncodingForPath(path); ok && ext != filepath.Ext(path) {
			format = e
		}
		v.writeAudio(path, pcm, rate, format)
	})
}

// writeAudio encodes audio to the file at path, off the UI goroutine.
func (v *voicesTab) writeAudio(path string, pcm []int16, rate int, enc string) {
	name := filepath.Base(path)
	v.setStatus("Saving "+name+"…", widget.MediumImportance)
	v.app.goAsync(func(ctx context.Context) {
		err := sessions.WriteFile(path, func(w io.Writer) error {
			var buf bytes.Buffer
			if err := sessions.EncodeAudio(ctx, &buf, pcm, rate, enc); err != nil {
				return err
			}
			_, err := w.Write(buf.Bytes())
			return err
		})
		v.app.onUI(func() {
			if err != nil {
				v.showError("save "+name, err)
				return
			}
			v.setStatus(fmt.Sprintf("Saved %s (%s).", name, enc), widget.SuccessImportance)
		})
	})
}
