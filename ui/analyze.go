package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Words and limits of the Analyze tab.
const (
	analyzeHint = "Paste a document, open a file (PDF, Word, OpenDocument, web page, e-book, RTF, text) or drop one on the window, or give the address of a web page or PDF, then press Analyze (Ctrl+Enter)."
	// analyzeHistoryLen bounds the past analyses listed.
	analyzeHistoryLen = 200
)

// analyzeShortcut runs an analysis; exportShortcut (Ctrl+E) exports it.
var analyzeShortcut = ctrl(fyne.KeyReturn)

// highlightStyle marks the passage chosen in the source text.
var highlightStyle = widget.RichTextStyle{
	Inline:    true,
	ColorName: theme.ColorNamePrimary,
	TextStyle: fyne.TextStyle{Bold: true},
}

// analyzeTab is the Analyze tab: text intelligence on a pasted document,
// a file or a URL. Its fields are touched only on the UI goroutine.
type analyzeTab struct {
	app *App
	ui  lazyTab // its widgets, built when the tab is first shown
	off *offWhy // why controls are off, under the toolbar

	input      *docField
	info       *widget.Label // the source's format and pages, and how it was analysed
	fetch      *widget.Button
	parts      *widget.ProgressBar // the part being analysed, of a long document
	pageList   *pageLinks
	results    *fyne.Container // the panel, with the passages by page for a paged source
	part       *widget.Button  // offers the first part of a document too long
	pages      *pager
	url        *boundedEntry
	openFile   *widget.Button
	checks     *intelChecks
	analyze    *widget.Button
	cancel     *widget.Button
	export     *widget.Button
	edit       *widget.Button
	busy       *widget.ProgressBarInfinite
	title      *widget.Label
	source     *widget.RichText
	sourceBox  *container.Scroll
	inputStack *fyne.Container
	panel      *intelPanel
	history    *widget.List
	reopen     *widget.Button
	remove     *widget.Button
	status     *widget.Label

	opened  *openedDoc // the document read from a file or fetched, shown in the input
	filling bool       // the input is being set, not edited
	edited  string     // the run sends the edited text of this document
	// whenShown, when not nil, is told once how the document
	// AnalyzeDocument opens ends: shown analysed, or why not.
	whenShown func(error)
	last      sessions.AnalysisInput
	lastName  string
	tooLong   *sessions.TooLongError // the last run's refusal, offering a part
	auto      bool                   // the analysis under way is Options.AutoAnalyze's
	job       *analysisJob
	shown     *sessions.AnalysisResult
	past      []store.Session
	selected  int // index in past, -1 for none
	settings  store.Settings
}

// analysisJob is an analysis under way.
type analysisJob struct{ cancellable }

func newAnalyzeTab(a *App) *analyzeTab {
	return &analyzeTab{app: a, selected: -1, settings: store.DefaultSettings(), off: newOffWhy()}
}

