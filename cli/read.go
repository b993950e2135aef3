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

	"github.com/earshot-app/earshot/sessions"
)

const readSummary = "analyse a text document: summary, sentiment, topics and intents"

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

Analyses an English text document: a .txt or .md file, "-" for standard
input, or the http(s) address of a plain-text document, which the service
fetches. Without a feature flag, all four run. It uses the service chosen
in the app's Settings, and every run is saved to the app's history.

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
		b, err := io.ReadAll(io.LimitReader(os.Stdin, sessions.MaxAnalysisBytes+1))
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		if len(b) > sessions.MaxAnalysisBytes {
			return fmt.Errorf("standard input: %w", sessions.ErrNotText)
		}
		in.Text = string(b)
	case strings.HasPrefix(doc, "http://") || strings.HasPrefix(doc, "https://"):
		in.URL = doc
	default:
		if err := checkInputFile(doc); err != nil {
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
	saved := "; saved to history"
	if unsaved != nil {
		saved = ""
	}
	parts := ""
	if n := res.PartCount(); n > 1 {
		parts = fmt.Sprintf(" in %d parts", n)
	}
	fmt.Fprintf(env.Stderr, "Analysed %s%s (%s) with %s%s.\n", res.Title, parts, strings.Join(f.Names(), ", "), res.Backend, saved)
	return unsaved
}
