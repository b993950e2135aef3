package document

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pdfPackage is the Debian package of the PDF tools.
const pdfPackage = "poppler-utils"

// minCharsPerPage: a PDF with fewer characters of text than this per page,
// on average, is taken for a scan (a page number or a stamp may be text).
const minCharsPerPage = 20

// extractPDF reads a PDF's text layer with poppler: pdfinfo for the page
// count, encryption and title, pdftotext -bbox-layout for the words with
// their lines, blocks and positions. Paragraphs are rebuilt from the
// geometry (blocks, vertical gaps, first-line indents, changes of type
// size), running headers and footers (page numbers, lines repeated page
// after page) dropped, words hyphenated at line ends joined again, and a
// paragraph cut by a page or column break joined again; it keeps the page
// it starts on.
func extractPDF(ctx context.Context, name string, data []byte) (*Document, error) {
	for _, tool := range []string{"pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, &ToolMissingError{Tool: tool, Package: pdfPackage}
		}
	}
	f, err := os.CreateTemp("", "earshot-document-*.pdf")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	path := f.Name()
	defer os.Remove(path)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}

	info, err := pdfInfo(ctx, name, path)
	if err != nil {
		return nil, err
	}
	pages, err := pdfWords(ctx, name, path)
	if err != nil {
		return nil, err
	}
	chars := 0
	for _, p := range pages {
		for _, l := range p.lines {
			chars += utf8.RuneCountInString(strings.Join(strings.Fields(l.text), ""))
		}
	}
	n := info.pages
	if len(pages) > n {
		n = len(pages)
	}
	if n > 0 && chars < minCharsPerPage*n {
		if chars == 0 || n > 1 || chars < 5 {
			return nil, &ScannedPDFError{Name: name, Pages: n}
		}
	}
	paras := pdfParagraphs(pages)
	return finish(name, PDF, pdfTitle(info.title), paras)
}

type pdfMeta struct {
	pages int
	title string
}

// pdfInfo runs pdfinfo for the page count and title; it tells encrypted
// and damaged files.
func pdfInfo(ctx context.Context, name, path string) (pdfMeta, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "pdfinfo", "-enc", "UTF-8", path)
	cmd.Stdout = &limitedWriter{w: &out, n: 1 << 20}
	cmd.Stderr = &limitedWriter{w: &errOut, n: 64 << 10}
	if err := cmd.Run(); err != nil {
		return pdfMeta{}, pdfToolError(ctx, name, "pdfinfo", err, errOut.String())
	}
	var m pdfMeta
	for _, line := range strings.Split(out.String(), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Pages":
			m.pages, _ = strconv.Atoi(val)
		case "Title":
			m.title = val
		}
	}
	return m, nil
}

// pdfToolError turns a poppler tool's failure into a plain error.
func pdfToolError(ctx context.Context, name, tool string, err error, stderr string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("reading %s: %w", name, ctx.Err())
	}
	low := strings.ToLower(stderr)
	if strings.Contains(low, "password") || strings.Contains(low, "encrypt") {
		return fmt.Errorf("%s: %w", name, ErrEncrypted)
	}
	if strings.Contains(low, "not allowed") || strings.Contains(low, "permission") {
		return fmt.Errorf("%s: %w (its author does not allow copying its text)", name, ErrEncrypted)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := firstLine(stderr)
		if msg == "" {
			msg = exit.String()
		}
		return corrupt(name, PDF, fmt.Errorf("%s: %s", tool, msg))
	}
	return fmt.Errorf("reading %s with %s: %w", name, tool, err)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// pdfTitle keeps a metadata title unless it is a tool's placeholder or a
// file name ("Microsoft Word - report.docx", "untitled").
func pdfTitle(t string) string {
	t = clean(t)
	low := strings.ToLower(t)
	switch {
	case low == "" || low == "untitled" || strings.HasPrefix(low, "microsoft word - "):
		return ""
	}
	for _, ext := range []string{".doc", ".docx", ".odt", ".pdf", ".tex", ".dvi", ".ps", ".rtf", ".txt", ".indd"} {
		if strings.HasSuffix(low, ext) {
			return ""
		}
	}
	return t
}