func (t *analyzeTab) buildUI() fyne.CanvasObject {
	t.input = newDocField(sessions.MaxAnalysisBytes, "Pasted text", t.setStatus)
	t.input.entry.SetPlaceHolder(analyzeHint)
	t.input.changed = t.onInputChanged
	t.input.overMost = func(text string) (string, string) {
		return "", fmt.Sprintf("Not pasted: the text is %s, and Earshot analyses documents of up to %d MB. Save it as a file and analyse part of it.",
			megabytes(int64(len(text))), sessions.MaxAnalysisBytes>>20)
	}
	t.part = widget.NewButtonWithIcon("Analyse the first part", theme.ContentCutIcon(), t.onAnalyzePart)
	t.part.Hide()
	t.url = newBoundedEntry(shortLimit, func(p string) {
		t.setStatus(tooLongWords("The address field", len(p), shortLimit), widget.WarningImportance)
	})
	t.url.SetPlaceHolder("https://… address of a web page, a PDF or a text")
	t.url.OnChanged = func(string) { t.updateControls() }
	t.url.OnSubmitted = func(string) { t.onFetch() }
	t.fetch = widget.NewButtonWithIcon("Fetch", theme.DownloadIcon(), t.onFetch)
	t.openFile = widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), t.onOpenFile)
	t.checks = newIntelChecks(t.onFeaturesChanged)
	t.analyze = widget.NewButtonWithIcon("Analyze", theme.SearchIcon(), t.onAnalyze)
	t.analyze.Importance = widget.HighImportance
	t.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), t.onCancel)
	t.export = widget.NewButtonWithIcon("Export…", theme.DownloadIcon(), t.onExport)
	t.edit = widget.NewButtonWithIcon("Edit text", theme.DocumentCreateIcon(), t.onEdit)
	t.busy = widget.NewProgressBarInfinite()
	t.busy.Stop()
	t.busy.Hide()
	t.parts = widget.NewProgressBar()
	t.parts.Hide()

	t.title = widget.NewLabelWithStyle("Document", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.title.Truncation = fyne.TextTruncateEllipsis
	t.info = widget.NewLabel("")
	t.info.SizeName = theme.SizeNameCaptionText
	t.info.Truncation = fyne.TextTruncateEllipsis
	t.info.Hide()
	t.source = widget.NewRichText()
	t.source.Wrapping = fyne.TextWrapWord
	t.sourceBox = container.NewVScroll(t.source)
	t.pages = newPager(func() { t.showSource(t.shown, nil) })
	t.sourceBox.Hide()
	t.inputStack = container.NewStack(t.input.box, container.NewBorder(nil, t.pages.bar, nil, nil, t.sourceBox))

	t.panel = newIntelPanel(t.showPassage)
	t.pageList = newPageLinks(t.showPage, t.showPassage)
	t.history = widget.NewList(
		func() int { return len(t.past) },
		func() fyne.CanvasObject {
			title := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			title.Truncation = fyne.TextTruncateEllipsis
			detail := widget.NewLabel("")
			detail.Truncation = fyne.TextTruncateEllipsis
			detail.SizeName = theme.SizeNameCaptionText
			return container.New(stackedLayout{}, title, detail)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < 0 || id >= len(t.past) {
				return
			}
			s := t.past[id]
			c, ok := o.(*fyne.Container)
			if !ok || len(c.Objects) != 2 {
				return
			}
			if title, ok := c.Objects[0].(*widget.Label); ok {
				title.SetText(s.Title)
			}
			if detail, ok := c.Objects[1].(*widget.Label); ok {
				detail.SetText(joinDot(when(s.Started, t.app.now()), s.Source, sessionOutcome(s)))
			}
		})
	t.history.OnSelected = func(id widget.ListItemID) { t.selected = id; t.updateControls() }
	t.history.OnUnselected = func(widget.ListItemID) { t.selected = -1; t.updateControls() }
	t.reopen = widget.NewButtonWithIcon("Open", theme.FolderOpenIcon(), t.onReopen)
	t.remove = widget.NewButtonWithIcon("Delete", theme.DeleteIcon(), t.onDelete)
	t.status = widget.NewLabel("Ready.")
	t.status.Wrapping = fyne.TextWrapWord

	// Two rows: in one, at 800 pixels wide, the toggles and buttons ran
	// over the address field.
	toolbar := container.NewVBox(
		container.NewBorder(nil, nil, container.NewHBox(t.openFile, widget.NewLabel("or URL")), container.NewHBox(t.fetch, t.analyze, t.cancel, t.export), t.url),
		container.NewHBox(t.checks.box), t.off.line)
	doc := container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, nil, t.edit, t.title), t.info), nil, nil, nil, t.inputStack)
	t.results = t.pageList.wrap(t.panel.buildUI())
	results := container.NewBorder(container.NewHBox(heading("Analysis")), nil, nil, nil, t.results)
	past := container.NewBorder(heading("Past analyses"), container.NewHBox(t.reopen, t.remove), nil, nil, t.history)
	right := container.NewHSplit(container.NewPadded(results), container.NewPadded(past))
	right.Offset = 0.72
	split := container.NewHSplit(container.NewPadded(doc), right)
	split.Offset = 0.42
	statusBar := container.NewBorder(nil, nil, nil, container.NewHBox(t.part, container.New(widthLayout{width: 200}, container.NewStack(t.busy, t.parts))), t.status)
	t.updateControls()
	return container.NewBorder(
		container.NewVBox(container.NewPadded(toolbar), widget.NewSeparator()),
		container.NewVBox(widget.NewSeparator(), statusBar),
		nil, nil, split)
}

