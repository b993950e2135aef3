package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Extract reads the document in data. Its format is told by the content
// (magic bytes, the mimetype or [Content_Types].xml of a zip archive,
// "<html", "{\rtf"), with name's extension as a hint where the content
// cannot tell (markdown versus plain text); name also names the document
// in errors. ctx bounds the external programs run for PDF.
func Extract(ctx context.Context, name string, data []byte) (*Document, error) {
	if name == "" {
		name = "the document"
	}
	return extract(ctx, name, name, data, "")
}

// extract is Extract with the document named name in errors, its format
// hinted by hint's extension, and the Content-Type a web server gave
// ("" if none), which may name the charset.
func extract(ctx context.Context, name, hint string, data []byte, contentType string) (*Document, error) {
	if len(data) > MaxBytes {
		return nil, tooLarge(name, int64(len(data)), MaxBytes)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := detect(hint, data)
	if err != nil {
		var u *UnsupportedError
		if errors.As(err, &u) {
			u.Name = name
		}
		return nil, err
	}
	switch f {
	case PDF:
		return extractPDF(ctx, name, data)
	case DOCX:
		return extractDOCX(ctx, name, data)
	case ODT:
		return extractODT(ctx, name, data)
	case EPUB:
		return extractEPUB(ctx, name, data)
	case RTF:
		return extractRTF(name, data)
	case HTML:
		return extractHTML(name, data, contentType)
	case Markdown:
		return extractPlain(name, data, true)
	default:
		return extractPlain(name, data, false)
	}
}

// ReadFile reads and extracts the document at path; files larger than
// MaxBytes are refused before they are read.
func ReadFile(ctx context.Context, path string) (*Document, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a document", path)
	}
	if st.Size() > MaxBytes {
		return nil, tooLarge(name, st.Size(), MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > MaxBytes {
		return nil, tooLarge(name, int64(len(data)), MaxBytes)
	}
	return Extract(ctx, name, data)
}

// Extensions returns the file name extensions of the documents Extract
// reads, lower case with the dot, for file dialogs and drop targets.
func Extensions() []string {
	return []string{".pdf", ".docx", ".odt", ".epub", ".rtf", ".html", ".htm", ".xhtml", ".txt", ".text",
		".md", ".markdown", ".fodt"}
}

// Detect tells the format of a document from its content, with name's
// extension as a hint; it returns an *UnsupportedError for the kinds of
// file it recognises but cannot read.
func Detect(name string, data []byte) (Format, error) {
	return detect(name, data)
}

func detect(name string, data []byte) (Format, error) {
	ext := strings.ToLower(filepath.Ext(name))
	unsupported := func(kind, hint string) (Format, error) {
		return "", &UnsupportedError{Name: name, Kind: kind, Hint: hint}
	}
	head := data
	if len(head) > 1024 {
		head = head[:1024]
	}
	switch {
	case bytes.Contains(head, []byte("%PDF-")):
		return PDF, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return detectZip(name, data, ext)
	case bytes.HasPrefix(data, []byte("{\\rtf")):
		return RTF, nil
	case bytes.HasPrefix(data, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
		switch ext {
		case ".docx", ".xlsx", ".pptx", ".odt":
			// Office keeps a password-protected document in an OLE
			// container around the encrypted package.
			return "", fmt.Errorf("%s: %w", name, ErrEncrypted)
		case ".xls":
			return unsupported("a legacy Excel spreadsheet (.xls)", "")
		case ".ppt":
			return unsupported("a legacy PowerPoint presentation (.ppt)", "")
		}
		return unsupported("a legacy Word document (.doc)", "open it in a word processor and save it as .docx, .odt or PDF")
	}
	if kind, hint, ok := sniffMedia(data); ok {
		return unsupported(kind, hint)
	}
	// Text of some kind: look at it decoded.
	text, _ := decodeText(head)
	low := strings.ToLower(strings.TrimLeft(text, " \t\r\n\ufeff"))
	if strings.HasPrefix(low, "{\\rtf") {
		return RTF, nil
	}
	if looksHTML(low) || ext == ".html" || ext == ".htm" || ext == ".xhtml" {
		return HTML, nil
	}
	if strings.HasPrefix(low, "<?xml") || strings.HasPrefix(low, "<svg") {
		switch {
		case strings.Contains(low, "<office:document") && strings.Contains(low, "opendocument.text"):
			return ODT, nil // flat OpenDocument (.fodt): content.xml as one file
		case strings.Contains(low, "<svg"):
			return unsupported("an image (SVG)", "")
		}
		return unsupported("an XML file", "open it in the program that made it and save it as PDF or text")
	}
	if isBinary(data) {
		return unsupported("a binary file", "")
	}
	switch ext {
	case ".md", ".markdown", ".mdown", ".mkd":
		return Markdown, nil
	}
	return Text, nil
}

// looksHTML tells an HTML page from its lower-cased first bytes.
func looksHTML(low string) bool {
	if strings.HasPrefix(low, "<?xml") {
		return strings.Contains(low, "<html")
	}
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body", "<!--"} {
		if strings.HasPrefix(low, p) {
			return p != "<!--" || strings.Contains(low, "<html")
		}
	}
	return false
}

// sniffMedia recognises images, audio and video by their magic bytes.
func sniffMedia(data []byte) (kind, hint string, ok bool) {
	const ocr = "run it through OCR first, or save the document it shows as PDF with text"
	const audio = "transcribe it instead"
	has := func(off int, magic string) bool {
		return len(data) >= off+len(magic) && string(data[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "an image (PNG)", ocr, true
	case has(0, "\xff\xd8\xff"):
		return "an image (JPEG)", ocr, true
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "an image (GIF)", ocr, true
	case has(0, "RIFF") && has(8, "WEBP"):
		return "an image (WebP)", ocr, true
	case has(0, "II*\x00"), has(0, "MM\x00*"):
		return "an image (TIFF)", ocr, true
	case has(0, "BM") && len(data) > 14 && isBinary(data):
		return "an image (BMP)", ocr, true
	case has(0, "RIFF") && has(8, "WAVE"):
		return "audio (WAV)", audio, true
	case has(0, "ID3"), len(data) > 2 && data[0] == 0xff && data[1]&0xe0 == 0xe0 && isBinary(data):
		return "audio (MP3)", audio, true
	case has(0, "fLaC"):
		return "audio (FLAC)", audio, true
	case has(0, "OggS"):
		return "audio (Ogg)", audio, true
	case has(4, "ftyp"):
		return "audio or video (MP4)", audio, true
	case has(0, "\x1aE\xdf\xa3"):
		return "video (Matroska or WebM)", audio, true
	}
	return "", "", false
}

// isBinary reports NUL bytes or many control bytes in text that is not
// UTF-16.
func isBinary(data []byte) bool {
	if len(data) > 8192 {
		data = data[:8192]
	}
	if e := utf16Order(data); e != 0 {
		return false
	}
	ctrl := 0
	for _, c := range data {
		if c == 0 {
			return true
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1b {
			ctrl++
		}
	}
	return ctrl > len(data)/10+1
}
