package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/sessions"
)

// documentExtensions are the files the Open dialog of the Analyze tab
// offers: every format package document reads.
var documentExtensions = document.Extensions()

// openedDoc is a document the Analyze tab read from a file or fetched
// from an address, shown in its input before it is analysed.
type openedDoc struct {
	doc  *document.Document
	text string // doc.Text(), as the input shows it
	path string // the file read, or ""
	url  string // the address fetched, or ""
	// plain is true when the address answered plain text, which the
	// service fetches itself.
	plain bool
	name  string // for people: the file's name, or the address
	// about names its format with its pages or words, counted off the
	// UI goroutine: "PDF, 12 pages".
	about string
}

// newOpenedDoc describes doc, read from path or fetched from address u;
// it counts the words, so it runs off the UI goroutine.
func newOpenedDoc(doc *document.Document, path, u, name string, plain bool) *openedDoc {
	return &openedDoc{doc: doc, text: doc.Text(), path: path, url: u, plain: plain, name: name,
		about: describeSource(doc.Format, doc.Pages(), doc.Words())}
}

// input is what analysing the document unchanged sends: its text with its
// format and pages, or a plain-text address.
func (o *openedDoc) input() sessions.AnalysisInput {
	switch {
	case o.path != "":
		return sessions.AnalysisInput{Path: o.path, Document: o.doc}
	case o.plain:
		return sessions.AnalysisInput{URL: o.url}
	}
	return sessions.AnalysisInput{URL: o.url, Document: o.doc}
}

// title is the document's own title, else its name.
func (o *openedDoc) title() string {
	if t := strings.TrimSpace(o.doc.Title); t != "" {
		return t
	}
	return o.name
}

// openPath reads the document at path, off the UI goroutine, and shows
// its text in the input, to be read, edited and analysed; then, when not
// nil, runs after it is shown.
func (t *analyzeTab) openPath(path string, then func()) {
	name := filepath.Base(path)
	t.load("Reading "+name+"…", func(ctx context.Context) (*openedDoc, error) {
		doc, err := sessions.ReadDocument(ctx, path)
		if err != nil {
			return nil, err
		}
		return newOpenedDoc(doc, path, "", name, false), nil
	}, then)
}

// onFetch fetches the address typed (Enter in the address field), off
// the UI goroutine, and shows the text of the page or PDF in the input.
func (t *analyzeTab) onFetch() {
	u := strings.TrimSpace(t.url.Text)
	if u == "" || t.job != nil {
		return
	}
	name := u
	if p, err := url.Parse(u); err == nil {
		p.RawQuery, p.Fragment = "", ""
		name = p.Redacted()
	}
	t.load("Fetching "+name+"…", func(ctx context.Context) (*openedDoc, error) {
		f, err := sessions.FetchDocument(ctx, u)
		if err != nil {
			return nil, &fetchError{name: name, err: err}
		}
		return newOpenedDoc(f.Doc, "", u, name, f.PlainURL), nil
	}, nil)
}

// load runs work (reading or fetching a document) off the UI goroutine
// with the status, the busy bar and Cancel, then shows what it read.
func (t *analyzeTab) load(status string, work func(context.Context) (*openedDoc, error), then func()) {
	if t.job != nil {
		t.setStatus("Wait for the work under way to end, or cancel it, before opening another document.", widget.WarningImportance)
		return
	}
	ctx, cancel := context.WithCancel(t.app.ctx)
	job := &analysisJob{cancellable{cancel: cancel}}
	t.job = job
	t.busy.Show()
	t.busy.Start()
	t.setStatus(status, widget.MediumImportance)
	t.updateControls()
	started := t.app.goAsync(func(context.Context) {
		defer cancel()
		o, err := work(ctx)
		t.app.onUI(func() { t.documentRead(job, o, err, then) })
	})
	if !started {
		cancel()
		t.job = nil
		t.busy.Hide()
		t.updateControls()
	}
}

