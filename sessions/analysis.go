package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/store"
)

// MaxAnalysisBytes bounds the text of a document (pasted, read from a
// file, or fetched to show beside its analysis): 10 MiB is some 1.6
// million words, many times the service's 150,000 tokens, analysed in
// parts; it keeps a wrong file from filling memory. Files themselves are
// bounded by document.MaxBytes.
const MaxAnalysisBytes = 10 << 20

// Errors of an analysis that a person can act on.
var (
	// ErrEnglishOnly matches a request in a language other than English:
	// text analysis (on the service and the local engine) reads English
	// only.
	ErrEnglishOnly = errors.New("text analysis works on English only")
	// ErrNoInput matches a request with no text, file or URL, or with
	// more than one of them.
	ErrNoInput = errors.New("give one document to analyse: text, a file or a URL")
	// ErrNoFeatures matches a request with every feature turned off.
	ErrNoFeatures = errors.New("choose at least one of summary, sentiment, topics and intents")
	// ErrNotText matches a text that is larger than MaxAnalysisBytes, a
	// folder given as a file, and a plain-text document fetched for the
	// source view that is not UTF-8 text.
	ErrNotText = errors.New("not a text document")
)

// AnalysisInput is the document to analyse: exactly one of its fields.
type AnalysisInput struct {
	// Text is the document itself, pasted.
	Text string
	// Path is a document on this computer in any format package
	// document reads (PDF, DOCX, ODT, EPUB, HTML, RTF, Markdown, plain
	// text in any common encoding), read here and sent as text.
	Path string
	// URL is a document on the web: a web page or a PDF is fetched and
	// read here and sent as text; a plain-text document the service
	// fetches itself.
	URL string
	// Document, when not nil, is the document at Path or URL already
	// read (document.ReadFile, document.Fetch), perhaps to show it
	// first: its text is sent, with its format and pages, and Path or
	// URL only names it.
	Document *document.Document
	// FirstTokens, when above 0, analyses only the start of a text or a
	// file: its sentences up to this many tokens (textseg.Tokens).
	// Without it, a document longer than one request takes is analysed
	// in parts.
	FirstTokens int
	// Whole sends the text in one request, never in parts: a text over
	// the limit by Earshot's count is refused before it is sent, and one
	// the service refuses as too long is a *TooLongError. Meeting notes,
	// which cut a meeting at its lines themselves, send their parts so.
	Whole bool
}

// TooLongError is a document the service refused as longer than it
// analyses in one request, which could not be cut into smaller parts (a
// single word of more tokens than the limit). Part is how many tokens to
// ask for instead, as AnalysisInput.FirstTokens: less than was sent (the
// service counts sub-word tokens, more than Earshot's count).
type TooLongError struct {
	Tokens int // the document's tokens by Earshot's count, 0 when not counted
	Limit  int
	Part   int
}

func (e *TooLongError) Error() string {
	if e.Tokens > 0 {
		return fmt.Sprintf("the document has %d tokens; at most %d are analysed in one request", e.Tokens, e.Limit)
	}
	return fmt.Sprintf("the document has more tokens than the %d analysed in one request", e.Limit)
}

// Kinds of source of an analysis, as history's details name them.
const (
	SourceText = "text"
	SourceFile = "file"
	SourceURL  = "url"
)

// AnalysisPhase is the stage of an analysis.
type AnalysisPhase int

// Phases of an analysis.
const (
	AnalysisReading   AnalysisPhase = iota + 1 // the file is being read
	AnalysisAnalysing                          // the service is working
	AnalysisFetching                           // the document named by URL is fetched, to read it or for the source view
	AnalysisDone
	// AnalysisSummarising: the summaries of a long document's parts are
	// summarised into one.
	AnalysisSummarising
)

// Reader sends documents to text intelligence; *api.Client implements it.
type Reader interface {
	Read(ctx context.Context, in api.ReadRequest, opts api.ReadOptions) (*api.ReadResponse, error)
}