func (t *analyzeTab) setStatus(text string, imp widget.Importance) {
	t.status.Importance = imp
	t.status.SetText(text)
}

func (t *analyzeTab) showError(what string, err error) {
	t.app.log.Warn(what, "err", err)
	t.setStatus(analysisWords(err, t.backendName()), widget.DangerImportance)
	t.app.noteStatus(t.status, err, captionsReady)
}

// backendName names the service the settings choose, for errors.
func (t *analyzeTab) backendName() string {
	switch t.settings.Backend {
	case store.BackendLocal:
		return "The local engine"
	case store.BackendHosted:
		return "The hosted service"
	}
	return "Text analysis"
}

// analysisWords words the errors of an analysis that Earshot's own
// layers raise; the rest as every view does.
func analysisWords(err error, who string) string {
	switch {
	case errors.Is(err, sessions.ErrEnglishOnly):
		return who + " analyses English only. Set the language in Settings to English (en) to analyse text."
	case errors.Is(err, sessions.ErrNoFeatures):
		return "Choose at least one of Summary, Sentiment, Topics and Intents."
	case errors.Is(err, sessions.ErrNoInput):
		return "Give one document: paste text, open a file, or type an address — not more than one."
	case errors.Is(err, sessions.ErrNotText):
		return "Earshot cannot analyse this as text: it reads PDF, Word (.docx), OpenDocument (.odt), web pages, EPUB e-books, RTF, Markdown and plain text, of up to 10 MB of text."
	}
	return plainError(err)
}

// updateControls enables what can be done now.
func (t *analyzeTab) updateControls() {
	busy := t.job != nil
	hasInput := strings.TrimSpace(t.input.Text()) != "" || strings.TrimSpace(t.url.Text) != ""
	why := ""
	switch {
	case busy:
	case !hasInput:
		why = "Paste a text, open a document or type a web address to analyse it."
	case !t.checks.features().Any():
		why = "Tick at least one analysis to run."
	}
	t.off.set(t.analyze, !busy && hasInput && t.checks.features().Any(), why)
	enable(t.cancel, busy && !t.job.cancelled)
	enable(t.openFile, !busy)
	enable(t.fetch, !busy && strings.TrimSpace(t.url.Text) != "")
	enable(t.url, !busy)
	t.input.enable(!busy)
	enable(t.part, !busy)
	// Export writes the analysis on screen: also one history did not keep.
	t.off.set(t.export, !busy && t.shown != nil, "")
	enable(t.edit, !busy && t.sourceBox.Visible())
	enable(t.reopen, !busy && t.selected >= 0)
	enable(t.remove, !busy && t.selected >= 0)
	t.off.show()
}

// settingsChanged takes the saved settings: the toggles show them.
func (t *analyzeTab) settingsChanged(s store.Settings) {
	t.ui.do(func() {
		t.settings = s
		t.checks.set(sessions.AnalyzeFeatures(s))
		t.updateControls()
	})
}

// onFeaturesChanged saves the toggles, so the next run starts with them.
func (t *analyzeTab) onFeaturesChanged() {
	t.updateControls()
	f := t.checks.features()
	t.app.changeSettings(func(s *store.Settings) { sessions.SetAnalyzeFeatures(s, f) },
		func(err error) { t.showError("save the analysis toggles", err) })
}

// onOpenFile asks for a document to analyse.
func (t *analyzeTab) onOpenFile() {
	if t.job != nil {
		return
	}
	t.app.openLocalFile("a document to analyse", documentExtensions, func(path string) { t.openPath(path, nil) })
}

