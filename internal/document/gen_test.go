package document

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// The test documents are made by real tools from testdata/source.md:
// pandoc (DOCX, ODT, EPUB, RTF, HTML, plain text), groff (PDF), pdftoppm
// and img2pdf (a scanned PDF), iconv (UTF-16, Latin-1, Windows-1252),
// ghostscript (an encrypted PDF). scripts/setup installs them; a missing
// tool fails the test with the package to install.

// toolPackages names the Debian package of each tool the tests run.
var toolPackages = map[string]string{
	"pandoc": "pandoc", "groff": "groff", "pdftoppm": "poppler-utils", "pdftotext": "poppler-utils",
	"pdfinfo": "poppler-utils", "img2pdf": "img2pdf", "iconv": "libc-bin", "gs": "ghostscript",
	"ffmpeg": "ffmpeg",
}

// run runs a tool and returns its standard output.
func run(t testing.TB, stdin []byte, tool string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("the test needs %s: install the package %s (scripts/setup does)", tool, toolPackages[tool])
	}
	cmd := exec.Command(tool, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, errOut.String())
	}
	return out.Bytes()
}

// source is testdata/source.md read once: its title and paragraphs.
type source struct {
	markdown []byte
	title    string
	paras    []Paragraph
	text     string
}

var (
	srcOnce sync.Once
	src     source
	srcErr  error
)

func loadSource(t testing.TB) source {
	t.Helper()
	srcOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("testdata", "source.md"))
		if err != nil {
			srcErr = err
			return
		}
		src.markdown = data
		body := string(data)
		// front matter: "---\ntitle: ...\n---"
		if rest, ok := strings.CutPrefix(body, "---\n"); ok {
			fm, after, _ := strings.Cut(rest, "\n---\n")
			for _, l := range strings.Split(fm, "\n") {
				if v, ok := strings.CutPrefix(l, "title:"); ok {
					src.title = strings.TrimSpace(v)
				}
			}
			body = after
		}
		var texts []string
		for _, block := range strings.Split(body, "\n\n") {
			block = strings.TrimSpace(block)
			if block == "" {
				continue
			}
			h := strings.HasPrefix(block, "#")
			if h {
				block = strings.TrimSpace(strings.TrimLeft(block, "#"))
			}
			src.paras = append(src.paras, Paragraph{Text: clean(block), Heading: h})
			texts = append(texts, clean(block))
		}
		src.text = strings.Join(texts, "\n\n")
	})
	if srcErr != nil {
		t.Fatal(srcErr)
	}
	return src
}

// words splits text into lower-cased words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// overlap is the share of the source's words (as a multiset) found in
// the extracted text.
func overlap(source, got string) float64 {
	want := map[string]int{}
	n := 0
	for _, w := range words(source) {
		want[w]++
		n++
	}
	if n == 0 {
		return 0
	}
	have := map[string]int{}
	for _, w := range words(got) {
		have[w]++
	}
	common := 0
	for w, c := range want {
		common += min(c, have[w])
	}
	return float64(common) / float64(n)
}

// genDir holds the documents the tests make, once per run of the tests.
var (
	genDir string
	genMu  sync.Mutex
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "earshot-document-test-")
	if err != nil {
		panic(err)
	}
	genDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// makeDoc writes the source in a format with real tools, once per run,
// and returns the file's path.
func makeDoc(t testing.TB, kind string) string {
	t.Helper()
	genMu.Lock()
	defer genMu.Unlock()
	return makeDocLocked(t, kind)
}