// AnalysisHistory is where analyses are saved; *store.DB implements it.
// The service's answer is kept as the session's response, with the
// document as its searchable text.
type AnalysisHistory = FileHistory

// AnalysisArchive reads analyses back; *store.DB implements it.
type AnalysisArchive interface {
	Session(ctx context.Context, id int64) (store.Session, error)
	Response(ctx context.Context, sessionID int64) ([]byte, error)
	ResponseText(ctx context.Context, sessionID int64) (string, error)
}

// analysisDetails is the JSON of an analysis session's details. It never
// holds a credential: a URL is kept without its user information and
// query.
type analysisDetails struct {
	Source     string      `json:"source"`
	SourceKind string      `json:"source_kind"`
	Features   []string    `json:"features"`
	Language   string      `json:"language"`
	Format     string      `json:"format,omitempty"`
	Pages      []PageStart `json:"pages,omitempty"`
}

// savedAnalysis is the answer as history keeps it: the service's answer
// (merged, for a document analysed in parts) and the parts.
type savedAnalysis struct {
	*api.ReadResponse
	Parts []AnalysisPart `json:"earshot_parts,omitempty"`
}

// Analysis analyses documents and saves each to history. Its fields are
// set before use and never change; it is safe for concurrent use, each
// session independent.
type Analysis struct {
	Client Reader
	// History, when not nil, keeps every analysis.
	History AnalysisHistory
	// Backend names the service for history.
	Backend string
	// Language is the request's language; "" is English.
	Language string
	// HTTPClient fetches a document named by URL (to read a web page or
	// PDF, and a plain-text document for the source view); nil is a
	// client of its own with a timeout.
	HTTPClient *http.Client
	// Logger receives what could not be saved; nil discards it.
	Logger *slog.Logger
	// Clock times the sessions (history, the result's creation); nil is
	// the real clock.
	Clock Clock
	// PartTokens is the most tokens (textseg.Tokens) sent in one
	// request; a longer document is analysed in parts. 0 is four fifths
	// of the service's limit, a margin for the service counting sub-word
	// tokens.
	PartTokens int
}

func (a *Analysis) partTokens() int {
	if a.PartTokens > 0 {
		return a.PartTokens
	}
	return partBudget
}

// AnalysisProgressEvent reports the phase an analysis has reached. While
// the service works (AnalysisAnalysing), Part is the part being analysed,
// from 1, of Parts; Parts is 1 for a document analysed whole, and may
// grow when the service refuses a part as too long and it is split
// again. While summaries are summarised (AnalysisSummarising), Part of
// Parts counts those requests, and Round (from 1) the rounds.
type AnalysisProgressEvent struct {
	Phase       AnalysisPhase
	Part, Parts int
	Round       int
}

// String says what the event reports, for a status line.
func (e *AnalysisProgressEvent) String() string {
	switch e.Phase {
	case AnalysisReading:
		return "Reading the document…"
	case AnalysisAnalysing:
		if e.Parts > 1 {
			return fmt.Sprintf("Analysing part %d of %d…", e.Part, e.Parts)
		}
		return "Analysing…"
	case AnalysisSummarising:
		if e.Parts > 1 {
			return fmt.Sprintf("Summarising the parts' summaries (%d of %d)…", e.Part, e.Parts)
		}
		return "Summarising the parts' summaries…"
	case AnalysisFetching:
		return "Fetching the document…"
	case AnalysisDone:
		return "Done"
	}
	return ""
}

// AnalysisDoneEvent carries the finished analysis; it is the last event
// of a session that succeeded.
type AnalysisDoneEvent struct{ Result *AnalysisResult }

func (*AnalysisProgressEvent) isEvent() {}
func (*AnalysisDoneEvent) isEvent()     {}

