// Package document turns the documents people have (PDF, Word and
// OpenDocument files, web pages, e-books, RTF, plain text and markdown in
// any common encoding) into paragraphs of text, on the client, before
// anything is sent to the service.
//
// Every format ends as the same [Document]: a list of paragraphs and
// headings, each one line of text with its whitespace collapsed, and for a
// PDF the page each paragraph starts on, so that a passage found in
// [Document.Text] maps back to its place in the source ([Document.PageAt]).
//
// PDF goes through poppler's pdftotext (Debian's poppler-utils); the zip
// formats (DOCX, ODT, EPUB), HTML and RTF are read by this package's own
// code with the standard library and golang.org/x/net/html. [Extract] never
// panics, whatever it is given, and bounds what it reads: a file larger
// than [MaxBytes] or a zip archive that inflates beyond its limits is
// refused with an error that says so.
//
// Errors name what went wrong in words a person can act on:
// [*ScannedPDFError], [*UnsupportedError], [*HTTPError], [*ToolMissingError],
// and the sentinels [ErrEmpty], [ErrEncrypted], [ErrCorrupt] and
// [ErrTooLarge], all to be inspected with errors.Is and errors.As.
//
// Every function is safe for concurrent use; a Document is a plain value
// and must not be changed while another goroutine reads it.
package document

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format names a kind of document.
type Format string

// The formats Extract reads.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	PDF      Format = "pdf"
	DOCX     Format = "docx"
	ODT      Format = "odt"
	HTML     Format = "html"
	EPUB     Format = "epub"
	RTF      Format = "rtf"
)

// MaxBytes is the largest file or download Extract, ReadFile and Fetch
// accept. The service takes at most a few hundred thousand tokens of text
// (about a megabyte), and even a book of 400,000 words is some 2.5 MB as
// text; 50 MiB leaves room for PDFs and e-books heavy with pictures and
// fonts while bounding the memory one document can take, since a document
// is held in memory whole.
const MaxBytes = 50 << 20

// paragraphSep joins paragraphs in Document.Text.
const paragraphSep = "\n\n"

// Paragraph is one paragraph or heading of a document.
type Paragraph struct {
	// Text is the paragraph on one line: whitespace collapsed to single
	// spaces, no line breaks, no leading or trailing space, never empty.
	Text string
	// Heading is true for headings: h1-h6 of HTML and EPUB, heading and
	// title styles of Word and OpenDocument, RTF outline levels, markdown
	// "#" lines.
	Heading bool
	// Page is the 1-based page of a PDF the paragraph starts on; 0 for
	// formats without pages.
	Page int
}

// Document is the text of a document as paragraphs.
type Document struct {
	Format Format
	// Title comes from the document's metadata, else its first heading;
	// "" when it has neither.
	Title      string
	Paragraphs []Paragraph
}

// Text returns the paragraphs joined by blank lines: the text sent for
// analysis.
func (d *Document) Text() string {
	if d == nil {
		return ""
	}
	n := 0
	for _, p := range d.Paragraphs {
		n += len(p.Text) + len(paragraphSep)
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range d.Paragraphs {
		if i > 0 {
			b.WriteString(paragraphSep)
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// PageAt returns the page of the byte offset in Text(): the page of the
// paragraph that holds it, or of the next paragraph when the offset falls
// on the blank line between two. It returns 0 for documents without pages
// and for offsets outside the text.
func (d *Document) PageAt(offset int) int {
	if d == nil || offset < 0 || len(d.Paragraphs) == 0 {
		return 0
	}
	start := 0
	for i, p := range d.Paragraphs {
		end := start + len(p.Text)
		if offset < start {
			return 0
		}
		if offset < end {
			return p.Page
		}
		if offset < end+len(paragraphSep) && i+1 < len(d.Paragraphs) {
			return d.Paragraphs[i+1].Page
		}
		start = end + len(paragraphSep)
	}
	return 0
}

// Pages returns the number of pages the paragraphs lie on: the highest
// page number, 0 for documents without pages.
func (d *Document) Pages() int {
	if d == nil {
		return 0
	}
	max := 0
	for _, p := range d.Paragraphs {
		if p.Page > max {
			max = p.Page
		}
	}
	return max
}

// Words returns the number of words of the text, as a person counts them.
func (d *Document) Words() int {
	if d == nil {
		return 0
	}
	n := 0
	for _, p := range d.Paragraphs {
		n += len(strings.Fields(p.Text))
	}
	return n
}

// builder collects paragraphs, cleaning each one.
type builder struct {
	paras []Paragraph
}

// add appends text as a paragraph once cleaned; empty text adds nothing.
func (b *builder) add(text string, heading bool, page int) {
	t := clean(text)
	if t == "" {
		return
	}
	b.paras = append(b.paras, Paragraph{Text: t, Heading: heading, Page: page})
}

// notes are a document's footnotes and endnotes, numbered in the order
// they are cited. The citation becomes "[n]" in the text; the notes come
// after the text, under a heading, each opening with its number.
type notes struct {
	paras [][]Paragraph
}

// cite keeps a note's paragraphs and returns the mark that cites it; a
// note without text is neither kept nor cited.
func (n *notes) cite(paras []Paragraph) string {
	if len(paras) == 0 {
		return ""
	}
	n.paras = append(n.paras, paras)
	return fmt.Sprintf("[%d]", len(n.paras))
}

// appendTo adds the notes to the end of b.
func (n *notes) appendTo(b *builder) {
	if len(n.paras) == 0 {
		return
	}
	b.add("Notes", true, 0)
	for i, ps := range n.paras {
		for j, p := range ps {
			if j == 0 {
				p.Text = fmt.Sprintf("[%d] %s", i+1, p.Text)
			}
			b.add(p.Text, false, 0)
		}
	}
}

// clean makes text valid UTF-8 on one line: control and invisible format
// characters dropped, runs of whitespace collapsed to one space.
func clean(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		case r == '\u00ad' || r == '\ufeff' || r == '\u200b':
			// soft hyphen, byte-order mark, zero-width space
			continue
		case unicode.IsControl(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// firstHeading returns the first heading's text, "" when there is none.
func firstHeading(ps []Paragraph) string {
	for _, p := range ps {
		if p.Heading {
			return p.Text
		}
	}
	return ""
}

// finish builds the document or says it is empty.
func finish(name string, f Format, title string, ps []Paragraph) (*Document, error) {
	if len(ps) == 0 {
		return nil, &emptyError{name: name}
	}
	title = clean(title)
	if title == "" {
		title = firstHeading(ps)
	}
	return &Document{Format: f, Title: title, Paragraphs: ps}, nil
}
