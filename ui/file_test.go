package ui

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// fileHarness is an App on the local engine, with speaker labels on.
func fileHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarnessWith(t, harnessConfig{engine: true, settings: diarizing()}, Options{})
	if err := h.waitReady(t); err != nil {
		t.Fatalf("OnReady(%v), want nil", err)
	}
	return h
}

func TestFileTranscription(t *testing.T) {
	h := fileHarness(t)
	c := h.captions
	path := writeWAV(t, "conversation.wav", recording(t, twoSpeakers...))

	// Open file (Ctrl+O) shows Fyne's file dialog; the file is chosen in it.
	h.startFileDialogsIn(filepath.Dir(path))
	h.ui(func() { test.Tap(c.openFile) })
	// Watch the progress: the bar's fraction while the file uploads, and
	// whether the service's work was shown.
	var (
		fractions    []float64
		barShown     bool
		transcribing bool
	)
	watch := func() {
		if c.file == nil || !c.fileRow.Visible() {
			return
		}
		barShown = barShown || c.fileBar.Visible()
		transcribing = transcribing || c.fileBusy.Visible() && c.fileLabel.Text == "Waiting for the result…"
		if n := len(fractions); n == 0 || fractions[n-1] != c.fileBar.Value {
			fractions = append(fractions, c.fileBar.Value)
		}
	}
	h.ui(func() { h.observe = watch })
	h.chooseFile(t)
	h.ui(func() {
		if c.file != nil && (!c.fileRow.Visible() || !c.openFile.Disabled() || !c.start.Disabled()) {
			t.Errorf("while transcribing: progress shown %v, Open file disabled %v, Start disabled %v; want all true",
				c.fileRow.Visible(), c.openFile.Disabled(), c.start.Disabled())
		}
	})
	h.waitFor(t, "the transcript", func() bool { return c.file == nil && c.shown.id != 0 })
	h.ui(func() { h.observe = nil })
	for i := 1; i < len(fractions); i++ {
		if fractions[i] < fractions[i-1] {
			t.Errorf("the progress bar went back: %v", fractions)
		}
	}
	if !barShown || len(fractions) < 2 || fractions[0] != 0 || fractions[len(fractions)-1] <= 0 {
		t.Errorf("the progress bar did not rise: shown %v, fractions %v", barShown, fractions)
	}
	if !transcribing {
		t.Error("the service's work after the upload was not shown")
	}

	h.ui(func() {
		if c.fileRow.Visible() {
			t.Error("the progress stays on screen after the transcription")
		}
	})
	lines := h.captionLines()
	if len(lines) < 2 {
		t.Fatalf("the transcript shows %d captions: %q", len(lines), lines)
	}
	all := strings.Join(lines, "\n")
	for _, sp := range []string{"|Speaker 1|", "|Speaker 2|"} {
		if !strings.Contains(all, sp) {
			t.Errorf("no caption of %s in:\n%s", strings.Trim(sp, "|"), all)
		}
	}
	want := "Transcribed conversation.wav: " + plural(len(lines), "caption") + "."
	if got := h.statusText(); got != want {
		t.Errorf("status = %q, want %q", got, want)
	}

	// The info line names the duration, the model, the diarization
	// version the service resolved and the speakers, as the saved
	// response says.
	var id int64
	h.ui(func() { id = c.shown.id })
	body, err := h.db.Response(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var resp api.ListenResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Metadata.DiarizeInfo == nil || resp.Metadata.DiarizeInfo.Arch == "" {
		t.Fatalf("the service's response has no diarize_info version: %+v", resp.Metadata)
	}
	info, entities := fileInfo(&resp, "nova-3", "latest")
	for _, part := range []string{"Duration 0:", "Model nova-3", "Diarization: " + resp.Metadata.DiarizeInfo.Arch + " (latest)", "2 speakers"} {
		if !strings.Contains(info, part) {
			t.Errorf("info line %q lacks %q", info, part)
		}
	}
	h.assertShows(t, "conversation.wav", info)
	if entities != "" {
		h.assertShows(t, entities)
	}
	h.ui(func() {
		if c.info.Hidden {
			t.Error("the info line is hidden")
		}
		if c.entities.Hidden != (entities == "") {
			t.Errorf("entities hidden = %v, with entities %q", c.entities.Hidden, entities)
		}
	})

	// The file is in history, done.
	h.waitFor(t, "the file in the History list", func() bool {
		return len(c.history.rows) == 1 && c.history.rows[0].s.Kind == store.KindFile && c.history.rows[0].s.Status == store.StatusDone
	})
	if got := h.historyTitles(); got[0] != "conversation.wav" {
		t.Errorf("history lists %q", got)
	}
}

func TestFileEntities(t *testing.T) {
	// The info line and the entities line are what fileInfo writes; the
	// response here is the service's shape with entities in it.
	sp := func(n int) *int { return &n }
	resp := &api.ListenResponse{
		Metadata: api.ListenMetadata{
			Duration: 75.5, Models: []string{"m1"},
			ModelInfo:   map[string]api.ModelInfo{"m1": {Name: "general"}},
			DiarizeInfo: &api.DiarizeInfo{Arch: "earshot-diarize-2"},
		},
		Results: api.ListenResults{Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{
			Words: []api.Word{{Word: "hi", Speaker: sp(0)}, {Word: "ann", Speaker: sp(1)}},
			Entities: []api.Entity{
				{Label: "NAME", Value: "Ann"}, {Label: "DATE", Value: "March 3"}, {Label: "NAME", Value: "Ann"},
				{Label: "CARDINAL_NUMBER", Value: "42"}, {Label: "x", Value: "  "},
			},
		}}}}},
	}
	tests := []struct {
		name, model, requested string
		wantInfo, wantEntities string
	}{
		{"asked latest", "nova-3", "latest", "Duration 1:15 · Model nova-3 (general) · Diarization: earshot-diarize-2 (latest) · 2 speakers",
			"Entities: Ann (name), March 3 (date), 42 (cardinal number)"},
		{"asked the version", "general", "earshot-diarize-2", "Duration 1:15 · Model general · Diarization: earshot-diarize-2 · 2 speakers",
			"Entities: Ann (name), March 3 (date), 42 (cardinal number)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, entities := fileInfo(resp, tt.model, tt.requested)
			if info != tt.wantInfo {
				t.Errorf("info = %q, want %q", info, tt.wantInfo)
			}
			if entities != tt.wantEntities {
				t.Errorf("entities = %q, want %q", entities, tt.wantEntities)
			}
		})
	}
}