// documentRead shows the document read, or why it could not be.
func (t *analyzeTab) documentRead(job *analysisJob, o *openedDoc, err error, then func()) {
	if t.job == job {
		t.job = nil
	}
	t.busy.Stop()
	t.busy.Hide()
	t.updateControls()
	if err != nil {
		var fe *fetchError
		switch {
		case job.cancelled && errors.Is(err, context.Canceled):
			t.setStatus("Stopped: the document was not opened.", widget.MediumImportance)
		case errors.As(err, &fe):
			t.app.log.Warn("fetch a document", "err", err)
			t.setStatus(fetchWords(fe), widget.DangerImportance)
		default:
			t.showError("open a document", err)
		}
		t.tell(err)
		return
	}
	if o.path != "" {
		t.url.SetText("")
	}
	t.sourceBox.Hide()
	t.input.box.Show()
	t.setInput(o.text, o)
	t.title.SetText(o.title())
	t.showInputInfo()
	t.updateControls()
	t.setStatus(fmt.Sprintf("Opened %s: %s. Read or edit its text, then press Analyze (Ctrl+Enter).", o.name, o.about), widget.SuccessImportance)
	if then != nil {
		then()
	}
}

// setInput puts text in the input as the document o (nil for text of
// no document), not as an edit.
func (t *analyzeTab) setInput(text string, o *openedDoc) {
	t.filling = true
	defer func() { t.filling = false }()
	t.opened = o
	t.input.what = "Pasted text"
	if o != nil {
		t.input.what = o.name
	}
	t.input.SetText(text)
	t.updateControls()
}

// onInputChanged follows edits of the input: emptied, it no longer holds
// the document opened; edited, the line under the title says so.
func (t *analyzeTab) onInputChanged() {
	if !t.filling {
		if t.opened != nil && strings.TrimSpace(t.input.Text()) == "" {
			t.opened = nil
			t.input.what = "Pasted text"
			t.title.SetText("Document")
		}
		t.showInputInfo()
	}
	t.updateControls()
}

// showInputInfo says under the title what the input holds: the format
// and pages of the document opened, and whether it was edited.
func (t *analyzeTab) showInputInfo() {
	o := t.opened
	if o == nil {
		t.info.Hide()
		return
	}
	words := joinDot(o.about, o.name)
	if t.input.Text() != o.text {
		if o.doc.Pages() > 0 {
			words = joinDot(words, "edited: sent as plain text, without its pages")
		} else {
			words = joinDot(words, "edited")
		}
	}
	t.info.SetText(words)
	t.info.Show()
}

// showResultInfo says under the title what was analysed: the source's
// format and pages, and in how many parts; edited names the document
// whose edited text it was.
func (t *analyzeTab) showResultInfo(res *sessions.AnalysisResult, edited string) {
	pages := 0
	if n := len(res.Pages); n > 0 {
		pages = res.Pages[n-1].Page
	}
	var words string
	switch {
	case edited != "" && res.SourceKind == sessions.SourceText:
		words = "Text edited from " + edited + ", without its pages"
	case res.Format == "" && res.SourceKind == sessions.SourceURL:
		words = "Text fetched by the service"
	default:
		words = describeSource(document.Format(res.Format), pages, res.Words().Len())
	}
	if res.SourceKind != sessions.SourceText {
		words = joinDot(words, res.Source)
	}
	if n := res.PartCount(); n > 1 {
		words = joinDot(words, fmt.Sprintf("analysed in %d parts", n))
	}
	t.info.SetText(words)
	t.info.Show()
}

// describeSource names a format for people, with its pages, else its
// words: "PDF, 12 pages", "Web page, 1,234 words".
func describeSource(f document.Format, pages, words int) string {
	name := "Plain text"
	switch f {
	case document.PDF:
		name = "PDF"
	case document.DOCX:
		name = "Word document"
	case document.ODT:
		name = "OpenDocument text"
	case document.HTML:
		name = "Web page"
	case document.EPUB:
		name = "EPUB e-book"
	case document.RTF:
		name = "RTF document"
	case document.Markdown:
		name = "Markdown"
	}
	if pages > 0 {
		return name + ", " + plural(pages, "page")
	}
	return name + ", " + plural(words, "word")
}

// tell hands how the work asked for by AnalyzeDocument ended to its
// caller, once.
func (t *analyzeTab) tell(err error) {
	if f := t.whenShown; f != nil {
		t.whenShown = nil
		f(err)
	}
}