// AnalysisSession is one document sent to text intelligence. Its events
// are *AnalysisProgressEvent as it goes through its phases, a
// *SaveFailedEvent when history could not keep the result, a final
// *HistoryEvent, and *AnalysisDoneEvent with the result, last; then the
// channel closes.
// Stop, or cancelling Start's context, cancels it: the session is saved
// as cancelled and Err matches context.Canceled.
//
// Start, Stop, Events, Done, Err and SessionID are safe for concurrent
// use. Events must be read until it is closed.
type AnalysisSession struct {
	*lifecycle
	a  Analysis
	in AnalysisInput
	f  Features
	id atomic.Int64
}

// Session returns a session analysing the document in with features f;
// Start starts it.
func (a *Analysis) Session(in AnalysisInput, f Features) *AnalysisSession {
	return &AnalysisSession{lifecycle: newLifecycle("analysis", a.Clock), a: *a, in: in, f: f}
}

// SessionID returns the analysis's id in history, once Start has
// returned (0 without history).
func (s *AnalysisSession) SessionID() int64 { return s.id.Load() }

// Start checks the request, reads the document from its file, or fetches
// it from its address to tell a web page or PDF (read here) from plain
// text (fetched by the service), records the analysis in history and
// sends it in the background, in parts when it is longer than one
// request takes. A request the service would refuse and a document that
// cannot be read or fetched fail Start, and nothing is saved; a history
// that cannot keep the analysis (a full disk) does not. ctx bounds the
// whole session: cancelling it stops the session like Stop.
func (s *AnalysisSession) Start(ctx context.Context) error { return s.start(ctx, s.prepare) }

func (s *AnalysisSession) prepare(ctx context.Context) (runFunc, error) {
	if s.a.Client == nil {
		return nil, errors.New("analysis: a client is needed")
	}
	in, f := s.in, s.f
	opts := ReadOptionsFor(s.a.Language, f)
	if err := checkReadOptions(opts, f); err != nil {
		return nil, err
	}
	res := &AnalysisResult{Features: f, Language: opts.Language, Backend: s.a.Backend, Created: s.clock.Now()}
	var req api.ReadRequest
	switch given := countGiven(in); {
	case given != 1:
		return nil, ErrNoInput
	case strings.TrimSpace(in.Text) != "":
		if len(in.Text) > MaxAnalysisBytes {
			return nil, fmt.Errorf("the text is larger than %d MB: %w", MaxAnalysisBytes>>20, ErrNotText)
		}
		req.Text, res.Text = in.Text, in.Text
		res.SourceKind, res.Source, res.Title, res.Format = SourceText, "Pasted text", titleOf(in.Text), string(document.Text)
	case in.Path != "":
		res.SourceKind, res.Source, res.Title = SourceFile, filepath.Base(in.Path), filepath.Base(in.Path)
		doc := in.Document
		if doc == nil {
			s.emit(&AnalysisProgressEvent{Phase: AnalysisReading})
			var err error
			if doc, err = ReadDocument(ctx, in.Path); err != nil {
				return nil, err
			}
		}
		if err := useDocument(&req, res, doc); err != nil {
			return nil, err
		}
	default:
		u := strings.TrimSpace(in.URL)
		res.SourceKind, res.Source = SourceURL, redactURL(u)
		res.Title = res.Source
		if err := (api.ReadRequest{URL: u}).Check(); err != nil {
			return nil, err
		}
		doc := in.Document
		if doc == nil {
			// The app reads web pages and PDFs itself; a plain-text
			// document the service fetches by its address.
			s.emit(&AnalysisProgressEvent{Phase: AnalysisFetching})
			f, err := document.Fetch(ctx, s.a.HTTPClient, u)
			if err != nil {
				return nil, fmt.Errorf("fetch the document: %w", err)
			}
			if !f.PlainURL {
				doc = f.Doc
			}
		}
		if doc == nil {
			req.URL = u
			break
		}
		if err := useDocument(&req, res, doc); err != nil {
			return nil, err
		}
		if doc.Title != "" {
			res.Title = doc.Title
		}
	}
	cutToLimit(&req, res, in.FirstTokens)
	if err := req.Check(); err != nil {
		return nil, err
	}
	rec, err := s.open(ctx, res, opts)
	if err != nil {
		return nil, err
	}
	res.SessionID = rec.ID()
	s.id.Store(res.SessionID)
	return func(ctx context.Context) error { return s.run(ctx, req, opts, res, rec) }, nil
}