func makeDocLocked(t testing.TB, kind string) string {
	t.Helper()
	s := loadSource(t)
	dir := genDir
	if _, err := os.Stat(filepath.Join(dir, "ledger."+kind)); err == nil {
		return filepath.Join(dir, "ledger."+kind)
	}
	md := filepath.Join(dir, "source.md")
	if _, err := os.Stat(md); err != nil {
		if err := os.WriteFile(md, s.markdown, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "ledger."+kind)
	write := func(path string, data []byte) string {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	switch kind {
	case "docx", "odt", "epub", "rtf":
		run(t, nil, "pandoc", "-s", md, "-o", out)
	case "md":
		return write(out, s.markdown)
	case "txt":
		run(t, nil, "pandoc", "-s", md, "-t", "plain", "-o", out)
	case "utf8bom.txt":
		plain := run(t, nil, "pandoc", md, "-t", "plain")
		return write(out, append([]byte("\xef\xbb\xbf"), plain...))
	case "utf16le.txt", "utf16be.txt":
		plain := run(t, nil, "pandoc", md, "-t", "plain")
		enc := "UTF-16LE"
		if kind == "utf16be.txt" {
			enc = "UTF-16BE"
		}
		bom := run(t, []byte("\ufeff"), "iconv", "-f", "UTF-8", "-t", enc)
		return write(out, append(bom, run(t, plain, "iconv", "-f", "UTF-8", "-t", enc)...))
	case "utf16nobom.txt":
		plain := run(t, nil, "pandoc", md, "-t", "plain")
		return write(out, run(t, plain, "iconv", "-f", "UTF-8", "-t", "UTF-16LE"))
	case "latin1.txt":
		plain := run(t, nil, "pandoc", md, "-t", "plain")
		return write(out, run(t, plain, "iconv", "-f", "UTF-8", "-t", "LATIN1//TRANSLIT"))
	case "cp1252.txt":
		plain := run(t, nil, "pandoc", md, "-t", "plain")
		return write(out, run(t, plain, "iconv", "-f", "UTF-8", "-t", "WINDOWS-1252"))
	case "html":
		page := run(t, nil, "pandoc", "-s", md, "-t", "html")
		return write(out, wrapPage(page))
	case "pdf":
		// The ms macros: indented paragraphs, hyphenation, page numbers.
		ms := msSource(s)
		pdf := run(t, []byte(ms), "groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
		return write(out, pdf)
	case "2col.pdf":
		// Two columns: reading order, paragraphs cut by a column break.
		ms := strings.Replace(msSource(s), ".PP", ".2C\n.PP", 1)
		pdf := run(t, []byte(ms), "groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
		return write(out, pdf)
	case "pandoc.pdf":
		// pandoc's ms: block paragraphs with space between them.
		ms := run(t, nil, "pandoc", "-s", md, "-t", "ms")
		pdf := run(t, ms, "groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
		return write(out, pdf)
	case "scanned.pdf":
		pdf := makeDocLocked(t, "pdf")
		prefix := filepath.Join(dir, "page")
		run(t, nil, "pdftoppm", "-png", "-r", "60", pdf, prefix)
		pngs, _ := filepath.Glob(prefix + "*.png")
		if len(pngs) < 2 {
			t.Fatalf("pdftoppm made %d pages", len(pngs))
		}
		run(t, nil, "img2pdf", append(pngs, "-o", out)...)
	case "encrypted.pdf":
		pdf := makeDocLocked(t, "pdf")
		run(t, nil, "gs", "-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=pdfwrite", "-sOwnerPassword=owner",
			"-sUserPassword=secret", "-sOutputFile="+out, pdf)
	default:
		t.Fatalf("no recipe for %s", kind)
	}
	return out
}

// msSource writes the source as groff ms: .TL title, .SH headings, .PP
// paragraphs, and the title in the PDF's metadata.
func msSource(s source) string {
	var b strings.Builder
	b.WriteString(".pdfinfo /Title " + strings.ReplaceAll(s.title, "’", "'") + "\n")
	b.WriteString(".nr PS 11p\n.nr VS 13p\n")
	for i, p := range s.paras {
		switch {
		case i == 0 && p.Heading:
			b.WriteString(".TL\n")
		case p.Heading:
			b.WriteString(".SH\n")
		default:
			b.WriteString(".PP\n")
		}
		b.WriteString(p.Text + "\n")
	}
	return b.String()
}

// wrapPage puts pandoc's page in a site's furniture: a menu, a banner, a
// sidebar of links and a footer, which extraction must drop.
func wrapPage(page []byte) []byte {
	s := string(page)
	furniture := `<header class="site"><a href="/">Quayside Gazette</a>
<nav><ul><li><a href="/">Home</a></li><li><a href="/issues">Back issues</a></li>
<li><a href="/about">About us</a></li><li><a href="/subscribe">Subscribe now</a></li></ul></nav></header>
<div class="cookie-banner">We use biscuits to remember your preferences. <button>Accept</button></div>
<div class="page"><div id="content">`
	after := `</div><div class="sidebar"><h3>Trending</h3><ul>
<li><a href="/a">Harbour fees rise again</a></li><li><a href="/b">Tide tables for spring</a></li>
<li><a href="/c">Gull population census</a></li></ul></div></div>
<footer><p>Copyright Quayside Gazette. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
<script>var tracking = "pixel";</script>`
	if i := strings.Index(s, "<body>"); i >= 0 {
		s = s[:i+len("<body>")] + furniture + s[i+len("<body>"):]
	}
	if i := strings.LastIndex(s, "</body>"); i >= 0 {
		s = s[:i] + after + s[i:]
	}
	return []byte(s)
}

// furnitureWords are words only the page's furniture holds.
var furnitureOnly = []string{"gazette", "issues", "subscribe", "biscuits", "trending", "census", "copyright", "privacy", "tracking"}

// extractFile extracts a generated file.
func extractFile(t *testing.T, path string) *Document {
	t.Helper()
	doc, err := ReadFile(context.Background(), path)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", filepath.Base(path), err)
	}
	return doc
}