func TestFileCancel(t *testing.T) {
	h := fileHarness(t)
	c := h.captions
	// A long file: the conversation eight times over, about two and a
	// half minutes of speech, which the engine takes a while to hear.
	var long []int16
	one := recording(t, twoSpeakers...)
	for range 8 {
		long = append(long, one...)
	}
	path := writeWAV(t, "long.wav", long)

	// Ctrl+O shows the file dialog; dismissing it starts nothing.
	h.startFileDialogsIn(filepath.Dir(path))
	h.press(openShortcut)
	if h.findButton("Open") == nil {
		t.Fatalf("Ctrl+O shows no file dialog; window:\n%s", h.screen())
	}
	h.tapDialogButton(t, "Cancel")
	h.ui(func() {
		if c.file != nil || c.fileRow.Visible() {
			t.Error("dismissing the file dialog started a transcription")
		}
	})

	// The file chosen (the code under the dialog's Open), then Cancel.
	h.ui(func() { c.transcribeFile(path) })
	h.ui(func() {
		if !c.fileRow.Visible() || c.cancelFile.Disabled() {
			t.Error("no progress with a Cancel button while transcribing")
		}
	})
	h.ui(func() { test.Tap(c.cancelFile) })
	h.waitFor(t, "the transcription to be cancelled", func() bool { return c.file == nil })
	if got, want := h.statusText(), "The transcription of long.wav was cancelled."; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	h.ui(func() {
		if c.fileRow.Visible() || c.openFile.Disabled() || c.start.Disabled() {
			t.Errorf("after Cancel: progress shown %v, Open file disabled %v, Start disabled %v",
				c.fileRow.Visible(), c.openFile.Disabled(), c.start.Disabled())
		}
		if c.shown.id != 0 {
			t.Error("a cancelled transcription is shown as a transcript")
		}
	})
	h.waitFor(t, "the history to list the cancelled file", func() bool {
		for _, r := range c.history.rows {
			if r.s.Title == "long.wav" {
				return r.s.Status == store.StatusCancelled || r.s.Status == store.StatusFailed
			}
		}
		return len(c.history.rows) == 0
	})
}