type pdfLine struct {
	text           string
	x0, y0, x1, y1 float64
	block          int // index of poppler's block on the page
}

type pdfPage struct {
	lines []pdfLine
}

// pdfWords runs pdftotext -bbox-layout and reads its lines as they come.
func pdfWords(ctx context.Context, name, path string) ([]pdfPage, error) {
	cmd := exec.CommandContext(ctx, "pdftotext", "-bbox-layout", "-enc", "UTF-8", path, "-")
	var errOut bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &errOut, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, pdfToolError(ctx, name, "pdftotext", err, "")
	}
	pages, parseErr := parseBBox(bufio.NewReaderSize(stdout, 64<<10))
	if parseErr != nil {
		// Drain so the tool can finish and say what went wrong.
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	if waitErr != nil {
		return nil, pdfToolError(ctx, name, "pdftotext", waitErr, errOut.String())
	}
	if parseErr != nil {
		return nil, corrupt(name, PDF, fmt.Errorf("pdftotext output: %w", parseErr))
	}
	return pages, nil
}

// parseBBox reads pdftotext's -bbox-layout XHTML: page > flow > block >
// line > word.
func parseBBox(r io.Reader) ([]pdfPage, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var pages []pdfPage
	var words []string
	var line pdfLine
	block := -1
	inWord := false
	var word strings.Builder
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			return pages, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				pages = append(pages, pdfPage{})
				block = -1
			case "block":
				block++
			case "line":
				words = words[:0]
				line = pdfLine{block: block}
				line.x0, line.y0 = floatAttr(t, "xMin"), floatAttr(t, "yMin")
				line.x1, line.y1 = floatAttr(t, "xMax"), floatAttr(t, "yMax")
			case "word":
				inWord = true
				word.Reset()
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "word":
				inWord = false
				words = append(words, word.String())
			case "line":
				if len(pages) > 0 {
					line.text = strings.Join(words, " ")
					if strings.TrimSpace(line.text) != "" {
						p := &pages[len(pages)-1]
						p.lines = append(p.lines, line)
					}
				}
			}
		case xml.CharData:
			if inWord {
				word.Write(t)
			}
		}
	}
}

func floatAttr(t xml.StartElement, name string) float64 {
	v, err := strconv.ParseFloat(xmlAttr(t, name), 64)
	if err != nil {
		return 0
	}
	return v
}

// pageNumber matches running page numbers: "7", "- 7 -", "Page 7 of 9",
// "vii".
var pageNumber = regexp.MustCompile(`(?i)^[\s\-–—]*(page\s+)?(\d{1,5}|[ivxlc]{1,7})(\s*(/|of)\s*\d{1,5})?[\s\-–—]*$`)

var digits = regexp.MustCompile(`\d+`)

