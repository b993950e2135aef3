package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	esclock "github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// onOpen shows the selected entry in the tab of its kind; an entry found
// by a caption opens at that caption.
func (t *historyTab) onOpen() {
	r, ok := t.selectedEntry()
	if !ok {
		return
	}
	a := t.app
	switch r.s.Kind {
	case store.KindCaptions, store.KindFile, store.KindConversation:
		if a.captions.live == nil && !a.captions.starting { // else in a window
			a.SelectTab("Captions")
		}
		a.captions.openSessionAt(r.s, r.at, r.hasAt)
	case store.KindSynthesis:
		a.SelectTab("Voices")
		a.voices.openPast(r.s)
	case store.KindAgent:
		a.SelectTab("Agent")
		a.agent.openPast(r.s)
	case store.KindAnalysis:
		a.SelectTab("Analyze")
		a.analyze.openPast(r.s)
	default:
		t.setStatus("Earshot has no view for a session of kind “"+r.s.Kind+"”; Export still writes it.", widget.WarningImportance)
	}
}

// openSessionAt shows a past session in the caption view, as
// openSession does (in a window of its own while live captions run), and
// with hasAt scrolls to the caption said at at.
func (c *captionsTab) openSessionAt(s store.Session, at float64, hasAt bool) {
	if c.live != nil || c.starting {
		// The view is the live session's: the past one opens beside it.
		c.app.openPastWindow(s, at, hasAt)
		return
	}
	if !hasAt {
		c.openSession(s)
		return
	}
	c.app.goAsync(func(ctx context.Context) {
		tr, err := c.app.ws.Transcript(ctx, s.ID)
		c.app.onUI(func() {
			if c.live != nil || c.starting {
				return
			}
			if err != nil {
				c.showError("open a session", err)
				return
			}
			info, entities := joinDot(sessionDetails(s, c.app.now()), s.Model, plural(len(tr.Captions), "caption")), ""
			if tr.Response != nil {
				info, entities = fileInfo(tr.Response, s.Model, requestedDiarization(s.Options))
			}
			c.showTranscript(s.ID, s.Title, tr.Captions, info, entities, s.Status)
			c.app.fileIntel.show(s.Title, tr.Response)
			c.view.scrollToTime(at)
			c.setStatus("Opened “"+s.Title+"” at "+timecode.Of(at)+".", widget.MediumImportance)
		})
	})
}

// scrollToTime scrolls the view to the last caption that starts at or
// before sec.
func (v *captionView) scrollToTime(sec float64) {
	row := -1
	for i, c := range v.captions {
		if c.Start <= sec+0.001 {
			row = i
		}
	}
	if row < 0 || row >= len(v.list.Objects) {
		return
	}
	v.list.Refresh() // lays the rows out, so that they have their places
	v.scroll.Offset.Y = v.list.Objects[row].Position().Y
	v.scroll.Refresh()
}

// openPast puts a past synthesis's text back in the Voices tab, with its
// audio ready to play and save, without playing it.
func (v *voicesTab) openPast(s store.Session) {
	if v.voices == nil {
		v.setStatus("The voices are still being listed: open “"+s.Title+"” again in a moment.", widget.WarningImportance)
		return
	}
	if v.busy() {
		return
	}
	v.withSaved(s.ID, func(saved sessions.SavedSynthesis) {
		v.controls.text.SetText(saved.Text)
		v.run.metrics.SetText(fmt.Sprintf("Time to first audio: %.0f ms (%s)", saved.Details.TimeToFirstAudioMS, saved.Details.Voice))
		v.run.kept = []keptAudio{{label: saved.Details.Voice, pcm: saved.PCM, rate: saved.SampleRate}}
		v.setStatus("Opened “"+s.Title+"”.", widget.MediumImportance)
	})
}

// openPast shows a past analysis in the Analyze tab.
func (t *analyzeTab) openPast(s store.Session) {
	if t.job != nil {
		t.setStatus("An analysis is running: open “"+s.Title+"” when it ends.", widget.WarningImportance)
		return
	}
	t.app.goAsync(func(ctx context.Context) {
		res, err := t.app.ws.Analysis(ctx, s.ID)
		t.app.onUI(func() {
			if err != nil {
				t.showError("open an analysis", err)
				return
			}
			t.showResult(res)
			t.setStatus("Opened “"+res.Title+"”.", widget.MediumImportance)
		})
	})
}

