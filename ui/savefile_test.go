package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/testkit"
)

// TestSaveIntoReadOnlyFolder: audio saved into a folder that cannot be
// written to says so, naming the file the person chose and its folder,
// never the temporary file the save writes first.
func TestSaveIntoReadOnlyFolder(t *testing.T) {
	h := newHarnessWith(t, harnessConfig{}, Options{})
	h.waitReady(t) // no service: the error it shows is not what is tested
	dir := testkit.ReadOnlyDir(t)
	v := h.voices
	// The voices cannot be listed (no service here): that said first.
	h.waitFor(t, "the voices to fail", func() bool { return v.controls.voice.PlaceHolder == "No voices" })
	h.ui(func() { v.writeAudio(filepath.Join(dir, "test.mp3"), make([]int16, 1600), 16000, "mp3") })
	// The save's failure, not the voices' (no service here): it names
	// the file, however it words it.
	h.waitFor(t, "the save to fail", func() bool {
		return v.status.Importance == widget.DangerImportance && strings.Contains(v.status.Text, "test.mp3")
	})
	h.ui(func() {
		want := "Could not save “test.mp3”: its folder, " + dir + ", is on a disk that cannot be written to. Choose another folder."
		if got := v.status.Text; got != want {
			t.Errorf("status %q, want %q", got, want)
		}
	})
	if s := h.screen(); strings.Contains(s, ".part-") {
		t.Errorf("the window names the temporary file:\n%s", s)
	}
}
