package document

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFormats extracts the source text written in every format by real
// tools and checks that the text, the paragraphs, the headings and the
// title survive.
func TestFormats(t *testing.T) {
	s := loadSource(t)
	cases := []struct {
		kind   string
		format Format
		title  string
		// headings: the source's headings come out as headings.
		headings bool
		// paraShare: the share of source paragraphs that must come out
		// as exactly one paragraph each.
		paraShare float64
	}{
		{kind: "md", format: Markdown, title: s.title, headings: true, paraShare: 1},
		{kind: "txt", format: Text, paraShare: 1},
		{kind: "utf8bom.txt", format: Text, paraShare: 1},
		{kind: "utf16le.txt", format: Text, paraShare: 1},
		{kind: "utf16be.txt", format: Text, paraShare: 1},
		{kind: "utf16nobom.txt", format: Text, paraShare: 1},
		{kind: "latin1.txt", format: Text, paraShare: 0.6},
		{kind: "cp1252.txt", format: Text, paraShare: 1},
		{kind: "html", format: HTML, title: s.title, headings: true, paraShare: 1},
		{kind: "docx", format: DOCX, title: s.title, headings: true, paraShare: 1},
		{kind: "odt", format: ODT, title: s.title, headings: true, paraShare: 1},
		{kind: "epub", format: EPUB, title: s.title, headings: true, paraShare: 1},
		{kind: "rtf", format: RTF, title: s.title, headings: true, paraShare: 1},
		{kind: "pdf", format: PDF, title: strings.ReplaceAll(s.title, "’", "'"), headings: true, paraShare: 1},
		{kind: "pandoc.pdf", format: PDF, headings: true, paraShare: 1},
		// "flat-bottomed", broken at its hyphen in a narrow column, is
		// taken for a word hyphenated at the line's end.
		{kind: "2col.pdf", format: PDF, headings: true, paraShare: 0.9},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			path := makeDoc(t, c.kind)
			doc := extractFile(t, path)
			if doc.Format != c.format {
				t.Errorf("format %q, want %q", doc.Format, c.format)
			}
			text := doc.Text()
			if o := overlap(s.text, text); o < 0.95 {
				t.Errorf("word overlap %.3f < 0.95; text:\n%s", o, text)
			}
			// Nothing much beyond the source either (furniture, codes).
			if o := overlap(text, s.text); o < 0.95 {
				t.Errorf("reverse word overlap %.3f < 0.95; text:\n%s", o, text)
			}
			if c.title != "" && doc.Title != c.title {
				t.Errorf("title %q, want %q", doc.Title, c.title)
			}
			got := map[string]Paragraph{}
			for _, p := range doc.Paragraphs {
				if p.Text == "" || strings.Contains(p.Text, "\n") || strings.Contains(p.Text, "  ") {
					t.Errorf("paragraph not one clean line: %q", p.Text)
				}
				got[strings.Join(words(p.Text), " ")] = p
			}
			found, missing := 0, []string{}
			for _, want := range s.paras {
				p, ok := got[strings.Join(words(want.Text), " ")]
				if !ok {
					missing = append(missing, want.Text)
					continue
				}
				found++
				if c.headings && want.Heading && !p.Heading {
					t.Errorf("heading %q is not a heading", want.Text)
				}
				if c.headings && !want.Heading && p.Heading {
					t.Errorf("paragraph %q taken for a heading", want.Text)
				}
			}
			if share := float64(found) / float64(len(s.paras)); share < c.paraShare {
				t.Errorf("%d of %d source paragraphs came out whole (want %.0f%%); missing:\n%s\ngot:\n%s",
					found, len(s.paras), c.paraShare*100, strings.Join(missing, "\n"), dump(doc))
			}
			if c.format == HTML {
				for _, w := range words(text) {
					if slices.Contains(furnitureOnly, w) {
						t.Errorf("the page's furniture came through (%q):\n%s", w, dump(doc))
						break
					}
				}
			}
		})
	}
}

func dump(d *Document) string {
	var b strings.Builder
	for _, p := range d.Paragraphs {
		mark := "P"
		if p.Heading {
			mark = "H"
		}
		b.WriteString(mark)
		if p.Page > 0 {
			b.WriteString(" p")
			b.WriteString(string(rune('0' + p.Page%10)))
		}
		b.WriteString(": " + p.Text + "\n")
	}
	return b.String()
}