// open records the analysis in history.
func (s *AnalysisSession) open(ctx context.Context, res *AnalysisResult, opts api.ReadOptions) (*record, error) {
	optJSON, err := json.Marshal(opts.Query())
	if err != nil {
		return nil, err
	}
	details, err := json.Marshal(analysisDetails{Source: res.Source, SourceKind: res.SourceKind, Features: res.Features.Names(),
		Language: opts.Language, Format: res.Format, Pages: res.Pages})
	if err != nil {
		return nil, err
	}
	return openRecord(ctx, fileRecordHistory(s.a.History), store.Session{
		Kind:    store.KindAnalysis,
		Title:   res.Title,
		Source:  res.Source,
		Backend: s.a.Backend,
		Options: string(optJSON),
		Details: string(details),
		Started: res.Created,
	}, s.clock, s.a.Logger, s.emit), nil
}

// run sends the document, in parts when it is long, or the URL (and,
// when the service refuses it as too long, fetches the document and
// sends it in parts); fetches a document named by URL for the source
// view; then saves the answer and finishes the record.
func (s *AnalysisSession) run(ctx context.Context, req api.ReadRequest, opts api.ReadOptions, res *AnalysisResult, rec *record) error {
	ctx, cancel := untilStopped(ctx, s.stopping())
	defer cancel()
	var err error
	if req.URL != "" {
		s.emit(&AnalysisProgressEvent{Phase: AnalysisAnalysing, Part: 1, Parts: 1})
		res.Response, err = s.a.Client.Read(rec.wire(ctx), req, opts)
		switch {
		case err == nil:
			s.emit(&AnalysisProgressEvent{Phase: AnalysisFetching})
			res.Text, res.TextErr = s.a.fetch(ctx, req.URL)
		case isTokenLimit(err):
			// Too long for one request: read it here and send it in
			// parts.
			s.emit(&AnalysisProgressEvent{Phase: AnalysisFetching})
			text, ferr := s.a.fetch(ctx, req.URL)
			if ferr != nil {
				err = fmt.Errorf("%w; fetching it to analyse in parts failed too: %w", err, ferr)
				break
			}
			res.Text = text
			err = s.analyseParts(ctx, text, opts, res, rec)
		}
	} else {
		err = s.analyseParts(ctx, req.Text, opts, res, rec)
	}
	if err != nil {
		rec.finish(endStatus(ctx), 0, err)
		return fmt.Errorf("analyse %s: %w", res.Title, err)
	}
	// The answer, with the document as its searchable transcript, and
	// the document itself.
	saved := rec.save(ctx, "the analysis", func(ctx context.Context, id int64) error {
		body, err := json.Marshal(savedAnalysis{ReadResponse: res.Response, Parts: res.Parts})
		if err != nil {
			return err
		}
		return s.a.History.SaveResponse(ctx, id, body, res.Text)
	})
	finishSaved(rec, saved, 0)
	res.SessionID = rec.ID() // made late, once a full disk had room
	res.History = rec.keeping()
	s.id.Store(res.SessionID)
	s.emit(&AnalysisProgressEvent{Phase: AnalysisDone})
	s.emit(&AnalysisDoneEvent{Result: res})
	return nil
}