// onAnalyze analyses what was given (Ctrl+Enter).
func (t *analyzeTab) onAnalyze() {
	if t.job != nil || t.analyze.Disabled() {
		return
	}
	in, name, edited, err := t.given()
	if err != nil {
		t.setStatus(analysisWords(err, ""), widget.WarningImportance)
		return
	}
	t.run(in, name)
	if t.job != nil {
		t.edited = edited
	}
}

// run analyses in off the UI goroutine, with progress and Cancel.
func (t *analyzeTab) run(in sessions.AnalysisInput, name string) {
	f := t.checks.features()
	ctx, cancel := context.WithCancel(t.app.ctx)
	job := &analysisJob{cancellable{cancel: cancel}}
	t.job = job
	t.last, t.lastName, t.tooLong, t.edited = in, name, nil, ""
	t.part.Hide()
	t.busy.Show()
	t.busy.Start()
	t.setStatus("Analysing "+name+"…", widget.MediumImportance)
	t.updateControls()
	relay := &latestRelay[sessions.AnalysisProgressEvent]{onUI: t.app.onUI, show: func(ev sessions.AnalysisProgressEvent) { t.showProgress(job, ev) }}
	started := t.app.goAsync(func(context.Context) {
		defer cancel()
		var end analysisEnd
		s, err := t.app.ws.StartAnalysis(ctx, in, f)
		if err != nil {
			end.err = err
		} else {
			end = followAnalysis(s, relay.report)
		}
		t.app.onUI(func() { t.done(job, name, end) })
	})
	if !started {
		cancel()
		t.job = nil
		t.busy.Hide()
		t.updateControls()
	}
}

// analysisEnd is how an analysis ended: its result, what history could
// not keep of it, or why it failed.
type analysisEnd struct {
	res     *sessions.AnalysisResult
	unsaved *sessions.SaveFailedEvent
	err     error
}

// followAnalysis reads the events of an analysis until they close, off
// the UI goroutine, handing each phase and part reached to progress
// (which must not block), and returns how it ended. Cancelling the
// context it was started with stops it.
func followAnalysis(s *sessions.AnalysisSession, progress func(sessions.AnalysisProgressEvent)) analysisEnd {
	var end analysisEnd
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *sessions.AnalysisProgressEvent:
			progress(*ev)
		case *sessions.SaveFailedEvent:
			if end.unsaved == nil {
				end.unsaved = ev
			}
		case *sessions.AnalysisDoneEvent:
			end.res = ev.Result
		}
	}
	<-s.Done()
	end.err = s.Err()
	return end
}

// onCancel stops the analysis under way.
func (t *analyzeTab) onCancel() {
	if t.job != nil && t.job.stop() {
		t.setStatus("Cancelling…", widget.MediumImportance)
		t.updateControls()
	}
}

func (t *analyzeTab) done(job *analysisJob, name string, end analysisEnd) {
	if t.job == job {
		t.job = nil
	}
	t.busy.Stop()
	t.busy.Hide()
	t.parts.Hide()
	t.app.historyChanged(store.KindAnalysis)
	t.updateControls()
	err := end.err
	defer func() { t.tell(err) }()
	edited := t.edited
	t.edited = ""
	auto := t.auto || t.whenShown != nil
	if t.auto {
		t.auto = false
		defer func() { t.app.loaded(partAuto, err) }()
	}
	if err != nil {
		if job.cancelled && errors.Is(err, context.Canceled) {
			t.setStatus("The analysis of "+name+" was cancelled.", widget.MediumImportance)
			return
		}
		if tl := (*sessions.TooLongError)(nil); errors.As(err, &tl) && tl.Part > 0 {
			t.offerPart(name, tl)
			return
		}
		t.showError("analyse "+name, err)
		return
	}
	res := end.res
	t.showResult(res)
	if edited != "" {
		t.showResultInfo(res, edited)
	}
	switch {
	case t.whenShown != nil && t.pageList.selectPage(2):
		// Show what a page link leads to, past the first page.
	case auto:
		// Show what a click on a result does.
		t.panel.selectFirst()
	}
	done := "Analysed " + res.Title
	if n := res.PartCount(); n > 1 {
		done += fmt.Sprintf(" in %d parts", n)
	}
	done = sentence(done)
	if u := end.unsaved; u != nil {
		t.app.log.Warn("save an analysis", "what", u.What, "err", u.Err)
		t.setStatus(done+" "+plainError(u), widget.WarningImportance)
		return
	}
	t.setStatus(done, widget.SuccessImportance)
}

