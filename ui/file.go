package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// audioExtensions are the files the Open dialog offers: the containers the
// service detects by their first bytes,
// and, decoded here, the recordings of video and meetings.
var audioExtensions = []string{".wav", ".mp3", ".flac", ".ogg", ".oga", ".opus", ".aac", ".m4a", ".mp4", ".mov", ".webm", ".mkv", ".mka", ".3gp"}

// fileLabelWidth is the width of the label beside the file progress bar:
// room for its longest words, "Decoding and sending 1:00:00 of 2:00:00".
const fileLabelWidth = 300

// workspaceDiarizeModel is the diarization model the workspace asks for
// when the settings turn speaker labels on; the service resolves it to a
// version, which the result names.
const workspaceDiarizeModel = "latest"

// fileJob is a file transcription under way.
type fileJob struct {
	cancellable
	name string
}

// cancellable is work a tab runs off the UI goroutine, which the user may
// cancel.
type cancellable struct {
	cancel    context.CancelFunc
	cancelled bool // the user pressed Cancel
}

// stop cancels the work the first time it is asked to, and reports
// whether it did. It is called on the UI goroutine.
func (j *cancellable) stop() bool {
	if j == nil || j.cancelled {
		return false
	}
	j.cancelled = true
	j.cancel()
	return true
}

// onOpenFile asks for an audio file and transcribes it (Ctrl+O).
func (c *captionsTab) onOpenFile() {
	if c.live != nil || c.starting || c.file != nil {
		return
	}
	c.app.openLocalFile("an audio file to transcribe", audioExtensions, c.transcribeFile)
}

// openLocalFile asks for a file on this computer, listing those with one
// of extensions, and gives its path to chosen; what names the kind of
// file in the dialog's title ("an audio file").
func (a *App) openLocalFile(what string, extensions []string, chosen func(path string)) {
	a.askPath(pathRequest{title: "Open " + what, confirm: "Open", extensions: extensions}, chosen)
}

// transcribeFile uploads the file at path for transcription, showing the
// upload's progress, then that the service is working; Cancel stops it.
// The result is saved to history and shown in the caption view.
func (c *captionsTab) transcribeFile(path string) {
	if c.live != nil || c.starting || c.file != nil {
		return
	}
	ctx, cancel := context.WithCancel(c.app.ctx)
	job := &fileJob{cancellable: cancellable{cancel: cancel}, name: filepath.Base(path)}
	c.file = job
	c.showProgress(job, sessions.Progress{Phase: sessions.PhaseReading})
	c.fileRow.Show()
	c.setStatus("Transcribing "+job.name+"…", widget.MediumImportance)
	c.updateControls()

	relay := &latestRelay[sessions.Progress]{onUI: c.app.onUI, show: func(p sessions.Progress) { c.showProgress(job, p) }}
	settings := c.settings
	started := c.app.goAsync(func(context.Context) {
		defer cancel()
		var end fileEnd
		s, err := c.app.ws.StartFileTranscription(ctx, path)
		if err != nil {
			end.err = err
		} else {
			if note := s.Audio().TrackNote(); note != "" {
				c.app.onUI(func() {
					if c.file == job {
						c.setStatus("Transcribing "+job.name+": "+note+"…", widget.MediumImportance)
					}
				})
			}
			end = followFile(s, relay.report)
			end.track = s.Audio().TrackNote()
		}
		c.app.onUI(func() { c.fileDone(job, settings, end) })
	})
	if !started {
		cancel()
		c.file = nil
		c.fileRow.Hide()
		c.updateControls()
	}
}

// fileEnd is how a file transcription ended: its result, what history
// could not keep of it, or why it failed.
type fileEnd struct {
	res     *sessions.FileResult
	unsaved *sessions.SaveFailedEvent
	err     error
	track   string // which audio track of several was transcribed, or ""
}

// followFile reads the events of a file transcription until they close,
// off the UI goroutine, handing its progress to progress, and returns
// how it ended. Cancelling the context it was started with stops it.
func followFile(s *sessions.FileTranscriptionSession, progress func(sessions.Progress)) fileEnd {
	var end fileEnd
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *sessions.FileProgressEvent:
			progress(ev.Progress)
		case *sessions.SaveFailedEvent:
			if end.unsaved == nil {
				end.unsaved = ev
			}
		case *sessions.FileDoneEvent:
			end.res = ev.Result
		}
	}
	<-s.Done()
	end.err = s.Err()
	return end
}

// onCancelFile stops the file transcription under way.
func (c *captionsTab) onCancelFile() {
	if c.file != nil && c.file.stop() {
		c.fileLabel.SetText("Cancelling…")
	}
}

// showProgress shows how far the file transcription job is: reading the
// file, sending it (x of y), decoding and sending it, or waiting for the
// result.
func (c *captionsTab) showProgress(job *fileJob, p sessions.Progress) {
	if c.file != job || job.cancelled {
		return
	}
	busy := p.Phase == sessions.PhaseReading || p.Phase == sessions.PhaseTranscribing ||
		p.Phase == sessions.PhaseDecoding && p.Length <= 0
	if busy {
		c.fileBar.Hide()
		c.fileBusy.Show()
		c.fileBusy.Start()
	} else {
		c.fileBusy.Stop()
		c.fileBusy.Hide()
		c.fileBar.Show()
		c.fileBar.SetValue(p.Fraction())
	}
	c.fileLabel.SetText(progressWords(p))
}