// TestPDFPages checks that paragraphs keep the page they start on: a
// passage pdftotext finds on page 2 maps to page 2 through PageAt.
func TestPDFPages(t *testing.T) {
	path := makeDoc(t, "pdf")
	doc := extractFile(t, path)
	if doc.Pages() < 2 {
		t.Fatalf("%d pages, want at least 2:\n%s", doc.Pages(), dump(doc))
	}
	for page := 1; page <= 2; page++ {
		p := string(run(t, nil, "pdftotext", "-f", itoa(page), "-l", itoa(page), "-enc", "UTF-8", path, "-"))
		// A phrase from the middle of the page's longest line.
		var longest string
		for _, l := range strings.Split(p, "\n") {
			if len(l) > len(longest) {
				longest = l
			}
		}
		ws := strings.Fields(longest)
		if len(ws) < 6 {
			t.Fatalf("page %d has no line to look for: %q", page, p)
		}
		phrase := strings.Join(ws[1:len(ws)-1], " ")
		text := doc.Text()
		i := strings.Index(text, phrase)
		if i < 0 {
			t.Fatalf("%q of page %d not in the text", phrase, page)
		}
		if got := doc.PageAt(i); got != page {
			t.Errorf("PageAt(%d) = %d for %q, want %d", i, got, phrase, page)
		}
	}
	// The page number groff prints on page 2 is not text.
	for _, p := range doc.Paragraphs {
		if strings.TrimSpace(strings.Trim(p.Text, "-– ")) == "2" {
			t.Errorf("a page number came through as a paragraph: %q", p.Text)
		}
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestScannedPDF(t *testing.T) {
	path := makeDoc(t, "scanned.pdf")
	_, err := ReadFile(context.Background(), path)
	var scanned *ScannedPDFError
	if !errors.As(err, &scanned) {
		t.Fatalf("err = %v, want a ScannedPDFError", err)
	}
	if scanned.Pages < 2 || !strings.Contains(err.Error(), "scanned PDF") || !strings.Contains(err.Error(), "OCR") {
		t.Errorf("error %q (pages %d) does not say what to do", err, scanned.Pages)
	}
}

func TestEncryptedPDF(t *testing.T) {
	path := makeDoc(t, "encrypted.pdf")
	_, err := ReadFile(context.Background(), path)
	if !errors.Is(err, ErrEncrypted) {
		t.Fatalf("err = %v, want ErrEncrypted", err)
	}
	if !strings.Contains(err.Error(), "password") {
		t.Errorf("error %q does not name the password", err)
	}
}

func TestUnsupported(t *testing.T) {
	dir := t.TempDir()
	pdf := makeDoc(t, "pdf")
	prefix := filepath.Join(dir, "img")
	run(t, nil, "pdftoppm", "-png", "-r", "20", "-f", "1", "-l", "1", "-singlefile", pdf, prefix)
	png, err := os.ReadFile(prefix + ".png")
	if err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(dir, "tone.wav")
	run(t, nil, "ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.2", wav)
	wavData, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind string
		data       []byte
	}{
		{"scan.png", "image", png},
		{"tone.wav", "audio", wavData},
		{"letter.doc", "legacy Word document", []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + strings.Repeat("\x00", 504))},
		{"data.bin", "binary", []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Extract(context.Background(), c.name, c.data)
			var u *UnsupportedError
			if !errors.As(err, &u) {
				t.Fatalf("err = %v, want an UnsupportedError", err)
			}
			if !strings.Contains(err.Error(), c.kind) || !strings.Contains(err.Error(), c.name) {
				t.Errorf("error %q does not name %q and %q", err, c.name, c.kind)
			}
		})
	}
}

func TestDamagedAndEmpty(t *testing.T) {
	docx, err := os.ReadFile(makeDoc(t, "docx"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Extract(ctx, "cut.docx", docx[:len(docx)/2]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a cut DOCX: err = %v, want ErrCorrupt", err)
	}
	pdf, err := os.ReadFile(makeDoc(t, "pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(ctx, "cut.pdf", pdf[:400]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a cut PDF: err = %v, want ErrCorrupt", err)
	}
	for _, c := range []struct{ name, data string }{
		{"blank.txt", " \n\n\t \r\n"},
		{"empty.md", ""},
		{"page.html", "<html><head><title>x</title><script>var a;</script></head><body> </body></html>"},
		{"blank.rtf", `{\rtf1\ansi{\fonttbl{\f0 Times;}}\par\par}`},
	} {
		if _, err := Extract(ctx, c.name, []byte(c.data)); !errors.Is(err, ErrEmpty) {
			t.Errorf("%s: err = %v, want ErrEmpty", c.name, err)
		}
	}
}

func TestTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(context.Background(), path); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestPageAt(t *testing.T) {
	d := &Document{Paragraphs: []Paragraph{{Text: "one", Page: 1}, {Text: "two two", Page: 2}, {Text: "three", Page: 2}}}
	text := d.Text()
	if text != "one\n\ntwo two\n\nthree" {
		t.Fatalf("Text() = %q", text)
	}
	for _, c := range []struct{ off, page int }{
		{0, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 2}, {11, 2}, {len(text) - 1, 2}, {len(text), 0}, {-1, 0},
	} {
		if got := d.PageAt(c.off); got != c.page {
			t.Errorf("PageAt(%d) = %d, want %d", c.off, got, c.page)
		}
	}
	if d.Pages() != 2 {
		t.Errorf("Pages() = %d", d.Pages())
	}
	var nilDoc *Document
	if nilDoc.Text() != "" || nilDoc.PageAt(0) != 0 || nilDoc.Pages() != 0 {
		t.Error("a nil document is not empty")
	}
}
