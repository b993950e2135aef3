package document

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Limits on zip archives (DOCX, ODT, EPUB), against archives made to
// inflate without end (zip bombs). Real documents stay far below them: a
// novel's EPUB has a few hundred entries and a few MiB of XHTML.
// They are variables only so that tests can lower them.
var (
	maxZipEntries = 10000
	// maxZipTotal bounds the bytes inflated from one archive.
	maxZipTotal int64 = 256 << 20
	// maxZipEntry bounds the bytes inflated from one entry.
	maxZipEntry int64 = 128 << 20
)

// zipDoc is an opened archive with a budget of bytes to inflate.
type zipDoc struct {
	name  string
	f     Format
	r     *zip.Reader
	files map[string]*zip.File
	read  int64
}

func openZip(name string, f Format, data []byte) (*zipDoc, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, corrupt(name, f, err)
	}
	if len(r.File) > maxZipEntries {
		return nil, fmt.Errorf("%s: %w (an archive of %d entries; at most %d)", name, ErrTooLarge, len(r.File), maxZipEntries)
	}
	z := &zipDoc{name: name, f: f, r: r, files: make(map[string]*zip.File, len(r.File))}
	for _, file := range r.File {
		if _, dup := z.files[file.Name]; !dup {
			z.files[file.Name] = file
		}
	}
	return z, nil
}

// has reports whether the archive holds an entry.
func (z *zipDoc) has(name string) bool {
	_, ok := z.files[name]
	return ok
}

// errNoEntry is an entry the archive lacks.
var errNoEntry = errors.New("missing entry")

// read inflates one entry, within the limits.
func (z *zipDoc) readEntry(name string) ([]byte, error) {
	file, ok := z.files[name]
	if !ok {
		// Archives made on Windows sometimes differ in case.
		for n, f := range z.files {
			if strings.EqualFold(n, name) {
				file, ok = f, true
				break
			}
		}
	}
	if !ok {
		return nil, corrupt(z.name, z.f, fmt.Errorf("%w %s", errNoEntry, name))
	}
	if file.UncompressedSize64 > uint64(maxZipEntry) {
		return nil, fmt.Errorf("%s: %w (%s inflates to %s; at most %s)", z.name, ErrTooLarge, name,
			humanBytes(int64(file.UncompressedSize64)), humanBytes(maxZipEntry))
	}
	rc, err := file.Open()
	if err != nil {
		return nil, corrupt(z.name, z.f, err)
	}
	defer rc.Close()
	limit := maxZipEntry
	if left := maxZipTotal - z.read; left < limit {
		limit = left
	}
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	z.read += int64(len(data))
	if err != nil {
		return nil, corrupt(z.name, z.f, fmt.Errorf("%s: %w", name, err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (the archive inflates beyond %s)", z.name, ErrTooLarge, humanBytes(limit))
	}
	return data, nil
}

// resolve joins a reference made inside entry base to an entry name.
func resolve(base, ref string) string {
	if i := strings.IndexAny(ref, "#?"); i >= 0 {
		ref = ref[:i]
	}
	ref = unescapePath(ref)
	if strings.HasPrefix(ref, "/") {
		return strings.TrimPrefix(path.Clean(ref), "/")
	}
	return strings.TrimPrefix(path.Join(path.Dir(base), ref), "/")
}

// unescapePath undoes %XX escapes in a URL path, leaving bad ones be.
func unescapePath(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// detectZip tells the zip formats apart by their mimetype entry or
// [Content_Types].xml, and names the office files it does not read.
func detectZip(name string, data []byte, ext string) (Format, error) {
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", corrupt(name, "zip", err)
	}
	if len(z.File) > maxZipEntries {
		return "", fmt.Errorf("%s: %w (an archive of %d entries; at most %d)", name, ErrTooLarge, len(z.File), maxZipEntries)
	}
	var mimetype string
	has := map[string]bool{}
	for _, f := range z.File {
		has[f.Name] = true
		if f.Name == "mimetype" && f.UncompressedSize64 < 256 {
			if rc, err := f.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 256))
				rc.Close()
				mimetype = strings.TrimSpace(string(b))
			}
		}
	}
	unsupported := func(kind string) (Format, error) {
		return "", &UnsupportedError{Name: name, Kind: kind, Hint: "save or export it as PDF, or copy its text into a text file"}
	}
	switch {
	case mimetype == "application/epub+zip":
		return EPUB, nil
	case mimetype == "application/vnd.oasis.opendocument.text" || mimetype == "application/vnd.oasis.opendocument.text-template":
		return ODT, nil
	case strings.HasPrefix(mimetype, "application/vnd.oasis.opendocument.spreadsheet"):
		return unsupported("an OpenDocument spreadsheet")
	case strings.HasPrefix(mimetype, "application/vnd.oasis.opendocument.presentation"):
		return unsupported("an OpenDocument presentation")
	case strings.HasPrefix(mimetype, "application/vnd.oasis.opendocument."):
		return unsupported("an OpenDocument file other than text")
	case has["word/document.xml"]:
		return DOCX, nil
	case has["[Content_Types].xml"] && has["xl/workbook.xml"]:
		return unsupported("an Excel spreadsheet")
	case has["[Content_Types].xml"] && has["ppt/presentation.xml"]:
		return unsupported("a PowerPoint presentation")
	case has["META-INF/container.xml"]:
		return EPUB, nil
	case has["content.xml"] && ext == ".odt":
		return ODT, nil
	}
	if has["[Content_Types].xml"] {
		// A Word document whose main part is elsewhere: the package's
		// relationships name it.
		return DOCX, nil
	}
	return unsupported("a zip archive")
}