// analyseParts analyses text, in parts of at most the part budget each
// when it is longer, one request after another, and sets res's answer
// (merged, with the parts' summaries summarised) and parts. A part the
// service refuses as too long is split again.
func (s *AnalysisSession) analyseParts(ctx context.Context, text string, opts api.ReadOptions, res *AnalysisResult, rec *record) error {
	budget := s.a.partTokens()
	if s.in.Whole {
		if n := textseg.Tokens(text); n > api.ReadTokenLimit {
			return &TooLongError{Tokens: n, Limit: api.ReadTokenLimit, Part: api.ReadTokenLimit}
		}
		budget = math.MaxInt
	}
	parts := splitParts(text, budget)
	if len(parts) == 0 {
		return ErrNoInput
	}
	answers := make([]partAnswer, 0, len(parts))
	for i := 0; i < len(parts); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.emit(&AnalysisProgressEvent{Phase: AnalysisAnalysing, Part: i + 1, Parts: len(parts)})
		p := parts[i]
		resp, err := s.a.Client.Read(rec.wire(ctx), api.ReadRequest{Text: p.text(text)}, opts)
		if isTokenLimit(err) {
			if sub, ok := resplit(text, p); ok && !s.in.Whole {
				parts = slices.Concat(parts[:i], sub, parts[i+1:])
				i--
				continue
			}
			return &TooLongError{Tokens: p.Tokens, Limit: api.ReadTokenLimit, Part: p.Tokens * 4 / 5}
		}
		if err != nil {
			if len(parts) > 1 {
				return fmt.Errorf("part %d of %d: %w", i+1, len(parts), err)
			}
			return err
		}
		answers = append(answers, partAnswer{part: p, resp: resp})
	}
	if len(answers) == 1 {
		res.Response, res.Parts = answers[0].resp, nil
		return nil
	}
	merged := mergeParts(answers)
	if opts.Summarize != "" {
		summaries := make([]string, 0, len(answers))
		for _, a := range answers {
			if sm := a.resp.Results.Summary; sm != nil {
				summaries = append(summaries, sm.Text)
			}
		}
		only := api.ReadOptions{Language: opts.Language, Summarize: opts.Summarize}
		round := 0
		read := func(ctx context.Context, text string) (*api.ReadResponse, error) {
			resp, err := s.a.Client.Read(rec.wire(ctx), api.ReadRequest{Text: text}, only)
			if err == nil {
				merged.Metadata.SummaryInfo = addInfo(merged.Metadata.SummaryInfo, resp.Metadata.SummaryInfo)
			}
			return resp, err
		}
		text, err := summarise(ctx, read, summaries, budget, func(part, parts int) {
			if part == 1 {
				round++
			}
			s.emit(&AnalysisProgressEvent{Phase: AnalysisSummarising, Part: part, Parts: parts, Round: round})
		})
		if err != nil {
			return fmt.Errorf("summarise the parts' summaries: %w", err)
		}
		merged.Results.Summary = &api.ReadSummary{Text: text}
	}
	res.Response, res.Parts = merged, partsOf(answers)
	return nil
}

// Wait reads the events of a started session until the channel closes,
// handing each progress event to progress (which may be nil), and
// returns the
// result, or why the session failed. When the analysis could not be
// saved to history, Wait returns the result with the *SaveFailedEvent as
// its error. It is the synchronous form of the session, for callers that
// have nothing else to show.
func (s *AnalysisSession) Wait(progress func(*AnalysisProgressEvent)) (*AnalysisResult, error) {
	var (
		res     *AnalysisResult
		unsaved error
	)
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *AnalysisProgressEvent:
			if progress != nil {
				progress(ev)
			}
		case *SaveFailedEvent:
			if unsaved == nil {
				unsaved = ev
			}
		case *AnalysisDoneEvent:
			res = ev.Result
		}
	}
	<-s.Done()
	if err := s.Err(); err != nil {
		return nil, err
	}
	return res, unsaved
}

// cutToLimit keeps the first tokens of a text or file's text when first
// is above 0. A longer text is analysed in parts.
func cutToLimit(req *api.ReadRequest, res *AnalysisResult, first int) {
	if req.Text == "" {
		return
	}
	if first > 0 {
		part := textseg.FirstTokens(req.Text, first)
		if part != req.Text {
			req.Text, res.Text = part, part
			res.Source += ", first " + count.Of(textseg.Tokens(part), "token")
			res.Title += " (first part)"
		}
	}
}

func countGiven(in AnalysisInput) int {
	n := 0
	for _, s := range []string{in.Text, in.Path, in.URL} {
		if strings.TrimSpace(s) != "" {
			n++
		}
	}
	return n
}