// progressWords says what a file transcription is doing; the status
// line beside names the file.
func progressWords(p sessions.Progress) string {
	switch p.Phase {
	case sessions.PhaseReading:
		return "Reading the file…"
	case sessions.PhaseUploading:
		if p.Total > 0 {
			return fmt.Sprintf("Sending %s of %s", megabytes(p.Sent), megabytes(p.Total))
		}
		return "Sending…"
	case sessions.PhaseDecoding:
		if p.Length > 0 {
			return fmt.Sprintf("Decoding and sending %s of %s", timecode.Of(p.Decoded.Seconds()), timecode.Of(p.Length.Seconds()))
		}
		return fmt.Sprintf("Decoding and sending: %s", timecode.Of(p.Decoded.Seconds()))
	case sessions.PhaseDone:
		return "Done."
	}
	return "Waiting for the result…"
}

// fileDone shows the end of a file transcription.
func (c *captionsTab) fileDone(job *fileJob, settings store.Settings, end fileEnd) {
	if c.file == job {
		c.file = nil
	}
	c.fileBusy.Stop()
	c.fileRow.Hide()
	c.app.historyChanged(store.KindFile)
	c.updateControls()
	if err := end.err; err != nil {
		if job.cancelled && errors.Is(err, context.Canceled) {
			c.setStatus("The transcription of "+job.name+" was cancelled.", widget.MediumImportance)
			return
		}
		c.showError("transcribe "+job.name, err)
		return
	}
	res := end.res
	requested := ""
	if settings.Diarize {
		requested = workspaceDiarizeModel
	}
	caps := sessions.CaptionsOf(res.Response)
	info, entities := fileInfo(res.Response, settings.Model, requested)
	c.showTranscript(res.SessionID, job.name, caps, info, entities, store.StatusDone)
	c.app.fileIntel.show(job.name, res.Response)
	done := fmt.Sprintf("Transcribed %s: %s.", job.name, plural(len(caps), "caption"))
	if end.track != "" {
		done = fmt.Sprintf("Transcribed %s: %s, from %s.", job.name, plural(len(caps), "caption"), end.track)
	}
	if u := end.unsaved; u != nil {
		c.shown.unsaved = &sessions.Transcript{Title: job.name, Captions: caps, Response: res.Response, Created: c.app.now()}
		c.updateControls()
		c.app.log.Warn("save a file transcription", "what", u.What, "err", u.Err)
		c.setStatus(done+" "+plainError(u), widget.WarningImportance)
		return
	}
	c.setStatus(done, widget.SuccessImportance)
}

// latestRelay brings a long job's progress to the UI goroutine, at most
// one update waiting at a time: the latest. Its report is safe to call
// from any goroutine and never blocks.
type latestRelay[T any] struct {
	onUI func(func())
	show func(T)

	mu        sync.Mutex // guards latest, scheduled
	latest    T
	scheduled bool
}

func (r *latestRelay[T]) report(v T) {
	r.mu.Lock()
	r.latest = v
	if r.scheduled {
		r.mu.Unlock()
		return
	}
	r.scheduled = true
	r.mu.Unlock()
	r.onUI(func() {
		r.mu.Lock()
		v := r.latest
		r.scheduled = false
		r.mu.Unlock()
		r.show(v)
	})
}

// fileInfo describes a file transcription for the info line: duration,
// the model asked for and what ran, the diarization version the service
// resolved (requested is what was asked for, such as "latest"), the
// speakers, and, on a line of their own, the entities it found.
func fileInfo(resp *api.ListenResponse, model, requested string) (info, entities string) {
	if resp == nil {
		return "", ""
	}
	md := resp.Metadata
	parts := []string{"Duration " + timecode.Of(md.Duration)}
	ran := modelName(md)
	switch {
	case model != "" && ran != "" && ran != model:
		parts = append(parts, "Model "+model+" ("+ran+")")
	case model != "":
		parts = append(parts, "Model "+model)
	case ran != "":
		parts = append(parts, "Model "+ran)
	}
	if di := md.DiarizeInfo; di != nil {
		v := di.Arch
		if v == "" {
			v = "version not given"
		}
		if requested != "" && !strings.EqualFold(requested, v) {
			v += " (" + requested + ")"
		}
		parts = append(parts, "Diarization: "+v)
	}
	if n := speakerCount(resp); n > 0 {
		parts = append(parts, plural(n, "speaker"))
	}
	return joinDot(parts...), entityWords(resp)
}

