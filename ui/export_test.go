package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// exportThrough exports with the button export (the toolbar's or the
// History panel's) as a person would: the format is picked in Earshot's
// dialog, the file in Earshot's file dialog, which proposes a name in dir.
// It returns the file written and its contents.
func (h *harness) exportThrough(t *testing.T, export *widget.Button, f sessions.ExportFormat, dir string) (string, string) {
	t.Helper()
	h.startFileDialogsIn(dir)
	h.ui(func() { test.Tap(export) })
	o := h.inOverlays(func(o fyne.CanvasObject) bool { _, ok := o.(*widget.RadioGroup); return ok })
	formats, ok := o.(*widget.RadioGroup)
	if !ok {
		t.Fatalf("the export dialog offers no formats; window:\n%s", h.screen())
	}
	h.ui(func() {
		// The dialog proposes the format last used, SRT the first time.
		if want := exportFormatName(defaultExportFormat(h.captions.settings.ExportFormat)); formats.Selected != want {
			t.Errorf("the export dialog proposes %q, want the settings' %q", formats.Selected, want)
		}
		formats.SetSelected(exportFormatName(f))
	})
	h.tapDialogButton(t, "Choose file…")
	o = h.inOverlays(func(o fyne.CanvasObject) bool { e, ok := o.(*boundedEntry); return ok && e.Visible() })
	name, ok := o.(*boundedEntry)
	if !ok {
		t.Fatalf("the save dialog has no file name; window:\n%s", h.screen())
	}
	var file string
	h.ui(func() {
		file = filepath.Base(name.Text)
		if filepath.Dir(name.Text) != dir {
			t.Errorf("the save dialog proposes %q, want a file in %s", name.Text, dir)
		}
	})
	if filepath.Ext(file) != f.Extension() {
		t.Errorf("the save dialog proposes %q for %s", file, f)
	}
	h.tapDialogButton(t, "Save")
	want := "Saved " + file + " (" + exportFormatLabel(f) + ")."
	h.waitFor(t, want, func() bool { return h.captions.status.Text == want })
	if h.dialogOpen() {
		t.Errorf("a dialog stays open after the export; window:\n%s", h.screen())
	}
	h.waitFor(t, "the format to be remembered", func() bool { return defaultExportFormat(h.captions.settings.ExportFormat) == f })
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(b)
}

var (
	srtCue = regexp.MustCompile(`(?m)^(\d+)\n(\d\d:\d\d:\d\d,\d\d\d) --> (\d\d:\d\d:\d\d,\d\d\d)\n(.+)$`)
	vttCue = regexp.MustCompile(`(?m)^(\d\d:\d\d:\d\d\.\d\d\d) --> (\d\d:\d\d:\d\d\.\d\d\d)\n(.+)$`)
)