// LoadAnalysis reads analysis id back from history.
func LoadAnalysis(ctx context.Context, h AnalysisArchive, id int64) (*AnalysisResult, error) {
	sess, err := h.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if sess.Kind != store.KindAnalysis {
		return nil, fmt.Errorf("session %d is a %s session, not an analysis", id, sess.Kind)
	}
	res := &AnalysisResult{SessionID: id, Title: sess.Title, Source: sess.Source, Backend: sess.Backend, Created: sess.Started}
	var d analysisDetails
	if sess.Details != "" {
		if err := json.Unmarshal([]byte(sess.Details), &d); err != nil {
			return nil, fmt.Errorf("the saved analysis is damaged: %w", err)
		}
	}
	res.SourceKind, res.Language, res.Format, res.Pages = d.SourceKind, d.Language, d.Format, d.Pages
	for _, n := range d.Features {
		switch n {
		case "summarize":
			res.Features.Summary = true
		case "sentiment":
			res.Features.Sentiment = true
		case "topics":
			res.Features.Topics = true
		case "intents":
			res.Features.Intents = true
		}
	}
	body, err := h.Response(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if sess.Status == store.StatusDone {
			return nil, fmt.Errorf("the saved analysis has no result: %w", err)
		}
		return nil, fmt.Errorf("this analysis did not finish (%s): %w", sess.Status, err)
	}
	if err != nil {
		return nil, err
	}
	resp, err := api.DecodeReadResponse(body)
	if err != nil {
		return nil, fmt.Errorf("the saved analysis is damaged: %w", err)
	}
	var parts savedAnalysis
	if err := json.Unmarshal(body, &parts); err != nil {
		return nil, fmt.Errorf("the saved analysis is damaged: %w", err)
	}
	res.Response, res.Parts = resp, parts.Parts
	text, err := h.ResponseText(ctx, id)
	if err != nil {
		return nil, err
	}
	if text == "" {
		res.TextErr = errors.New("the document was not saved with the analysis")
	}
	res.Text = text
	return res, nil
}

// StartAnalysis starts analysing a document with the connection and
// language the settings choose, saved to history. The caller reads its
// events (or stops it).
func (w *Workspace) StartAnalysis(ctx context.Context, in AnalysisInput, f Features) (*AnalysisSession, error) {
	s, err := w.Settings(ctx)
	if err != nil {
		return nil, err
	}
	// Refuse what the service would before connecting (which may start
	// the local engine).
	if err := checkReadOptions(ReadOptionsFor(s.Language, f), f); err != nil {
		return nil, err
	}
	conn, err := w.Connection(ctx)
	if err != nil {
		return nil, err
	}
	a := Analysis{Client: conn.Client, History: w.history(), Backend: conn.Name, Language: s.Language, Logger: w.log}
	as := a.Session(in, f)
	if err := as.Start(ctx); err != nil {
		return nil, err
	}
	return as, nil
}

// Analyze analyses a document as StartAnalysis does and waits for the
// result, reporting its progress (phases, and the part being analysed)
// to progress (which may be nil; it is called on the calling goroutine
// and must not block). See AnalysisSession.Wait.
func (w *Workspace) Analyze(ctx context.Context, in AnalysisInput, f Features, progress func(*AnalysisProgressEvent)) (*AnalysisResult, error) {
	s, err := w.StartAnalysis(ctx, in, f)
	if err != nil {
		return nil, err
	}
	return s.Wait(progress)
}

// Analysis reads a past analysis back from history.
func (w *Workspace) Analysis(ctx context.Context, id int64) (*AnalysisResult, error) {
	return LoadAnalysis(ctx, w.cfg.History, id)
}

// ExportAnalysis writes a past analysis in format f.
func (w *Workspace) ExportAnalysis(ctx context.Context, id int64, f AnalysisFormat, out io.Writer) error {
	r, err := w.Analysis(ctx, id)
	if err != nil {
		return err
	}
	return ExportAnalysis(out, f, r)
}
