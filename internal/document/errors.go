package document

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, to be matched with errors.Is. The errors Extract,
// ReadFile and Fetch return wrap them with the document's name.
var (
	// ErrEmpty: the document holds no text at all.
	ErrEmpty = errors.New("there is no text in it")
	// ErrEncrypted: the document is protected by a password.
	ErrEncrypted = errors.New("it is protected by a password; open it, save a copy without the password and try that")
	// ErrCorrupt: the document is damaged or is not what its name says.
	ErrCorrupt = errors.New("it is damaged or not a document of its kind")
	// ErrTooLarge: the file or download is larger than MaxBytes, or an
	// archive inflates beyond the limits.
	ErrTooLarge = errors.New("it is too large")
)

// emptyError names the document that has no text.
type emptyError struct{ name string }

func (e *emptyError) Error() string { return e.name + ": " + ErrEmpty.Error() }
func (e *emptyError) Unwrap() error { return ErrEmpty }

// ScannedPDFError is a PDF whose pages are pictures without a text layer,
// such as a scan: there is nothing to extract without OCR.
type ScannedPDFError struct {
	Name  string
	Pages int
}

func (e *ScannedPDFError) Error() string {
	pages := fmt.Sprintf("its %d pages are images", e.Pages)
	if e.Pages == 1 {
		pages = "its page is an image"
	}
	return fmt.Sprintf("%s is a scanned PDF: %s with no text layer; run it through OCR (for example ocrmypdf) first", e.Name, pages)
}

// UnsupportedError is a file of a kind Extract does not read, such as a
// legacy Word document, an image or audio.
type UnsupportedError struct {
	Name string
	// Kind says what the file is, e.g. "a legacy Word document (.doc)".
	Kind string
	// Hint says what to do instead; may be "".
	Hint string
}

func (e *UnsupportedError) Error() string {
	s := e.Name + " is " + e.Kind + ", which cannot be read as text"
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// HTTPError is an answer other than success to Fetch's request.
type HTTPError struct {
	URL        string
	StatusCode int
	Status     string // e.g. "404 Not Found"
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s answered %s", e.URL, e.Status)
}

// ToolMissingError is a program this package needs that is not installed.
type ToolMissingError struct {
	Tool    string // e.g. "pdftotext"
	Package string // the Debian package that brings it, e.g. "poppler-utils"
}

func (e *ToolMissingError) Error() string {
	return fmt.Sprintf("reading PDF needs the program %s, which is not installed; install the package %s (for example: sudo apt install %s)", e.Tool, e.Package, e.Package)
}

// tooLarge says a document is over a limit.
func tooLarge(name string, size int64, limit int64) error {
	return fmt.Errorf("%s: %w (%s; at most %s)", name, ErrTooLarge, humanBytes(size), humanBytes(limit))
}

// corrupt says a document cannot be parsed, with the parser's reason.
func corrupt(name string, f Format, err error) error {
	if strings.HasPrefix(err.Error(), string(f)+":") {
		// The parser names the format already ("html: ...").
		return fmt.Errorf("%s: %w (%w)", name, ErrCorrupt, err)
	}
	return fmt.Errorf("%s: %w (%s: %w)", name, ErrCorrupt, f, err)
}

// humanBytes writes a size the way people read it.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