// showResult shows an analysis: its document and its results.
func (t *analyzeTab) showResult(res *sessions.AnalysisResult) {
	t.shown = res
	t.title.SetText(res.Title)
	r := res.Response.Results
	summary := ""
	if r.Summary != nil {
		summary = r.Summary.Text
	}
	t.panel.show(summary, r.Sentiments, r.Topics, r.Intents)
	t.pageList.show(res, t.panel)
	t.showResultInfo(res, "")
	t.pages.set(res.Text)
	t.showSource(res, nil)
	t.input.box.Hide()
	t.sourceBox.Show()
	t.updateControls()
}

// showSource shows the page of the document with the span hl, if any,
// highlighted (the page where it starts), else the pager's page.
func (t *analyzeTab) showSource(res *sessions.AnalysisResult, hl *sessions.Span) {
	if res == nil {
		return
	}
	text := res.Text
	if text == "" {
		msg := "The document is not available"
		if res.TextErr != nil {
			msg += ": " + lowerFirst(strings.TrimSuffix(plainError(res.TextErr), "."))
		}
		t.source.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: msg + ".", Style: widget.RichTextStyleInline}}
		t.source.Refresh()
		return
	}
	paged := len(t.pageList.starts) > 0
	if hl == nil || hl.Start < 0 || hl.End > len(text) || hl.Start >= hl.End {
		from, to := t.pages.span()
		if paged {
			t.source.Segments = t.pagedSegments(text, from, to, nil, 0)
		} else {
			t.source.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: text[from:to], Style: widget.RichTextStyleInline}}
		}
		t.source.Refresh()
		t.sourceBox.ScrollToTop()
		return
	}
	t.pages.showOffset(hl.Start)
	from, to := t.pages.span()
	start, end := hl.Start, min(hl.End, to)
	if paged {
		t.source.Segments = t.pagedSegments(text, from, to, hl, 0)
	} else {
		t.source.Segments = []widget.RichTextSegment{
			&widget.TextSegment{Text: text[from:start], Style: widget.RichTextStyleInline},
			&widget.TextSegment{Text: text[start:end], Style: highlightStyle},
			&widget.TextSegment{Text: text[end:to], Style: widget.RichTextStyleInline},
		}
	}
	t.source.Refresh()
	// Scroll so the passage is in the upper third of the view.
	t.scrollSourceTo(from, to, start)
}

// showPassage highlights the passage of a chosen segment.
func (t *analyzeTab) showPassage(s intelSegment) {
	res := t.shown
	if res == nil {
		return
	}
	desc := fmt.Sprintf("%s “%s” (%s)", s.kind, s.label, scoreWords(s))
	sp, ok := res.Words().Span(s.startWord, s.endWord)
	if !ok || res.Text == "" {
		t.panel.setSelected(desc + ": its passage is not in the document shown.")
		t.showSource(res, nil)
		return
	}
	where := fmt.Sprintf(": words %d–%d", max(s.startWord, 0)+1, min(s.endWord, res.Words().Len()-1)+1)
	if p := res.PageOf(s.startWord); p > 0 {
		where += fmt.Sprintf(", p. %d", p)
	}
	t.panel.setSelected(desc + where + ".")
	t.showSource(res, &sp)
}

func scoreWords(s intelSegment) string {
	if s.kind == "Sentiment" {
		return fmt.Sprintf("%+.2f", s.score)
	}
	return sessions.Percent(s.score)
}