// modelName names the models that ran, from the response's metadata.
func modelName(md api.ListenMetadata) string {
	var names []string
	for _, id := range md.Models {
		mi, ok := md.ModelInfo[id]
		if !ok || mi.Name == "" {
			continue
		}
		name := mi.Name
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// speakerCount counts the speakers the response's words carry.
func speakerCount(resp *api.ListenResponse) int {
	seen := map[int]bool{}
	for _, ch := range resp.Results.Channels {
		if len(ch.Alternatives) == 0 {
			continue
		}
		for _, w := range ch.Alternatives[0].Words {
			if w.Speaker != nil {
				seen[*w.Speaker] = true
			}
		}
	}
	return len(seen)
}

// maxEntities bounds the entities listed; the rest are counted.
const maxEntities = 20

// entityWords lists the entities found, e.g. "Entities: Ann (name),
// March 3 (date)", or "" when there are none.
func entityWords(resp *api.ListenResponse) string {
	var list []string
	seen := map[string]bool{}
	more := 0
	for _, ch := range resp.Results.Channels {
		if len(ch.Alternatives) == 0 {
			continue
		}
		for _, e := range ch.Alternatives[0].Entities {
			value := strings.TrimSpace(e.Value)
			if value == "" {
				continue
			}
			label := strings.ToLower(strings.ReplaceAll(e.Label, "_", " "))
			item := value
			if label != "" {
				item += " (" + label + ")"
			}
			if seen[item] {
				continue
			}
			seen[item] = true
			if len(list) == maxEntities {
				more++
				continue
			}
			list = append(list, item)
		}
	}
	if len(list) == 0 {
		return ""
	}
	s := "Entities: " + strings.Join(list, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// requestedDiarization reads, from a saved session's options (the JSON
// of the request's query), which diarization model was asked for.
func requestedDiarization(options string) string {
	var q map[string][]string
	if options == "" || json.Unmarshal([]byte(options), &q) != nil {
		return ""
	}
	for _, k := range []string{"diarize_model", "diarize_version"} {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// fileIntelView shows the audio intelligence of a file transcription
// (summary, sentiment, topics, intents) under the Captions tab, with the
// intelligence panel the Analyze tab uses; a passage chosen is named by
// its time range in the audio. Its fields are touched only on the UI
// goroutine.
type fileIntelView struct {
	panel   *intelPanel
	title   *widget.Label
	box     fyne.CanvasObject
	host    *fyne.Container
	content fyne.CanvasObject
	split   *container.Split
	words   []api.Word
}

// withFileIntel puts content (the Captions tab's transcript) above the
// intelligence of the file transcribed, shown when it has any.
func (a *App) withFileIntel(content fyne.CanvasObject) fyne.CanvasObject {
	v := &fileIntelView{content: content}
	v.panel = newIntelPanel(v.showPassage)
	v.title = heading("")
	v.title.Truncation = fyne.TextTruncateEllipsis
	hide := widget.NewButtonWithIcon("Hide", theme.CancelIcon(), v.hide)
	v.box = container.NewPadded(container.NewBorder(container.NewBorder(nil, nil, nil, hide, v.title), nil, nil, nil, v.panel.buildUI()))
	v.split = container.NewVSplit(content, v.box)
	v.split.Offset = 0.55
	v.host = container.NewStack(content)
	a.fileIntel = v
	return v.host
}

// show shows the intelligence of the transcription of name, or hides the
// view when it has none.
func (v *fileIntelView) show(name string, resp *api.ListenResponse) {
	if v == nil {
		return
	}
	if !hasIntelligence(resp) {
		v.hide()
		return
	}
	r := resp.Results
	summary := ""
	if r.Summary != nil {
		summary = r.Summary.Short
	}
	v.words = nil
	if len(r.Channels) > 0 && len(r.Channels[0].Alternatives) > 0 {
		v.words = r.Channels[0].Alternatives[0].Words
	}
	v.title.SetText("Intelligence of " + name)
	v.panel.show(summary, r.Sentiments, r.Topics, r.Intents)
	v.split.Leading, v.split.Trailing = v.content, v.box
	v.host.Objects = []fyne.CanvasObject{v.split}
	v.split.Refresh()
	v.host.Refresh()
}

func (v *fileIntelView) hide() {
	if v == nil {
		return
	}
	v.host.Objects = []fyne.CanvasObject{v.content}
	v.host.Refresh()
}

// shown reports whether the intelligence is on screen.
func (v *fileIntelView) shown() bool {
	return len(v.host.Objects) == 1 && v.host.Objects[0] == v.split
}

// showPassage names the chosen passage by its time range in the audio.
func (v *fileIntelView) showPassage(s intelSegment) {
	desc := fmt.Sprintf("%s “%s” (%s)", s.kind, s.label, scoreWords(s))
	start, end, ok := sessions.TimeRange(v.words, s.startWord, s.endWord)
	if !ok {
		v.panel.setSelected(desc + ": “" + s.text + "”")
		return
	}
	v.panel.setSelected(fmt.Sprintf("%s: %s–%s “%s”", desc, timecode.Of(start), timecode.Of(end), s.text))
}

// saveChoiceError is a failure of Fyne's save dialog to open the file
// chosen. The dialog joins what is typed to the folder shown, so a full
// path typed as the name names a folder that does not exist.
type saveChoiceError struct{ err error }

func (e saveChoiceError) Error() string { return e.err.Error() }
func (e saveChoiceError) Unwrap() error { return e.err }