// onRename asks for a new title for the selected entry.
func (t *historyTab) onRename() {
	r, ok := t.selectedEntry()
	if !ok {
		return
	}
	t.app.askTitle("Rename", r.s.Title, t.setStatus, func(title string) { t.renameEntry(r.s, title) })
}

// renameEntry saves a session's new title and shows it in its row.
func (t *historyTab) renameEntry(s store.Session, title string) {
	t.app.goAsync(func(ctx context.Context) {
		err := t.app.ws.RenameSession(ctx, s.ID, title)
		t.app.onUI(func() {
			if err != nil {
				t.showError("rename “"+s.Title+"”", err)
				return
			}
			for i := range t.rows {
				if t.rows[i].s.ID == s.ID {
					t.rows[i].s.Title = title
				}
			}
			t.list.Refresh()
			t.app.captions.shownRenamed(s.ID, title)
			t.setStatus("Renamed to “"+title+"”.", widget.MediumImportance)
			t.notifyChanged(s.Kind)
		})
	})
}

// pendingDelete is an entry deleted from the list whose deletion waits
// for undoDelay to pass, for Undo. Its goroutine and the UI goroutine
// decide its fate under mu: the first to move it out of waiting wins.
type pendingDelete struct {
	s     store.Session
	mu    sync.Mutex
	state int           // deleteWaiting, deleteUndone or deleteGoing
	undo  chan struct{} // closed by Undo
	now   chan struct{} // closed to delete at once (another delete came)
}

const (
	deleteWaiting = iota
	deleteUndone
	deleteGoing
)

// decide moves p from waiting to state and reports whether it did.
func (p *pendingDelete) decide(state int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != deleteWaiting {
		return false
	}
	p.state = state
	return true
}