// onEdit goes back to the text to change it and analyse it again.
func (t *analyzeTab) onEdit() {
	if t.shown != nil && t.shown.SourceKind == sessions.SourceText && t.input.Text() == "" {
		t.input.SetText(t.shown.Text)
	}
	t.sourceBox.Hide()
	t.input.box.Show()
	t.showInputInfo()
	t.updateControls()
}

// offerPart says that the document was too long, and offers its first
// part.
func (t *analyzeTab) offerPart(name string, tl *sessions.TooLongError) {
	t.tooLong = tl
	msg := fmt.Sprintf("%s is too long for one analysis: the service analyses at most %s tokens at a time", upperName(name), thousands(tl.Limit))
	if tl.Tokens > 0 {
		msg += fmt.Sprintf(", and it has %s", thousands(tl.Tokens))
	}
	t.setStatus(msg+fmt.Sprintf(". Analyse its first %s tokens instead?", thousands(tl.Part)), widget.WarningImportance)
	t.part.Show()
	t.updateControls()
}

// onAnalyzePart analyses the first part of the document that was too
// long.
func (t *analyzeTab) onAnalyzePart() {
	if t.job != nil || t.tooLong == nil {
		return
	}
	in := t.last
	in.FirstTokens = t.tooLong.Part
	t.run(in, "the first part of "+t.lastName)
}

// onExport exports the analysis shown (Ctrl+E) as Markdown or JSON, as
// it is on screen: also when history could not keep it.
func (t *analyzeTab) onExport() {
	if t.shown == nil {
		t.setStatus("Nothing to export yet: analyse a document or open a past analysis.", widget.WarningImportance)
		return
	}
	res, title := t.shown, t.shown.Title
	names := []string{"Markdown report (.md)", "JSON, the service's format (.json)"}
	formats := widget.NewRadioGroup(names, nil)
	formats.Required = true
	formats.SetSelected(names[0])
	dialog.NewCustomConfirm("Export “"+title+"”", "Choose file…", "Cancel",
		container.NewVBox(widget.NewLabel("Save the analysis as:"), formats),
		func(ok bool) {
			if !ok {
				return
			}
			f := sessions.AnalysisMarkdown
			if formats.Selected == names[1] {
				f = sessions.AnalysisJSON
			}
			t.chooseExportFile(res, title, f)
		}, t.app.window).Show()
}

func (t *analyzeTab) chooseExportFile(res *sessions.AnalysisResult, title string, f sessions.AnalysisFormat) {
	name := strings.TrimSuffix(exportFileName(title, ""), ".")
	if ext := filepath.Ext(name); ext == ".txt" || ext == ".md" {
		name = strings.TrimSuffix(name, ext)
	}
	req := pathRequest{title: "Export the analysis", confirm: "Save", save: true,
		extensions: []string{f.Extension()}, name: name + f.Extension()}
	t.app.askPath(req, func(path string) {
		format := f
		if g, err := sessions.ParseAnalysisFormat(filepath.Ext(path)); err == nil {
			format = g
		}
		t.writeExport(res, format, path)
	})
}

// writeExport writes the analysis res in format f to the file at path,
// off the UI goroutine.
func (t *analyzeTab) writeExport(res *sessions.AnalysisResult, f sessions.AnalysisFormat, path string) {
	name := filepath.Base(path)
	t.setStatus("Exporting to "+name+"…", widget.MediumImportance)
	t.app.goAsync(func(context.Context) {
		err := sessions.WriteFile(path, func(w io.Writer) error { return sessions.ExportAnalysis(w, f, res) })
		t.app.onUI(func() {
			if err != nil {
				t.showError("export "+name, err)
				return
			}
			t.setStatus("Saved "+name+".", widget.SuccessImportance)
		})
	})
}

// reload lists the past analyses, off the UI goroutine.
func (t *analyzeTab) reload() {
	t.ui.do(func() {
		t.app.goAsync(func(ctx context.Context) {
			list, err := t.app.ws.Sessions(ctx, store.Filter{Kind: store.KindAnalysis, Limit: analyzeHistoryLen})
			t.app.onUI(func() {
				if err != nil {
					t.showError("list past analyses", err)
					return
				}
				t.past = list
				t.selected = -1
				t.history.UnselectAll()
				t.history.Refresh()
				t.updateControls()
			})
		})
	})
}

