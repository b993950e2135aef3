package document

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// para is a compact expectation: "# text" for a heading, "text" otherwise.
func paras(d *Document) []string {
	var out []string
	for _, p := range d.Paragraphs {
		if p.Heading {
			out = append(out, "# "+p.Text)
		} else {
			out = append(out, p.Text)
		}
	}
	return out
}

func expect(t *testing.T, name, data string, title string, want ...string) {
	t.Helper()
	doc, err := Extract(context.Background(), name, []byte(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := paras(doc)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: paragraphs\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if doc.Title != title {
		t.Errorf("%s: title %q, want %q", name, doc.Title, title)
	}
}

func TestHTMLMainText(t *testing.T) {
	prose := "The harbour wall was rebuilt in granite after the storm, stone by stone, over three long summers."
	t.Run("no landmarks", func(t *testing.T) {
		page := `<!DOCTYPE html><html><head><title>Wall</title></head><body>
<div id="top"><a href="/">Home</a> | <a href="/news">News</a> | <a href="/shop">Shop</a></div>
<div class="wrap"><div class="col">
<h1>The <a href="/wall">Wall</a></h1>
<p>` + prose + `</p><p>` + prose + ` It <a href="/granite">took granite</a> from the quarry.</p>
<p>Lines<br>kept together<br><br>until a double break.</p>
<pre>code line one
code line two

second block</pre>
<p hidden>hidden text</p><p style="display: none">invisible text</p><p aria-hidden="true">decorative</p>
</div>
<div><ul><li><a href="/1">Related one</a></li><li><a href="/2">Related two</a></li></ul></div></div>
<div>Small print here.</div>
</body></html>`
		expect(t, "wall.html", page, "Wall",
			"# The Wall", prose, prose+" It took granite from the quarry.",
			"Lines kept together", "until a double break.",
			"code line one code line two", "second block")
	})
	t.Run("introduction beside the long part", func(t *testing.T) {
		long := strings.Repeat("<p>"+prose+"</p>", 12)
		page := `<html><body><div id="menu"><ul><li><a href="/">Home</a></li></ul></div><div class="container">
<p>An introduction that says what the page is about and why one would read it, long enough to be a paragraph of prose.</p>
<div id="docs">` + long + `</div></div></body></html>`
		want := []string{"An introduction that says what the page is about and why one would read it, long enough to be a paragraph of prose."}
		for i := 0; i < 12; i++ {
			want = append(want, prose)
		}
		expect(t, "intro.html", page, "", want...)
	})
	t.Run("article", func(t *testing.T) {
		page := `<html><body><div class="menu"><p>Menu text that is long enough to count as some prose for the page.</p></div>
<article><h2>Storm</h2><p>` + prose + `</p></article><aside><p>Aside prose is never main text, however long it is.</p></aside></body></html>`
		expect(t, "a.html", page, "Storm", "# Storm", prose)
	})
	t.Run("main over article", func(t *testing.T) {
		page := `<html><body><header><nav><a href="/">Home</a></nav></header>
<main><article><p>` + prose + `</p></article><article><p>Second story, also main text.</p></article></main>
<footer>Footer words</footer></body></html>`
		expect(t, "m.html", page, "", prose, "Second story, also main text.")
	})
	t.Run("title heading in the header", func(t *testing.T) {
		page := `<html><head><title>Site — Wall</title></head><body><header><h1>The Wall</h1><p>By a reporter</p></header>
<div class="body"><p>` + prose + `</p><p>` + prose + `</p></div></body></html>`
		// The byline beside the heading is lost with the header: the
		// main text is the div, and only the page's h1 is brought in.
		expect(t, "h.html", page, "Site — Wall", "# The Wall", prose, prose)
	})
	t.Run("meta charset", func(t *testing.T) {
		page := "<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9</title></head><body><p>na\xefve caf\xe9</p></body></html>"
		expect(t, "c.html", page, "Café", "naïve café")
	})
	t.Run("utf-16", func(t *testing.T) {
		page := encodeUTF16LE("<html><body><p>Zoë’s “ledger”</p></body></html>")
		expect(t, "u.html", page, "", "Zoë’s “ledger”")
	})
}

func encodeUTF16LE(s string) string {
	var b []byte
	b = append(b, 0xff, 0xfe)
	for _, r := range s {
		if r > 0xffff {
			panic("test text beyond the BMP")
		}
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func TestMarkdownAndText(t *testing.T) {
	md := "---\ntitle: \"Notes: one\"\nauthor: me\n---\n\n# First  heading #\n\nA paragraph\nover two lines.\n\nSetext heading\n==============\n\n- item one\n- item two\ncontinued\n\n1. first\n2. second\n\n```\ncode # not a heading\n```\n\n#hashtag is text\n"
	expect(t, "notes.md", md, "Notes: one",
		"# First heading", "A paragraph over two lines.", "# Setext heading",
		"- item one", "- item two continued", "1. first", "2. second", "code # not a heading", "#hashtag is text")
	txt := "Title line\r\n\r\nFirst paragraph\r\nwraps here.\r\n\f\r\n# not a heading in text\n"
	expect(t, "notes.txt", txt, "", "Title line", "First paragraph wraps here.", "# not a heading in text")
	// Latin-1 that is not UTF-8, told by its bytes.
	expect(t, "latin.txt", "caf\xe9 na\xefve \x93quoted\x94", "", "café naïve “quoted”")
}

func TestRTF(t *testing.T) {
	rtf := `{\rtf1\ansi\ansicpg1251\deff0{\fonttbl{\f0\froman Times;}}{\colortbl;\red0\green0\blue0;}
{\stylesheet{\s0 Normal;}{\s1\b\fs32 heading 1;}{\*\cs15 heading 1 Char;}}
{\*\generator Writer 1.0;}{\info{\title \'cc\'ee\'e9 title}{\author Someone}}
{\pard\s1 Chapter \'ee\'e4\'e8\'ed\par}
\pard\s0 Plain \u1087? text, {\b bold} and \uc2\u8212\'97\'97 dash\uc1 , \ldblquote quoted\rdblquote .\par
Smile \u-10179?\u-8704? here{\*\bkmkstart x} and {\field{\*\fldinst HYPERLINK "x"}{\fldrslt a link}}.\par
{\pict\pngblip 89504e47}\par
\trowd Cell one\cell Cell two\cell\row
{\pard\outlinelevel1 Second heading\par}
Escapes \{ \} \\ and\~space\par
Unclosed {\i group`
	expect(t, "ru.rtf", rtf, "Мой title",
		"# Chapter один", "Plain п text, bold and — dash, “quoted”.", "Smile 😀 here and a link.",
		"Cell one", "Cell two", "# Second heading", "Escapes { } \\ and space", "Unclosed group")
	// Bytes of the Asian code pages are two to a character.
	expect(t, "jp.rtf", `{\rtf1\ansi\ansicpg932 \'93\'fa\'96\'7b\par}`, "", "日本")
}

func TestZipLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("entry declaring too much", func(t *testing.T) {
		// The header says more than the limit; archive/zip itself
		// refuses an entry that inflates beyond what its header says.
		data := zipRaw(t, "word/document.xml", bomb(t, 1), 1, int(maxZipEntry>>20)+1)
		_, err := Extract(ctx, "bomb.docx", data)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("archive inflating too far", func(t *testing.T) {
		// EPUB chapters each under the entry limit, together over the
		// archive's; the limits lowered to keep the test quick.
		entry, total := maxZipEntry, maxZipTotal
		maxZipEntry, maxZipTotal = 2<<20, 5<<19
		defer func() { maxZipEntry, maxZipTotal = entry, total }()
		n := 1
		chapter := bomb(t, n)
		entries := []string{"mimetype", "application/epub+zip",
			"META-INF/container.xml", `<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>`}
		var manifest, spine string
		for i := 0; i < 3; i++ {
			id := "c" + itoaN(i)
			manifest += `<item id="` + id + `" href="` + id + `.xhtml" media-type="application/xhtml+xml"/>`
			spine += `<itemref idref="` + id + `"/>`
		}
		entries = append(entries, "c.opf", `<package><manifest>`+manifest+`</manifest><spine>`+spine+`</spine></package>`)
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for i := 0; i+1 < len(entries); i += 2 {
			f, _ := w.Create(entries[i])
			_, _ = f.Write([]byte(entries[i+1]))
		}
		for i := 0; i < 3; i++ {
			addRaw(t, w, "c"+itoaN(i)+".xhtml", chapter, n, n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := Extract(ctx, "bomb.epub", buf.Bytes())
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("too many entries", func(t *testing.T) {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for i := 0; i <= maxZipEntries; i++ {
			if _, err := w.CreateHeader(&zip.FileHeader{Name: "word/x" + itoaN(i), Method: zip.Store}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := Extract(ctx, "many.docx", buf.Bytes())
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("spreadsheet", func(t *testing.T) {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for _, n := range []string{"[Content_Types].xml", "xl/workbook.xml"} {
			if _, err := w.Create(n); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var u *UnsupportedError
		if _, err := Extract(ctx, "sheet.xlsx", buf.Bytes()); !errors.As(err, &u) || !strings.Contains(err.Error(), "Excel") {
			t.Errorf("err = %v, want an UnsupportedError naming Excel", err)
		}
	})
}

// zipOf builds an archive of the named entries in order.
func zipOf(t *testing.T, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		f, err := w.Create(entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(entries[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDOCXParts covers what pandoc's documents lack: a main part named by
// the relationships, styles by name, tables, text boxes with their
// fallback copy, tracked deletions and field codes.
func TestDOCXParts(t *testing.T) {
	const w = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`
	doc := `<?xml version="1.0"?><w:document ` + w + `><w:body>
<w:p><w:pPr><w:pStyle w:val="Berschrift1"/></w:pPr><w:r><w:t>Kapitel eins</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del><w:r><w:delText>deleted </w:delText></w:r></w:del><w:r><w:t>text</w:t><w:tab/><w:t>after tab</w:t><w:br/><w:t>and break</w:t></w:r></w:p>
<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>HYPERLINK "x"</w:instrText></w:r><w:r><w:t>link text</w:t></w:r><w:r><w:noBreakHyphen/><w:t>on</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell A</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Cell B</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>In a box</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>In a box</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>Around the box</w:t></w:r></w:p>
<w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Outline heading</w:t></w:r></w:p>
</w:body></w:document>`
	styles := `<w:styles ` + w + `><w:style w:type="paragraph" w:styleId="Berschrift1"><w:name w:val="heading 1"/></w:style></w:styles>`
	rels := `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/main.xml"/></Relationships>`
	core := `<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bericht</dc:title></cp:coreProperties>`
	data := zipOf(t, "[Content_Types].xml", "<Types/>", "_rels/.rels", rels, "word/main.xml", doc,
		"word/styles.xml", styles, "docProps/core.xml", core)
	expect(t, "bericht.docx", string(data), "Bericht",
		"# Kapitel eins", "Kept text after tab and break", "link text-on", "Cell A", "Cell B",
		"In a box", "Around the box", "# Outline heading")
}

// TestODTParts covers spaces, notes, annotations and tracked changes.
func TestODTParts(t *testing.T) {
	content := `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0">
<office:automatic-styles><style:style style:name="P1" style:parent-style-name="Title"/></office:automatic-styles>
<office:body><office:text><text:tracked-changes><text:changed-region><text:deletion><text:p>gone</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:p text:style-name="P1">The Title</text:p>
<text:h text:outline-level="1">Part one</text:h>
<text:p>Word<text:s text:c="3"/>spaced<text:tab/>tabbed<text:line-break/>broken<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>A note.</text:p></text:note-body></text:note> on.<office:annotation><text:p>a comment</text:p></office:annotation></text:p>
<text:list><text:list-item><text:p>Item</text:p></text:list-item></text:list>
</office:text></office:body></office:document-content>`
	data := zipOf(t, "mimetype", "application/vnd.oasis.opendocument.text", "content.xml", content)
	expect(t, "x.odt", string(data), "The Title",
		"# The Title", "# Part one", "Word spaced tabbed broken[1] on.", "Item", "# Notes", "[1] A note.")
}

// bomb returns a deflate stream of n MiB of spaces, made by deflating one
// MiB once and repeating its blocks, which refer to nothing before them.
func bomb(t *testing.T, n int) []byte {
	t.Helper()
	var one bytes.Buffer
	fw, err := flate.NewWriter(&one, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(bytes.Repeat([]byte(" "), 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	out := bytes.Repeat(one.Bytes(), n)
	return append(out, 0x03, 0x00) // an empty final block
}

// addRaw adds a deflated entry of n MiB of spaces, declared as declared
// MiB.
func addRaw(t *testing.T, w *zip.Writer, name string, deflated []byte, n, declared int) {
	t.Helper()
	crc := crc32.NewIEEE()
	mib := bytes.Repeat([]byte(" "), 1<<20)
	for i := 0; i < n; i++ {
		crc.Write(mib)
	}
	f, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(len(deflated)), UncompressedSize64: uint64(declared) << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(deflated); err != nil {
		t.Fatal(err)
	}
}

// zipRaw is an archive of one such entry.
func zipRaw(t *testing.T, name string, deflated []byte, n, declared int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	addRaw(t, w, name, deflated, n, declared)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func itoaN(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestCancelledAndMissingTool(t *testing.T) {
	pdf, err := os.ReadFile(makeDoc(t, "pdf"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Extract(ctx, "l.pdf", pdf); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Extract(context.Background(), "l.pdf", pdf)
	var m *ToolMissingError
	if !errors.As(err, &m) || m.Package != "poppler-utils" || !strings.Contains(err.Error(), "poppler-utils") {
		t.Errorf("err = %v, want a ToolMissingError naming poppler-utils", err)
	}
}

func TestXHTMLSelfClosed(t *testing.T) {
	page := `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title/><script src="a.js"/></head><body><h1>One</h1><p>Text after the empty title.</p></body></html>`
	expect(t, "ch.xhtml", page, "One", "# One", "Text after the empty title.")
}

// TestDeepNesting: the HTML parser refuses more than 512 open elements,
// so no reader recurses without bound.
func TestDeepNesting(t *testing.T) {
	page := "<html><body>" + strings.Repeat("<div>", 100000) + "text</body></html>"
	_, err := Extract(context.Background(), "deep.html", []byte(page))
	if !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "html: html:") {
		t.Errorf("err = %v, want ErrCorrupt naming html once", err)
	}
	rtf := strings.Repeat("{", 100000) + `\rtf1 deep` + strings.Repeat("}", 100000)
	if _, err := Extract(context.Background(), "deep.rtf", []byte(`{\rtf1 `+rtf+`}`)); err != nil {
		t.Errorf("deep RTF: %v", err)
	}
}

func TestExtensions(t *testing.T) {
	for _, ext := range Extensions() {
		if !strings.HasPrefix(ext, ".") || strings.ToLower(ext) != ext {
			t.Errorf("extension %q", ext)
		}
	}
	if f, err := Detect("a.markdown", []byte("# x")); err != nil || f != Markdown {
		t.Errorf("Detect = %v, %v", f, err)
	}
}

// TestFlatODT reads a flat OpenDocument text (.fodt), assembled from the
// parts of pandoc's ODT as an office suite writes one: the meta and the
// content in a single office:document.
func TestFlatODT(t *testing.T) {
	s := loadSource(t)
	data, err := os.ReadFile(makeDoc(t, "odt"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	part := func(name string) string {
		f, err := r.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	content, meta := part("content.xml"), part("meta.xml")
	metaBody := meta[strings.Index(meta, "<office:meta>") : strings.Index(meta, "</office:meta>")+len("</office:meta>")]
	flat := strings.Replace(content, "<office:document-content ", `<office:document office:mimetype="application/vnd.oasis.opendocument.text" `, 1)
	flat = strings.Replace(flat, "</office:document-content>", "</office:document>", 1)
	if i := strings.Index(flat, "<office:automatic-styles"); i >= 0 {
		flat = flat[:i] + metaBody + flat[i:]
	}
	doc, err := Extract(context.Background(), "ledger.fodt", []byte(flat))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != ODT || doc.Title != s.title {
		t.Errorf("format %s title %q", doc.Format, doc.Title)
	}
	if o := overlap(s.text, doc.Text()); o < 0.95 {
		t.Errorf("word overlap %.3f", o)
	}
	var u *UnsupportedError
	if _, err := Extract(context.Background(), "data.xml", []byte(`<?xml version="1.0"?><records><r>1</r></records>`)); !errors.As(err, &u) {
		t.Errorf("other XML: err = %v, want an UnsupportedError", err)
	}
}

// TestEncryptedOffice: Office wraps a password-protected .docx in an OLE
// container, which must not be called a legacy .doc.
func TestEncryptedOffice(t *testing.T) {
	ole := []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + strings.Repeat("\x00", 504))
	if _, err := Extract(context.Background(), "secret.docx", ole); !errors.Is(err, ErrEncrypted) {
		t.Errorf("err = %v, want ErrEncrypted", err)
	}
}

// TestNotes: footnotes of Word, OpenDocument and RTF documents made by
// pandoc come after the text under "Notes", numbered as cited, and the
// citation is marked where it was; a note of two paragraphs keeps both.
func TestNotes(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "notes.md")
	source := "# Minutes\n\nThe budget was approved.[^cost] The vote was close.\n\n" +
		"Work starts in March.[^when]\n\n" +
		"[^cost]: Forty thousand, for the whole year.\n\n" +
		"[^when]: If the supplier delivers on time.\n\n    Otherwise in April.\n"
	if err := os.WriteFile(md, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"# Minutes", "The budget was approved.[1] The vote was close.", "Work starts in March.[2]",
		"# Notes", "[1] Forty thousand, for the whole year.", "[2] If the supplier delivers on time.", "Otherwise in April."}
	for _, kind := range []string{"docx", "odt", "rtf"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(dir, "notes."+kind)
			run(t, nil, "pandoc", "-s", md, "-o", out)
			if got := paras(extractFile(t, out)); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("paragraphs (headings marked #)\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
