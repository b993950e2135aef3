package sessions

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/earshot-app/earshot/internal/timecode"
)

// ItemWhere says who said an item and when: "Speaker 2, 1:05",
// "1:05", or "" when it was not placed.
func ItemWhere(it NoteItem) string {
	if !it.Placed() {
		return ""
	}
	if it.Speaker == "" {
		return timecode.Of(it.At)
	}
	return it.Speaker + ", " + timecode.Of(it.At)
}

// Plain lines of notes without a part.
const (
	NoSummary     = "No summary was written."
	NoTopics      = "No topics were found."
	NoActionItems = "No action items were found."
)

// ExportMeetingNotes writes the notes saved with meeting id, with its
// transcript, as Markdown (WriteNotesMarkdown). A meeting without notes
// is an error matching ErrNoNotes.
func (w *Workspace) ExportMeetingNotes(ctx context.Context, id int64, out io.Writer) error {
	n, err := w.SavedNotes(ctx, id)
	if err != nil {
		return err
	}
	m, err := w.Meeting(ctx, id)
	if err != nil {
		return err
	}
	return WriteNotesMarkdown(out, n, m)
}

// WriteNotesMarkdown writes notes n of meeting m as a Markdown document:
// "# Meeting notes: TITLE", the date, length and speakers, the summary,
// the topics and the action items each with its speaker and time, then
// the transcript with times and speakers.
func WriteNotesMarkdown(w io.Writer, n Notes, m Meeting) error {
	bw := bufio.NewWriter(w)
	title := m.Title
	if title == "" {
		title = n.Title
	}
	fmt.Fprintf(bw, "# Meeting notes: %s\n\n", mdInline(title))
	started := m.Started
	if started.IsZero() {
		started = n.Started
	}
	var meta []string
	if !started.IsZero() {
		meta = append(meta, "Date: "+started.Format("2 January 2006 15:04"))
	}
	meta = append(meta, "Length: "+timecode.Of(max(m.Length, n.Length)))
	speakers := m.Speakers()
	if len(speakers) == 0 {
		speakers = n.Speakers
	}
	if len(speakers) > 0 {
		meta = append(meta, "Speakers: "+mdInline(strings.Join(speakers, ", ")))
	} else {
		meta = append(meta, "Speakers: not labelled")
	}
	if n.Backend != "" {
		meta = append(meta, "Notes by "+mdInline(n.Backend))
	}
	fmt.Fprintf(bw, "%s\n\n", strings.Join(meta, " · "))

	summary := strings.TrimSpace(n.Summary)
	if summary == "" {
		summary = NoSummary
	}
	fmt.Fprintf(bw, "## Summary\n\n%s\n\n", summary)
	fmt.Fprint(bw, "## Topics\n\n")
	writeNoteItems(bw, n.Topics, NoTopics)
	fmt.Fprint(bw, "## Action items\n\n")
	writeNoteItems(bw, n.ActionItems, NoActionItems)

	fmt.Fprint(bw, "## Transcript\n\n")
	for _, l := range m.Lines {
		lead := timecode.Of(l.Start)
		if l.Speaker != "" {
			lead += " " + mdInline(l.Speaker) + ":"
		}
		fmt.Fprintf(bw, "**%s** %s\n\n", lead, mdInline(l.Text))
	}
	if len(m.Lines) == 0 {
		fmt.Fprint(bw, "No words were saved.\n")
	}
	return bw.Flush()
}

func writeNoteItems(w *bufio.Writer, items []NoteItem, none string) {
	if len(items) == 0 {
		fmt.Fprintf(w, "%s\n\n", none)
		return
	}
	for _, it := range items {
		fmt.Fprintf(w, "- **%s**", mdInline(it.Label))
		if where := ItemWhere(it); where != "" {
			fmt.Fprintf(w, " (%s)", mdInline(where))
		}
		fmt.Fprintln(w)
		if p := strings.TrimSpace(it.Passage); p != "" {
			fmt.Fprintf(w, "  > %s\n", mdInline(p))
		}
	}
	fmt.Fprintln(w)
}