// dropFurniture removes running headers and footers: a page's first or
// last line when it is a page number, or when the same line (numbers
// aside) opens or closes at least a third of the pages, three at least.
func dropFurniture(pages []pdfPage) {
	count := map[string]int{}
	key := func(s string) string { return digits.ReplaceAllString(strings.ToLower(clean(s)), "#") }
	for _, p := range pages {
		if len(p.lines) == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, l := range []pdfLine{p.lines[0], p.lines[len(p.lines)-1]} {
			k := key(l.text)
			if !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	repeated := func(s string) bool {
		c := count[key(s)]
		return c >= 3 && c*3 >= len(pages)
	}
	for i := range pages {
		ls := pages[i].lines
		for len(ls) > 0 && (pageNumber.MatchString(ls[0].text) || repeated(ls[0].text)) {
			ls = ls[1:]
		}
		for len(ls) > 0 && (pageNumber.MatchString(ls[len(ls)-1].text) || repeated(ls[len(ls)-1].text)) {
			ls = ls[:len(ls)-1]
		}
		pages[i].lines = ls
	}
}

// pdfPara is a paragraph being rebuilt from lines.
type pdfPara struct {
	lines   []pdfLine
	page    int
	heading bool
	// lastFull: the last line runs to the right edge of the text, as a
	// line cut by the page's end does (a paragraph's own last line
	// usually stops short).
	lastFull bool
	// firstIndented: the first line is indented against the next.
	firstIndented bool
	// newColumn: the paragraph starts at the top of a column after the
	// first on its page.
	newColumn bool
}

// pdfParagraphs rebuilds paragraphs from the lines of every page.
func pdfParagraphs(pages []pdfPage) []Paragraph {
	dropFurniture(pages)
	bodyHeight := medianHeight(pages)
	vocab := pdfVocabulary(pages)

	var paras []*pdfPara
	for pi, p := range pages {
		var cur *pdfPara
		// Each block's left and right edges, and the page's.
		left, right := map[int]float64{}, map[int]float64{}
		lines := map[int]int{}
		pageRight, pageLeft := 0.0, -1.0
		for _, l := range p.lines {
			if pageLeft < 0 || l.x0 < pageLeft {
				pageLeft = l.x0
			}
			lines[l.block]++
			pageRight = max(pageRight, l.x1)
			if v, ok := left[l.block]; !ok || l.x0 < v {
				left[l.block] = l.x0
			}
			if v, ok := right[l.block]; !ok || l.x1 > v {
				right[l.block] = l.x1
			}
		}
		for _, l := range p.lines {
			start, column := cur == nil, false
			if !start {
				prev := cur.lines[len(cur.lines)-1]
				start = paragraphBreak(prev, l, left[l.block], right[prev.block], bodyHeight)
				// Up and to the right: the top of the next column.
				column = l.y0 < prev.y0-2*bodyHeight && l.x0 > prev.x0+bodyHeight
			}
			if start {
				if cur != nil {
					paras = append(paras, cur)
				}
				margin := left[l.block]
				if lines[l.block] < 2 {
					margin = pageLeft
				}
				cur = &pdfPara{page: pi + 1, firstIndented: l.x0 > margin+bodyHeight*0.8, newColumn: column}
			}
			cur.lines = append(cur.lines, l)
			edge := right[l.block]
			if lines[l.block] < 2 {
				edge = pageRight
			}
			cur.lastFull = l.x1 >= edge-bodyHeight
		}
		if cur != nil {
			paras = append(paras, cur)
		}
	}
	for i, p := range paras {
		p.heading = looksLikeHeading(p, bodyHeight, i+1 < len(paras))
	}
	indented := indentedStyle(paras)
	var out []Paragraph
	var last *pdfPara
	for _, p := range paras {
		text := joinLines(p.lines, vocab)
		if text == "" {
			continue
		}
		if last != nil && (p.page > last.page || p.newColumn) && continuesAcrossPages(last, p, out[len(out)-1].Text, text, indented) {
			out[len(out)-1].Text = joinText(out[len(out)-1].Text, text, vocab)
			last = p
			continue
		}
		out = append(out, Paragraph{Text: text, Heading: p.heading, Page: p.page})
		last = p
	}
	return out
}

// paragraphBreak tells whether line l starts a paragraph after prev.
func paragraphBreak(prev, l pdfLine, left, prevRight, body float64) bool {
	if l.block != prev.block {
		return true
	}
	h := l.y1 - l.y0
	ph := prev.y1 - prev.y0
	if h <= 0 || ph <= 0 {
		return false
	}
	if h > ph*1.2 || ph > h*1.2 {
		// A change of type size: a heading begins or ends.
		return true
	}
	gap := l.y0 - prev.y1
	if gap > ph*0.9 || gap < -ph*3 {
		// A blank line's worth of space, or a jump up to another column.
		return true
	}
	em := body
	if em <= 0 {
		em = h
	}
	// A first-line indent, under a line that was not indented.
	if l.x0 > left+em*0.8 && prev.x0 <= left+em*0.3 && prev.x1 > prevRight-em*2 {
		return true
	}
	return false
}

// looksLikeHeading: a paragraph set larger than the body text, or a
// single short line with no closing punctuation that a paragraph follows.
func looksLikeHeading(p *pdfPara, body float64, followed bool) bool {
	text := clean(joinLines(p.lines, nil))
	if text == "" || len(p.lines) > 3 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text)
	if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
		return false
	}
	if pageNumber.MatchString(text) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(text)
	if strings.ContainsRune(".,;:!?", last) {
		return false
	}
	h := p.lines[0].y1 - p.lines[0].y0
	if body > 0 && h > body*1.15 && len(strings.Fields(text)) <= 20 {
		return true
	}
	return followed && len(p.lines) == 1 && len(strings.Fields(text)) <= 12
}