// checkExports checks the four exports of a session whose captions are
// caps, of the two speakers, against the session's response saved (nil
// for a live session).
func checkExports(t *testing.T, files map[sessions.ExportFormat]string, caps []sessions.Caption, saved *api.ListenResponse) {
	t.Helper()
	var words []string
	for _, c := range caps {
		words = append(words, strings.Fields(c.Text)...)
	}
	if len(words) == 0 {
		t.Fatal("the session has no words")
	}

	t.Run("srt", func(t *testing.T) {
		// A UTF-8 byte order mark may open the file: players expect it
		// as often as not.
		srt := strings.TrimPrefix(files[sessions.ExportSRT], "\uFEFF")
		cues := srtCue.FindAllStringSubmatch(srt, -1)
		if len(cues) < len(caps) {
			t.Fatalf("%d SRT cues for %d captions:\n%s", len(cues), len(caps), srt)
		}
		for i, c := range cues {
			if c[1] != itoa(i+1) {
				t.Errorf("cue %d is numbered %s", i+1, c[1])
			}
			if c[2] > c[3] {
				t.Errorf("cue %d ends (%s) before it starts (%s)", i+1, c[3], c[2])
			}
			if i > 0 && c[2] < cues[i-1][2] {
				t.Errorf("cue %d starts before cue %d", i+1, i)
			}
		}
		for _, sp := range []string{"Speaker 1: ", "Speaker 2: "} {
			if !strings.Contains(srt, "\n"+sp) {
				t.Errorf("no cue of %q in:\n%s", sp, srt)
			}
		}
		if !containsWords(srt, words) {
			t.Errorf("the SRT lacks the captions' words:\n%s", srt)
		}
	})
	t.Run("vtt", func(t *testing.T) {
		vtt := files[sessions.ExportVTT]
		if !strings.HasPrefix(vtt, "WEBVTT\n") {
			t.Errorf("the WebVTT file starts %q", vtt[:min(len(vtt), 20)])
		}
		if n := len(vttCue.FindAllString(vtt, -1)); n < len(caps) {
			t.Errorf("%d WebVTT cues for %d captions:\n%s", n, len(caps), vtt)
		}
		for _, sp := range []string{"<v Speaker 1>", "<v Speaker 2>"} {
			if !strings.Contains(vtt, sp) {
				t.Errorf("no voice %q in:\n%s", sp, vtt)
			}
		}
		if !containsWords(vtt, words) {
			t.Errorf("the WebVTT lacks the captions' words:\n%s", vtt)
		}
	})
	t.Run("txt", func(t *testing.T) {
		txt := files[sessions.ExportText]
		if !strings.HasPrefix(txt, "Speaker ") || !strings.Contains(txt, "\n\nSpeaker ") {
			t.Errorf("the text does not name the speakers' turns:\n%s", txt)
		}
		if got, want := strings.Join(strings.Fields(stripSpeakers(txt)), " "), strings.Join(words, " "); got != want {
			t.Errorf("text = %q, want the captions' words %q", got, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		var resp api.ListenResponse
		if err := json.Unmarshal([]byte(files[sessions.ExportJSON]), &resp); err != nil {
			t.Fatalf("the JSON export is not the service's response: %v", err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(files[sessions.ExportJSON]), &raw); err != nil || raw["metadata"] == nil || raw["results"] == nil {
			t.Errorf("the JSON export lacks metadata and results: %v", err)
		}
		if len(resp.Results.Channels) != 1 || len(resp.Results.Channels[0].Alternatives) == 0 {
			t.Fatalf("the JSON export has no transcript: %+v", resp.Results)
		}
		alt := resp.Results.Channels[0].Alternatives[0]
		if resp.Metadata.Duration <= 0 || len(alt.Words) == 0 {
			t.Errorf("the JSON export has duration %v and %d words", resp.Metadata.Duration, len(alt.Words))
		}
		speakers := map[int]bool{}
		for _, w := range alt.Words {
			if w.Speaker != nil {
				speakers[*w.Speaker] = true
			}
		}
		if len(speakers) != 2 {
			t.Errorf("the JSON export's words have %d speakers, want 2", len(speakers))
		}
		if saved != nil {
			if alt.Transcript != saved.Results.Channels[0].Alternatives[0].Transcript || resp.Metadata.RequestID != saved.Metadata.RequestID {
				t.Errorf("the JSON export is not the service's response saved:\n%s", files[sessions.ExportJSON])
			}
		} else if len(resp.Results.Utterances) != len(caps) {
			t.Errorf("the JSON export has %d utterances for %d captions", len(resp.Results.Utterances), len(caps))
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// containsWords reports whether s holds words, in order.
func containsWords(s string, words []string) bool {
	rest := s
	for _, w := range words {
		i := strings.Index(rest, w)
		if i < 0 {
			return false
		}
		rest = rest[i+len(w):]
	}
	return true
}

var speakerPrefix = regexp.MustCompile(`Speaker \d+: `)

func stripSpeakers(s string) string { return speakerPrefix.ReplaceAllString(s, "") }

func TestExport(t *testing.T) {
	mics := &fakeMics{samples: recording(t, twoSpeakers...)}
	h := newHarnessWith(t, harnessConfig{engine: true, mics: mics, settings: diarizing()}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	c := h.captions
	h.ui(func() {
		if !c.export.Disabled() {
			t.Error("Export is enabled with nothing to export")
		}
	})

	// A file transcribed first, in history; then live captions of the
	// replayed conversation, which end with it: the current session.
	path := writeWAV(t, "conversation.wav", recording(t, twoSpeakers...))
	h.ui(func() { c.transcribeFile(path) })
	h.waitFor(t, "the file's transcript", func() bool { return c.file == nil && c.shown.id != 0 })
	var fileID int64
	h.ui(func() { fileID = c.shown.id })

	h.selectTestMic(t)
	h.ui(func() { test.Tap(c.start) })
	h.waitFor(t, "the live session to end with the recording", func() bool {
		return c.live == nil && !c.starting && strings.HasPrefix(c.status.Text, "Stopped. ")
	})
	var liveID int64
	h.ui(func() {
		liveID = c.shown.id
		if c.export.Disabled() {
			t.Error("Export is disabled with a session shown")
		}
	})
	if liveID == 0 || liveID == fileID {
		t.Fatalf("the live session shown has id %d (the file's is %d)", liveID, fileID)
	}

	formats := []sessions.ExportFormat{sessions.ExportSRT, sessions.ExportVTT, sessions.ExportText, sessions.ExportJSON}
	exportAll := func(t *testing.T, button *widget.Button, stem string) map[sessions.ExportFormat]string {
		dir := t.TempDir()
		files := map[sessions.ExportFormat]string{}
		for _, f := range formats {
			path, body := h.exportThrough(t, button, f, dir)
			if got, want := filepath.Base(path), stem+f.Extension(); got != want {
				t.Errorf("exported to %q, want %q", got, want)
			}
			files[f] = body
		}
		return files
	}

	t.Run("current session", func(t *testing.T) {
		files := exportAll(t, c.export, "Live captions")
		tr, err := h.ws.Transcript(t.Context(), liveID)
		if err != nil {
			t.Fatal(err)
		}
		checkExports(t, files, tr.Captions, nil)
	})

	t.Run("history entry", func(t *testing.T) {
		h.waitFor(t, "both sessions in the History list", func() bool { return len(c.history.rows) == 2 })
		h.ui(func() {
			for i, r := range c.history.rows {
				if r.s.ID == fileID {
					c.history.list.Select(i)
				}
			}
		})
		h.waitFor(t, "the file to be opened", func() bool { return c.shown.id == fileID })
		files := exportAll(t, c.history.export, "conversation")
		tr, err := h.ws.Transcript(t.Context(), fileID)
		if err != nil {
			t.Fatal(err)
		}
		checkExports(t, files, tr.Captions, tr.Response)
	})

	t.Run("Ctrl+E", func(t *testing.T) {
		h.press(exportShortcut)
		if h.findButton("Choose file…") == nil {
			t.Fatalf("Ctrl+E shows no export dialog; window:\n%s", h.screen())
		}
		h.tapDialogButton(t, "Cancel")
		if h.dialogOpen() {
			t.Error("the export dialog stays after Cancel")
		}
	})
}

func TestExportFileName(t *testing.T) {
	tests := []struct {
		title string
		f     sessions.ExportFormat
		want  string
	}{
		{"Live captions", sessions.ExportSRT, "Live captions.srt"},
		{"talk.wav", sessions.ExportVTT, "talk.vtt"},
		{"Q3: plans/budget?", sessions.ExportText, "Q3- plans-budget-.txt"},
		{"  ...  ", sessions.ExportJSON, "transcript.json"},
		{"notes.final", sessions.ExportSRT, "notes.final.srt"},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			if got := exportFileName(tt.title, tt.f); got != tt.want {
				t.Errorf("exportFileName(%q, %s) = %q, want %q", tt.title, tt.f, got, tt.want)
			}
		})
	}
}
