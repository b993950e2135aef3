package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// pathField waits for Earshot's file dialog and returns its path field.
func (h *harness) pathField(t *testing.T) *boundedEntry {
	t.Helper()
	var e *boundedEntry
	h.waitFor(t, "the file dialog's path field", func() bool {
		for _, o := range h.window.Canvas().Overlays().List() {
			walk(o, func(o fyne.CanvasObject) {
				if x, ok := o.(*boundedEntry); ok && x.Visible() && e == nil {
					e = x
				}
			})
		}
		return e != nil
	})
	return e
}

// typePath types path into the file dialog's field and presses Enter, as
// a person pasting a path would.
func (h *harness) typePath(t *testing.T, path string) {
	t.Helper()
	e := h.pathField(t)
	h.ui(func() {
		e.SetText(path)
		e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	})
}

// dialogProblem is what the file dialog says is wrong with the path
// typed ("" when it says nothing).
func (h *harness) dialogProblem() string {
	o := h.inOverlays(func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		return ok && l.Visible() && l.Importance == widget.DangerImportance
	})
	var text string
	if l, ok := o.(*widget.Label); ok {
		h.ui(func() { text = l.Text })
	}
	return text
}

// TestFileDialogTakesATypedPath opens and saves files by typing their
// full paths, in folders other than the one the dialog starts in, as the
// toolkit's own dialogs could not (issue 11, item 9): its open dialog had
// no path field, and its save dialog joined a full path typed to its
// folder, and failed with "The file could not be found".
func TestFileDialogTakesATypedPath(t *testing.T) {
	h := fileHarness(t)
	c := h.captions
	start, elsewhere := t.TempDir(), t.TempDir()
	path := writeWAV(t, "typed.wav", recording(t, twoSpeakers...))
	h.startFileDialogsIn(start)

	// Ctrl+O proposes the folder the dialogs start in.
	h.press(openShortcut)
	if got := h.pathField(t).Text; got != start+string(filepath.Separator) {
		t.Errorf("the open dialog proposes %q, want the start folder %q", got, start+"/")
	}

	// What cannot be opened keeps the dialog open, saying why, and
	// starts nothing.
	for typed, want := range map[string]string{
		filepath.Join(elsewhere, "nothing.wav"): "There is no file at " + filepath.Join(elsewhere, "nothing.wav") + ".",
		elsewhere:                               "This is a folder. Add the file's name, or press Browse… to pick one in it.",
		"  ":                                    "Type a file's path, or press Browse…",
	} {
		h.typePath(t, typed)
		if got := h.dialogProblem(); got != want {
			t.Errorf("typing %q: the dialog says %q, want %q", typed, got, want)
		}
		if !h.dialogOpen() || c.file != nil {
			t.Fatalf("typing %q closed the dialog (%v) or started a transcription (%v)", typed, !h.dialogOpen(), c.file != nil)
		}
	}

	// A full path elsewhere transcribes that file.
	h.typePath(t, path)
	h.waitFor(t, "the transcript", func() bool { return c.file == nil && c.shown.id != 0 })
	if h.dialogOpen() {
		t.Errorf("the dialog stays after the file was opened; window:\n%s", h.screen())
	}
	if got := h.statusText(); !strings.HasPrefix(got, "Transcribed typed.wav: ") {
		t.Fatalf("status = %q after opening a typed path", got)
	}

	// Export to a full path elsewhere: the file is written there, not in
	// the folder the dialog proposed.
	export := func() {
		h.press(exportShortcut)
		h.tapDialogButton(t, "Choose file…")
	}
	export()
	if got := h.pathField(t).Text; filepath.Dir(got) != filepath.Dir(path) {
		// The folder last used (the file's) is where the next dialog starts.
		t.Errorf("the save dialog proposes %q, want a file in %s, where the last file was opened", got, filepath.Dir(path))
	}
	target := filepath.Join(elsewhere, "minutes.vtt")
	h.typePath(t, target)
	want := "Saved minutes.vtt (WebVTT subtitles)."
	h.waitFor(t, want, func() bool { return c.status.Text == want })
	body, err := os.ReadFile(target)
	if err != nil || !strings.HasPrefix(string(body), "WEBVTT") {
		t.Fatalf("the typed path holds %q (%v), want a WebVTT export", body, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err == nil {
		t.Error("the typed path was joined to the dialog's folder")
	}

	// A folder that does not exist is named, and nothing is written.
	export()
	missing := filepath.Join(elsewhere, "no", "such", "x.srt")
	h.typePath(t, missing)
	if got, want := h.dialogProblem(), "There is no folder "+filepath.Dir(missing)+". Create it first, or pick another."; got != want {
		t.Errorf("a missing folder: the dialog says %q, want %q", got, want)
	}
	// A folder typed saves the proposed name into it; a name without an
	// extension gets the format's.
	h.typePath(t, elsewhere+string(filepath.Separator))
	h.waitFor(t, "the export into the folder", func() bool { return strings.HasPrefix(c.status.Text, "Saved typed.srt") })
	export()
	h.typePath(t, filepath.Join(elsewhere, "notes"))
	h.waitFor(t, "the export without extension", func() bool { return c.status.Text == "Saved notes.srt (SubRip subtitles)." })

	// A file that exists is replaced only when the person agrees.
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	export()
	h.typePath(t, target)
	if h.findButton("No") == nil {
		t.Fatalf("saving over a file asks nothing; window:\n%s", h.screen())
	}
	h.tapDialogButton(t, "No")
	if body, _ := os.ReadFile(target); string(body) != "keep me" {
		t.Errorf("refusing to replace the file changed it to %q", body)
	}
	h.tapDialogButton(t, "Cancel")
	if h.dialogOpen() {
		t.Errorf("a dialog stays after Cancel; window:\n%s", h.screen())
	}
}

func TestCheckPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	folder := t.TempDir()
	file := filepath.Join(folder, "talk.wav")
	if err := os.WriteFile(file, []byte("RIFF"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, "Music"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "Music", "a.wav"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	open := pathRequest{extensions: []string{".wav"}}
	save := pathRequest{save: true, extensions: []string{".srt"}, name: "talk.srt"}
	tests := []struct {
		typed string
		req   pathRequest
		path  string // "" when refused
	}{
		{file, open, file},
		{"  " + file + "\t", open, file},
		{"talk.wav", open, file}, // relative to the folder
		{"~/Music/a.wav", open, filepath.Join(home, "Music", "a.wav")},
		{"~/Music/b.wav", open, ""},
		{folder, open, ""},
		{"", open, ""},
		{"a\x00b", open, ""},
		{filepath.Join(folder, "x.srt"), save, filepath.Join(folder, "x.srt")},
		{filepath.Join(folder, "x"), save, filepath.Join(folder, "x.srt")},
		{folder, save, filepath.Join(folder, "talk.srt")},
		{"~/", save, filepath.Join(home, "talk.srt")},
		{"~/Music", save, filepath.Join(home, "Music", "talk.srt")},
		{"out.vtt", save, filepath.Join(folder, "out.vtt")},
		{filepath.Join(folder, "none", "x.srt"), save, ""},
		{filepath.Join(file, "x.srt"), save, ""}, // a file is no folder
	}
	for _, tt := range tests {
		got, why := checkPath(tt.typed, tt.req, folder)
		if got != tt.path || (got == "") != (why != "") {
			t.Errorf("checkPath(%q, save %v) = %q, %q; want %q", tt.typed, tt.req.save, got, why, tt.path)
		}
	}
}