// TestFileNotSaved: a transcript history could not keep is still shown,
// with a warning that says it was not saved and why.
func TestFileNotSaved(t *testing.T) {
	h := newHarness(t, &fakeService{answer: answers(result{info: localInfo})}, Options{})
	c := h.captions
	// What the window shows once it has loaded would replace the status.
	_ = h.waitReady(t)
	h.waitFor(t, "the microphones listed", func() bool { return !h.micsLoading })
	resp := &api.ListenResponse{Results: api.ListenResults{Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{
		Transcript: "hello there",
		Words:      []api.Word{{Word: "hello", PunctuatedWord: "Hello", End: 0.5}, {Word: "there", PunctuatedWord: "there.", Start: 0.5, End: 1}},
	}}}}}}
	end := fileEnd{
		res:     &sessions.FileResult{SessionID: 7, Response: resp},
		unsaved: &sessions.SaveFailedEvent{What: "the transcript", Err: errors.New("disk I/O error")},
	}
	h.ui(func() { c.fileDone(&fileJob{name: "talk.wav"}, store.DefaultSettings(), end) })
	want := "Transcribed talk.wav: 1 caption. Could not save the transcript to history: something went wrong: Disk I/O error."
	if got := h.statusText(); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	h.ui(func() {
		if c.shown.id != 7 || c.status.Importance != widget.WarningImportance {
			t.Errorf("shown session %d, importance %v", c.shown.id, c.status.Importance)
		}
	})
}

// TestFileProgressLabel checks that the label beside the file progress
// bar says what is happening, in words that fit, and not an ellipsis: it
// read "…" whatever the phase, its least width in the row being the
// ellipsis's.
func TestFileProgressLabel(t *testing.T) {
	h := newHarness(t, nil, Options{})
	c := h.captions
	job := &fileJob{cancellable: cancellable{cancel: func() {}}, name: "meeting.mp4"}
	steps := []struct {
		p    sessions.Progress
		want string
		bar  bool
	}{
		{sessions.Progress{Phase: sessions.PhaseReading}, "Reading the file…", false},
		{sessions.Progress{Phase: sessions.PhaseDecoding, Decoded: 71 * time.Minute, Length: 2*time.Hour + 8*time.Minute}, "Decoding and sending 1:11:00 of 2:08:00", true},
		{sessions.Progress{Phase: sessions.PhaseDecoding, Decoded: 3 * time.Minute}, "Decoding and sending: 3:00", false},
		{sessions.Progress{Phase: sessions.PhaseUploading, Sent: 1_200_000, Total: 345_600_000}, "Sending 1.2 MB of 345.6 MB", true},
		{sessions.Progress{Phase: sessions.PhaseTranscribing, Sent: 3_400_000, Total: 3_400_000}, "Waiting for the result…", false},
	}
	for _, st := range steps {
		h.ui(func() {
			c.file = job
			c.fileRow.Show()
			c.showProgress(job, st.p)
			h.window.Content().Refresh()
		})
		h.ui(func() {
			if got := c.fileLabel.Text; got != st.want {
				t.Errorf("label %q, want %q", got, st.want)
			}
			if c.fileBar.Visible() != st.bar || c.fileBusy.Visible() == st.bar {
				t.Errorf("%q: bar shown %v, busy shown %v; want the bar %v", st.want, c.fileBar.Visible(), c.fileBusy.Visible(), st.bar)
			}
			var shown []string
			walk(c.fileLabel, func(o fyne.CanvasObject) {
				if tx, ok := o.(*canvas.Text); ok && tx.Visible() {
					shown = append(shown, tx.Text)
				}
			})
			if got := strings.Join(shown, ""); got != st.want {
				t.Errorf("the label shows %q, want %q (its width %v)", got, st.want, c.fileLabel.Size().Width)
			}
		})
	}
	h.ui(func() {
		c.file = nil
		c.fileRow.Hide()
	})
}