// showProgress shows the phase an analysis reached: the part being
// analysed of a long document, on the status line and the bar.
func (t *analyzeTab) showProgress(job *analysisJob, ev sessions.AnalysisProgressEvent) {
	if t.job != job || job.cancelled {
		return
	}
	t.setStatus(ev.String(), widget.MediumImportance)
	if (ev.Phase == sessions.AnalysisAnalysing || ev.Phase == sessions.AnalysisSummarising) && ev.Parts > 1 {
		t.busy.Hide()
		t.parts.Max = float64(ev.Parts)
		parts := ev.Parts
		t.parts.TextFormatter = func() string { return fmt.Sprintf("%.0f of %d", t.parts.Value, parts) }
		t.parts.SetValue(float64(ev.Part))
		t.parts.Show()
		return
	}
	t.parts.Hide()
	t.busy.Show()
}

// dropped opens a file dropped on the window in the Analyze tab; an
// address dropped (a link from a browser) is fetched there.
func (a *App) dropped(_ fyne.Position, uris []fyne.URI) {
	for _, u := range uris {
		switch u.Scheme() {
		case "file":
			a.SelectTab("Analyze")
			a.analyze.ui.ensure()
			a.analyze.openPath(u.Path(), nil)
			return
		case "http", "https":
			a.SelectTab("Analyze")
			a.analyze.ui.ensure()
			if a.analyze.job == nil {
				a.analyze.url.SetText(u.String())
				a.analyze.onFetch()
			}
			return
		}
	}
}

// AnalyzeDocument opens the document at path in the Analyze tab and
// analyses it with every feature, then shows its first passage by page;
// done is called on the UI goroutine once the result is on screen, or
// with the error that stopped it. Screenshots use it. Call it before
// ShowAndRun or on the UI goroutine.
func (a *App) AnalyzeDocument(path string, done func(error)) {
	a.SelectTab("Analyze")
	t := a.analyze
	t.ui.ensure()
	t.whenShown = done
	t.openPath(path, func() {
		t.checks.set(sessions.AllFeatures())
		t.updateControls()
		t.onAnalyze()
		if t.job == nil {
			t.tell(errors.New("the document opened was not analysed: " + t.status.Text))
		}
	})
}

// given is what Analyze sends: the document opened, unchanged, with its
// format and pages; its text as edited (edited names the document); an
// address; or the text pasted. Two of them at once is
// sessions.ErrNoInput.
func (t *analyzeTab) given() (in sessions.AnalysisInput, name, edited string, err error) {
	u := strings.TrimSpace(t.url.Text)
	text := t.input.Text()
	if o := t.opened; o != nil && (u == "" || u == o.url) {
		if text == o.text {
			return o.input(), o.name, "", nil
		}
		if strings.TrimSpace(text) != "" {
			return sessions.AnalysisInput{Text: text}, "the edited text of " + o.name, o.name, nil
		}
	}
	switch {
	case u != "" && strings.TrimSpace(text) != "":
		return in, "", "", sessions.ErrNoInput
	case u != "":
		return sessions.AnalysisInput{URL: u}, "the document", "", nil
	case t.input.Held():
		return sessions.AnalysisInput{Text: text}, "the pasted text", "", nil
	}
	return sessions.AnalysisInput{Text: text}, "the text", "", nil
}

// fetchError is an address the Analyze tab could not fetch.
type fetchError struct {
	name string // the address, without its query
	err  error
}

func (e *fetchError) Error() string { return "fetch " + e.name + ": " + e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// fetchWords says why an address could not be fetched: the errors of a
// web site rather than of Earshot's service, which plainError words.
func fetchWords(e *fetchError) string {
	if words, ok := documentWords(e.err); ok {
		return words
	}
	var dns *net.DNSError
	var to timeouter
	switch {
	case errors.As(e.err, &dns):
		return fmt.Sprintf("Cannot find the site %q. Check the address and the network.", dns.Name)
	case errors.Is(e.err, context.DeadlineExceeded), errors.As(e.err, &to) && to.Timeout():
		return "The site at " + e.name + " did not answer in time. Try again later."
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return "Nothing answers at " + e.name + ". Check the address."
	}
	return "Could not fetch " + e.name + ": " + lowerFirst(strings.TrimPrefix(plainError(e.err), "Something went wrong: "))
}
