package sessions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/earshot-app/earshot/api"
)

// AnalysisFormat is a format an analysis can be saved in.
type AnalysisFormat string

// Analysis export formats.
const (
	// AnalysisMarkdown is a report for people: the summary, the average
	// sentiment, a table of each passage's sentiment, the topics and the
	// intents, each with the passage it came from.
	AnalysisMarkdown AnalysisFormat = "md"
	// AnalysisJSON is the service's response.
	AnalysisJSON AnalysisFormat = "json"
)

// ParseAnalysisFormat reads a format name or file extension.
func ParseAnalysisFormat(s string) (AnalysisFormat, error) {
	switch strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), ".") {
	case "md", "markdown":
		return AnalysisMarkdown, nil
	case "json":
		return AnalysisJSON, nil
	}
	return "", fmt.Errorf("unknown analysis format %q: choose md or json", s)
}

// Extension is the file extension of the format, with its dot.
func (f AnalysisFormat) Extension() string { return "." + string(f) }

// ExportAnalysis writes r in format f.
func ExportAnalysis(w io.Writer, f AnalysisFormat, r *AnalysisResult) error {
	if r == nil || r.Response == nil {
		return fmt.Errorf("export: the analysis has no result")
	}
	switch f {
	case AnalysisJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r.Response)
	case AnalysisMarkdown:
		bw := bufio.NewWriter(w)
		writeMarkdown(bw, r)
		return bw.Flush()
	}
	return fmt.Errorf("unknown analysis format %q", f)
}

// Percent writes a confidence (0 to 1) as a whole percentage.
func Percent(c float64) string { return fmt.Sprintf("%.0f%%", 100*min(max(c, 0), 1)) }

func writeMarkdown(w *bufio.Writer, r *AnalysisResult) {
	res := r.Response.Results
	fmt.Fprintf(w, "# Analysis: %s\n\n", mdInline(r.Title))
	var meta []string
	if r.Source != "" {
		meta = append(meta, "Source: "+mdInline(r.Source))
	}
	if r.Backend != "" {
		meta = append(meta, "Analysed by "+mdInline(r.Backend))
	}
	if !r.Created.IsZero() {
		meta = append(meta, r.Created.Format("2 January 2006 15:04"))
	}
	if n := r.PartCount(); n > 1 {
		meta = append(meta, fmt.Sprintf("Analysed in %d parts; the summary is made from the parts' summaries", n))
	}
	if len(meta) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(meta, " · "))
	}
	if res.Summary != nil {
		fmt.Fprintf(w, "## Summary\n\n%s\n\n", strings.TrimSpace(res.Summary.Text))
	}
	if s := res.Sentiments; s != nil {
		fmt.Fprintf(w, "## Sentiment\n\nAverage: **%s** (%+.2f)\n\n", s.Average.Sentiment, s.Average.SentimentScore)
		if len(s.Segments) > 0 {
			fmt.Fprintln(w, "| # | Passage | Sentiment | Score |")
			fmt.Fprintln(w, "|---:|---|---|---:|")
			for i, seg := range s.Segments {
				fmt.Fprintf(w, "| %d | %s | %s | %+.2f |\n", i+1, mdCell(r.Passage(seg.StartWord, seg.EndWord, seg.Text))+r.pageNote(seg.StartWord), mdCell(seg.Sentiment), seg.SentimentScore)
			}
			fmt.Fprintln(w)
		}
	}
	if t := res.Topics; t != nil {
		fmt.Fprint(w, "## Topics\n\n")
		writeLabelled(w, r, TopicSegments(t))
	}
	if in := res.Intents; in != nil {
		fmt.Fprint(w, "## Intents\n\n")
		writeLabelled(w, r, IntentSegments(in))
	}
}

// LabelledSegment is a passage with the labels (topics or intents) found
// in it: the shape topics and intents share.
type LabelledSegment struct {
	Text               string
	StartWord, EndWord int
	Labels             []Label
}

// Label is a topic or an intent with its confidence.
type Label struct {
	Name       string
	Confidence float64
}

// TopicSegments returns the topics of a response as labelled segments.
func TopicSegments(t *api.Topics) []LabelledSegment {
	if t == nil {
		return nil
	}
	out := make([]LabelledSegment, 0, len(t.Segments))
	for _, s := range t.Segments {
		ls := LabelledSegment{Text: s.Text, StartWord: s.StartWord, EndWord: s.EndWord}
		for _, x := range s.Topics {
			ls.Labels = append(ls.Labels, Label{Name: x.Topic, Confidence: x.ConfidenceScore})
		}
		out = append(out, ls)
	}
	return out
}

// IntentSegments returns the intents of a response as labelled segments.
func IntentSegments(in *api.Intents) []LabelledSegment {
	if in == nil {
		return nil
	}
	out := make([]LabelledSegment, 0, len(in.Segments))
	for _, s := range in.Segments {
		ls := LabelledSegment{Text: s.Text, StartWord: s.StartWord, EndWord: s.EndWord}
		for _, x := range s.Intents {
			ls.Labels = append(ls.Labels, Label{Name: x.Intent, Confidence: x.ConfidenceScore})
		}
		out = append(out, ls)
	}
	return out
}

func writeLabelled(w *bufio.Writer, r *AnalysisResult, segs []LabelledSegment) {
	n := 0
	for _, s := range segs {
		for _, l := range s.Labels {
			fmt.Fprintf(w, "- **%s** (%s)\n  > %s\n", mdInline(l.Name), Percent(l.Confidence), mdInline(r.Passage(s.StartWord, s.EndWord, s.Text))+r.pageNote(s.StartWord))
			n++
		}
	}
	if n == 0 {
		fmt.Fprint(w, "None found.\n")
	}
	fmt.Fprintln(w)
}

// pageNote names the page of the source a passage starting at word
// startWord is on, for a paged source (a PDF); "" for others.
func (r *AnalysisResult) pageNote(startWord int) string {
	if p := r.PageOf(startWord); p > 0 {
		return fmt.Sprintf(" (page %d)", p)
	}
	return ""
}

// mdInline keeps text on one line and stops it from starting Markdown
// structure of its own.
func mdInline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", "[", `\[`).Replace(s)
}

// mdCell is mdInline for a table cell, where | ends the cell.
func mdCell(s string) string { return strings.ReplaceAll(mdInline(s), "|", `\|`) }
