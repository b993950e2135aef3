package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/sessions"
)

const readSummary = "analyse a document (PDF, Word, web page, e-book, text): summary, sentiment, topics and intents"

func read(ctx context.Context, env Env, args []string) error {
	var (
		f              sessions.Features
		format, output string
	)
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.BoolVar(&f.Summary, "summarize", false, "summarise the document")
	fs.BoolVar(&f.Sentiment, "sentiment", false, "the sentiment of each passage and the average")
	fs.BoolVar(&f.Topics, "topics", false, "the topics, with their passages")
	fs.BoolVar(&f.Intents, "intents", false, "the intents, with their passages")
	fs.StringVar(&format, "format", "", "`FORMAT` of the report: md or json (default: from the -o file's extension, else md)")
	fs.StringVar(&output, "o", "", "write the report to `FILE` instead of standard output")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: earshot read FILE|URL|- [--summarize] [--sentiment] [--topics] [--intents] [--format md|json] [-o OUT]

Analyses an English document: a file of any of these formats, "-" for
standard input, or the http(s) address of a web page, a PDF or a plain-text
document.

  PDF (with a text layer; a scanned PDF needs OCR first), Word (.docx),
  OpenDocument (.odt), EPUB, HTML, RTF, Markdown, and plain text in UTF-8
  (with or without a byte-order mark), UTF-16 or Latin-1.

Files and web pages are read here and their text is sent; the address of a
plain-text document is fetched by the service itself. A document longer
than the service takes in one request (150,000 tokens) is analysed in
parts, one after another, and the results merged: the summary is made from
the parts' summaries, and every passage keeps its place in the whole
document (and, for a PDF, its page). Without a feature flag, all four run.
It uses the service chosen in the app's Settings, and every run is saved to
the app's history.

Flags:
`)
		fs.PrintDefaults()
	}
	docs, err := parseInterleaved(fs, args)
	if err != nil {
		return errUsage
	}
	usageErr := usageError(env, "read")
	switch {
	case len(docs) == 0:
		return usageErr("which document? give a file, a URL, or - for standard input")
	case len(docs) > 1:
		return usageErr("one document at a time (got %d: %s)", len(docs), strings.Join(docs, ", "))
	}
	if !f.Any() {
		f = sessions.AllFeatures()
	}
	af := sessions.AnalysisMarkdown
	switch {
	case format != "":
		var err error
		if af, err = sessions.ParseAnalysisFormat(format); err != nil {
			return usageErr("%v", err)
		}
	case filepath.Ext(output) != "":
		if g, err := sessions.ParseAnalysisFormat(filepath.Ext(output)); err == nil {
			af = g
		}
	}
	var in sessions.AnalysisInput
	switch doc := docs[0]; {
	case doc == "-":
		text, err := readStdin(ctx, env)
		if err != nil {
			return err
		}
		in.Text = text
	case strings.HasPrefix(doc, "http://") || strings.HasPrefix(doc, "https://"):
		in.URL = doc
	default:
		if err := checkDocumentFile(doc); err != nil {
			return err
		}
		in.Path = doc
	}
	ws, err := env.workspace(ctx, "analyse")
	if err != nil {
		return err
	}
	defer ws.Close()
	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	// A report history could not keep is still written out; the failure
	// to keep it is the command's error.
	res, unsaved := ws.Analyze(ctx, in, f, func(p *sessions.AnalysisProgressEvent) {
		switch p.Phase {
		case sessions.AnalysisAnalysing, sessions.AnalysisSummarising, sessions.AnalysisFetching:
			status.set(p.String())
		}
	})
	if res == nil {
		if errors.Is(unsaved, sessions.ErrEnglishOnly) {
			return fmt.Errorf("text analysis reads English only; set the language in the app's Settings to en: %w", unsaved)
		}
		return unsaved
	}
	var buf bytes.Buffer
	if err := sessions.ExportAnalysis(&buf, af, res); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	status.clear()
	if err := writeOutput(env, output, buf.Bytes()); err != nil {
		return err
	}
	saved, _ := keptWords(res.History)
	parts := ""
	if n := res.PartCount(); n > 1 {
		parts = fmt.Sprintf(" in %d parts", n)
	}
	fmt.Fprintf(env.Stderr, "Analysed %s%s (%s) with %s; %s.\n", res.Title, parts, strings.Join(f.Names(), ", "), res.Backend, saved)
	return unsaved
}

// readStdin reads a document from standard input: UTF-8 text as it is,
// any other format (a PDF or a web page piped in) through package
// document.
func readStdin(ctx context.Context, env Env) (string, error) {
	r := env.Stdin
	if r == nil {
		r = os.Stdin
	}
	b, err := io.ReadAll(io.LimitReader(r, document.MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > document.MaxBytes {
		return "", fmt.Errorf("standard input: %w", document.ErrTooLarge)
	}
	f, err := document.Detect("standard input", b)
	if err != nil {
		return "", err
	}
	if f == document.Text && utf8.Valid(b) {
		// Text as it came, so that passages are found as they were
		// written.
		if len(b) > sessions.MaxAnalysisBytes {
			return "", fmt.Errorf("standard input is larger than %d MB: %w", sessions.MaxAnalysisBytes>>20, sessions.ErrNotText)
		}
		return strings.TrimPrefix(string(b), "\uFEFF"), nil
	}
	d, err := document.Extract(ctx, "standard input", b)
	if err != nil {
		return "", err
	}
	return d.Text(), nil
}

// checkDocumentFile says plainly why path cannot be read as a document
// before anything is started.
func checkDocumentFile(path string) error { return checkFile(path, "a document") }