// onDelete takes the selected entry off the list at once and deletes it
// once undoDelay has passed without Undo, or when the app closes. A
// delete still waiting when another comes is done at once.
func (t *historyTab) onDelete() {
	r, ok := t.selectedEntry()
	if !ok || r.s.Status == store.StatusRunning {
		return
	}
	if t.pending != nil {
		close(t.pending.now)
	}
	p := &pendingDelete{s: r.s, undo: make(chan struct{}), now: make(chan struct{})}
	c := esclock.Or(t.clock)
	timer := c.NewTimer(undoDelay)
	started := t.app.goAsync(func(ctx context.Context) {
		defer timer.Stop()
		select {
		case <-p.undo:
			return
		case <-timer.C():
		case <-p.now:
		case <-ctx.Done(): // the app closes: nothing is left half-done
		}
		if !p.decide(deleteGoing) {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := t.app.ws.DeleteSession(dctx, p.s.ID)
		cancel()
		if err != nil {
			t.app.log.Warn("delete a session", "session", p.s.ID, "err", err)
		}
		t.app.onUI(func() { t.deleted(p, err) })
	})
	if !started {
		timer.Stop()
		return
	}
	t.pending = p
	t.hidden[r.s.ID] = true
	rows := make([]historyEntry, 0, len(t.rows))
	for _, x := range t.rows {
		if x.s.ID != r.s.ID {
			rows = append(rows, x)
		}
	}
	t.selected = 0
	t.setRows(rows, "Nothing left to show.")
	t.undoMsg.SetText("Deleted “" + r.s.Title + "”.")
	t.undoBar.Show()
}

// onUndo puts back the entry waiting to be deleted.
func (t *historyTab) onUndo() {
	p := t.pending
	if p == nil || !p.decide(deleteUndone) {
		return
	}
	close(p.undo)
	t.pending = nil
	delete(t.hidden, p.s.ID)
	t.undoBar.Hide()
	t.selected = p.s.ID
	t.setStatus("“"+p.s.Title+"” is back.", widget.MediumImportance)
	t.reload()
}

// deleted follows the end of a delete.
func (t *historyTab) deleted(p *pendingDelete, err error) {
	if t.pending == p {
		t.pending = nil
		t.undoBar.Hide()
	}
	delete(t.hidden, p.s.ID)
	if err != nil {
		t.showError("delete “"+p.s.Title+"”", err)
		t.reload()
		return
	}
	t.app.captions.shownDeleted(p.s.ID)
	t.notifyChanged(p.s.Kind)
}

// onExport asks for a format, then for a file, and writes the selected
// entry there: a transcript as subtitles, text or JSON, an analysis as
// Markdown or JSON, a synthesis as Markdown or JSON or, when its audio
// is kept, its audio as the Voices tab saves it.
func (t *historyTab) onExport() {
	r, ok := t.selectedEntry()
	if !ok {
		return
	}
	type choice struct {
		name, ext string
		write     func(ctx context.Context, w io.Writer) error
		// audio is the encoding of a synthesis's audio, "" for a
		// document; a file named with another audio extension chooses
		// that one, as in the Voices tab.
		audio string
	}
	var choices []choice
	switch r.s.Kind {
	case store.KindAnalysis, store.KindSynthesis:
		for _, f := range []sessions.AnalysisFormat{sessions.AnalysisMarkdown, sessions.AnalysisJSON} {
			name := "Markdown (.md)"
			if f == sessions.AnalysisJSON {
				name = "JSON, the service's format (.json)"
			}
			write := func(ctx context.Context, w io.Writer) error { return t.app.ws.ExportAnalysis(ctx, r.s.ID, f, w) }
			if r.s.Kind == store.KindSynthesis {
				if f == sessions.AnalysisJSON {
					name = "JSON (.json)"
				}
				write = func(ctx context.Context, w io.Writer) error { return t.app.ws.ExportSynthesis(ctx, r.s.ID, f, w) }
			}
			choices = append(choices, choice{name: name, ext: f.Extension(), write: write})
		}
		if r.s.Kind == store.KindSynthesis && t.hasAudio {
			enc := t.app.voices.settings.SaveEncoding
			if !slices.Contains(sessions.SaveEncodings, enc) {
				enc = api.EncodingMP3
			}
			ext := sessions.SaveExtension(enc)
			choices = append(choices, choice{name: "The audio, " + enc + " (" + ext + ")", ext: ext, audio: enc})
		}
	default:
		for _, x := range exportFormatNames {
			choices = append(choices, choice{name: x.name, ext: x.f.Extension(), write: func(ctx context.Context, w io.Writer) error {
				return t.app.ws.Export(ctx, r.s.ID, x.f, w)
			}})
		}
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = c.name
	}
	formats := widget.NewRadioGroup(names, nil)
	formats.Required = true
	formats.SetSelected(names[0])
	dialog.NewCustomConfirm("Export “"+r.s.Title+"”", "Choose file…", "Cancel",
		container.NewVBox(widget.NewLabel("Save it as:"), formats),
		func(ok bool) {
			if !ok {
				return
			}
			c := choices[0]
			for _, x := range choices {
				if x.name == formats.Selected {
					c = x
				}
			}
			name := strings.TrimSuffix(exportFileName(r.s.Title, sessions.ExportFormat(strings.TrimPrefix(c.ext, "."))), c.ext) + c.ext
			req := pathRequest{title: "Export", confirm: "Save", save: true, extensions: []string{c.ext}, name: name}
			t.app.askPath(req, func(path string) {
				write := c.write
				if c.audio != "" {
					enc := c.audio
					if e, ok := sessions.EncodingForPath(path); ok && filepath.Ext(path) != c.ext {
						enc = e
					}
					write = func(ctx context.Context, w io.Writer) error { return t.writeSynthesisAudio(ctx, r.s.ID, enc, w) }
				}
				t.writeExport(path, write)
			})
		}, t.app.window).Show()
}

// writeSynthesisAudio writes the audio kept with synthesis id to w in
// encoding enc.
func (t *historyTab) writeSynthesisAudio(ctx context.Context, id int64, enc string, w io.Writer) error {
	saved, err := t.app.ws.Synthesis(ctx, id)
	if err != nil {
		return err
	}
	if len(saved.PCM) == 0 {
		return errors.New("this synthesis kept no audio")
	}
	return sessions.EncodeAudio(ctx, w, saved.PCM, saved.SampleRate, enc)
}

// writeExport writes an export to path, off the UI goroutine.
func (t *historyTab) writeExport(path string, write func(ctx context.Context, w io.Writer) error) {
	name := filepath.Base(path)
	t.setStatus("Exporting to "+name+"…", widget.MediumImportance)
	t.app.goAsync(func(ctx context.Context) {
		err := sessions.WriteFile(path, func(w io.Writer) error { return write(ctx, w) })
		t.app.onUI(func() {
			if err != nil {
				t.showError("export "+name, err)
				return
			}
			t.setStatus("Saved "+name+".", widget.SuccessImportance)
		})
	})
}