// onReopen shows the past analysis selected.
func (t *analyzeTab) onReopen() {
	if t.selected < 0 || t.selected >= len(t.past) || t.job != nil {
		return
	}
	t.openPast(t.past[t.selected])
}

// onDelete deletes the past analysis selected, once confirmed.
func (t *analyzeTab) onDelete() {
	if t.selected < 0 || t.selected >= len(t.past) {
		return
	}
	s := t.past[t.selected]
	dialog.NewConfirm("Delete “"+s.Title+"”?", "The analysis and its document are removed from history.", func(ok bool) {
		if !ok {
			return
		}
		t.app.goAsync(func(ctx context.Context) {
			err := t.app.ws.DeleteSession(ctx, s.ID)
			t.app.onUI(func() {
				if err != nil {
					t.showError("delete an analysis", err)
					return
				}
				if t.shown != nil && t.shown.SessionID == s.ID {
					t.shown.SessionID = 0
				}
				t.setStatus("Deleted “"+s.Title+"”.", widget.MediumImportance)
				t.app.historyChanged(store.KindAnalysis)
			})
		})
	}, t.app.window).Show()
}

// intelChecks are the four feature toggles, shared by the Analyze tab and
// the Settings tab's file intelligence.
type intelChecks struct {
	summary, sentiment, topics, intents *widget.Check
	box                                 *fyne.Container
	filling                             bool
}

func newIntelChecks(onChanged func()) *intelChecks {
	c := &intelChecks{}
	changed := func(bool) {
		if !c.filling && onChanged != nil {
			onChanged()
		}
	}
	c.summary = widget.NewCheck("Summary", changed)
	c.sentiment = widget.NewCheck("Sentiment", changed)
	c.topics = widget.NewCheck("Topics", changed)
	c.intents = widget.NewCheck("Intents", changed)
	c.box = container.NewHBox(c.summary, c.sentiment, c.topics, c.intents)
	return c
}

func (c *intelChecks) features() sessions.Features {
	return sessions.Features{Summary: c.summary.Checked, Sentiment: c.sentiment.Checked, Topics: c.topics.Checked, Intents: c.intents.Checked}
}

// set shows f without calling onChanged.
func (c *intelChecks) set(f sessions.Features) {
	c.filling = true
	defer func() { c.filling = false }()
	c.summary.SetChecked(f.Summary)
	c.sentiment.SetChecked(f.Sentiment)
	c.topics.SetChecked(f.Topics)
	c.intents.SetChecked(f.Intents)
}

// autoAnalyze pastes text and analyses it with every feature, for
// Options.AutoAnalyze; OnReady waits for the result.
func (t *analyzeTab) autoAnalyze(text string) {
	t.auto = true
	t.setInput(text, nil)
	t.checks.set(sessions.AllFeatures())
	t.run(sessions.AnalysisInput{Text: text}, "the text")
}

// analyzeMenu is the Analyze menu; item makes an item with a shortcut.
func (a *App) analyzeMenu(item func(string, fyne.Shortcut, fyne.Resource, func()) *fyne.MenuItem) *fyne.Menu {
	on := func(action func()) func() {
		return func() {
			a.SelectTab("Analyze")
			action()
		}
	}
	return fyne.NewMenu("Analyze",
		item("Analyze the document", analyzeShortcut, theme.SearchIcon(), on(a.analyze.onAnalyze)),
		item("Open a document to analyse…", nil, theme.FolderOpenIcon(), on(a.analyze.onOpenFile)),
		item("Export the analysis…", nil, theme.DownloadIcon(), on(a.analyze.onExport)),
	)
}

// exportShown makes Ctrl+E export what the window shows: the analysis
// when the Analyze tab is open, else what captions does.
func (a *App) exportShown(captions func()) func() {
	return func() {
		if sel := a.tabs.Selected(); sel != nil && sel.Text == "Analyze" {
			a.analyze.onExport()
			return
		}
		captions()
	}
}