// continuesAcrossPages tells a paragraph that a page or column break cut. In a
// document whose paragraphs start indented, one whose last line ran to
// the margin, followed by a line without an indent, goes on; otherwise a
// paragraph that ends no sentence goes on when the next page continues in
// lower case or after a comma or hyphen.
func continuesAcrossPages(prev, next *pdfPara, prevText, nextText string, indented bool) bool {
	if prev.heading || next.heading {
		return false
	}
	if indented && prev.lastFull && !next.firstIndented {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(prevText)
	if strings.ContainsRune(".!?:;”\")’»", last) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(nextText)
	return unicode.IsLower(first) || last == '-' || last == ','
}

// indentedStyle tells a document whose paragraphs mostly begin with an
// indented first line.
func indentedStyle(paras []*pdfPara) bool {
	n, indented := 0, 0
	for _, p := range paras {
		if len(p.lines) < 2 || p.heading {
			continue
		}
		n++
		if p.firstIndented {
			indented++
		}
	}
	return n >= 2 && indented*2 > n
}

// medianHeight is the height of the body text's lines.
func medianHeight(pages []pdfPage) float64 {
	var hs []float64
	for _, p := range pages {
		for _, l := range p.lines {
			if h := l.y1 - l.y0; h > 0 {
				hs = append(hs, h)
			}
		}
	}
	if len(hs) == 0 {
		return 0
	}
	sort.Float64s(hs)
	return hs[len(hs)/2]
}

// pdfVocabulary is the set of lower-cased words of the document, to tell
// a word hyphenated at a line's end ("extra-\nordinary") from a compound
// ("ninety-\none").
func pdfVocabulary(pages []pdfPage) map[string]bool {
	v := map[string]bool{}
	for _, p := range pages {
		for _, l := range p.lines {
			for _, w := range strings.Fields(l.text) {
				v[strings.ToLower(strings.TrimFunc(w, notWordRune))] = true
			}
		}
	}
	return v
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }

// joinLines joins a paragraph's lines, mending words hyphenated at line
// ends.
func joinLines(lines []pdfLine, vocab map[string]bool) string {
	text := ""
	for _, l := range lines {
		text = joinText(text, clean(l.text), vocab)
	}
	return text
}

// joinText joins two pieces of a paragraph. When a ends in a hyphen after
// a letter and b goes on in lower case, the hyphen is a line-end
// hyphenation and is dropped, unless the document spells the hyphenated
// compound elsewhere and never the joined word.
func joinText(a, b string, vocab map[string]bool) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	last, size := utf8.DecodeLastRuneInString(a)
	if last == '-' || last == '\u2010' || last == '\u00ad' {
		before, _ := utf8.DecodeLastRuneInString(a[:len(a)-size])
		first, _ := utf8.DecodeRuneInString(b)
		if unicode.IsLetter(before) && unicode.IsLower(first) {
			head := a[:len(a)-size]
			i := strings.LastIndexByte(head, ' ') + 1
			stem := strings.ToLower(strings.TrimFunc(head[i:], notWordRune))
			tail := b
			if j := strings.IndexByte(b, ' '); j >= 0 {
				tail = b[:j]
			}
			tail = strings.ToLower(strings.TrimFunc(tail, notWordRune))
			if vocab != nil && vocab[stem+"-"+tail] && !vocab[stem+tail] {
				return head + "-" + b
			}
			if strings.Contains(stem, "-") {
				// Already a compound: the break is at one of its hyphens.
				return head + "-" + b
			}
			return head + b
		}
		if last == '\u00ad' {
			return a[:len(a)-size] + b
		}
	}
	return a + " " + b
}

// limitedWriter keeps at most n bytes and drops the rest, so a tool's
// chatter cannot fill memory.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := len(p)
		if k > l.n {
			k = l.n
		}
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.n -= k
	}
	return len(p), nil
}
